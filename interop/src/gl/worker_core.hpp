#pragma once
// The state a GlWorker shares with everything made on it (GlBuffer,
// CudaGlBuffer, ...): it outlives the GlWorker object, so a resource destroyed
// after shutdown finds out the context is gone instead of crashing or hanging.
#include <handoff/detail/gl_worker_detail.hpp>
#include <handoff/gl_worker.hpp>

#include "common/spin.hpp"

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace handoff::detail {

// Thread safety: every public method may be called from any thread unless
// stated otherwise.
class WorkerCore : public std::enable_shared_from_this<WorkerCore> {
 public:
  explicit WorkerCore(GlWorkerOptions options);
  const std::string& name() const noexcept { return options_.name; }

  // Starts the thread and waits (bounded) for its context; rethrows a
  // context-creation failure, or throws WaitTimeout. Once, from the GlWorker.
  void start();
  // GlWorker::shutdown.
  void shutdown() noexcept;
  bool stopped() const noexcept;
  const GlInfo& info() const noexcept { return info_; }
  std::thread::native_handle_type native_thread() const noexcept { return native_; }

  // --- the queue
  bool push(Task* t);                   // false: refused (stopped)
  bool withdraw(Task* t) noexcept;      // true: `t` was still queued and is not any more
  std::size_t queued() const noexcept { return pending_.load(std::memory_order_acquire); }
  // What the worker runs now ("a posted call", "nothing"), for timeout messages.
  const char* busy_with() const noexcept;
  SpinPolicy& caller_spin() noexcept { return caller_spin_; }

  // --- resources (gl_worker_detail.hpp: track / release)
  std::uint64_t track(std::function<void()> release);
  void release(std::uint64_t id) noexcept;
  std::size_t live_resources() const noexcept;

  // --- GL debug errors
  std::exception_ptr take_gl_error() noexcept;  // worker thread only
  std::size_t gl_error_count() const noexcept { return gl_errors_.load(std::memory_order_relaxed); }

  // --- switches a test driver needs (tests/support/interop_testing.hpp sets them)
  void set_throw_on_gl_error(bool on) noexcept { throw_on_gl_error_.store(on, std::memory_order_relaxed); }

 private:
  void main();
  bool make_context();  // on the worker: false when it failed or start() gave up on it
  void destroy_context() noexcept;
  void drain();
  void run_task(Task* t) noexcept;
  void run_release(std::function<void()>& fn) noexcept;
  void link_locked(Task* t) noexcept;  // appends; mutex_ held
  Task* pop_one();
  Task* next_task();
  void wake() noexcept;
  void request_stop() noexcept;
  void on_debug(const GlDebugMessage& m);

  GlWorkerOptions options_;

  mutable std::mutex mutex_;
  std::condition_variable state_cv_;  // started_ / exited_ changed (with mutex_)
  Task* head_ = nullptr;
  Task* tail_ = nullptr;
  bool accepting_ = true;  // run / post accepted
  bool closed_ = false;    // nothing accepted, nothing registered: the context is going
  bool started_ = false;   // the context is made (or failed)
  bool start_abandoned_ = false;  // start() gave up waiting: the worker exits at once
  bool exited_ = false;    // main() is done with everything but returning
  std::exception_ptr start_error_;
  std::map<std::uint64_t, std::function<void()>> resources_;
  std::uint64_t next_resource_ = 0;

  std::atomic<std::size_t> pending_{0};
  std::atomic<std::uint32_t> sleeping_{0};
  std::atomic<bool> stop_{false};
  std::atomic<const char*> busy_{nullptr};
  std::atomic<std::size_t> gl_errors_{0};
  std::atomic<bool> throw_on_gl_error_{false};
  std::optional<std::string> pending_gl_error_;       // worker thread only
  SpinPolicy caller_spin_{100'000, /*yield=*/true};   // callers of run() waiting for their result
  SpinPolicy worker_spin_{100'000};                   // the worker waiting for the next call

  GlInfo info_;  // written by the worker before started_, read-only after
  std::thread::native_handle_type native_{};
  std::thread thread_;  // start() / shutdown() only, under join_mutex_
  std::mutex join_mutex_;
  std::unique_ptr<GlContext> context_;  // worker thread only
  std::function<void(const GlDebugMessage&)> debug_sink_;
  bool debug_enabled_ = false;
};

}  // namespace handoff::detail
