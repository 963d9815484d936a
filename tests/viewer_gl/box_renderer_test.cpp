// Dense overlays: box outlines drawn by BoxRenderer from an ImGui draw
// callback (viewer/app/src/box_renderer.hpp), checked pixel by pixel, and the
// ImGui list left with captions only.
#include <gtest/gtest.h>

#include <imgui.h>

#include "box_renderer.hpp"
#include "frame_target.hpp"
#include "box_grid.hpp"
#include "gl_test_context.hpp"
#include "imgui_offscreen.hpp"
#include "overlay_draw.hpp"

namespace handoff::view::test {
namespace {

using BoxRendererTest = GlTest;

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
std::vector<std::uint8_t> render(const media::OverlayFrame& f, int w, int h, std::uint32_t dense, media::OverlayFilter filter,
                                 int* imgui_vertices = nullptr) {
  FrameTarget target;
  target.resize(w, h);
  target.bind();
  glViewport(0, 0, w, h);
  glClearColor(0, 0, 0, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  BoxRenderer boxes;
  OverlayScratch scratch;
  scratch.box_renderer = &boxes;
  OverlayStyle style;
  style.dense_boxes = dense;
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

TEST_F(BoxRendererTest, OutlinesAreDrawnInsideTheBoxInItsClassColourAndNothingElse) {
  media::OverlayFrame f;
  f.add_box(10, 10, 40, 30, "a", 0.9f, 1, 1);   // 30 x 20
  f.add_box(50, 5, 53, 60, "b", 0.9f, 2, 2);    // 3 wide: narrower than two outlines
  media::OverlayFilter filter;
  filter.labels = filter.scores = filter.track_ids = false;  // outlines only
  const int w = 64, h = 64;
  const auto px = render(f, w, h, /*dense=*/0, filter);
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

TEST_F(BoxRendererTest, DenseBoxesLeaveOnlyCaptionsInTheImGuiList) {
  const media::OverlayFrame f = box_grid();
  media::OverlayFilter outlines_only;
  outlines_only.labels = outlines_only.scores = outlines_only.track_ids = false;
  int vertices = -1;
  const auto px = render(f, 1920, 1080, /*dense=*/1000, outlines_only, &vertices);
  EXPECT_LT(vertices, 100) << "box outlines went into the ImGui list";
  // Box 0, (0,0)-(15,8): outline coloured, interior not; box 99 at x = 1881 likewise.
  expect_color(px, 1920, 0, 0, media::class_color(0));
  expect_cleared(px, 1920, 7, 4);
  expect_color(px, 1920, 1881 + 14, 5, media::class_color(99 % 20));
  expect_cleared(px, 1920, 1881 + 7, 4);
}

}  // namespace
}  // namespace handoff::view::test
