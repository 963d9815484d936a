#pragma once
// GlWorker: one thread owning one GL context. Every GL-context-bound call of
// the library (buffer creation, CUDA register / map / unmap / unregister)
// runs there, whatever thread asks for it.
//
//   handoff::GlWorker gl;                       // headless EGL, GL 4.5 core
//   int n = gl.run([] { return do_gl_work(); });  // blocks (bounded); rethrows here
//   gl.post([] { background_gl_work(); });       // does not wait
//
// Core:     GlWorker (run, post, on_worker, shutdown), GlWorkerOptions
// Advanced: GlFence (ordering across contexts); GlWorker::core() (for resource types)
#include <handoff/gl_handles.hpp>
#include <handoff/error.hpp>
#include <handoff/gl_context.hpp>
#include <handoff/wait.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

namespace handoff::detail {
class WorkerCore;  // the worker's shared state (private: interop/src/gl/worker_core.hpp)
}

namespace handoff {

struct GlWorkerOptions {
  std::string name = "handoff-gl";  // thread name (15 characters are kept); named in errors
  // Creates the context; runs on the worker thread (so a GLFW or EGL context
  // can be made there). Empty: a headless EGL context made with `headless`.
  std::function<std::unique_ptr<GlContext>()> context_factory;
  HeadlessContextOptions headless;
  // Every KHR_debug message of a debug context, on the worker thread (after it
  // went to handoff::log). Turned on when `headless.debug` is set or a factory
  // made a debug context.
  std::function<void(const GlDebugMessage&)> on_debug_message;
};

// Waits on the worker are bounded by handoff::wait_limit() (handoff/wait.hpp)
// and end in WaitTimeout naming the worker and what did not finish; the one
// exception is a run() call that has started (see run()).
// Thread safety: every method may be called from any thread, including the
// worker itself, unless stated otherwise.
class GlWorker {
 public:
  // Starts the thread and creates the context there; throws what context
  // creation threw (handoff::Error) after joining the thread, or WaitTimeout
  // when the context is not made within the limit (a context made later is
  // destroyed unused).
  explicit GlWorker(GlWorkerOptions options = {});
  // shutdown(), then frees the worker. Never throws.
  ~GlWorker();
  GlWorker(const GlWorker&) = delete;
  GlWorker& operator=(const GlWorker&) = delete;

  // Runs f() on the worker with its context current and returns its value;
  // f's exception is rethrown here. Inline when called on the worker. Throws
  // WorkerStopped when the worker stopped (or stops) before f ran.
  // Nothing is allocated: the call refers to f on the caller's stack. When f
  // has not started within wait_limit() (the worker is stuck in something
  // else), throws WaitTimeout naming what the worker is busy with; the call is
  // withdrawn and never runs. Once f has started it is waited for to its end,
  // since it runs on the caller's data (past the limit a warning is logged);
  // the library's own GPU and fence waits inside calls are bounded, so they end.
  template <typename F>
  decltype(auto) run(F&& f) {
    using Fn = std::remove_reference_t<F>;
    using R = std::invoke_result_t<Fn&>;
    if constexpr (std::is_void_v<R>) {
      run_call([](void* fn) { std::invoke(*static_cast<Fn*>(fn)); }, std::addressof(f));
    } else {
      // The value lands on this stack: a pointer for a reference result.
      using Stored = std::conditional_t<std::is_reference_v<R>, std::remove_reference_t<R>*, R>;
      struct Call {
        Fn* fn;
        std::optional<Stored> value;
      } call{std::addressof(f), std::nullopt};
      run_call(
          [](void* p) {
            auto* c = static_cast<Call*>(p);
            if constexpr (std::is_reference_v<R>) c->value.emplace(std::addressof(std::invoke(*c->fn)));
            else c->value.emplace(std::invoke(*c->fn));
          },
          &call);
      // Both a prvalue of type R (a value) or an R (a reference): decltype(auto) is R, never a reference to `call`.
      if constexpr (std::is_reference_v<R>) return static_cast<R>(**call.value);
      else return static_cast<R>(std::move(*call.value));
    }
  }
  // Queues f() and returns at once; calls run in the order they were posted
  // (from one thread). An exception from f is logged (handoff::log, Error). A
  // post still queued at shutdown is dropped and logged. Throws WorkerStopped
  // when the worker no longer accepts calls. Queues even when called on the worker.
  void post(std::function<void()> f);

  // True on the worker thread.
  bool on_worker() const noexcept;
  // Debug builds: throws UsageError naming `what` off the worker. Release: no-op.
  void assert_on_worker(const char* what) const;

  // Stops accepting calls, fails the calls still queued with WorkerStopped,
  // runs queued releases, releases every resource still registered, destroys
  // the context and joins. Idempotent; never throws. Called on the worker
  // itself (from a task), it stops the loop and detaches instead of joining.
  // When the worker has not finished within wait_limit() (a call that does not
  // return), logs an Error naming what it is busy with and detaches the
  // thread, which does the rest if that call ever returns.
  void shutdown() noexcept;
  bool stopped() const noexcept;

  // What the context reported at start-up. Valid until the GlWorker dies.
  const GlInfo& info() const noexcept;
  std::thread::native_handle_type native_thread() const noexcept;

  // For resource types (GlBuffer, CudaGlBuffer, ...): the shared state that
  // outlives this object and knows when the worker has gone.
  const std::shared_ptr<detail::WorkerCore>& core() const noexcept { return core_; }

 private:
  // run()'s one non-template step: calls call(arg) on the worker with its
  // context current (inline when already there) and rethrows what it threw,
  // or the KHR_debug error it raised when the worker fails on GL errors.
  void run_call(void (*call)(void*), void* arg);

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
  UniqueGlSync sync_;
};

}  // namespace handoff
