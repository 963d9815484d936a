// The examples (examples/), run as a user would.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
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

// examples/cpp/show_layers.cpp: a class map and a depth map under a box.
TEST_F(Examples, ShowLayersDrawsTheClassMapAndTheDepthMap) {
  const auto r = run_program(HANDOFF_SHOW_LAYERS_EXE, {"--headless", "--frames", "5", "--snapshot", path("last.png")});
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("5 frames shown with layers"), std::string::npos) << r.output;
  const media::Image8 img = media::read_png(path("last.png"), 3);
  ASSERT_EQ(img.width, 320u);
  ASSERT_EQ(img.height, 240u);
  auto px = [&](std::uint32_t x, std::uint32_t y) {
    const std::uint8_t* p = img.pixels.data() + (std::size_t(y) * img.width + x) * 3;
    return std::array<int, 3>{p[0], p[1], p[2]};
  };
  // The NaN corner (top right) shows the grey frame; the road (left half, id 1) is tinted
  // purple (R and B above G); the right half, class 0, shows the depth only.
  const auto hole = px(314, 5), road = px(60, 200), depth_only = px(300, 200);
  EXPECT_LE(std::abs(hole[0] - hole[1]) + std::abs(hole[1] - hole[2]), 3);
  EXPECT_GT(road[0], road[1] + 20);
  EXPECT_GT(road[2], road[1] + 20);
  EXPECT_NE(road, depth_only);
}

// Without --headless and with no display the examples fall back to
// headless, and end after their frames: only a window waits to be closed
// (they waited for a close that nothing could send).
TEST_F(Examples, WithNoDisplayTheExamplesEndWithoutHeadless) {
  const std::string clip = std::string(HANDOFF_TEST_DATA) + "/sample.y4m";
  const auto push = run_program(HANDOFF_PUSH_CLIP_EXE, {clip}, {"DISPLAY", "WAYLAND_DISPLAY"}, {}, 60);
  ASSERT_FALSE(push.timed_out) << push.output;
  EXPECT_EQ(push.exit_code, 0) << push.output;
  EXPECT_NE(push.output.find("pushed "), std::string::npos) << push.output;
  const auto layers = run_program(HANDOFF_SHOW_LAYERS_EXE, {"--frames", "2"}, {"DISPLAY", "WAYLAND_DISPLAY"}, {}, 60);
  ASSERT_FALSE(layers.timed_out) << layers.output;
  EXPECT_EQ(layers.exit_code, 0) << layers.output;
  EXPECT_NE(layers.output.find("2 frames shown with layers"), std::string::npos) << layers.output;
}

}  // namespace
}  // namespace handoff::view::test
