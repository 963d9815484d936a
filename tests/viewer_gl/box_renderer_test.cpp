// Dense overlays: box outlines drawn by BoxRenderer from an ImGui draw
// callback (viewer/view/src/box_renderer.hpp), both ways (instanced on the
// GPU, filled into a canvas on the CPU), checked pixel by pixel and against
// each other, and the ImGui list left with captions only.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include <imgui.h>

#include "box_renderer.hpp"
#include "frame_target.hpp"
#include "box_grid.hpp"
#include "gl_test_context.hpp"
#include "imgui_offscreen.hpp"
#include "overlay_draw.hpp"

namespace handoff::view::test {
namespace {

class BoxRendererTest : public GlTest, public ::testing::WithParamInterface<BoxRaster> {};

struct Rgba {
  std::uint8_t r, g, b, a;
};

Rgba pixel(const std::vector<std::uint8_t>& px, int w, int x, int y) {
  const std::size_t i = (std::size_t(y) * std::size_t(w) + std::size_t(x)) * 4;
  return {px[i], px[i + 1], px[i + 2], px[i + 3]};
}

void expect_color(const std::vector<std::uint8_t>& px, int w, int x, int y, media::Color8 c) {
  ASSERT_GT(c.r + c.g + c.b, 0) << "a class colour indistinguishable from the cleared target";
  const Rgba p = pixel(px, w, x, y);
  EXPECT_TRUE(p.r == c.r && p.g == c.g && p.b == c.b)
      << "at " << x << "," << y << ": " << int(p.r) << "," << int(p.g) << "," << int(p.b) << " instead of "
      << int(c.r) << "," << int(c.g) << "," << int(c.b);
}

void expect_cleared(const std::vector<std::uint8_t>& px, int w, int x, int y) {
  const Rgba p = pixel(px, w, x, y);
  EXPECT_EQ(p.r + p.g + p.b, 0) << "at " << x << "," << y;
}

// Renders `f`'s overlays into a cleared w x h target, boxes through BoxRenderer
// whenever more than `dense` are visible.
std::vector<std::uint8_t> render(BoxRaster raster, const media::OverlayFrame& f, int w, int h, std::uint32_t dense,
                                 media::OverlayFilter filter, int* imgui_vertices = nullptr) {
  FrameTarget target;
  target.resize(w, h);
  target.bind();
  glViewport(0, 0, w, h);
  glClearColor(0, 0, 0, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  BoxRenderer boxes(raster);
  OverlayScratch scratch;
  scratch.box_renderer = &boxes;
  OverlayStyle style;
  style.dense_primitives = dense;
  ImGuiOffscreen painter;
  painter.begin(w, h);
  ImDrawList& dl = painter.background();
  draw_overlays(dl, f, filter, ViewTransform{}, media::RectF{0, 0, float(w), float(h)}, style, scratch);
  if (imgui_vertices) *imgui_vertices = dl.VtxBuffer.Size;
  painter.end();
  std::vector<std::uint8_t> px;
  target.read_rgba(px);
  FrameTarget::unbind();
  return px;
}

TEST_P(BoxRendererTest, OutlinesAreDrawnInsideTheBoxInItsClassColourAndNothingElse) {
  media::OverlayFrame f;
  f.add_box(10, 10, 40, 30, "a", 0.9f, 1, 1);   // 30 x 20
  f.add_box(50, 5, 53, 60, "b", 0.9f, 2, 2);    // 3 wide: narrower than two outlines
  media::OverlayFilter filter;
  filter.labels = filter.scores = filter.track_ids = false;  // outlines only
  const int w = 64, h = 64;
  const auto px = render(GetParam(), f, w, h, /*dense=*/0, filter);
  const media::Color8 c1 = media::class_color(1);
  // Top-left corner and each edge of box 1 (outline 2 px wide, inside the box).
  for (auto [x, y] : {std::pair{10, 10}, std::pair{25, 11}, std::pair{39, 20}, std::pair{11, 20}, std::pair{25, 29}})
    expect_color(px, w, x, y, c1);
  // The interior, and just outside, stay cleared.
  for (auto [x, y] : {std::pair{25, 20}, std::pair{12, 12}, std::pair{9, 20}, std::pair{25, 9}, std::pair{40, 20},
                      std::pair{25, 30}})
    expect_cleared(px, w, x, y);
  // The 3-pixel-wide box is filled by its outline, not drawn past its edges.
  for (int x = 50; x < 53; ++x) expect_color(px, w, x, 30, media::class_color(2));
  expect_cleared(px, w, 49, 30);
  expect_cleared(px, w, 53, 30);
}

TEST_P(BoxRendererTest, DenseBoxesLeaveOnlyCaptionsInTheImGuiList) {
  const media::OverlayFrame f = box_grid();
  media::OverlayFilter outlines_only;
  outlines_only.labels = outlines_only.scores = outlines_only.track_ids = false;
  int vertices = -1;
  const auto px = render(GetParam(), f, 1920, 1080, /*dense=*/1000, outlines_only, &vertices);
  EXPECT_LT(vertices, 100) << "box outlines went into the ImGui list";
  // Box 0, (0,0)-(15,8): outline coloured, interior not; box 99 at x = 1881 likewise.
  expect_color(px, 1920, 0, 0, media::class_color(0));
  expect_cleared(px, 1920, 7, 4);
  expect_color(px, 1920, 1881 + 14, 5, media::class_color(99 % 20));
  expect_cleared(px, 1920, 1881 + 7, 4);
}

using BoxCanvasTest = GlTest;

// Draws `batch` with one renderer into a w x h target cleared to grey, the
// viewport showing the display rectangle (pos, size), twice (the canvas is
// cleared in between), and reads it back.
std::vector<std::uint8_t> draw_direct(BoxRaster raster, const OverlayBatch& batch, int w, int h, const float pos[2],
                                      const float size[2]) {
  FrameTarget target;
  target.resize(w, h);
  target.bind();
  glViewport(0, 0, w, h);
  glClearColor(0.25f, 0.5f, 0.75f, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  BoxRenderer r(raster);
  EXPECT_EQ(r.raster(), raster);
  r.draw(batch, pos, size);
  r.draw(batch, pos, size);
  std::vector<std::uint8_t> px;
  target.read_rgba(px);
  FrameTarget::unbind();
  return px;
}

// Outlines only.
std::vector<std::uint8_t> draw_direct(BoxRaster raster, const std::vector<BoxInstance>& boxes, int w, int h,
                                      const float pos[2], const float size[2], float line_width, bool opaque) {
  return draw_direct(raster, OverlayBatch{&boxes, line_width, nullptr, 0.0f, opaque}, w, h, pos, size);
}

struct RandomBoxes {
  std::uint32_t state = 7;
  float next() {
    state = state * 1664525u + 1013904223u;
    return float(state >> 8) / float(1u << 24);
  }
  std::uint32_t colour(bool translucent) {
    const std::uint32_t a = translucent ? 60 + std::uint32_t(next() * 195) : 255;
    return std::uint32_t(next() * 255) | std::uint32_t(next() * 255) << 8 | std::uint32_t(next() * 255) << 16 |
           a << 24;
  }
};

// Rectangles at any fractional position, thin and wide, some off the view,
// overlapping.
std::vector<BoxInstance> random_boxes(int n, bool translucent) {
  RandomBoxes r;
  std::vector<BoxInstance> boxes;
  for (int i = 0; i < n; ++i) {
    const float x = -20 + r.next() * 300, y = -20 + r.next() * 200, bw = 0.3f + r.next() * 90, bh = 0.3f + r.next() * 60;
    boxes.push_back({x, y, x + bw, y + bh, r.colour(translucent)});
  }
  return boxes;
}

// The same in display units whose every edge (outer and inner) lands, in
// framebuffer pixels, at least 1/32 pixel from a pixel centre: where a pixel
// is covered is then decided by the geometry alone, not by how a rasteriser
// breaks a tie on its subpixel grid. Scale: framebuffer pixels per display
// unit; edges at k/8 + 1/16 pixels, sizes in 1/4 pixels, outlines 2.6 x 2.4.
std::vector<BoxInstance> boxes_off_pixel_centres(int n, const float pos[2], const float scale[2]) {
  RandomBoxes r;
  std::vector<BoxInstance> boxes;
  auto grid = [&](float range) { return std::floor(r.next() * range * 8) / 8 + 1.0f / 16; };
  for (int i = 0; i < n; ++i) {
    const float x = grid(300) - 20, y = grid(200) - 20;
    const float bw = 0.25f + std::floor(r.next() * 360) / 4, bh = 0.25f + std::floor(r.next() * 240) / 4;
    boxes.push_back({pos[0] + x / scale[0], pos[1] + y / scale[1], pos[0] + (x + bw) / scale[0],
                     pos[1] + (y + bh) / scale[1], r.colour(false)});
  }
  return boxes;
}

int differing_pixels(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b, int tolerance) {
  int n = 0;
  for (std::size_t i = 0; i + 3 < a.size(); i += 4)
    for (int c = 0; c < 3; ++c)
      if (std::abs(int(a[i + std::size_t(c)]) - int(b[i + std::size_t(c)])) > tolerance) {
        ++n;
        break;
      }
  return n;
}

constexpr int kW = 260, kH = 180;

TEST_F(BoxCanvasTest, TheCanvasCoversExactlyThePixelsTheInstancedDrawCovers) {
  const float pos[2] = {-10.0f, 5.0f}, size[2] = {200.0f, 150.0f};  // 1.3 x 1.2 framebuffer pixels per unit
  const float scale[2] = {kW / size[0], kH / size[1]};
  const auto boxes = boxes_off_pixel_centres(300, pos, scale);
  const auto gpu = draw_direct(BoxRaster::Gpu, boxes, kW, kH, pos, size, 2.0f, true);
  const auto cpu = draw_direct(BoxRaster::Cpu, boxes, kW, kH, pos, size, 2.0f, true);
  ASSERT_EQ(gpu.size(), cpu.size());
  EXPECT_EQ(differing_pixels(gpu, cpu, 0), 0);
  const auto none = draw_direct(BoxRaster::Cpu, {}, kW, kH, pos, size, 2.0f, true);
  EXPECT_GT(differing_pixels(cpu, none, 0), 5000) << "hardly anything drawn";
}

// Anywhere else the two differ only where an edge, snapped to the
// rasteriser's 1/256-pixel grid, falls exactly on a pixel centre (about one
// edge in 256; the tie then goes the way the rasteriser's triangle edges
// decide): 2,400 edges give about 9 ties, each a run along its edge, so about
// 0.3% of the pixels drawn; a wrong coverage rule would differ on every box.
TEST_F(BoxCanvasTest, AtAnyFractionalPositionOnlyTiesOnPixelCentresDiffer) {
  const float pos[2] = {-10.0f, 5.0f}, size[2] = {200.0f, 150.0f};
  const auto boxes = random_boxes(300, false);
  const auto gpu = draw_direct(BoxRaster::Gpu, boxes, kW, kH, pos, size, 2.0f, true);
  const auto cpu = draw_direct(BoxRaster::Cpu, boxes, kW, kH, pos, size, 2.0f, true);
  const auto none = draw_direct(BoxRaster::Cpu, {}, kW, kH, pos, size, 2.0f, true);
  const int drawn = differing_pixels(cpu, none, 0);
  EXPECT_GT(drawn, 5000);
  EXPECT_LE(differing_pixels(gpu, cpu, 0), drawn / 100);
}

TEST_F(BoxCanvasTest, TranslucentOutlinesBlendInOrderOnTheCanvasAsOnTheGpu) {
  const float pos[2] = {0.0f, 0.0f}, size[2] = {float(kW), float(kH)};
  const float scale[2] = {1.0f, 1.0f};
  auto boxes = boxes_off_pixel_centres(200, pos, scale);
  RandomBoxes r;
  for (BoxInstance& b : boxes) b.rgba = r.colour(true);
  const auto gpu = draw_direct(BoxRaster::Gpu, boxes, kW, kH, pos, size, 3.0f, false);
  const auto cpu = draw_direct(BoxRaster::Cpu, boxes, kW, kH, pos, size, 3.0f, false);
  // The canvas blends premultiplied 8-bit colours, then blends the canvas:
  // rounding differs by a few codes where several outlines overlap.
  EXPECT_EQ(differing_pixels(gpu, cpu, 3), 0);
  const auto none = draw_direct(BoxRaster::Cpu, {}, kW, kH, pos, size, 3.0f, false);
  EXPECT_GT(differing_pixels(cpu, none, 0), 5000) << "hardly anything drawn";
}

// Keypoint dots: the pixels whose centres are within the radius, both ways,
// over outlines, with the display scaled (discs in display units are
// ellipses in pixels). Ties (a centre exactly on the circle) are rare at
// random fractional centres.
TEST_F(BoxCanvasTest, DotsCoverThePixelsTheInstancedDotsCover) {
  const float pos[2] = {-10.0f, 5.0f}, size[2] = {200.0f, 150.0f};
  RandomBoxes r;
  std::vector<DotInstance> dots;
  for (int i = 0; i < 2000; ++i) {
    const float x = -15 + r.next() * 230, y = -15 + r.next() * 180;
    dots.push_back({x, y, r.colour(false)});
  }
  const auto boxes = random_boxes(100, false);
  const auto draw = [&](BoxRaster raster, const std::vector<DotInstance>& d) {
    return draw_direct(raster, OverlayBatch{&boxes, 2.0f, &d, 3.0f, true}, kW, kH, pos, size);
  };
  const auto gpu = draw(BoxRaster::Gpu, dots), cpu = draw(BoxRaster::Cpu, dots);
  const auto without = draw(BoxRaster::Cpu, {});
  const int drawn = differing_pixels(cpu, without, 0);
  EXPECT_GT(drawn, 20000) << "the dots drew hardly anything over the outlines";
  EXPECT_LE(differing_pixels(gpu, cpu, 0), drawn / 200);
}

TEST_F(BoxCanvasTest, DenseKeypointsGoToTheBatchNotTheImGuiList) {
  media::OverlayFrame f;
  for (int i = 0; i < 1500; ++i) {  // past dense_primitives keypoints
    media::OverlayObject o;
    o.class_id = i % 20;
    o.keypoint_first = std::uint32_t(f.keypoints.size());
    o.keypoint_count = 2;
    f.keypoints.push_back({float(i % 60) * 4 + 2, float(i / 60) * 4 + 2, 1.0f});
    f.keypoints.push_back({float(i % 60) * 4 + 3, 1, 1.0f});
    f.objects.push_back(o);
  }
  media::OverlayFilter filter;
  int vertices = -1;
  const auto px = render(BoxRaster::Cpu, f, 256, 128, /*dense=*/1000, filter, &vertices);
  EXPECT_LT(vertices, 100) << "keypoint dots went into the ImGui list";
  expect_color(px, 256, 2, 2, media::class_color(0));  // object 0's first keypoint, at (2, 2)
}

// The batch is chosen by what is drawn, not by the objects: 100 objects of
// 17 keypoints and 16 edges each (3,300 primitives) are batched like 1,001
// objects (they used to be 100 objects' worth of anti-aliased ImGui circles,
// slower than ten times as many objects batched).
TEST_F(BoxCanvasTest, ObjectsWithManyKeypointsAreBatchedByTheirPrimitives) {
  media::OverlayFrame f;
  for (int i = 0; i < 100; ++i) {
    media::OverlayObject o;
    o.class_id = i % 20;
    o.keypoint_first = std::uint32_t(f.keypoints.size());
    o.keypoint_count = 17;
    o.edge_first = std::uint32_t(f.edges.size());
    o.edge_count = 16;
    for (int k = 0; k < 17; ++k) f.keypoints.push_back({float(i % 20) * 12 + 2, float(i / 20) * 20 + float(k), 1.0f});
    for (std::uint32_t k = 0; k < 16; ++k) f.edges.push_back({k, k + 1});
    f.objects.push_back(o);
  }
  media::OverlayFilter filter;
  int batched = -1, one_by_one = -1;
  (void)render(BoxRaster::Cpu, f, 256, 128, /*dense=*/1000, filter, &batched);
  (void)render(BoxRaster::Cpu, f, 256, 128, /*dense=*/100000, filter, &one_by_one);
  EXPECT_GT(one_by_one, 100 * 17 * 8) << "below the threshold each dot is an ImGui circle";
  EXPECT_LT(batched, one_by_one / 4) << "keypoint dots went into the ImGui list";
}

INSTANTIATE_TEST_SUITE_P(BothWays, BoxRendererTest, ::testing::Values(BoxRaster::Gpu, BoxRaster::Cpu),
                         [](const ::testing::TestParamInfo<BoxRaster>& i) {
                           return i.param == BoxRaster::Gpu ? "Gpu" : "Cpu";
                         });

}  // namespace
}  // namespace handoff::view::test
