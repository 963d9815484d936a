// The adaptive spin budget (interop/src/common/spin.hpp): the rules it learns
// by, checked on a clock the test moves by hand (HandClock), so that no
// assertion depends on how fast this machine is or how it is loaded.
#include "common/spin.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace {

using handoff::detail::BasicSpinPolicy;
using handoff::detail::SpinPolicy;
using namespace std::chrono_literals;

// A clock that moves only when the test says: by advance(), and by `step` on
// every reading (zero: frozen between advances).
struct HandClock {
  using rep = std::int64_t;
  using period = std::nano;
  using duration = std::chrono::nanoseconds;
  using time_point = std::chrono::time_point<HandClock>;
  static constexpr bool is_steady = true;

  static time_point now() noexcept { return time_point(duration(ns.fetch_add(step.load()))); }
  static void advance(duration d) noexcept { ns += d.count(); }
  static void reset(duration each_reading = 0ns) noexcept {
    ns = 1'000'000'000;  // any start: waits "started ago" stay after the epoch
    step = each_reading.count();
  }
  static inline std::atomic<std::int64_t> ns{0};
  static inline std::atomic<std::int64_t> step{0};
};

using HandPolicy = BasicSpinPolicy<HandClock>;

class SpinPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override { HandClock::reset(); }
};

// A wait that began `ago` before now on the hand clock; slept() finds it lasted exactly `ago`.
HandPolicy::Wait wait_started(HandClock::duration ago, std::uint32_t spun_ns) {
  HandPolicy::Wait w;
  w.start = HandClock::now() - ago;
  w.spun_ns = spun_ns;
  return w;
}

TEST_F(SpinPolicyTest, StartsAtItsMaximum) {
  HandPolicy p(50'000);
  EXPECT_EQ(p.budget_ns(), 50'000u);
  SpinPolicy library(50'000);  // the steady_clock policy the library uses
  EXPECT_EQ(library.budget_ns(), 50'000u);
}

TEST_F(SpinPolicyTest, AWaitLongerThanTheMaximumHalvesTheBudgetDownToZero) {
  HandPolicy p(50'000);
  p.slept(wait_started(10ms, 50'000));
  EXPECT_EQ(p.budget_ns(), 25'000u);
  for (int i = 0; i < 8; ++i) p.slept(wait_started(10ms, p.budget_ns()));
  EXPECT_EQ(p.budget_ns(), 0u) << "halving stops at zero below " << HandPolicy::kMinNs << " ns";
}

TEST_F(SpinPolicyTest, ASleptWaitShorterThanTheMaximumTeachesABudgetThatWouldHaveCaughtIt) {
  HandPolicy p(100'000);
  for (int i = 0; i < 8; ++i) p.slept(wait_started(10ms, 0));
  ASSERT_EQ(p.budget_ns(), 0u);
  // A wait of 20 us that slept (no spin at budget zero): next time spin a bit
  // longer than that, d + d / 4 + kMinNs.
  p.slept(wait_started(20us, 0));
  EXPECT_EQ(p.budget_ns(), 20'000u + 5'000u + HandPolicy::kMinNs);
}

TEST_F(SpinPolicyTest, ASleptWaitTooShortToBeWorthSpinningForTeachesNothing) {
  HandPolicy p(100'000);
  for (int i = 0; i < 8; ++i) p.slept(wait_started(10ms, 0));
  ASSERT_EQ(p.budget_ns(), 0u);
  p.slept(wait_started(std::chrono::nanoseconds(HandPolicy::kWorthNs - 1), 0));
  EXPECT_EQ(p.budget_ns(), 0u);
  p.slept(wait_started(std::chrono::nanoseconds(HandPolicy::kWorthNs), 0));
  EXPECT_EQ(p.budget_ns(), HandPolicy::kWorthNs + HandPolicy::kWorthNs / 4 + HandPolicy::kMinNs);
}

TEST_F(SpinPolicyTest, TheBudgetNeverExceedsTheMaximum) {
  HandPolicy p(10'000);
  p.slept(wait_started(9us, 0));  // 9 us * 1.25 + 1 us > 10 us
  EXPECT_EQ(p.budget_ns(), 10'000u);
}

TEST_F(SpinPolicyTest, SpinReturnsAtOnceWhenThePredicateHolds) {
  SpinPolicy p(0);  // no budget: only the first check
  SpinPolicy::Wait w;
  EXPECT_TRUE(p.spin([] { return true; }, w));
  EXPECT_FALSE(p.spin([] { return false; }, w));
  EXPECT_EQ(w.spun_ns, 0u);
}

// The clock stands still, so the budget cannot run out: the spin ends only
// because the peer answered, and the peer answers only once the spin is
// polling (no sleep decides the order).
TEST_F(SpinPolicyTest, SpinCatchesAPeerThatAnswersWithinTheBudget) {
  HandPolicy p(1'000'000, /*yield=*/true);
  std::atomic<int> polls{0};
  std::atomic<bool> flag{false};
  std::thread peer([&] {
    while (polls.load(std::memory_order_acquire) < 3) std::this_thread::yield();
    flag.store(true, std::memory_order_release);
  });
  HandPolicy::Wait w;
  const bool caught = p.spin(
      [&] {
        polls.fetch_add(1, std::memory_order_acq_rel);
        return flag.load(std::memory_order_acquire);
      },
      w);
  peer.join();
  EXPECT_TRUE(caught);
  EXPECT_GE(polls.load(), 4) << "the peer answered after the third poll";
  EXPECT_EQ(p.budget_ns(), 1'000'000u) << "a wait the spin caught in no time keeps the budget";
}

// Each clock reading moves the clock 1 us: the spin gives up once its
// readings say the budget is spent, not before.
TEST_F(SpinPolicyTest, SpinGivesUpAfterItsBudget) {
  HandClock::reset(1us);
  HandPolicy p(5'000);
  HandPolicy::Wait w;
  int polls = 0;
  EXPECT_FALSE(p.spin(
      [&] {
        ++polls;
        return false;
      },
      w));
  EXPECT_EQ(w.spun_ns, 5'000u);
  const auto last_reading = HandClock::time_point(HandClock::duration(HandClock::ns - HandClock::step));
  EXPECT_GE(last_reading - w.start, 5us) << "gave up before the budget was spent";
  EXPECT_GE(polls, 2) << "polled while spinning, and once more before giving up";
}

}  // namespace
