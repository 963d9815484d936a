#pragma once
// Renders a test frame (and optional overlays) through the viewer's own
// renderer into an FBO and reads it back, top-down RGBA. The shader path
// unless `convert` says otherwise (the golden images are the shader's; the CPU
// path has tests of its own: convert_path_test.cpp).
#include <cstdint>
#include <vector>

#include <handoff/media/overlay.hpp>

#include "frame_renderer.hpp"
#include "frame_target.hpp"
#include "imgui_offscreen.hpp"
#include "overlay_draw.hpp"
#include "test_frames.hpp"

namespace handoff::view::test {

struct Rendered {
  int w = 0, h = 0;
  std::vector<std::uint8_t> rgba;
  const std::uint8_t* at(int x, int y) const { return &rgba[(std::size_t(y) * w + x) * 4]; }
};

inline Rendered render(const TestFrame& tf, Colorimetry c, int w, int h, ViewTransform view = {},
                       bool nearest = false, const media::OverlayFrame* overlays = nullptr,
                       const media::OverlayFilter& filter = {}, ViewerConvert convert = ViewerConvert::Gpu) {
  FrameRenderer renderer(convert);
  FrameTarget target;
  target.resize(w, h);
  renderer.upload(tf.frame(c));
  target.bind();
  DrawOptions o;
  o.colorimetry = c;
  o.view = view;
  o.nearest = nearest;
  renderer.draw(o, w, h);
  if (overlays) {
    ImGuiOffscreen painter;
    OverlayScratch scratch;
    painter.begin(w, h);
    draw_overlays(painter.background(), *overlays, filter, view, media::RectF{0, 0, float(w), float(h)}, OverlayStyle{},
                  scratch);
    painter.end();
  }
  Rendered r;
  r.w = w;
  r.h = h;
  target.read_rgba(r.rgba);
  FrameTarget::unbind();
  return r;
}

}  // namespace handoff::view::test
