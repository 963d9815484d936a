#pragma once
// Runs a function over the bands of a frame on a few threads, the caller's
// included: the scene's CPU renderer uses every core this way.
//
// Thread safety: run() from one thread at a time; the pool's own threads live
// as long as it does. Ownership: the helpers belong to the pool.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace handoff::media {

class BandPool {
 public:
  // `threads` in all (so threads - 1 helpers); 0: one per core.
  explicit BandPool(unsigned threads);
  ~BandPool();
  BandPool(const BandPool&) = delete;
  BandPool& operator=(const BandPool&) = delete;

  unsigned threads() const noexcept { return unsigned(helpers_.size()) + 1; }
  // fn(band) for every band in [0, bands), spread over the threads; returns
  // when all ran, rethrowing the first exception. Bounded by wait_limit():
  // past it no further band starts and WaitTimeout names the pool.
  void run(unsigned bands, const std::function<void(unsigned)>& fn);

 private:
  void helper();
  void work(std::unique_lock<std::mutex>& lock);

  std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_;
  const std::function<void(unsigned)>* job_ = nullptr;
  unsigned bands_ = 0, next_ = 0, unfinished_ = 0;
  std::uint64_t generation_ = 0;
  std::exception_ptr error_;
  bool abort_ = false;
  bool stop_ = false;
  std::vector<std::thread> helpers_;  // last: started once the members above exist
};

}  // namespace handoff::media
