#pragma once
// GL test support (handoff_test_support):
//  - debug_worker_options(): a headless debug context whose KHR_debug errors
//    go to a DebugMessages collector.
//  - GlWorkerFixture: a gtest fixture owning such a worker; the test FAILS on
//    any KHR_debug error message seen during it (checked in TearDown, after the
//    worker shut down, so releases at shutdown are covered too).
#include <handoff/gl_worker.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "debug_messages.hpp"

namespace handoff::test {

inline GlWorkerOptions debug_worker_options(const DebugMessages& messages, std::string name = "test-gl") {
  GlWorkerOptions o;
  o.name = std::move(name);
  o.headless.debug = true;
  o.on_debug_message = messages.gl_sink();
  return o;
}

class GlWorkerFixture : public ::testing::Test {
 protected:
  void SetUp() override { worker_ = std::make_unique<GlWorker>(debug_worker_options(errors_)); }
  void TearDown() override {
    if (worker_) worker_->shutdown();
    worker_.reset();
    errors_.fail_on_any("GlWorkerFixture: KHR_debug error");
  }
  GlWorker& worker() { return *worker_; }
  // Shuts the worker down and destroys it (tests of life after the worker).
  void destroy_worker() {
    worker_->shutdown();
    worker_.reset();
  }
  DebugMessages& gl_errors() { return errors_; }

 private:
  DebugMessages errors_;
  std::unique_ptr<GlWorker> worker_;
};

}  // namespace handoff::test
