#pragma once
// The display the Viewer tests run on: a window in handoff_viewer_window_tests
// (built with HANDOFF_TEST_WINDOW, run under Xvfb), headless EGL in the other
// binaries. ViewerDisplayTest skips the window build without a DISPLAY.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <handoff/frame_validate.hpp>
#include <handoff/viewer.hpp>

namespace handoff::view::test {

#if HANDOFF_TEST_WINDOW
inline constexpr ViewerDisplay kDisplay = ViewerDisplay::Window;
#else
inline constexpr ViewerDisplay kDisplay = ViewerDisplay::Headless;
#endif

// A 320 x 240 view on kDisplay with GL debug output on and no vsync: what
// the Viewer tests draw into.
inline ViewerOptions test_view_options(const std::string& title) {
  ViewerOptions o;
  o.title = title;
  o.width = 320;
  o.height = 240;
  o.display = kDisplay;
  o.gl_debug = true;
  o.vsync = false;
  return o;
}

class ViewerDisplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kDisplay == ViewerDisplay::Window) {
      const char* d = std::getenv("DISPLAY");
      if (!d || !*d) GTEST_SKIP() << "no DISPLAY: the window tests run under xvfb-run (scripts/test)";
    }
  }
};

// v.show(f) throws InvalidFrame naming `field`.
inline void expect_invalid(Viewer& v, const Frame& f, const std::string& field) {
  try {
    v.show(f);
    ADD_FAILURE() << "no InvalidFrame for " << field;
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

}  // namespace handoff::view::test
