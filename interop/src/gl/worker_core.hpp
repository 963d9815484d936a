#pragma once
// The state a GlWorker shares with everything made on it (GlBuffer,
// CudaGlBuffer, ...): it outlives the GlWorker object, so a resource destroyed
// after shutdown finds out the context is gone instead of crashing or hanging.
#include <handoff/gl_worker.hpp>

#include "common/spin.hpp"

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace handoff::detail {

class WorkerCore : public std::enable_shared_from_this<WorkerCore> {
 public:
  explicit WorkerCore(GlWorkerOptions options);
  const std::string& name() const noexcept { return options_.name; }

  void start();                // starts the thread; rethrows a context-creation failure
  bool push(Task* t);          // false: refused (stopped)
  void link_locked(Task* t) noexcept;  // appends; mutex_ held
  void wake() noexcept;
  void request_stop() noexcept;
  void run_release(std::function<void()>& fn) noexcept;  // on the worker

  // Shared with the free functions of gl_worker.hpp.
  mutable std::mutex mutex_;
  Task* head_ = nullptr;
  Task* tail_ = nullptr;
  bool accepting_ = true;  // run / post accepted
  bool closed_ = false;    // nothing accepted, nothing registered: the context is going
  std::map<std::uint64_t, std::function<void()>> resources_;
  std::uint64_t next_resource_ = 0;

  std::atomic<std::size_t> pending_{0};
  std::atomic<std::uint32_t> sleeping_{0};
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> gl_errors_{0};
  std::optional<std::string> pending_gl_error_;  // worker thread only
  SpinPolicy caller_spin_{100'000, /*yield=*/true};   // callers of run() waiting for their result
  SpinPolicy worker_spin_{100'000};   // the worker waiting for the next call

  GlWorkerOptions options_;
  GlInfo info_;
  std::thread::native_handle_type native_{};
  std::thread thread_;
  std::mutex join_mutex_;

 private:
  void main();
  void drain();
  Task* pop_one();
  Task* next_task();
  void on_debug(const GlDebugMessage& m);

  std::condition_variable started_cv_;
  bool started_ = false;
  std::exception_ptr start_error_;
  std::unique_ptr<GlContext> context_;
  std::function<void(const GlDebugMessage&)> debug_sink_;
  bool debug_enabled_ = false;
};

}  // namespace handoff::detail
