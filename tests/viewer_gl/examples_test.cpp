// The examples (examples/), run as a user would.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <handoff/media/png.hpp>
#include <handoff/media/y4m_reader.hpp>

#include "process.hpp"
#include "scratch_dir.hpp"

namespace handoff::view::test {
namespace {

class Examples : public ScratchDirTest {
 protected:
  Examples() : ScratchDirTest("handoff-examples-test-") {}
};

// examples/cpp/push_clip.cpp: a producer thread pushing a clip with boxes.
// Every frame it pushed is shown or dropped; its last frame is on display.
TEST_F(Examples, PushClipShowsEveryFrameOrCountsItDropped) {
  const std::string clip = std::string(HANDOFF_TEST_DATA) + "/sample.y4m";
  const auto r = run_program(HANDOFF_PUSH_CLIP_EXE, {clip, "--headless", "--snapshot", path("last.png")});
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  long long pushed = -1, shown = -1, dropped = -1;
  const auto at = r.output.find("pushed ");
  ASSERT_NE(at, std::string::npos) << r.output;
  ASSERT_EQ(std::sscanf(r.output.c_str() + at, "pushed %lld frames: %lld shown, %lld dropped", &pushed, &shown, &dropped),
            3)
      << r.output;
  const auto info = media::open_y4m(clip)->info();
  EXPECT_EQ(pushed, info.frame_count);
  EXPECT_EQ(shown + dropped, pushed) << r.output;
  EXPECT_GE(shown, 1);
  const media::Image8 last = media::read_png(path("last.png"), 3);
  EXPECT_EQ(last.width, info.width);
  EXPECT_EQ(last.height, info.height);
}

TEST_F(Examples, PushClipNamesAMissingClip) {
  const auto r = run_program(HANDOFF_PUSH_CLIP_EXE, {path("none.y4m"), "--headless"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("none.y4m"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace handoff::view::test
