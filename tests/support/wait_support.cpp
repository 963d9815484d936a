#include "wait_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>

namespace handoff::test {

ScopedWaitLimit::ScopedWaitLimit(std::chrono::nanoseconds limit) : previous_(wait_limit()) { set_wait_limit(limit); }
ScopedWaitLimit::~ScopedWaitLimit() { set_wait_limit(previous_); }

bool wait_until(const std::function<bool()>& pred, std::string_view what) {
  return wait_until(pred, what, std::max<std::chrono::nanoseconds>(wait_limit(), kDefaultWaitLimit));
}

bool wait_until(const std::function<bool()>& pred, std::string_view what, std::chrono::nanoseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) {
      ADD_FAILURE() << "wait_until: " << what << " did not happen within " << format_duration(limit);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace handoff::test
