#pragma once
// Adaptive spin-then-sleep for short waits between threads (the GL worker's
// queue and run() results, Vulkan fences).
//
// Why spin at all: a sleeping thread's wake-up costs far more than the wait it
// ends when the peer answers within microseconds. On a virtual machine whose
// idle vCPU halts, one futex wake-up of a thread on the other (halted) CPU
// measured ~20 us here, against ~1 us for a spinning waiter.
// Why adapt: spinning only pays when the peer is really running elsewhere; on
// a loaded machine it burns the time slice the peer needs.
//
// The budget is learned from the waits themselves:
//  - a wait that slept without spinning (budget zero) and lasted d, with
//    kWorthNs <= d <= max: spinning a little longer than d would have caught
//    it and saved an expensive wake-up, so the budget becomes d + d/4 (how a
//    budget of zero grows again; no probing). Shorter sleeps teach nothing:
//    where wake-ups are that cheap (a busy machine, whose CPUs never idle)
//    spinning saves little and takes CPU time from the peer;
//  - a spin that gave up, or a wait longer than max: the budget halves (on a
//    loaded machine the peer is not running while we spin, and a spin that
//    fails there would only fail longer if it grew);
//  - a wait the spin caught keeps the budget (at least twice what it took).
// Budgets below kMinNs are zero. With `yield`, past kYieldAfterNs the spin
// yields the CPU between polls (sched_yield: free when nothing else wants this
// CPU), because a peer that has not answered by then may be waiting for this
// very CPU: on 2 cores a spinning Vulkan fence wait kept lavapipe's queue
// thread off the CPU (bench_vk_gl: latency handoff 28.5 -> 19.6 us, streamed
// 22.4 -> 10.4 us with it). Any thread may use one policy; races on the budget
// only make one wait's guess stale.
//
// The clock is a parameter so that tests can drive time by hand (a clock that
// moves only when they say makes every rule checkable without timing);
// SpinPolicy is the steady_clock one the library uses.
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace handoff::detail {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

template <typename ClockT>
class BasicSpinPolicy {
 public:
  using Clock = ClockT;
  static constexpr std::uint32_t kMinNs = 1000;
  static constexpr std::uint32_t kYieldAfterNs = 2000;
  static constexpr std::uint32_t kWorthNs = 8000;

  // One wait's record, for slept().
  struct Wait {
    typename Clock::time_point start{};
    std::uint32_t spun_ns = 0;
  };

  // `yield`: see kYieldAfterNs (for waits on another library's threads).
  explicit BasicSpinPolicy(std::uint32_t max_ns, bool yield = false) noexcept
      : budget_ns_(max_ns), max_ns_(max_ns), yield_(yield) {}

  // True when `pred` held within the budget. False: the caller sleeps, then
  // reports the whole wait with slept(w).
  template <typename Pred>
  bool spin(Pred pred, Wait& w) {
    if (pred()) return true;
    w.start = Clock::now();
    const std::uint32_t budget = budget_ns_.load(std::memory_order_relaxed);
    w.spun_ns = budget;
    if (budget == 0) return false;
    const auto limit = std::chrono::nanoseconds(budget);
    for (;;) {
      for (int i = 0; i < 16; ++i) {
        if (pred()) {
          const auto took =
              std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - w.start).count());
          if (2 * took > budget) store(2 * took + kMinNs);
          return true;
        }
        cpu_relax();
      }
      const auto spun = Clock::now() - w.start;
      if (spun >= limit) break;
      // Past the first microseconds, a peer runnable on this CPU (a driver's
      // queue thread, say) goes first: the wait is likely for it.
      if (yield_ && spun >= std::chrono::nanoseconds(kYieldAfterNs)) sched_yield();
    }
    return pred();  // the caller sleeps when false
  }

  void slept(const Wait& w) noexcept {
    const auto d = std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - w.start).count());
    if (w.spun_ns > 0 || d > max_ns_) {
      store(budget_ns_.load(std::memory_order_relaxed) / 2);
    } else if (d >= kWorthNs) {
      store(d + d / 4 + kMinNs);
    }
  }

  std::uint32_t budget_ns() const noexcept { return budget_ns_.load(std::memory_order_relaxed); }

 private:
  void store(std::uint64_t ns) noexcept {
    const std::uint64_t v = ns > max_ns_ ? max_ns_ : (ns < kMinNs ? 0 : ns);
    budget_ns_.store(std::uint32_t(v), std::memory_order_relaxed);
  }
  std::atomic<std::uint32_t> budget_ns_;
  const std::uint32_t max_ns_;
  const bool yield_;
};

// A class, not an alias: vk_context.hpp declares it ahead.
class SpinPolicy : public BasicSpinPolicy<std::chrono::steady_clock> {
 public:
  using BasicSpinPolicy::BasicSpinPolicy;
};

}  // namespace handoff::detail
