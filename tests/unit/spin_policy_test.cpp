// The adaptive spin budget (interop/src/common/spin.hpp): the rules it learns
// by, checked with waits whose start is set by hand (no assertion depends on
// how fast this machine is, beyond "a microsecond passes in well under 1 ms").
#include "common/spin.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

using handoff::detail::SpinPolicy;
using namespace std::chrono_literals;

SpinPolicy::Wait wait_started(SpinPolicy::Clock::duration ago, std::uint32_t spun_ns) {
  SpinPolicy::Wait w;
  w.start = SpinPolicy::Clock::now() - ago;
  w.spun_ns = spun_ns;
  return w;
}

TEST(SpinPolicy, StartsAtItsMaximum) {
  SpinPolicy p(50'000);
  EXPECT_EQ(p.budget_ns(), 50'000u);
}

TEST(SpinPolicy, AWaitLongerThanTheMaximumHalvesTheBudgetDownToZero) {
  SpinPolicy p(50'000);
  p.slept(wait_started(10ms, 50'000));
  EXPECT_EQ(p.budget_ns(), 25'000u);
  for (int i = 0; i < 8; ++i) p.slept(wait_started(10ms, p.budget_ns()));
  EXPECT_EQ(p.budget_ns(), 0u) << "halving stops at zero below " << SpinPolicy::kMinNs << " ns";
}

TEST(SpinPolicy, ASleptWaitShorterThanTheMaximumTeachesABudgetThatWouldHaveCaughtIt) {
  SpinPolicy p(100'000);
  for (int i = 0; i < 8; ++i) p.slept(wait_started(10ms, 0));
  ASSERT_EQ(p.budget_ns(), 0u);
  // A wait of 20 us that slept (no spin at budget zero): next time spin a bit longer than that.
  p.slept(wait_started(20us, 0));
  EXPECT_GE(p.budget_ns(), 25'000u);
  EXPECT_LE(p.budget_ns(), 100'000u);
}

TEST(SpinPolicy, TheBudgetNeverExceedsTheMaximum) {
  SpinPolicy p(10'000);
  p.slept(wait_started(9us, 0));  // 9 us * 1.25 + 1 us > 10 us
  EXPECT_EQ(p.budget_ns(), 10'000u);
}

TEST(SpinPolicy, SpinReturnsAtOnceWhenThePredicateHolds) {
  SpinPolicy p(0);  // no budget: only the first check
  SpinPolicy::Wait w;
  EXPECT_TRUE(p.spin([] { return true; }, w));
  EXPECT_FALSE(p.spin([] { return false; }, w));
  EXPECT_EQ(w.spun_ns, 0u);
}

TEST(SpinPolicy, SpinCatchesAPeerThatAnswersWithinTheBudget) {
  SpinPolicy p(1'000'000'000, /*yield=*/true);  // 1 s: the peer surely answers first
  std::atomic<bool> flag{false};
  std::thread peer([&] {
    std::this_thread::sleep_for(1ms);
    flag.store(true, std::memory_order_release);
  });
  SpinPolicy::Wait w;
  EXPECT_TRUE(p.spin([&] { return flag.load(std::memory_order_acquire); }, w));
  peer.join();
}

TEST(SpinPolicy, SpinGivesUpAfterItsBudget) {
  SpinPolicy p(5'000);
  SpinPolicy::Wait w;
  const auto t0 = SpinPolicy::Clock::now();
  EXPECT_FALSE(p.spin([] { return false; }, w));
  EXPECT_GE(SpinPolicy::Clock::now() - t0, 5us);
  EXPECT_EQ(w.spun_ns, 5'000u);
}

}  // namespace
