#pragma once
// HeadlessGl: a headless GL 4.5 core debug context (handoff::create_headless_context:
// EGL surfaceless on Mesa, an EGL device on NVIDIA) made current on the test's
// thread, GL loaded, with KHR_debug errors collected in a DebugMessages.
// HeadlessGlTest: a fixture holding one for the whole test; any KHR_debug
// error fails the test.
// Thread safety: one thread (the context is current on it).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include <handoff/gl_context.hpp>

#include "debug_messages.hpp"

namespace handoff::test {

class HeadlessGl {
 public:
  HeadlessGl();   // never throws: error() says what failed
  ~HeadlessGl();  // GL debug output off, context released
  HeadlessGl(const HeadlessGl&) = delete;
  HeadlessGl& operator=(const HeadlessGl&) = delete;

  const std::string& error() const { return error_; }  // empty when the context is current
  const DebugMessages& messages() const { return messages_; }

 private:
  DebugMessages messages_;
  std::function<void(const GlDebugMessage&)> sink_ = messages_.gl_sink();
  std::unique_ptr<GlContext> context_;
  std::string error_;
};

class HeadlessGlTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  std::unique_ptr<HeadlessGl> ctx_;
};

}  // namespace handoff::test
