// 10,000 boxes (with captions) go into one ImDrawList as a handful of draw
// commands, not one per box: the viewer stays interactive with dense overlays.
#include <gtest/gtest.h>

#include <imgui.h>

#include "box_grid.hpp"
#include "gl_test_context.hpp"
#include "frame_target.hpp"
#include "imgui_offscreen.hpp"
#include "overlay_draw.hpp"

namespace handoff::view::test {
namespace {

using OverlayBatch = GlTest;

TEST_F(OverlayBatch, TenThousandBoxesAreAFewDrawCommands) {
  const media::OverlayFrame f = box_grid();
  FrameTarget target;
  target.resize(1920, 1080);
  target.bind();
  ImGuiOffscreen painter;
  OverlayScratch scratch;
  painter.begin(1920, 1080);
  ImDrawList& dl = painter.background();
  draw_overlays(dl, f, media::OverlayFilter{}, ViewTransform{}, media::RectF{0, 0, 1920, 1080}, OverlayStyle{}, scratch);
  const int commands = dl.CmdBuffer.Size;
  const int vertices = dl.VtxBuffer.Size;
  painter.end();
  FrameTarget::unbind();
  EXPECT_GT(vertices, 10000 * 4) << "every box was drawn";
  // Commands split only when 16-bit indices run out (every 64k vertices).
  EXPECT_LE(commands, vertices / 65536 + 4) << commands << " draw commands for 10,000 boxes";
}

}  // namespace
}  // namespace handoff::view::test
