#pragma once
// GlWorker: one thread owning one GL context. Every GL-context-bound call of
// the library (buffer creation, CUDA register / map / unmap / unregister)
// runs there, whatever thread asks for it.
//
//   handoff::GlWorker gl;                       // headless EGL, GL 4.5 core
//   int n = gl.run([] { return do_gl_work(); });  // blocks; rethrows here
//   gl.post([] { background_gl_work(); });       // does not wait
//
// Core:     GlWorker (run, post, on_worker, shutdown), GlWorkerOptions
// Advanced: GlFence (ordering across contexts), detail:: (for resource types)
#include <handoff/detail/gl_handles.hpp>
#include <handoff/error.hpp>
#include <handoff/gl_context.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>

namespace handoff {

namespace detail {

class WorkerCore;

// A queued call. The worker calls exactly one of run() / fail(), once, and
// never touches the task afterwards (a RunTask lives on the caller's stack).
struct Task {
  Task* next = nullptr;
  bool must_run = false;  // resource releases: run even while the worker stops
  std::atomic<std::uint32_t> state{0};  // RunTask completion word (0 waiting, 1 caller asleep, 2 done)
  virtual void run(WorkerCore& core) noexcept = 0;
  virtual void fail(std::exception_ptr error) noexcept = 0;

 protected:
  ~Task() = default;
};

bool on_worker(const WorkerCore& core) noexcept;
// Queues `task`, then waits until the worker ran or failed it. Throws
// WorkerStopped (without queueing) when the worker no longer accepts calls.
void submit_and_wait(WorkerCore& core, Task& task);
// Marks a RunTask finished and wakes its caller; the task's last access.
void complete(Task& task) noexcept;
// A KHR_debug error raised by the task that just ran on the worker, turned into
// an Error, when the worker was told to fail on GL errors (else null).
std::exception_ptr take_gl_error(WorkerCore& core) noexcept;

template <typename R>
using Stored = std::conditional_t<std::is_void_v<R>, std::monostate,
                                  std::conditional_t<std::is_reference_v<R>, std::remove_reference_t<R>*, R>>;

template <typename F, typename R>
struct RunTask final : Task {
  explicit RunTask(F& f) : fn(f) {}
  void run(WorkerCore& core) noexcept override {
    try {
      if constexpr (std::is_void_v<R>) {
        std::invoke(fn);
        value.emplace();
      } else if constexpr (std::is_reference_v<R>) {
        value.emplace(&std::invoke(fn));
      } else {
        value.emplace(std::invoke(fn));
      }
      if (auto gl = take_gl_error(core)) {
        error = gl;
        value.reset();
      }
    } catch (...) {
      error = std::current_exception();
    }
    complete(*this);
  }
  void fail(std::exception_ptr e) noexcept override {
    error = std::move(e);
    complete(*this);
  }
  R take() {
    if (error) std::rethrow_exception(error);
    if constexpr (std::is_void_v<R>) return;
    else if constexpr (std::is_reference_v<R>) return static_cast<R>(**value);
    else return std::move(*value);
  }
  F& fn;
  std::optional<Stored<R>> value;
  std::exception_ptr error;
};

// Runs `f` on the worker and returns its value (or rethrows its exception).
// Inline when already on the worker.
template <typename F>
decltype(auto) run_on(WorkerCore& core, F&& f) {
  using R = std::invoke_result_t<F&>;
  if (on_worker(core)) {
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
  RunTask<std::remove_reference_t<F>, R> task(f);
  submit_and_wait(core, task);
  return task.take();
}

struct PostedCall : Task {
  virtual ~PostedCall() = default;
};
// Queues a heap task the worker deletes after running (or failing) it.
// Throws WorkerStopped (and deletes it) when the worker no longer accepts calls.
void submit_posted(WorkerCore& core, std::unique_ptr<PostedCall> task);

struct PostedFunction final : PostedCall {
  explicit PostedFunction(std::function<void()> f, bool release) : fn(std::move(f)) { must_run = release; }
  void run(WorkerCore& core) noexcept override;
  void fail(std::exception_ptr e) noexcept override;
  std::function<void()> fn;
};

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
// Number of resources still registered (tests).
std::size_t live_resources(const WorkerCore& core) noexcept;

}  // namespace detail

struct GlWorkerOptions {
  std::string name = "handoff-gl";  // thread name (15 characters are kept)
  // Creates the context; runs on the worker thread (so a GLFW or EGL context
  // can be made there). Empty: a headless EGL context made with `headless`.
  std::function<std::unique_ptr<GlContext>()> context_factory;
  HeadlessContextOptions headless;
  // Every KHR_debug message of a debug context, on the worker thread (after it
  // went to handoff::log). Turned on when `headless.debug` is set or a factory
  // made a debug context.
  std::function<void(const GlDebugMessage&)> on_debug_message;
  // A KHR_debug ERROR message produced while a run() call executes makes that
  // call throw handoff::Error (Api::Gl, "KHR_debug") with the message (tests).
  bool throw_on_gl_error = false;
};

// Thread safety: every method may be called from any thread, including the
// worker itself, unless stated otherwise.
class GlWorker {
 public:
  // Starts the thread and creates the context there; throws what context
  // creation threw (handoff::Error) after joining the thread.
  explicit GlWorker(GlWorkerOptions options = {});
  // shutdown(), then frees the worker. Never throws.
  ~GlWorker();
  GlWorker(const GlWorker&) = delete;
  GlWorker& operator=(const GlWorker&) = delete;

  // Runs f() on the worker with its context current and returns its value;
  // f's exception is rethrown here. Inline when called on the worker. Throws
  // WorkerStopped when the worker stopped (or stops) before f ran.
  template <typename F>
  decltype(auto) run(F&& f) {
    return detail::run_on(*core_, std::forward<F>(f));
  }
  // Queues f() and returns at once; calls run in the order they were posted
  // (from one thread). An exception from f is logged (handoff::log, Error). A
  // post still queued at shutdown is dropped and logged. Throws WorkerStopped
  // when the worker no longer accepts calls. Queues even when called on the worker.
  void post(std::function<void()> f);

  // True on the worker thread.
  bool on_worker() const noexcept { return detail::on_worker(*core_); }
  // Debug builds: throws UsageError naming `what` off the worker. Release: no-op.
  void assert_on_worker(const char* what) const { detail::assert_on_worker(*core_, what); }

  // Stops accepting calls, fails the calls still queued with WorkerStopped,
  // runs queued releases, releases every resource still registered, destroys
  // the context and joins. Idempotent; never throws. Called on the worker
  // itself (from a task), it stops the loop and detaches instead of joining.
  void shutdown() noexcept;
  bool stopped() const noexcept;

  // What the context reported at start-up. Valid until the GlWorker dies.
  const GlInfo& info() const noexcept;
  std::thread::native_handle_type native_thread() const noexcept;
  // Calls queued and not yet started (tests, diagnostics).
  std::size_t queued() const noexcept;
  // KHR_debug ERROR messages seen so far.
  std::size_t gl_error_count() const noexcept;

  // For resource types (GlBuffer, CudaGlBuffer, ...): the shared state that
  // outlives this object and knows when the worker has gone.
  const std::shared_ptr<detail::WorkerCore>& core() const noexcept { return core_; }

 private:
  std::shared_ptr<detail::WorkerCore> core_;
};

// A GL fence for ordering work across contexts of one share group: insert on
// the producing context, wait on the consuming one.
// Ownership: move-only; the sync object is deleted with the fence (or when a
// fence is moved onto it).
// Thread safety: call each method, and destroy the fence, on a thread with a
// context of the share group current (the worker, or the application's render
// thread).
class GlFence {
 public:
  GlFence() = default;
  // glFenceSync + glFlush on the current context (the flush makes it visible
  // to other contexts). Throws handoff::Error on a GL error.
  static GlFence insert();

  // Makes the current context's GPU queue wait for the fence (glWaitSync); returns at once.
  void gpu_wait() const;
  // Blocks the calling thread until the fence signals or `timeout_ns` passes
  // (glClientWaitSync, flushing). True when signalled.
  bool client_wait(std::uint64_t timeout_ns) const;
  // Blocks until the fence signals, for at most handoff::wait_limit(); then
  // throws WaitTimeout naming `what` ("GL fence of ring slot 2"). For callers
  // that must not hang.
  void wait(const char* what) const;
  explicit operator bool() const noexcept { return static_cast<bool>(sync_); }

 private:
  detail::UniqueGlSync sync_;
};

}  // namespace handoff
