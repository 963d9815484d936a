#pragma once
// GL test support (header-only; link GTest and handoff::interop):
//  - GlErrorCollector: gathers KHR_debug ERROR messages from any GlWorker.
//  - debug_worker_options(): a headless debug context whose messages go to a collector.
//  - GlWorkerFixture: a gtest fixture owning such a worker; the test FAILS on
//    any KHR_debug error message seen during it (checked in TearDown, after the
//    worker shut down, so releases at shutdown are covered too).
// Add tests/support to the test's include directories:
//   target_include_directories(my_test PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
#include <handoff/gl_worker.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace handoff::test {

class GlErrorCollector {
 public:
  // A sink for GlWorkerOptions::on_debug_message; the collector must outlive the worker.
  std::function<void(const GlDebugMessage&)> sink() {
    return [this](const GlDebugMessage& m) {
      if (!m.is_error()) return;
      std::lock_guard lock(mutex_);
      errors_.push_back(m.describe());
    };
  }
  std::vector<std::string> errors() const {
    std::lock_guard lock(mutex_);
    return errors_;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    errors_.clear();
  }
  // Adds a gtest failure per collected message, then forgets them.
  void fail_on_errors(const char* context = "GL") {
    for (const auto& e : errors()) ADD_FAILURE() << context << ": KHR_debug error message: " << e;
    clear();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> errors_;
};

inline GlWorkerOptions debug_worker_options(GlErrorCollector& collector, std::string name = "test-gl") {
  GlWorkerOptions o;
  o.name = std::move(name);
  o.headless.debug = true;
  o.on_debug_message = collector.sink();
  return o;
}

class GlWorkerFixture : public ::testing::Test {
 protected:
  void SetUp() override { worker_ = std::make_unique<GlWorker>(debug_worker_options(errors_)); }
  void TearDown() override {
    if (worker_) worker_->shutdown();
    worker_.reset();
    errors_.fail_on_errors("GlWorkerFixture");
  }
  GlWorker& worker() { return *worker_; }
  // Shuts the worker down and destroys it (tests of life after the worker).
  void destroy_worker() {
    worker_->shutdown();
    worker_.reset();
  }
  GlErrorCollector& gl_errors() { return errors_; }

 private:
  GlErrorCollector errors_;  // declared first: outlives the worker
  std::unique_ptr<GlWorker> worker_;
};

}  // namespace handoff::test
