#pragma once
// A gtest fixture giving each test its own XDG_RUNTIME_DIR (mode 0700, removed
// afterwards), so publishers of different tests never meet, plus helpers that
// wait (bounded) for a condition.
#include <gtest/gtest.h>

#include <handoff/log.hpp>
#include <handoff/publisher.hpp>
#include <handoff/subscriber.hpp>

#include "wait_support.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

namespace handoff::live::test {

using namespace std::chrono_literals;

class LiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/handoff-live-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    runtime_ = tmpl;
    ASSERT_EQ(::chmod(tmpl, 0700), 0);
    if (const char* old = std::getenv("XDG_RUNTIME_DIR")) saved_ = old;
    had_ = std::getenv("XDG_RUNTIME_DIR") != nullptr;
    ::setenv("XDG_RUNTIME_DIR", tmpl, 1);
    set_log_level(LogLevel::Error);  // refusals and disconnections are expected in these tests
  }
  void TearDown() override {
    if (had_) ::setenv("XDG_RUNTIME_DIR", saved_.c_str(), 1);
    else ::unsetenv("XDG_RUNTIME_DIR");
    std::error_code ec;
    std::filesystem::remove_all(runtime_, ec);
    set_log_level(LogLevel::Warning);
  }

  // A publisher name unique to this test.
  std::string name(const std::string& suffix = "") const {
    return std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()).substr(0, 40) + suffix;
  }
  const std::filesystem::path& runtime() const { return runtime_; }

 private:
  std::filesystem::path runtime_;
  std::string saved_;
  bool had_ = false;
};

// Polls `cond` until it holds or `limit` passed (then a test failure, from
// tests/support's wait_until); returns whether it held.
inline bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds limit = 10s) {
  return handoff::test::wait_until(cond, "a live-tier condition", limit);
}

// Lock step: the subscribers are done with a frame; wait until the publisher
// has their releases too, so the next frame never meets a hold limit that
// only a slow scheduler filled (the publisher would rightly skip it).
inline void settle(const Publisher& pub, std::size_t held = 0) {
  EXPECT_TRUE(eventually([&] { return pub.stats().held_frames == held; })) << pub.stats().held_frames;
}

}  // namespace handoff::live::test
