// The library-wide wait limit (handoff/wait.hpp).
#include <handoff/wait.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace {

using namespace std::chrono_literals;

struct RestoreLimit {
  std::chrono::nanoseconds saved = handoff::wait_limit();
  ~RestoreLimit() { handoff::set_wait_limit(saved); }
};

TEST(WaitLimit, DefaultsToAFewSecondsAndCanBeChanged) {
  RestoreLimit restore;
  handoff::set_wait_limit(0ns);  // the default (or HANDOFF_WAIT_TIMEOUT_MS)
  EXPECT_GT(handoff::wait_limit(), 0ns);
  handoff::set_wait_limit(250ms);
  EXPECT_EQ(handoff::wait_limit(), 250ms);
  handoff::set_wait_limit(-1s);
  EXPECT_GT(handoff::wait_limit(), 0ns) << "a non-positive limit restores the default";
}

TEST(WaitLimit, TimeoutNamesWhatDidNotFinishAndTheLimit) {
  handoff::WaitTimeout e("GL fence of ring slot 2", 1500ms);
  const std::string what = e.what();
  EXPECT_EQ(what.rfind("GL fence of ring slot 2 did not finish within 1.5 s", 0), 0u) << what;
  EXPECT_EQ(e.waited_for(), "GL fence of ring slot 2");
  const handoff::Error& base = e;  // a runtime condition, not misuse
  EXPECT_EQ(base.code_name(), "timeout");
}

TEST(WaitLimit, DurationsPrintInTheirUnit) {
  EXPECT_EQ(handoff::format_duration(2s), "2 s");
  EXPECT_EQ(handoff::format_duration(250ms), "250 ms");
  EXPECT_EQ(handoff::format_duration(40us), "40 us");
  EXPECT_EQ(handoff::format_duration(7ns), "7 ns");
}

}  // namespace
