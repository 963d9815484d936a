// The log sink (handoff/log.hpp): replacing it while other threads log. The
// sink a caller replaces must not run any more once set_log_sink returns, so
// the caller may destroy what the sink writes into (the test log captures do).
#include <handoff/log.hpp>
#include <handoff/wait.hpp>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "log_capture.hpp"
#include "wait_support.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace handoff {
namespace {

using namespace std::chrono_literals;

using test::wait_until;

// Puts back the sink, the level and the wait limit a test changed.
struct RestoreLog {
  ~RestoreLog() {
    set_log_sink(nullptr);
    set_log_level(LogLevel::Warning);
    set_wait_limit(std::chrono::nanoseconds(0));
  }
};

TEST(LogSink, ReplacingWaitsUntilTheOldSinksCallsOnOtherThreadsFinished) {
  RestoreLog restore;
  std::atomic<bool> entered{false}, release{false}, replaced{false}, replaced_while_running{false};
  set_log_sink([&](LogLevel, std::string_view) {
    entered = true;
    wait_until([&] { return release.load(); }, "the test to release the sink");
    // The sink's last act: set_log_sink must not have returned before it.
    replaced_while_running = replaced.load();
  });
  std::thread logger([] { log(LogLevel::Error, "from another thread"); });
  ASSERT_TRUE(wait_until([&] { return entered.load(); }, "the sink to be entered"));
  std::thread replacer([&] {
    set_log_sink(nullptr);
    replaced = true;
  });
  // Give the replacer time to reach set_log_sink (before the fix it returned
  // at once; with it, it waits for the running call). No timing is asserted.
  std::this_thread::sleep_for(50ms);
  release = true;
  replacer.join();
  logger.join();
  EXPECT_TRUE(replaced.load());
  EXPECT_FALSE(replaced_while_running.load()) << "set_log_sink returned while the old sink still ran";
}

// Each capture is freed as soon as it is replaced: a call still running in it
// then (ASan: heap-use-after-free) or a message lost would show here.
TEST(LogSink, ThreadsLoggingWhileTheSinkIsReplacedLoseNothing) {
  RestoreLog restore;
  struct Capture {
    std::atomic<long> messages{0};
  };
  std::atomic<long> counted{0};
  auto install = [&] {
    auto* c = new Capture;
    LogSink old = set_log_sink([c](LogLevel, std::string_view) {
      std::this_thread::yield();  // widens the window in which a replaced sink still runs
      c->messages.fetch_add(1);
    });
    return c;
  };
  Capture* current = install();
  constexpr int kThreads = 3, kMessages = 1000;
  std::atomic<bool> go{false};
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      wait_until([&] { return go.load(); }, "the start signal");
      for (int i = 0; i < kMessages; ++i) log(LogLevel::Error, "message");
      done++;
    });
  }
  go = true;
  while (done.load() < kThreads) {
    Capture* next = install();  // returns once nobody runs `current` any more
    counted += current->messages.load();
    delete current;
    current = next;
  }
  for (auto& th : threads) th.join();
  set_log_sink(nullptr);
  counted += current->messages.load();
  delete current;
  EXPECT_EQ(counted.load(), long(kThreads) * kMessages);
}

TEST(LogSink, ASinkMayLogAndReplaceItself) {
  RestoreLog restore;
  std::vector<std::string> seen;  // one thread: no lock needed
  LogSink second = [&](LogLevel, std::string_view m) { seen.emplace_back("second: " + std::string(m)); };
  LogSink returned;
  set_log_sink([&](LogLevel, std::string_view m) {
    seen.emplace_back("first: " + std::string(m));
    if (m == "outer") {
      log(LogLevel::Error, "nested");           // the same sink, re-entered
      returned = set_log_sink(second);          // replaced from inside itself
      log(LogLevel::Error, "after replacing");  // goes to the new sink
    }
  });
  log(LogLevel::Error, "outer");
  log(LogLevel::Error, "later");
  EXPECT_EQ(seen, (std::vector<std::string>{"first: outer", "first: nested", "second: after replacing",
                                            "second: later"}));
  EXPECT_TRUE(static_cast<bool>(returned)) << "set_log_sink returns the sink it replaced";
}

TEST(LogSink, ASinkThatDoesNotReturnMakesReplacingItAWaitTimeout) {
  RestoreLog restore;
  set_wait_limit(100ms);
  std::atomic<bool> entered{false}, release{false};
  set_log_sink([&](LogLevel, std::string_view) {
    entered = true;
    wait_until([&] { return release.load(); }, "the test to release the sink");
  });
  std::thread logger([] { log(LogLevel::Error, "stuck"); });
  ASSERT_TRUE(wait_until([&] { return entered.load(); }, "the sink to be entered"));
  std::atomic<int> later{0};
  try {
    set_log_sink([&](LogLevel, std::string_view) { later++; });
    ADD_FAILURE() << "no WaitTimeout";
  } catch (const WaitTimeout& e) {
    EXPECT_NE(std::string(e.what()).find("log sink"), std::string::npos) << e.what();
  }
  log(LogLevel::Error, "to the new sink");  // installed even though the wait timed out
  EXPECT_EQ(later.load(), 1);
  release = true;
  logger.join();
}

// The test support's capture (tests/support) puts back whatever sink was there.
TEST(LogSink, TestLogCaptureRestoresThePreviousSink) {
  RestoreLog restore;
  std::vector<std::string> outer_lines;
  set_log_sink([&](LogLevel, std::string_view m) { outer_lines.emplace_back(m); });
  {
    test::LogCapture inner(LogLevel::Debug);
    log(LogLevel::Debug, "to the capture");
    log(LogLevel::Error, "also to the capture");
    EXPECT_TRUE(inner.contains("to the capture"));
    EXPECT_EQ(inner.count(LogLevel::Debug), 1u);
    EXPECT_EQ(inner.texts(LogLevel::Error), std::vector<std::string>{"also to the capture"});
    EXPECT_EQ(inner.text(), "to the capture\nalso to the capture\n");
  }
  log(LogLevel::Debug, "below the level again");
  log(LogLevel::Error, "to the outer sink");
  EXPECT_EQ(outer_lines, std::vector<std::string>{"to the outer sink"});
}

TEST(WaitUntil, FailsTheTestNamingWhatDidNotHappen) {
  EXPECT_NONFATAL_FAILURE(wait_until([] { return false; }, "a flag that is never set", 2ms),
                          "wait_until: a flag that is never set did not happen within 2 ms");
  int polls = 0;
  EXPECT_TRUE(wait_until([&] { return ++polls == 3; }, "the third poll"));
  test::ScopedWaitLimit outer(7s);
  {
    test::ScopedWaitLimit inner(100ms);
    EXPECT_EQ(wait_limit(), std::chrono::nanoseconds(100ms));
  }
  EXPECT_EQ(wait_limit(), std::chrono::nanoseconds(7s));
}

}  // namespace
}  // namespace handoff
