#pragma once
// Bounded waits in tests: ScopedWaitLimit (handoff::set_wait_limit for one
// scope) and wait_until (polls a condition; a deadlock fails the test instead
// of hanging it).
#include <handoff/wait.hpp>

#include <chrono>
#include <functional>
#include <string_view>

namespace handoff::test {

// set_wait_limit(limit) until the end of the scope, then the previous limit again.
class ScopedWaitLimit {
 public:
  explicit ScopedWaitLimit(std::chrono::nanoseconds limit);
  ~ScopedWaitLimit();
  ScopedWaitLimit(const ScopedWaitLimit&) = delete;
  ScopedWaitLimit& operator=(const ScopedWaitLimit&) = delete;

 private:
  std::chrono::nanoseconds previous_;
};

// Polls `pred` (every millisecond) until it holds and returns true. After the
// bound it adds a gtest failure naming `what` and the bound, and returns false.
// The bound is handoff::wait_limit(), but never below kDefaultWaitLimit: tests
// shorten wait_limit() to make the library time out, and the test's own
// waits for its threads must not time out with it.
bool wait_until(const std::function<bool()>& pred, std::string_view what);
// The same with an explicit bound.
bool wait_until(const std::function<bool()>& pred, std::string_view what, std::chrono::nanoseconds limit);

}  // namespace handoff::test
