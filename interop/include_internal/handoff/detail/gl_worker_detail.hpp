#pragma once
// GlWorker's machinery: the task that carries a run() call to the worker and
// its result back, and the registry through which resources made on the
// worker release their GL / CUDA-graphics objects there. For gl_worker.hpp
// and the library's resource types (GlBuffer, CudaGlBuffer, GlVkFrame, ...);
// applications use GlWorker itself.
#include <handoff/error.hpp>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace handoff::detail {

class WorkerCore;

// A queued call. The worker calls exactly one of run() / fail(), once; the
// task type decides who frees it.
class Task {
 public:
  explicit Task(const char* kind) noexcept : kind(kind) {}
  virtual ~Task() = default;
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  virtual void run(WorkerCore& core) noexcept = 0;
  virtual void fail(std::exception_ptr error) noexcept = 0;

  const char* const kind;  // "a run() call": what the worker is busy with, for timeout messages
  Task* next = nullptr;    // the queue's link (guarded by the core's lock)
  bool must_run = false;   // resource releases: run even while the worker stops
};

// A run() call. It lives on its caller's stack (run() allocates nothing) and
// refers to the caller's callable: the caller returns only once the worker is
// done with it (finished, failed, or withdrawn from the queue unstarted).
class RunCall : public Task {
 public:
  // state: kPending / kCallerAsleep: the worker has not finished it; kDone:
  // finished (the worker's last access was the store of kDone).
  enum : std::uint32_t { kPending = 0, kCallerAsleep = 1, kDone = 2 };
  RunCall() noexcept : Task("a run() call") {}
  std::atomic<std::uint32_t> state{kPending};
  std::exception_ptr error;

 protected:
  // Publishes the end of the call and wakes its caller. The worker's last
  // access to *this.
  void finish() noexcept;
};

bool on_worker(const WorkerCore& core) noexcept;
// Queues `call` and waits for it. Returns once it finished (its value or error
// are in it). Throws WorkerStopped (nothing queued) when the worker no longer
// accepts calls, or WaitTimeout naming the worker and what it is busy with when
// the call has not started within wait_limit() (it is withdrawn and never runs).
// A call that has started is waited for to its end: it runs on the caller's
// data, so the caller cannot leave before it (past the limit a warning names it;
// the library's own GPU waits inside calls are bounded, so they do end).
void submit_and_wait(WorkerCore& core, RunCall& call);
// A KHR_debug error raised by the task that just ran on the worker, turned into
// an Error, when the worker was told to fail on GL errors (else null).
std::exception_ptr take_gl_error(WorkerCore& core) noexcept;

template <typename R>
using Stored = std::conditional_t<std::is_void_v<R>, std::monostate,
                                  std::conditional_t<std::is_reference_v<R>, std::remove_reference_t<R>*, R>>;

// Fn: the caller's callable, by reference (the call never outlives its caller).
template <typename Fn, typename R>
class RunTask final : public RunCall {
 public:
  explicit RunTask(Fn& f) noexcept : fn_(f) {}
  void run(WorkerCore& core) noexcept override {
    try {
      if constexpr (std::is_void_v<R>) {
        std::invoke(fn_);
        value_.emplace();
      } else if constexpr (std::is_reference_v<R>) {
        value_.emplace(&std::invoke(fn_));
      } else {
        value_.emplace(std::invoke(fn_));
      }
      if (auto gl = take_gl_error(core)) {
        error = gl;
        value_.reset();
      }
    } catch (...) {
      error = std::current_exception();
    }
    finish();
  }
  void fail(std::exception_ptr e) noexcept override {
    error = std::move(e);
    finish();
  }
  R take() {
    if (error) std::rethrow_exception(error);
    if constexpr (std::is_void_v<R>) return;
    else if constexpr (std::is_reference_v<R>) return static_cast<R>(**value_);
    else return std::move(*value_);
  }

 private:
  Fn& fn_;
  std::optional<Stored<R>> value_;
};

// Runs `f` on the worker and returns its value (or rethrows its exception).
// Inline when already on the worker; else see submit_and_wait.
template <typename F>
decltype(auto) run_on(WorkerCore& core, F&& f) {
  if (on_worker(core)) {
    using R = std::invoke_result_t<F&>;
    if constexpr (std::is_void_v<R>) {
      std::invoke(f);
      if (auto e = take_gl_error(core)) std::rethrow_exception(e);
      return;
    } else {
      R r = std::invoke(f);
      if (auto e = take_gl_error(core)) std::rethrow_exception(e);
      return r;
    }
  }
  using Fn = std::remove_reference_t<F>;
  RunTask<Fn, std::invoke_result_t<Fn&>> call(f);
  submit_and_wait(core, call);
  return call.take();
}

// Resource lifetime: a GL / CUDA-graphics object registers its release with the
// core when it is created (on the worker). release() runs it on the worker
// (inline there, else queued) exactly once; whatever is still registered when
// the worker stops is released by shutdown, newest first. After that,
// release() does nothing: the context, and everything in it, is gone.
std::uint64_t track(WorkerCore& core, std::function<void()> release);
void release(WorkerCore& core, std::uint64_t id) noexcept;
// Debug builds (HANDOFF_DEBUG_AFFINITY): throws UsageError naming `what` when
// called off the worker thread. Release builds: nothing.
void assert_on_worker(const WorkerCore& core, const char* what);

}  // namespace handoff::detail
