// handoff-view --source vulkan, driven as a user would: a Vulkan compute
// shader writes the scene into memory GL imports (no upload, no copy), the
// viewer draws it headless and writes PNGs. The Vulkan validation layer is on
// (HANDOFF_VK_VALIDATION=1) and run_viewer passes --gl-debug, so any
// validation message or KHR_debug error makes the run exit 3 and the test fail.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <string>
#include <vector>

#include <handoff/media/color.hpp>
#include <handoff/media/png.hpp>
#include <handoff/media/recording.hpp>

#include "process.hpp"
#include "scratch_dir.hpp"
#include "scene_reference.hpp"  // tests/vulkan: the CPU reference of shaders/vk/scene.glsl

namespace handoff::view::test {
namespace {

namespace fs = std::filesystem;

const std::string kValidation = "HANDOFF_VK_VALIDATION=1";

// ASan builds: lavapipe's ICD leaks one 128-byte realloc from inside itself,
// reported from "<unknown module>" once the Vulkan loader has dlclose'd it
// (preloading libvulkan_lvp.so makes the report go away; the run fails with it
// even when vkCreateInstance itself fails). Leak checking is therefore off in
// the child here; the vulkan tier checks GlVkSource for leaks in-process.
std::string no_leak_check() {
  std::string asan = "ASAN_OPTIONS=detect_leaks=0";
  if (const char* a = std::getenv("ASAN_OPTIONS"); a && *a) asan = std::string("ASAN_OPTIONS=") + a + ":detect_leaks=0";
  return asan;
}

ProcessResult run_vk_viewer(const std::vector<std::string>& args, std::vector<std::string> env = {}) {
  env.push_back(no_leak_check());
  return run_viewer(args, {}, env);
}

class ViewVulkan : public ScratchDirTest {
 public:
  ViewVulkan() : ScratchDirTest("handoff-view-vk-test-") {}
};

struct Case {
  const char* format;
  PixelFormat pixel_format;
  const char* matrix;
  ColorMatrix color_matrix;
  const char* range;
  ColorRange color_range;
};

// The colour the viewer shows for pixel (x, y) of scene frame `frame`: the
// Vulkan scene's codes (CPU reference) converted as the media library does.
std::array<std::uint8_t, 3> expected_rgb(const Case& c, int w, int h, int x, int y, std::uint32_t frame) {
  handoff::test::SceneCodes codes{c.pixel_format, Colorimetry{c.color_matrix, c.color_range, ChromaSiting::Left}, w, h,
                                  frame};
  const auto cbcr = codes.chroma(x / 2, y / 2);
  return media::yuv_to_rgb8(int(codes.luma(x, y)), int(cbcr[0]), int(cbcr[1]), c.color_matrix, c.color_range, c.pixel_format);
}

// Chroma of the reference constant over the samples next to (x, y)'s: there
// the viewer's chroma filtering cannot change the colour, so the pixel must
// match the reference of its own codes.
bool chroma_flat_around(const Case& c, int w, int h, int x, int y, std::uint32_t frame) {
  handoff::test::SceneCodes codes{c.pixel_format, Colorimetry{c.color_matrix, c.color_range, ChromaSiting::Left}, w, h,
                                  frame};
  const int cw = (w + 1) / 2, ch = (h + 1) / 2;
  const auto mid = codes.chroma(x / 2, y / 2);
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      const int cx = std::clamp(x / 2 + dx, 0, cw - 1), cy = std::clamp(y / 2 + dy, 0, ch - 1);
      if (codes.chroma(cx, cy) != mid) return false;
    }
  return true;
}

// The pixel at (x, y) of `img` against the colour reference of scene frame
// `frame`: codes -> RGB as the media library says (the shader's float maths may
// differ by a step), and the scene's own R'G'B' after the round trip through Y'CbCr.
void expect_scene_pixel(const media::Image8& img, const Case& c, int w, int h, int x, int y, std::uint32_t frame,
                        const std::string& where) {
  const std::uint8_t* px = img.pixels.data() + std::size_t(y) * img.stride() + std::size_t(x) * 3;
  const auto want = expected_rgb(c, w, h, x, y, frame);
  const auto scene = handoff::test::scene_rgb(x, y, w, h, frame);
  const int source[3] = {scene.r, scene.g, scene.b};
  for (int ch = 0; ch < 3; ++ch) {
    EXPECT_NEAR(int(px[ch]), int(want[ch]), 2)
        << c.format << " frame " << frame << " " << where << " channel " << ch << " at " << x << "," << y;
    EXPECT_NEAR(int(px[ch]), source[ch], 4)
        << c.format << " frame " << frame << " " << where << " channel " << ch << " at " << x << "," << y;
  }
}

// Overlays hidden: the ground-truth boxes round the disc cross the last column
// (GroundTruthOverlaysFollowTheSquareAndDisc checks them).
void run_case(ViewVulkan& t, const Case& c) {
  constexpr int kW = 321, kH = 179;  // odd: half-size chroma rounds up
  const std::string out = t.path(std::string("frames-") + c.format);
  const auto r = run_vk_viewer({"--source", "vulkan", "--headless", "--frames", "3", "--output", out, "--format",
                                c.format, "--size", std::to_string(kW) + "x" + std::to_string(kH), "--matrix", c.matrix,
                                "--range", c.range, "--hide-overlays"},
                               {kValidation});
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("vulkan (zero-copy, sync: "), std::string::npos) << r.output;
  for (std::uint32_t frame = 0; frame < 3; ++frame) {
    char name[32];
    std::snprintf(name, sizeof name, "/frame_%06u.png", frame);
    ASSERT_TRUE(fs::exists(out + name)) << out + name << "\n" << r.output;
    const media::Image8 img = media::read_png(out + name, 3);
    ASSERT_EQ(img.width, std::uint32_t(kW));
    ASSERT_EQ(img.height, std::uint32_t(kH));
    // The middle of each colour bar, in the top third (clear of the square and the disc).
    const int y = kH / 6;
    for (int bar = 0; bar < 7; ++bar) {
      const int x = ((2 * bar + 1) * kW) / 14;
      expect_scene_pixel(img, c, kW, kH, x, y, frame, "bar " + std::to_string(bar));
    }
    // The last row and the last column, whose chroma is the rounded-up half
    // sample (row 89 / column 160 covers one luma row / column): every pixel
    // there where the chroma around is flat, and those must be most of them.
    int checked = 0;
    for (int x = 0; x < kW; ++x)
      if (chroma_flat_around(c, kW, kH, x, kH - 1, frame)) {
        expect_scene_pixel(img, c, kW, kH, x, kH - 1, frame, "last row");
        ++checked;
      }
    for (int y = 0; y < kH - 1; ++y)
      if (chroma_flat_around(c, kW, kH, kW - 1, y, frame)) {
        expect_scene_pixel(img, c, kW, kH, kW - 1, y, frame, "last column");
        ++checked;
      }
    EXPECT_GE(checked, (kW + kH) * 3 / 4) << "too few flat pixels on the last row and column to check";
  }
}

TEST_F(ViewVulkan, Nv12OddSizeHeadlessPngs) {
  run_case(*this, {"nv12", PixelFormat::NV12, "bt709", ColorMatrix::BT709, "limited", ColorRange::Limited});
}

TEST_F(ViewVulkan, P010OddSizeHeadlessPngs) {
  run_case(*this, {"p010", PixelFormat::P010, "bt2020", ColorMatrix::BT2020, "full", ColorRange::Full});
}

// The Vulkan scene's ground truth (boxes round the square and the disc) is
// drawn into --output frames; --hide-overlays leaves the bare frame.
TEST_F(ViewVulkan, GroundTruthOverlaysFollowTheSquareAndDisc) {
  constexpr int kW = 200, kH = 120;
  const std::vector<std::string> common{"--source", "vulkan", "--headless", "--frames", "1", "--size", "200x120"};
  auto with = common, without = common;
  with.insert(with.end(), {"--output", path("with")});
  without.insert(without.end(), {"--output", path("without"), "--hide-overlays"});
  for (const auto& args : {with, without}) {
    const auto r = run_vk_viewer(args, {kValidation});
    ASSERT_FALSE(r.timed_out) << r.output;
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  const media::Image8 a = media::read_png(path("with") + "/frame_000000.png", 3);
  const media::Image8 b = media::read_png(path("without") + "/frame_000000.png", 3);
  ASSERT_EQ(a.pixels.size(), b.pixels.size());
  // Frame 0: the square at x 0..s, y h/2 - s/2 .. + s (s = min(w, h) / 8), as scene.glsl places it.
  const int s = std::min(kW, kH) / 8, sy = kH / 2 - s / 2;
  auto differs_near = [&](int x0, int y0, int x1, int y1) {
    for (int y = std::max(y0, 0); y < std::min(y1, kH); ++y)
      for (int x = std::max(x0, 0); x < std::min(x1, kW); ++x)
        for (int ch = 0; ch < 3; ++ch) {
          const std::size_t i = std::size_t(y) * a.stride() + std::size_t(x) * 3 + std::size_t(ch);
          if (a.pixels[i] != b.pixels[i]) return true;
        }
    return false;
  };
  EXPECT_TRUE(differs_near(0, sy - 2, s + 2, sy + 2)) << "no box edge along the square's top";
  const int r = std::min(kW, kH) / 10, cx = kW - 1, cy = kH * 5 / 6;
  EXPECT_TRUE(differs_near(cx - r - 2, cy - r - 2, kW, cy - r + 2)) << "no box edge along the disc's top";
}

TEST_F(ViewVulkan, ScreenshotShowsTheSourceAndSync) {
  const auto r = run_vk_viewer({"--source", "vulkan", "--headless", "--frames", "2", "--size", "160x90", "--window",
                                "320x240", "--screenshot", path("ui.png")},
                               {kValidation});
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const media::Image8 img = media::read_png(path("ui.png"), 3);
  EXPECT_EQ(img.width, 320u);
  EXPECT_EQ(img.height, 240u);
}

TEST_F(ViewVulkan, WindowUnderXvfb) {
  const char* d = std::getenv("DISPLAY");
  if (!d || !*d) GTEST_SKIP() << "no DISPLAY: the window test runs under xvfb-run (scripts/test)";
  const auto r = run_viewer({"--source", "vulkan", "--frames", "3", "--size", "161x91", "--format", "p010",
                             "--window", "320x240", "--output", path("frames"), "--screenshot", path("shot.png")},
                            {}, {kValidation, no_leak_check()});
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(media::read_png(path("shot.png"), 3).width, 320u);
  const media::Image8 f = media::read_png(path("frames") + "/frame_000002.png", 3);
  EXPECT_EQ(f.width, 161u);
  EXPECT_EQ(f.height, 91u);
}

// Any validation message fails the run (exit 3) under --gl-debug: the layer's
// best-practices checks always have something to say, which proves the path.
TEST_F(ViewVulkan, ValidationMessagesMakeTheExitStatus3) {
  const auto r = run_vk_viewer({"--source", "vulkan", "--headless", "--frames", "1", "--size", "64x64"},
                               {kValidation, "VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_BEST_PRACTICES_EXT"});
  ASSERT_FALSE(r.timed_out) << r.output;
  // Best practices always reports something on lavapipe; if a driver ever says
  // nothing, this test cannot prove the path and must say so as a failure.
  ASSERT_NE(r.output.find("Vulkan validation"), std::string::npos)
      << "the validation layer said nothing with best practices on:\n" << r.output;
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("Vulkan validation message(s)"), std::string::npos) << r.output;
}

// No Vulkan driver: a message naming what is missing and a non-zero exit, no crash.
TEST_F(ViewVulkan, NoVulkanDriverIsAClearError) {
  const auto r = run_vk_viewer({"--source", "vulkan", "--headless", "--frames", "1"},
                               {"VK_ICD_FILENAMES=/nonexistent/icd.json", "VK_DRIVER_FILES=/nonexistent/icd.json"});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("the Vulkan scene is not available here"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("vkCreateInstance"), std::string::npos) << r.output;
}

// --record reads the frames GL samples in place (Vulkan memory) back: each
// recorded frame is the next scene frame's codes (within the shader's
// rounding step), with the stream's colorimetry.
TEST_F(ViewVulkan, RecordingHoldsTheVulkanWrittenFrames) {
  constexpr int kW = 321, kH = 179;
  const std::string rec = path("vk.mcap");
  const auto r = run_vk_viewer({"--source", "vulkan", "--headless", "--frames", "4", "--format", "p010", "--size",
                                std::to_string(kW) + "x" + std::to_string(kH), "--record", rec},
                               {kValidation});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto src = media::open_recording(rec);
  ASSERT_GT(src->info().frame_count, 0) << r.output;
  EXPECT_LE(src->info().frame_count, 4);
  media::HostFrame got(PixelFormat::P010, kW, kH);
  std::uint32_t next = 0;
  for (std::int64_t i = 0; i < src->info().frame_count; ++i) {
    ASSERT_TRUE(src->read_into(got.target()));
    auto matches = [&](std::uint32_t frame) {
      const handoff::test::SceneCodes ref{PixelFormat::P010, src->colorimetry(i), kW, kH, frame};
      for (int y = 0; y < kH; y += 5)
        for (int x = 0; x < kW; x += 5) {
          const int d = int(got.y(std::uint32_t(x), std::uint32_t(y))) - int(ref.luma(x, y));
          if (d < -1 || d > 1) return false;
        }
      for (int cy = 0; cy < (kH + 1) / 2; cy += 3)
        for (int cx = 0; cx < (kW + 1) / 2; cx += 3) {
          const auto c = ref.chroma(cx, cy);
          const int du = int(got.u(std::uint32_t(cx), std::uint32_t(cy))) - int(c[0]);
          const int dv = int(got.v(std::uint32_t(cx), std::uint32_t(cy))) - int(c[1]);
          if (du < -1 || du > 1 || dv < -1 || dv > 1) return false;
        }
      return true;
    };
    while (next < 4 && !matches(next)) ++next;
    ASSERT_LT(next, 4u) << "recorded frame " << i << " is no later scene frame";
    ++next;
  }
}

TEST_F(ViewVulkan, FileArgumentIsRefused) {
  const auto r = run_viewer({"--source", "vulkan", "--headless", path("clip.y4m")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("takes no FILE"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace handoff::view::test
