#include <handoff/media/band_pool.hpp>

#include <algorithm>
#include <string>
#include <utility>

#include <handoff/wait.hpp>

namespace handoff::media {

BandPool::BandPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 1; i < threads; ++i) helpers_.emplace_back([this] { helper(); });
}

BandPool::~BandPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

// Claims bands until none is left (called locked; runs each band unlocked).
void BandPool::work(std::unique_lock<std::mutex>& lock) {
  while (!abort_ && next_ < bands_) {
    const unsigned band = next_++;
    const std::function<void(unsigned)>* job = job_;
    lock.unlock();
    std::exception_ptr failed;
    try {
      (*job)(band);
    } catch (...) {
      failed = std::current_exception();
    }
    lock.lock();
    if (failed && !error_) error_ = failed;
    if (--unfinished_ == 0) done_cv_.notify_all();
  }
}

// A helper idles until a run() starts (nobody waits on an idle helper).
void BandPool::helper() {
  std::unique_lock lock(mutex_);
  std::uint64_t seen = 0;
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    work(lock);
  }
}

void BandPool::run(unsigned bands, const std::function<void(unsigned)>& fn) {
  if (helpers_.empty() || bands <= 1) {
    for (unsigned b = 0; b < bands; ++b) fn(b);
    return;
  }
  std::unique_lock lock(mutex_);
  job_ = &fn;
  bands_ = bands;
  next_ = 0;
  unfinished_ = bands;
  error_ = nullptr;
  abort_ = false;
  ++generation_;
  work_cv_.notify_all();
  work(lock);
  const auto limit = wait_limit();
  const bool done = done_cv_.wait_for(lock, limit, [&] { return next_ == bands_ && unfinished_ == 0; });
  if (!done) {
    // Start no further band, and let the ones running finish: they use `fn`.
    abort_ = true;
    const unsigned started = next_;
    done_cv_.wait(lock, [&] { return unfinished_ == bands_ - started; });
  }
  job_ = nullptr;
  bands_ = 0;
  if (!done) throw WaitTimeout("the scene's band renderers (" + std::to_string(threads()) + " threads)", limit);
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace handoff::media
