// Golden images rendered headless by the viewer's renderer: colour bars in each
// matrix and range, 8- and 10-bit, an odd size, each overlay kind, a zoomed
// view. Each test also checks what it can against the float64 reference, so
// a golden image is never just "whatever was rendered last time".
// Regenerate: HANDOFF_UPDATE_GOLDEN=1 ctest -R Golden (then look at them).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>

#include <handoff/media/color.hpp>

#include "box_edge.hpp"
#include "gl_test_context.hpp"
#include "golden.hpp"
#include "render_helpers.hpp"

namespace handoff::view::test {
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
    media::YuvCodes y = media::rgb_to_yuv(v[0], v[1], v[2], c.matrix, c.range, f);
    bars.push_back({y.y, y.cb, y.cr});
  }
  const int s = f == PixelFormat::NV12 ? 1 : 4;
  const int mid = 128 * s;
  const media::YuvCodes white = media::rgb_to_yuv(1, 1, 1, c.matrix, c.range, f);
  const media::YuvCodes black = media::rgb_to_yuv(0, 0, 0, c.matrix, c.range, f);
  bars.push_back({white.y, white.cb, white.cr});
  bars.push_back({black.y, black.cb, black.cr});
  bars.push_back({4 * s, mid, mid});                                  // sub-black
  bars.push_back({(f == PixelFormat::NV12 ? 250 : 1010), mid, mid});  // super-white
  for (auto& v : {std::array<double, 3>{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}) {
    media::YuvCodes y = media::rgb_to_yuv(v[0], v[1], v[2], c.matrix, c.range, f);
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
    const auto want = media::yuv_to_rgb8(b.y, b.cb, b.cr, p.matrix, p.range, p.format);
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
  const auto want = media::yuv_to_rgb8(b.y, b.cb, b.cr, c.matrix, c.range, PixelFormat::NV12);
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
int grey_value() { return media::yuv_to_rgb8(100, 128, 128, ColorMatrix::BT709, ColorRange::Limited, PixelFormat::NV12)[0]; }

// Overlay pixels against a float64 reference of what the geometry draws there.
using Rgb = std::array<double, 3>;
Rgb rgb(media::Color8 c) { return {double(c.r), double(c.g), double(c.b)}; }
Rgb grey_rgb() { return {double(grey_value()), double(grey_value()), double(grey_value())}; }
// `top` at coverage / alpha `a` over `under` (GL's SRC_ALPHA, ONE_MINUS_SRC_ALPHA blend).
Rgb over(Rgb top, double a, Rgb under) {
  return {a * top[0] + (1 - a) * under[0], a * top[1] + (1 - a) * under[1], a * top[2] + (1 - a) * under[2]};
}
// Caption backgrounds are the object's colour at alpha 220 (overlay_draw.cpp).
Rgb caption_bg(media::Color8 c, Rgb under) { return over(rgb(c), 220.0 / 255.0, under); }

void expect_px(const Rendered& r, int x, int y, Rgb want, int tol, const std::string& what) {
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(double(r.at(x, y)[k]), want[std::size_t(k)], tol + 0.5)
        << what << " at (" << x << ", " << y << ") channel " << k;
}

// A box edge where the geometry puts it (box_edge.hpp), against float64 colours.
void expect_box_edge(const Rendered& r, int x, int y, bool vertical, Rgb line, Rgb under, const std::string& what) {
  handoff::test::expect_box_edge(
      [&](int px, int py, const Rgb& want, int tol, const std::string& w) { expect_px(r, px, py, want, tol, w); }, x, y,
      vertical, line, over(line, 0.5, under), under, what);
}

// Nothing drawn at (x, y) nor next to it.
void expect_untouched(const Rendered& r, int x, int y, const std::string& what) {
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) expect_px(r, x + dx, y + dy, grey_rgb(), 1, what);
}

// Captions are 13 + 2 * 2 = 17 px tall (ImGui's default 13-px font, 2 px of
// padding above and below) and start at the box's left edge, resting on its
// top edge (place_label); their first two columns are padding, no glyphs.
constexpr int kCaptionH = 17;

// The overlay pictures against their golden images: change detectors of the
// whole picture, not the judges of its correctness (each box edge, caption,
// keypoint and line is checked against the geometry at <= 2 codes first).
// They hold text: glyph edges are ImGui's font atlas sampled with the
// driver's filtering, which differs between GL drivers and Mesa versions by
// up to 8 codes on up to 1% of the pixels, hence this tolerance and budget.
constexpr int kOverlayGoldenTolerance = 8;

TEST_F(Golden, OverlayBoxesAndCaptions) {
  media::OverlayFrame f;
  f.add_box(20, 30, 70, 80, "car", 0.91f, 2, 7);
  f.add_box(100, 10, 150, 60, "person", 0.55f, 0, 3);
  f.add_box(130, 70, 200, 120, "dog", 0.8f, 16, -1);  // runs off the right / bottom: label stays inside
  const Colorimetry c{};
  const Rendered r = render(grey_frame(160, 90), c, 160, 90, {}, false, &f);
  const std::uint8_t* grey = r.at(45, 55);  // inside the first box: untouched
  EXPECT_NEAR(grey[0], grey_value(), 1);
  const Rgb g = grey_rgb(), c0 = rgb(media::object_color(f.objects[0])), c2 = rgb(media::object_color(f.objects[2]));
  // Box 0 (20, 30)-(70, 80) in its class colour: left, right and bottom edges.
  expect_box_edge(r, 20, 60, true, c0, g, "box 0's left edge");
  expect_box_edge(r, 69, 60, true, c0, g, "box 0's right edge");
  expect_box_edge(r, 45, 79, false, c0, g, "box 0's bottom edge");
  // Its caption sits on its top edge (rows 30 - 17 .. 28 of the padding
  // column x = 20 show only the background), and not a row higher.
  for (int y = 30 - kCaptionH; y <= 28; ++y) expect_px(r, 20, y, caption_bg(media::object_color(f.objects[0]), g), 2, "box 0's caption");
  expect_px(r, 20, 30 - kCaptionH - 1, g, 1, "above box 0's caption");
  expect_px(r, 19, 20, g, 1, "left of box 0's caption");
  // Box 2 runs off the right and the bottom: its left edge is drawn, and its
  // caption, above its top edge (y 70), is moved left to end at the frame's
  // last column (x 159, padding).
  expect_box_edge(r, 130, 80, true, c2, g, "box 2's left edge");
  for (int y = 70 - kCaptionH; y <= 68; ++y) expect_px(r, 159, y, caption_bg(media::object_color(f.objects[2]), g), 2, "box 2's caption");
  expect_px(r, 159, 70 - kCaptionH - 1, g, 1, "above box 2's caption");
  expect_golden("overlay_boxes", r.rgba, 160, 90, kOverlayGoldenTolerance, 0.01);
}

TEST_F(Golden, OverlayScoreThresholdAndClassFilter) {
  media::OverlayFrame f;
  f.add_box(20, 20, 60, 60, "low", 0.2f, 1, -1);
  f.add_box(90, 20, 130, 60, "high", 0.9f, 2, -1);
  media::OverlayFilter filter;
  filter.min_score = 0.5f;
  const Rendered r = render(grey_frame(160, 90), Colorimetry{}, 160, 90, {}, false, &f, filter);
  expect_untouched(r, 20, 40, "the low-score box is hidden");
  expect_box_edge(r, 90, 40, true, rgb(media::object_color(f.objects[1])), grey_rgb(), "the high-score box is drawn");
  filter.min_score = 0;
  filter.classes = {1};
  const Rendered r2 = render(grey_frame(160, 90), Colorimetry{}, 160, 90, {}, false, &f, filter);
  expect_box_edge(r2, 20, 40, true, rgb(media::object_color(f.objects[0])), grey_rgb(), "class 1 shown");
  expect_untouched(r2, 90, 40, "class 2 filtered out");
}

TEST_F(Golden, OverlayKeypointsAndSkeleton) {
  media::OverlayFrame f;
  const std::uint32_t o = f.add_box(40, 10, 120, 85, "person", 0.9f, 0, 1);
  const media::Keypoint kps[] = {{80, 20, 1}, {60, 40, 1}, {100, 40, 1}, {65, 80, 1}, {95, 80, 1}, {80, 50, 0.01f}};
  const std::array<std::uint32_t, 2> edges[] = {{0, 1}, {0, 2}, {1, 3}, {2, 4}, {0, 5}};
  f.set_keypoints(o, kps, 6, edges, 5);
  media::OverlayFilter filter;
  filter.boxes = false;
  filter.labels = filter.scores = filter.track_ids = false;
  const Rendered r = render(grey_frame(160, 90), Colorimetry{}, 160, 90, {}, false, &f, filter);
  const Rgb col = rgb(media::object_color(f.objects[0]));
  // Keypoints are discs of radius 3 centred on the point: pixel (80, 20)'s
  // centre is 0.7 px from it, fully inside.
  expect_px(r, 80, 20, col, 2, "keypoint 0");
  // Edges are 2-px lines through the pixel centres (AddLine adds half a
  // pixel): edge 0-1 runs from (80.5, 20.5) to (60.5, 40.5), through the
  // centre of (70, 30), fully covered; (67, 30), 2.1 px off its centre line, is clear.
  expect_px(r, 70, 30, col, 2, "edge 0-1 midpoint");
  expect_px(r, 67, 30, grey_rgb(), 1, "beside edge 0-1");
  expect_untouched(r, 80, 50, "a keypoint below the confidence floor is not drawn");
  expect_golden("overlay_keypoints", r.rgba, 160, 90, kOverlayGoldenTolerance, 0.01);
}

TEST_F(Golden, OverlayPolygonPolylineAndText) {
  media::OverlayFrame f;
  const media::Point2 poly[] = {{20, 20}, {70, 20}, {45, 70}};
  const media::Point2 line[] = {{90, 70}, {110, 20}, {130, 70}, {150, 20}};
  f.add_shape(poly, 3, true);
  f.add_shape(line, 4, false);
  f.add_label_text(5, 75, "t=1.5s");
  const Rendered r = render(grey_frame(160, 90), Colorimetry{}, 160, 90, {}, false, &f);
  // Shapes without an object are cyan, 2-px polylines through the points
  // themselves (no half-pixel shift): the top edge, y = 20, covers rows 19
  // and 20 fully (their centres lie on the edge of its 1-px core) and rows 18
  // and 21 not at all (their centres lie at the outer end of its fringes).
  const Rgb cyan{0, 255, 255};
  expect_px(r, 45, 19, cyan, 2, "polygon top edge");
  expect_px(r, 45, 20, cyan, 2, "polygon top edge");
  expect_px(r, 45, 18, grey_rgb(), 1, "above the polygon's top edge");
  expect_px(r, 45, 21, grey_rgb(), 1, "below the polygon's top edge");
  expect_untouched(r, 45, 40, "polygon not filled");
  expect_golden("overlay_shapes_text", r.rgba, 160, 90, kOverlayGoldenTolerance, 0.01);
}

TEST_F(Golden, OverlaysFollowZoomAndPan) {
  media::OverlayFrame f;
  f.add_box(30, 30, 50, 50, "", NAN, 3, -1);
  media::OverlayFilter filter;
  filter.labels = filter.scores = filter.track_ids = false;
  const ViewTransform view = pan(zoom_around(ViewTransform{}, 2.0, 0, 0), -20, -10);
  const Rendered r = render(grey_frame(160, 90), Colorimetry{}, 160, 90, view, true, &f, filter);
  // Box corner (30, 30) maps to (40, 50) on screen: the left edge is drawn on
  // column 40 (the line width stays 2 screen pixels at any zoom).
  ASSERT_EQ(int(view.to_fb_x(30)), 40);
  ASSERT_EQ(int(view.to_fb_y(30)), 50);
  const Rgb c3 = rgb(media::object_color(f.objects[0]));
  expect_box_edge(r, int(view.to_fb_x(30)), int(view.to_fb_y(40)), true, c3, grey_rgb(), "the box's left edge");
  expect_box_edge(r, int(view.to_fb_x(40)), int(view.to_fb_y(30)), false, c3, grey_rgb(), "the box's top edge");
  expect_px(r, int(view.to_fb_x(40)), int(view.to_fb_y(40)), grey_rgb(), 1, "inside the box");
}

}  // namespace
}  // namespace handoff::view::test
