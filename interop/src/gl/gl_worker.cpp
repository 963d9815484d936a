// The GL worker: one thread, one context, one queue.
//
// The queue is an intrusive FIFO under a mutex; nothing is allocated for run()
// (its task lives on the caller's stack) and nobody sleeps when there is work:
// the worker and a waiting caller each spin briefly before parking on a futex
// (common/spin.hpp learns how long from the waits),
// and a producer only makes a wake-up syscall when the worker really sleeps.
// This is what beats mutex + condition_variable + packaged_task on round trips
// (bench/bench_worker.cpp measures both in the same run).
#include "gl/worker_core.hpp"

#include <glad/gl.h>

#include <handoff/gl_check.hpp>
#include <handoff/log.hpp>

#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <map>
#include <vector>

namespace handoff {
namespace detail {

namespace {

thread_local WorkerCore* tl_worker = nullptr;

// futex on a 32-bit word. Like glibc's mutex, a wake may target a word whose
// owner has just returned: the kernel then finds no waiter (or wakes a
// spurious one, which every wait loop tolerates); no memory is touched.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futex_wake(std::atomic<std::uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace

namespace {

std::string describe(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace

// --- completion of run() ------------------------------------------------------
void complete(Task& task) noexcept {
  std::atomic<std::uint32_t>* word = &task.state;
  // The exchange is the task's last access: the caller may return (and the
  // task leave scope) as soon as it sees 2.
  if (word->exchange(2, std::memory_order_acq_rel) == 1) futex_wake(word);
}

namespace {
void wait_done(WorkerCore& core, Task& task) {
  auto& s = task.state;
  SpinPolicy::Wait w;
  if (core.caller_spin_.spin([&] { return s.load(std::memory_order_acquire) == 2; }, w)) return;
  std::uint32_t expected = 0;
  if (!s.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) return;  // became 2
  while (s.load(std::memory_order_acquire) != 2) futex_wait(s, 1);
  core.caller_spin_.slept(w);
}
}  // namespace

// --- WorkerCore ---------------------------------------------------------------
WorkerCore::WorkerCore(GlWorkerOptions o) : options_(std::move(o)) {}

bool WorkerCore::push(Task* t) {
  {
    std::lock_guard lock(mutex_);
    if (closed_ || (!accepting_ && !t->must_run)) return false;
    link_locked(t);
  }
  wake();
  return true;
}

void WorkerCore::link_locked(Task* t) noexcept {
  t->next = nullptr;
  if (tail_) tail_->next = t;
  else head_ = t;
  tail_ = t;
  pending_.fetch_add(1, std::memory_order_seq_cst);
}

void WorkerCore::wake() noexcept {
  // Dekker with the worker: it publishes sleeping_ = 1, then re-reads pending_ /
  // stop_; we publish pending_ / stop_, then read sleeping_ (all seq_cst).
  if (sleeping_.load(std::memory_order_seq_cst) == 1 && sleeping_.exchange(0, std::memory_order_seq_cst) == 1)
    futex_wake(&sleeping_);
}

Task* WorkerCore::pop_one() {
  std::lock_guard lock(mutex_);
  Task* t = head_;
  if (t) {
    head_ = t->next;
    if (!head_) tail_ = nullptr;
    pending_.fetch_sub(1, std::memory_order_seq_cst);
  }
  return t;
}

Task* WorkerCore::next_task() {
  for (;;) {
    if (stop_.load(std::memory_order_acquire)) return nullptr;
    if (pending_.load(std::memory_order_acquire) > 0) {
      if (Task* t = pop_one()) return t;
      continue;
    }
    SpinPolicy::Wait w;
    if (worker_spin_.spin(
            [&] { return pending_.load(std::memory_order_acquire) > 0 || stop_.load(std::memory_order_acquire); }, w))
      continue;
    sleeping_.store(1, std::memory_order_seq_cst);
    if (pending_.load(std::memory_order_seq_cst) > 0 || stop_.load(std::memory_order_seq_cst)) {
      sleeping_.store(0, std::memory_order_seq_cst);
      continue;
    }
    futex_wait(sleeping_, 1);
    sleeping_.store(0, std::memory_order_seq_cst);
    worker_spin_.slept(w);
  }
}

void WorkerCore::start() {
  thread_ = std::thread([this, self = shared_from_this()] { main(); });
  std::unique_lock lock(mutex_);
  started_cv_.wait(lock, [&] { return started_; });
  if (start_error_) {
    lock.unlock();
    thread_.join();
    std::rethrow_exception(start_error_);
  }
}

void WorkerCore::main() {
  tl_worker = this;
  native_ = pthread_self();
  {
    std::string n = options_.name.substr(0, 15);
    pthread_setname_np(pthread_self(), n.c_str());
  }
  std::exception_ptr err;
  try {
    context_ = options_.context_factory ? options_.context_factory()
                                        : create_headless_context(options_.headless);
    if (!context_) throw UsageError("GlWorker: the context factory returned no context");
    context_->make_current();
    load_gl(*context_);
    info_ = query_gl_info(context_->description());
    if (info_.debug_context && info_.khr_debug) {
      debug_sink_ = [this](const GlDebugMessage& m) { on_debug(m); };
      debug_enabled_ = enable_gl_debug_output(&debug_sink_);
    }
  } catch (...) {
    err = std::current_exception();
    if (context_) {
      context_->done_current();
      context_.reset();
    }
  }
  {
    std::lock_guard lock(mutex_);
    started_ = true;
    start_error_ = err;
    if (err) {
      accepting_ = false;
      closed_ = true;
    }
  }
  started_cv_.notify_all();
  if (err) return;

  while (Task* t = next_task()) t->run(*this);
  drain();

  if (debug_enabled_) disable_gl_debug_output();
  context_->done_current();
  context_.reset();
  tl_worker = nullptr;
}

void WorkerCore::drain() {
  for (;;) {
    std::unique_lock lock(mutex_);
    Task* list = head_;
    head_ = tail_ = nullptr;
    pending_.store(0, std::memory_order_seq_cst);
    if (!list) {
      if (resources_.empty()) {
        closed_ = true;  // from here on nothing can be queued or registered
        return;
      }
      std::map<std::uint64_t, std::function<void()>> left;
      left.swap(resources_);
      lock.unlock();
      log(LogLevel::Debug, "GlWorker: releasing " + std::to_string(left.size()) + " resources at shutdown");
      for (auto it = left.rbegin(); it != left.rend(); ++it) run_release(it->second);
      continue;
    }
    lock.unlock();
    while (list) {
      Task* t = list;
      list = list->next;
      if (t->must_run) {
        t->run(*this);
        continue;
      }
      // Made in its own statement: the temporary (whose message string is
      // shared copy-on-write with the stored copy) is gone before the caller
      // can wake up and read it.
      std::exception_ptr stopped =
          std::make_exception_ptr(WorkerStopped("GlWorker '" + options_.name + "': worker stopped before the call ran"));
      t->fail(std::move(stopped));
    }
  }
}

void WorkerCore::run_release(std::function<void()>& fn) noexcept {
  try {
    fn();
  } catch (const std::exception& e) {
    log(LogLevel::Error, std::string("GlWorker: releasing a resource failed: ") + e.what());
  } catch (...) {
    log(LogLevel::Error, "GlWorker: releasing a resource failed");
  }
  take_gl_error(*this);  // already logged by the debug callback
}

void WorkerCore::request_stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    accepting_ = false;
  }
  stop_.store(true, std::memory_order_seq_cst);
  wake();
}

void WorkerCore::on_debug(const GlDebugMessage& m) {
  if (m.is_error()) {
    gl_errors_.fetch_add(1, std::memory_order_relaxed);
    if (options_.throw_on_gl_error && !pending_gl_error_) pending_gl_error_ = m.describe();
  }
  if (options_.on_debug_message) options_.on_debug_message(m);
}

// --- detail API -----------------------------------------------------------------
bool on_worker(const WorkerCore& core) noexcept { return tl_worker == &core; }

void submit_and_wait(WorkerCore& core, Task& task) {
  task.state.store(0, std::memory_order_relaxed);
  if (!core.push(&task))
    throw WorkerStopped("GlWorker '" + core.name() + "': worker stopped; the call was not run");
  wait_done(core, task);
}

void submit_posted(WorkerCore& core, std::unique_ptr<PostedCall> task) {
  if (!core.push(task.get()))
    throw WorkerStopped("GlWorker '" + core.name() + "': worker stopped; the posted call was not queued");
  (void)task.release();  // the worker deletes it after running or failing it
}

std::exception_ptr take_gl_error(WorkerCore& core) noexcept {
  if (!core.pending_gl_error_) return nullptr;
  std::string text = std::move(*core.pending_gl_error_);
  core.pending_gl_error_.reset();
  try {
    return std::make_exception_ptr(Error(Api::Gl, "KHR_debug", 0, "GL_DEBUG_TYPE_ERROR", text));
  } catch (...) {
    return std::current_exception();
  }
}

void PostedFunction::run(WorkerCore& core) noexcept {
  try {
    fn();
    if (auto e = take_gl_error(core)) std::rethrow_exception(e);
  } catch (...) {
    log(LogLevel::Error, "GlWorker '" + core.name() + "': a posted call threw: " + describe(std::current_exception()));
  }
  delete this;
}

void PostedFunction::fail(std::exception_ptr e) noexcept {
  log(LogLevel::Warning, "GlWorker: a posted call was dropped: " + describe(e));
  delete this;
}

std::uint64_t track(WorkerCore& core, std::function<void()> release) {
  std::lock_guard lock(core.mutex_);
  if (core.closed_) throw WorkerStopped("GlWorker '" + core.name() + "': worker stopped; cannot register a resource");
  std::uint64_t id = ++core.next_resource_;
  core.resources_.emplace(id, std::move(release));
  return id;
}

void release(WorkerCore& core, std::uint64_t id) noexcept {
  const bool here = on_worker(core);
  std::unique_ptr<PostedFunction> task;
  if (!here) {
    try {
      task = std::make_unique<PostedFunction>(nullptr, /*release=*/true);
    } catch (...) {
      log(LogLevel::Error, "GlWorker: out of memory queueing a resource release; it runs at shutdown");
      return;  // still registered: the shutdown sweep releases it
    }
  }
  std::function<void()> fn;
  {
    std::lock_guard lock(core.mutex_);
    auto it = core.resources_.find(id);
    if (it == core.resources_.end()) return;  // released at shutdown already
    fn = std::move(it->second);
    core.resources_.erase(it);
    if (!here) {
      // Leave the registry and enter the queue in one step: the shutdown
      // sweep (which runs once the queue is empty) then never sees a release
      // in between, so it cannot delete a buffer whose registration's release
      // (unmap, unregister) is still on its way.
      task->fn = std::move(fn);
      core.link_locked(task.release());  // the worker deletes it after running it
    }
  }
  if (here) core.run_release(fn);
  else core.wake();
}

void assert_on_worker(const WorkerCore& core, const char* what) {
#ifdef HANDOFF_DEBUG_AFFINITY
  if (!on_worker(core))
    throw UsageError(std::string(what) + " touches GL and must run on the GL worker thread ('" + core.name() +
                     "'); call it through GlWorker::run");
#else
  (void)core;
  (void)what;
#endif
}

std::size_t live_resources(const WorkerCore& core) noexcept {
  std::lock_guard lock(core.mutex_);
  return core.resources_.size();
}

}  // namespace detail

// --- GlWorker ---------------------------------------------------------------------
GlWorker::GlWorker(GlWorkerOptions options) : core_(std::make_shared<detail::WorkerCore>(std::move(options))) {
  core_->start();
}

GlWorker::~GlWorker() { shutdown(); }

void GlWorker::post(std::function<void()> f) {
  if (!f) throw UsageError("GlWorker::post: empty function");
  detail::submit_posted(*core_, std::make_unique<detail::PostedFunction>(std::move(f), false));
}

void GlWorker::shutdown() noexcept {
  core_->request_stop();
  std::lock_guard lock(core_->join_mutex_);
  if (!core_->thread_.joinable()) return;
  if (on_worker()) {
    log(LogLevel::Warning, "GlWorker::shutdown called on the worker itself: detaching it");
    core_->thread_.detach();
    return;
  }
  core_->thread_.join();
}

bool GlWorker::stopped() const noexcept {
  std::lock_guard lock(core_->mutex_);
  return !core_->accepting_;
}

const GlInfo& GlWorker::info() const noexcept { return core_->info_; }

std::thread::native_handle_type GlWorker::native_thread() const noexcept { return core_->native_; }

std::size_t GlWorker::queued() const noexcept { return core_->pending_.load(std::memory_order_acquire); }

std::size_t GlWorker::gl_error_count() const noexcept { return core_->gl_errors_.load(std::memory_order_relaxed); }

}  // namespace handoff
