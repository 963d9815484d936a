#pragma once
// A headless GL 4.5 core debug context (handoff::create_headless_context: EGL
// surfaceless on Mesa, an EGL device on NVIDIA) made current on the test's
// thread, with KHR_debug output collected: the fixture fails the test on any
// GL_DEBUG_TYPE_ERROR message.
#include <glad/gl.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <handoff/gl_context.hpp>

namespace handoff::viewer::test {

class GlTestContext {
 public:
  GlTestContext() {
    try {
      HeadlessContextOptions o;
      o.debug = true;
      context_ = create_headless_context(o);
      context_->make_current();
      load_gl(*context_);
    } catch (const std::exception& e) {
      error_ = e.what();
      return;
    }
    if (!enable_gl_debug_output(&sink_)) error_ = "the headless context has no KHR_debug";
  }
  ~GlTestContext() {
    if (!context_) return;
    disable_gl_debug_output();
    context_->done_current();
  }
  GlTestContext(const GlTestContext&) = delete;
  GlTestContext& operator=(const GlTestContext&) = delete;

  const std::string& error() const { return error_; }
  std::vector<std::string> take_errors() {
    std::lock_guard lock(mutex_);
    return std::exchange(errors_, {});
  }

 private:
  std::unique_ptr<GlContext> context_;
  std::string error_;
  std::mutex mutex_;
  std::vector<std::string> errors_;
  std::function<void(const GlDebugMessage&)> sink_ = [this](const GlDebugMessage& m) {
    if (!m.is_error()) return;
    std::lock_guard lock(mutex_);
    errors_.push_back(m.describe());
  };
};

// Fixture: a current context for the whole test; KHR_debug errors fail it.
class GlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = std::make_unique<GlTestContext>();
    ASSERT_TRUE(ctx_->error().empty()) << "headless GL context: " << ctx_->error();
  }
  void TearDown() override {
    for (const auto& e : ctx_->take_errors()) ADD_FAILURE() << "KHR_debug error: " << e;
    ctx_.reset();
  }
  std::unique_ptr<GlTestContext> ctx_;
};

}  // namespace handoff::viewer::test
