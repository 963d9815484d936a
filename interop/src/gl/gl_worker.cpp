// The GL worker: one thread, one context, one queue.
//
// The queue is an intrusive FIFO under a mutex, and nobody sleeps when there
// is work: the worker and a waiting caller each spin briefly before parking on
// a futex (common/spin.hpp learns how long from the waits), and a producer
// only makes a wake-up syscall when the worker really sleeps. A run() call
// lives on its caller's stack (nothing is allocated) and its result comes back
// through one atomic word. This is what beats mutex +
// condition_variable + packaged_task on round trips (bench/bench_worker.cpp
// measures both in the same run).
//
// Waits on another thread are bounded by wait_limit(): a caller waiting for
// its call to start (else it withdraws the call), start() waiting for the
// context, shutdown() waiting for the thread to finish. A call that started is
// waited for to its end: it runs on the caller's stack.
#include "gl/worker_core.hpp"

#include <glad/gl.h>

#include <handoff/gl_check.hpp>
#include <handoff/log.hpp>
#include <handoff/wait.hpp>

#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
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
// owner has just returned (or freed it): the kernel then finds no waiter (or
// wakes a spurious one, which every wait loop tolerates); no memory is touched.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, const timespec* timeout = nullptr) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, timeout, nullptr, 0);
}
void futex_wake(std::atomic<std::uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

std::string describe(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown exception";
  }
}

std::string worker_name(const WorkerCore& core) { return "GL worker '" + core.name() + "'"; }

// A post() or a queued resource release: the worker frees it after running
// (or failing) it.
class PostedFunction final : public Task {
 public:
  PostedFunction(std::function<void()> f, bool release)
      : Task(release ? "a resource release" : "a posted call"), fn(std::move(f)) {
    must_run = release;
  }
  void run(WorkerCore& core) noexcept override {
    try {
      fn();
      if (auto e = take_gl_error(core)) std::rethrow_exception(e);
    } catch (...) {
      log(LogLevel::Error, worker_name(core) + ": a posted call threw: " + describe(std::current_exception()));
    }
    delete this;
  }
  void fail(std::exception_ptr e) noexcept override {
    log(LogLevel::Warning, "GlWorker: a posted call was dropped: " + describe(e));
    delete this;
  }
  std::function<void()> fn;
};

// Waits until the worker finished `call`: false when `limit` passed first (the
// state is then kCallerAsleep).
bool wait_done(WorkerCore& core, RunCall& call, std::chrono::nanoseconds limit) {
  auto& s = call.state;
  SpinPolicy::Wait w;
  if (core.caller_spin().spin([&] { return s.load(std::memory_order_acquire) == RunCall::kDone; }, w)) return true;
  std::uint32_t expected = RunCall::kPending;
  if (!s.compare_exchange_strong(expected, RunCall::kCallerAsleep, std::memory_order_acq_rel)) return true;  // done
  const auto deadline = std::chrono::steady_clock::now() + limit;
  bool done = true;
  while (s.load(std::memory_order_acquire) != RunCall::kDone) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::nanoseconds::zero()) {
      done = false;
      break;
    }
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    const timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    futex_wait(s, RunCall::kCallerAsleep, &ts);
  }
  core.caller_spin().slept(w);
  return done;
}

}  // namespace

// --- run() calls ----------------------------------------------------------------
void RunCall::finish() noexcept {
  std::atomic<std::uint32_t>* word = &state;
  // The exchange is the last access while the caller owns the call: it may
  // free it as soon as it sees kDone.
  if (word->exchange(kDone, std::memory_order_acq_rel) == kCallerAsleep) futex_wake(word);
}

void submit_and_wait(WorkerCore& core, RunCall& call) {
  if (!core.push(&call)) throw WorkerStopped(worker_name(core) + ": worker stopped; the call was not run");
  const auto limit = wait_limit();
  if (wait_done(core, call, limit)) return;
  const std::string busy = core.busy_with();
  if (core.withdraw(&call)) {
    throw WaitTimeout(worker_name(core) + ": run() result (the call had not started: the worker is busy with " +
                          busy + "; the call was withdrawn and will not run)",
                      limit);
  }
  // Started: it uses the caller's callable and stack, so leaving now would let
  // it write into a frame that is gone. Say so, then wait for its end.
  log(LogLevel::Warning, worker_name(core) + ": a run() call is still running after " + format_duration(limit) +
                             " (handoff::wait_limit); waiting for it to return");
  while (call.state.load(std::memory_order_acquire) != RunCall::kDone)
    futex_wait(call.state, RunCall::kCallerAsleep, nullptr);
}

// --- WorkerCore: the queue ----------------------------------------------------------
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

bool WorkerCore::withdraw(Task* t) noexcept {
  std::lock_guard lock(mutex_);
  Task* prev = nullptr;
  for (Task* cur = head_; cur; prev = cur, cur = cur->next) {
    if (cur != t) continue;
    if (prev) prev->next = cur->next;
    else head_ = cur->next;
    if (tail_ == cur) tail_ = prev;
    pending_.fetch_sub(1, std::memory_order_seq_cst);
    return true;
  }
  return false;
}

const char* WorkerCore::busy_with() const noexcept {
  const char* b = busy_.load(std::memory_order_relaxed);
  return b ? b : "nothing (it is idle)";
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
    futex_wait(sleeping_, 1);  // idle: nobody waits on the worker here
    sleeping_.store(0, std::memory_order_seq_cst);
    worker_spin_.slept(w);
  }
}

void WorkerCore::run_task(Task* t) noexcept {
  busy_.store(t->kind, std::memory_order_relaxed);  // read before run(): the task may free itself
  t->run(*this);
  busy_.store(nullptr, std::memory_order_relaxed);
}

// --- WorkerCore: the thread ---------------------------------------------------------
void WorkerCore::start() {
  thread_ = std::thread([this, self = shared_from_this()] { main(); });
  const auto limit = wait_limit();
  std::unique_lock lock(mutex_);
  if (!state_cv_.wait_for(lock, limit, [&] { return started_; })) {
    // The factory (or the driver) is stuck: nobody will use this worker. It
    // destroys the context itself if the factory ever returns.
    start_abandoned_ = true;
    accepting_ = false;
    lock.unlock();
    thread_.detach();
    throw WaitTimeout(worker_name(*this) + ": context creation", limit);
  }
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
  if (make_context()) {
    while (Task* t = next_task()) run_task(t);
    drain();
    destroy_context();
  }
  tl_worker = nullptr;
  {
    std::lock_guard lock(mutex_);
    exited_ = true;
  }
  state_cv_.notify_all();
}

bool WorkerCore::make_context() {
  busy_.store("context creation", std::memory_order_relaxed);
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
  }
  busy_.store(nullptr, std::memory_order_relaxed);
  bool abandoned = false;
  {
    std::lock_guard lock(mutex_);
    started_ = true;
    start_error_ = err;
    abandoned = start_abandoned_;
    if (err || abandoned) {
      accepting_ = false;
      closed_ = true;
    }
  }
  state_cv_.notify_all();
  if (abandoned && !err) log(LogLevel::Warning, worker_name(*this) + ": the context came after the constructor gave up "
                                                                   "waiting; it is destroyed unused");
  if (err || abandoned) {
    destroy_context();
    return false;
  }
  return true;
}

void WorkerCore::destroy_context() noexcept {
  if (!context_) return;
  if (debug_enabled_) disable_gl_debug_output();
  debug_enabled_ = false;
  context_->done_current();
  context_.reset();
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
      busy_.store("releasing resources at shutdown", std::memory_order_relaxed);
      for (auto it = left.rbegin(); it != left.rend(); ++it) run_release(it->second);
      busy_.store(nullptr, std::memory_order_relaxed);
      continue;
    }
    lock.unlock();
    while (list) {
      Task* t = list;
      list = list->next;
      if (t->must_run) {
        run_task(t);
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
  take_gl_error();  // already logged by the debug callback
}

void WorkerCore::request_stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    accepting_ = false;
  }
  stop_.store(true, std::memory_order_seq_cst);
  wake();
}

void WorkerCore::shutdown() noexcept {
  request_stop();
  std::lock_guard join_lock(join_mutex_);
  if (!thread_.joinable()) return;
  if (on_worker(*this)) {
    log(LogLevel::Warning, "GlWorker::shutdown called on the worker itself: detaching it");
    thread_.detach();
    return;
  }
  const auto limit = wait_limit();
  bool exited = false;
  {
    std::unique_lock lock(mutex_);
    exited = state_cv_.wait_for(lock, limit, [&] { return exited_; });
  }
  if (exited) {
    thread_.join();  // main() has returned or is returning: no GL work is left
    return;
  }
  try {
    log(LogLevel::Error, std::string(WaitTimeout(worker_name(*this) + ": shutdown (the worker is busy with " +
                                                     busy_with() + ")",
                                                 limit)
                                         .what()) +
                             "; the thread is detached and finishes the shutdown if that call ever returns");
  } catch (...) {
  }
  thread_.detach();
}

bool WorkerCore::stopped() const noexcept {
  std::lock_guard lock(mutex_);
  return !accepting_;
}

// --- WorkerCore: resources and GL errors ------------------------------------------------
std::uint64_t WorkerCore::track(std::function<void()> fn) {
  std::lock_guard lock(mutex_);
  if (closed_) throw WorkerStopped("GlWorker '" + name() + "': worker stopped; cannot register a resource");
  std::uint64_t id = ++next_resource_;
  resources_.emplace(id, std::move(fn));
  return id;
}

void WorkerCore::release(std::uint64_t id) noexcept {
  const bool here = on_worker(*this);
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
    std::lock_guard lock(mutex_);
    auto it = resources_.find(id);
    if (it == resources_.end()) return;  // released at shutdown already
    fn = std::move(it->second);
    resources_.erase(it);
    if (!here) {
      // Leave the registry and enter the queue in one step: the shutdown
      // sweep (which runs once the queue is empty) then never sees a release
      // in between, so it cannot delete a buffer whose registration's release
      // (unmap, unregister) is still on its way.
      task->fn = std::move(fn);
      link_locked(task.release());  // the worker deletes it after running it
    }
  }
  if (here) run_release(fn);
  else wake();
}

std::size_t WorkerCore::live_resources() const noexcept {
  std::lock_guard lock(mutex_);
  return resources_.size();
}

void WorkerCore::on_debug(const GlDebugMessage& m) {
  if (m.is_error()) {
    gl_errors_.fetch_add(1, std::memory_order_relaxed);
    if (throw_on_gl_error_.load(std::memory_order_relaxed) && !pending_gl_error_) pending_gl_error_ = m.describe();
  }
  if (options_.on_debug_message) options_.on_debug_message(m);
}

std::exception_ptr WorkerCore::take_gl_error() noexcept {
  if (!pending_gl_error_) return nullptr;
  std::string text = std::move(*pending_gl_error_);
  pending_gl_error_.reset();
  try {
    return std::make_exception_ptr(Error(Api::Gl, "KHR_debug", 0, "GL_DEBUG_TYPE_ERROR", text));
  } catch (...) {
    return std::current_exception();
  }
}

// --- detail API -----------------------------------------------------------------
bool on_worker(const WorkerCore& core) noexcept { return tl_worker == &core; }

std::exception_ptr take_gl_error(WorkerCore& core) noexcept { return core.take_gl_error(); }

std::uint64_t track(WorkerCore& core, std::function<void()> release) { return core.track(std::move(release)); }

void release(WorkerCore& core, std::uint64_t id) noexcept { core.release(id); }

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

}  // namespace detail

// --- GlWorker ---------------------------------------------------------------------
GlWorker::GlWorker(GlWorkerOptions options) : core_(std::make_shared<detail::WorkerCore>(std::move(options))) {
  core_->start();
}

GlWorker::~GlWorker() { shutdown(); }

void GlWorker::post(std::function<void()> f) {
  if (!f) throw UsageError("GlWorker::post: empty function");
  auto task = std::make_unique<detail::PostedFunction>(std::move(f), false);
  if (!core_->push(task.get()))
    throw WorkerStopped("GlWorker '" + core_->name() + "': worker stopped; the posted call was not queued");
  (void)task.release();  // the worker deletes it after running or failing it
}

void GlWorker::shutdown() noexcept { core_->shutdown(); }

bool GlWorker::stopped() const noexcept { return core_->stopped(); }

const GlInfo& GlWorker::info() const noexcept { return core_->info(); }

std::thread::native_handle_type GlWorker::native_thread() const noexcept { return core_->native_thread(); }

bool GlWorker::on_worker() const noexcept { return detail::on_worker(*core_); }

void GlWorker::assert_on_worker(const char* what) const { detail::assert_on_worker(*core_, what); }

namespace {

// A run() call through its one non-template step: the caller's function and
// argument, on the caller's stack like every RunCall.
class ErasedCall final : public detail::RunCall {
 public:
  ErasedCall(void (*call)(void*), void* arg) noexcept : call_(call), arg_(arg) {}
  void run(detail::WorkerCore& core) noexcept override {
    try {
      call_(arg_);
      if (auto gl = detail::take_gl_error(core)) error = gl;
    } catch (...) {
      error = std::current_exception();
    }
    finish();
  }
  void fail(std::exception_ptr e) noexcept override {
    error = std::move(e);
    finish();
  }

 private:
  void (*call_)(void*);
  void* arg_;
};

}  // namespace

void GlWorker::run_call(void (*call)(void*), void* arg) {
  detail::WorkerCore& core = *core_;
  if (detail::on_worker(core)) {
    call(arg);
    if (auto e = detail::take_gl_error(core)) std::rethrow_exception(e);
    return;
  }
  ErasedCall c(call, arg);
  detail::submit_and_wait(core, c);
  if (c.error) std::rethrow_exception(c.error);
}

}  // namespace handoff
