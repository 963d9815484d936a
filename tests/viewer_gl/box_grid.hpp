#pragma once
// 10,000 small boxes on a 100 x 100 grid over a 1920x1080 frame (box i at
// x = 19 (i mod 100), y = 10 (i div 100), 15 x 8, class i mod 20): the dense
// overlay the batching tests draw.
#include <handoff/media/overlay.hpp>

namespace handoff::view::test {

inline media::OverlayFrame box_grid(int count = 10000) {
  media::OverlayFrame f;
  for (int i = 0; i < count; ++i) {
    const float x = float(i % 100) * 19.0f, y = float(i / 100) * 10.0f;
    f.add_box(x, y, x + 15, y + 8, "obj", 0.5f, i % 20, i);
  }
  return f;
}

}  // namespace handoff::view::test
