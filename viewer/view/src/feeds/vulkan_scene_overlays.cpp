#include <algorithm>

#include "feeds/vulkan_scene_feed.hpp"

namespace handoff::view {

void vulkan_scene_overlays(media::OverlayFrame& f, std::int64_t index, std::uint32_t width, std::uint32_t height) {
  f.clear();
  f.frame = index;
  const int w = int(width), h = int(height);
  const int n = int(std::uint32_t(index) % 1000000u);
  const int s = std::max(2, std::min(w, h) / 8);
  const int range = std::max(1, w - s);
  const int t = (n * 4) % (2 * range);
  const int sx = t < range ? t : 2 * range - t;
  const int sy = std::max(0, h / 2 - s / 2);
  f.add_box(float(sx), float(sy), float(std::min(sx + s, w)), float(std::min(sy + s, h)), "square", 1.0f, 0, 1);
  const int r = std::max(1, std::min(w, h) / 10);
  const int cx = w - 1 - (n * 3) % w;
  const int cy = (h * 5) / 6;
  f.add_box(float(std::max(cx - r, 0)), float(std::max(cy - r, 0)), float(std::min(cx + r + 1, w)),
            float(std::min(cy + r + 1, h)), "disc", 1.0f, 1, 2);
}

}  // namespace handoff::view
