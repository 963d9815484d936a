// Golden images rendered headless by the viewer's renderer: colour bars in each
// matrix and range, 8- and 10-bit, an odd size, each overlay kind, a zoomed
// view. Each test also checks what it can against the float64 reference, so
// a golden image is never just "whatever was rendered last time".
// Regenerate: HANDOFF_UPDATE_GOLDEN=1 ctest -R Golden (then look at them).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <handoff/viewer/color.hpp>

#include "gl_test_context.hpp"
#include "golden.hpp"
#include "render_helpers.hpp"

namespace handoff::viewer::test {
namespace {

// Bars: top 2/3 seven 75% bars; bottom third: 100% white, black, sub-black,
// super-white, 100% red, green, blue (clamping). Returns the codes of bar i.
struct Bar {
  int y, cb, cr;
};

std::vector<Bar> bar_codes(Colorimetry c, PixelFormat f) {
  const double rgb75[7][3] = {{.75, .75, .75}, {.75, .75, 0}, {0, .75, .75}, {0, .75, 0},
                              {.75, 0, .75},   {.75, 0, 0},   {0, 0, .75}};
  std::vector<Bar> bars;
  for (auto& v : rgb75) {
    YuvCodes y = rgb_to_yuv(v[0], v[1], v[2], c.matrix, c.range, f);
    bars.push_back({y.y, y.cb, y.cr});
  }
  const int s = f == PixelFormat::NV12 ? 1 : 4;
  const int mid = 128 * s;
  const YuvCodes white = rgb_to_yuv(1, 1, 1, c.matrix, c.range, f);
  const YuvCodes black = rgb_to_yuv(0, 0, 0, c.matrix, c.range, f);
  bars.push_back({white.y, white.cb, white.cr});
  bars.push_back({black.y, black.cb, black.cr});
  bars.push_back({4 * s, mid, mid});                                  // sub-black
  bars.push_back({(f == PixelFormat::NV12 ? 250 : 1010), mid, mid});  // super-white
  for (auto& v : {std::array<double, 3>{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}) {
    YuvCodes y = rgb_to_yuv(v[0], v[1], v[2], c.matrix, c.range, f);
    bars.push_back({y.y, y.cb, y.cr});
  }
  return bars;  // 7 top + 7 bottom
}

// Fills `tf` with bars; chroma per 2x2 block from the block's top-left pixel.
void fill_bars(TestFrame& tf, const std::vector<Bar>& bars) {
  const std::uint32_t w = tf.width(), h = tf.height();
  const std::uint32_t split = h * 2 / 3;
  auto bar_at = [&](std::uint32_t x, std::uint32_t y) {
    const std::size_t i = std::min<std::size_t>(x * 7 / w, 6);
    return bars[(y < split ? 0 : 7) + i];
  };
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) tf.set_y(x, y, bar_at(x, y).y);
  for (std::uint32_t cy = 0; cy < chroma_height(h); ++cy)
    for (std::uint32_t cx = 0; cx < chroma_width(w); ++cx) {
      const Bar b = bar_at(cx * 2, cy * 2);
      tf.set_uv(cx, cy, b.cb, b.cr);
    }
}

struct BarsCase {
  ColorMatrix matrix;
  ColorRange range;
  PixelFormat format;
};

class GoldenBars : public GlTest, public ::testing::WithParamInterface<BarsCase> {};

TEST_P(GoldenBars, MatchesGoldenAndReference) {
  const BarsCase p = GetParam();
  const Colorimetry c{p.matrix, p.range, ChromaSiting::Left};
  const int w = 70, h = 48;  // 10 pixels a bar
  TestFrame tf(p.format, w, h);
  const auto bars = bar_codes(c, p.format);
  fill_bars(tf, bars);
  const Rendered r = render(tf, c, w, h);
  // Centre of every bar, away from the chroma transitions: the float64 reference.
  for (int i = 0; i < 14; ++i) {
    const int x = (i % 7) * 10 + 4, y = i < 7 ? 16 : 40;
    const Bar b = bars[std::size_t(i)];
    const auto want = yuv_to_rgb8(b.y, b.cb, b.cr, p.matrix, p.range, p.format);
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(r.at(x, y)[k], want[std::size_t(k)], 1) << "bar " << i << " channel " << k;
  }
  const std::string name = "bars_" + std::string(to_string(p.matrix)) + "_" + std::string(to_string(p.range)) +
                           "_" + std::string(to_string(p.format));
  expect_golden(name, r.rgba, w, h, 1);
}

std::vector<BarsCase> bars_cases() {
  std::vector<BarsCase> v;
  for (auto f : {PixelFormat::NV12, PixelFormat::P010})
    for (auto m : {ColorMatrix::BT601, ColorMatrix::BT709, ColorMatrix::BT2020})
      for (auto r : {ColorRange::Limited, ColorRange::Full}) v.push_back({m, r, f});
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllCombos, GoldenBars, ::testing::ValuesIn(bars_cases()),
                         [](const auto& info) {
                           return std::string(to_string(info.param.matrix)) + "_" +
                                  std::string(to_string(info.param.range)) + "_" +
                                  std::string(to_string(info.param.format));
                         });

using Golden = GlTest;

TEST_F(Golden, OddSizeBarsWithCenterSiting) {
  const Colorimetry c{ColorMatrix::BT709, ColorRange::Limited, ChromaSiting::Center};
  const int w = 61, h = 37;  // odd: the last chroma column / row covers one luma sample
  TestFrame tf(PixelFormat::NV12, w, h, 3);  // pitch padded by 3 bytes: not a multiple of the texel
  const auto bars = bar_codes(c, PixelFormat::NV12);
  fill_bars(tf, bars);
  const Rendered r = render(tf, c, w, h);
  // The bottom-right pixel uses the last chroma sample alone.
  const Bar b = bars[13];
  const auto want = yuv_to_rgb8(b.y, b.cb, b.cr, c.matrix, c.range, PixelFormat::NV12);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(r.at(w - 1, h - 1)[k], want[std::size_t(k)], 1) << "channel " << k;
  expect_golden("bars_odd_61x37_center", r.rgba, w, h, 1);
}

TEST_F(Golden, ZoomedViewIsNearestNeighbourOfOneToOne) {
  const Colorimetry c{ColorMatrix::BT709, ColorRange::Limited, ChromaSiting::Left};
  TestFrame tf(PixelFormat::NV12, 70, 48);
  fill_bars(tf, bar_codes(c, PixelFormat::NV12));
  const Rendered one = render(tf, c, 70, 48);
  const ViewTransform view = zoom_around(fit_view(70, 48, 160, 90), 4.0, 80, 45);
  const Rendered z = render(tf, c, 160, 90, view, true);
  int checked = 0;
  for (int y = 0; y < 90; ++y)
    for (int x = 0; x < 160; ++x) {
      const double fx = view.to_frame_x(x + 0.5), fy = view.to_frame_y(y + 0.5);
      if (fx < 0 || fy < 0 || fx >= 70 || fy >= 48) continue;
      const std::uint8_t* a = z.at(x, y);
      const std::uint8_t* b = one.at(int(fx), int(fy));
      for (int k = 0; k < 3; ++k) ASSERT_EQ(a[k], b[k]) << "screen " << x << "," << y << " frame " << fx << "," << fy;
      ++checked;
    }
  EXPECT_EQ(checked, 160 * 90);  // zoomed in: the frame covers the whole view
  expect_golden("zoom_4x_nearest", z.rgba, 160, 90, 1);
}

// A flat mid-grey frame for the overlay goldens.
TestFrame grey_frame(int w, int h) {
  TestFrame tf(PixelFormat::NV12, std::uint32_t(w), std::uint32_t(h));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) tf.set_y(std::uint32_t(x), std::uint32_t(y), 100);
  for (std::uint32_t y = 0; y < chroma_height(std::uint32_t(h)); ++y)
    for (std::uint32_t x = 0; x < chroma_width(std::uint32_t(w)); ++x) tf.set_uv(x, y, 128, 128);
  return tf;
}

// What the grey frame renders to (BT.709 limited Y=100, neutral chroma), from the reference.
int grey_value() { return yuv_to_rgb8(100, 128, 128, ColorMatrix::BT709, ColorRange::Limited, PixelFormat::NV12)[0]; }

bool near_color(const std::uint8_t* px, Color8 c, int tol) {
  return std::abs(px[0] - c.r) <= tol && std::abs(px[1] - c.g) <= tol && std::abs(px[2] - c.b) <= tol;
}

TEST_F(Golden, OverlayBoxesAndCaptions) {
  OverlayFrame f;
  f.add_box(20, 30, 70, 80, "car", 0.91f, 2, 7);
  f.add_box(100, 10, 150, 60, "person", 0.55f, 0, 3);
  f.add_box(130, 70, 200, 120, "dog", 0.8f, 16, -1);  // runs off the right / bottom: label stays inside
  const Colorimetry c{};
  const Rendered r = render(grey_frame(160, 90), c, 160, 90, {}, false, &f);
  const std::uint8_t* grey = r.at(45, 55);  // inside the first box: untouched
  EXPECT_NEAR(grey[0], grey_value(), 1);
  // The left edge of box 0 is drawn in its class colour.
  EXPECT_TRUE(near_color(r.at(20, 60), object_color(f.objects[0]), 40))
      << int(r.at(20, 60)[0]) << "," << int(r.at(20, 60)[1]) << "," << int(r.at(20, 60)[2]);
  // The caption of box 0 sits above its top-left corner (its background is the class colour).
  EXPECT_TRUE(near_color(r.at(21, 30 - 4), object_color(f.objects[0]), 40));
  expect_golden("overlay_boxes", r.rgba, 160, 90, 8, 0.01);
}

TEST_F(Golden, OverlayScoreThresholdAndClassFilter) {
  OverlayFrame f;
  f.add_box(20, 20, 60, 60, "low", 0.2f, 1, -1);
  f.add_box(90, 20, 130, 60, "high", 0.9f, 2, -1);
  OverlayFilter filter;
  filter.min_score = 0.5f;
  const Rendered r = render(grey_frame(160, 90), Colorimetry{}, 160, 90, {}, false, &f, filter);
  EXPECT_NEAR(r.at(20, 40)[0], grey_value(), 1) << "the low-score box is hidden";
  EXPECT_TRUE(near_color(r.at(90, 40), object_color(f.objects[1]), 40)) << "the high-score box is drawn";
  filter.min_score = 0;
  filter.classes = {1};
  const Rendered r2 = render(grey_frame(160, 90), Colorimetry{}, 160, 90, {}, false, &f, filter);
  EXPECT_TRUE(near_color(r2.at(20, 40), object_color(f.objects[0]), 40)) << "class 1 shown";
  EXPECT_NEAR(r2.at(90, 40)[0], grey_value(), 1) << "class 2 filtered out";
}

TEST_F(Golden, OverlayKeypointsAndSkeleton) {
  OverlayFrame f;
  const std::uint32_t o = f.add_box(40, 10, 120, 85, "person", 0.9f, 0, 1);
  const Keypoint kps[] = {{80, 20, 1}, {60, 40, 1}, {100, 40, 1}, {65, 80, 1}, {95, 80, 1}, {80, 50, 0.01f}};
  const std::array<std::uint32_t, 2> edges[] = {{0, 1}, {0, 2}, {1, 3}, {2, 4}, {0, 5}};
  f.set_keypoints(o, kps, 6, edges, 5);
  OverlayFilter filter;
  filter.boxes = false;
  filter.labels = filter.scores = filter.track_ids = false;
  const Rendered r = render(grey_frame(160, 90), Colorimetry{}, 160, 90, {}, false, &f, filter);
  const Color8 col = object_color(f.objects[0]);
  EXPECT_TRUE(near_color(r.at(80, 20), col, 40)) << "keypoint 0";
  EXPECT_TRUE(near_color(r.at(70, 30), col, 60)) << "edge 0-1 midpoint";
  EXPECT_NEAR(r.at(80, 50)[0], grey_value(), 1) << "a keypoint below the confidence floor is not drawn";
  expect_golden("overlay_keypoints", r.rgba, 160, 90, 8, 0.01);
}

TEST_F(Golden, OverlayPolygonPolylineAndText) {
  OverlayFrame f;
  const Point2 poly[] = {{20, 20}, {70, 20}, {45, 70}};
  const Point2 line[] = {{90, 70}, {110, 20}, {130, 70}, {150, 20}};
  f.add_shape(poly, 3, true);
  f.add_shape(line, 4, false);
  f.add_label_text(5, 75, "t=1.5s");
  const Rendered r = render(grey_frame(160, 90), Colorimetry{}, 160, 90, {}, false, &f);
  EXPECT_GT(r.at(45, 20)[1], 200) << "polygon top edge drawn";
  EXPECT_NEAR(r.at(45, 40)[0], grey_value(), 1) << "polygon not filled";
  expect_golden("overlay_shapes_text", r.rgba, 160, 90, 8, 0.01);
}

TEST_F(Golden, OverlaysFollowZoomAndPan) {
  OverlayFrame f;
  f.add_box(30, 30, 50, 50, "", NAN, 3, -1);
  OverlayFilter filter;
  filter.labels = filter.scores = filter.track_ids = false;
  const ViewTransform view = pan(zoom_around(ViewTransform{}, 2.0, 0, 0), -20, -10);
  const Rendered r = render(grey_frame(160, 90), Colorimetry{}, 160, 90, view, true, &f, filter);
  // Box corner (30, 30) maps to (40, 50) on screen.
  EXPECT_TRUE(near_color(r.at(int(view.to_fb_x(30)), int(view.to_fb_y(40))), object_color(f.objects[0]), 40));
  EXPECT_NEAR(r.at(int(view.to_fb_x(40)), int(view.to_fb_y(40)))[0], grey_value(), 1);
}

}  // namespace
}  // namespace handoff::viewer::test
