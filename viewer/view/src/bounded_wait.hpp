#pragma once
// The viewer's waits on GPU fences and on other threads, each bounded by
// handoff::wait_limit(): past it they throw handoff::WaitTimeout naming what
// did not finish ("GL upload fence of frame slot 2"), so a lost device or a
// stuck thread becomes an error instead of a silent hang.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include <handoff/gl_worker.hpp>
#include <handoff/wait.hpp>

namespace handoff::view {

// Blocks until `fence` signals (glClientWaitSync in slices). Thread with a
// context of the fence's share group current. `what` is built only on timeout.
template <typename What>
void wait_for_fence(const GlFence& fence, What&& what) {
  if (!fence) return;
  const auto limit = wait_limit();
  const auto deadline = std::chrono::steady_clock::now() + limit;
  constexpr std::uint64_t kSliceNs = 20'000'000;  // 20 ms
  while (!fence.client_wait(kSliceNs))
    if (std::chrono::steady_clock::now() >= deadline) throw WaitTimeout(what(), limit);
}

// cv.wait(lock, ready), bounded. `what` is built only on timeout.
template <typename Ready, typename What>
void wait_bounded(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, Ready&& ready, What&& what) {
  const auto limit = wait_limit();
  if (!cv.wait_for(lock, limit, ready)) throw WaitTimeout(what(), limit);
}

}  // namespace handoff::view
