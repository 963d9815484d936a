#pragma once
// Where a frame sits in a framebuffer: fb = frame * scale + offset, both in
// pixels with a top-left origin. Pure maths, thread-safe.
#include <algorithm>
#include <cmath>

namespace handoff::view {

struct ViewTransform {
  double scale = 1.0;
  double offset_x = 0.0;
  double offset_y = 0.0;
  bool operator==(const ViewTransform&) const = default;

  double to_fb_x(double fx) const { return fx * scale + offset_x; }
  double to_fb_y(double fy) const { return fy * scale + offset_y; }
  double to_frame_x(double bx) const { return (bx - offset_x) / scale; }
  double to_frame_y(double by) const { return (by - offset_y) / scale; }
};

// The whole frame inside the framebuffer, aspect kept, centred; offsets rounded
// to whole pixels so 1:1 lands on pixel centres.
inline ViewTransform fit_view(double frame_w, double frame_h, double fb_w, double fb_h) {
  ViewTransform v;
  if (frame_w <= 0 || frame_h <= 0 || fb_w <= 0 || fb_h <= 0) return v;
  v.scale = std::min(fb_w / frame_w, fb_h / frame_h);
  v.offset_x = std::round((fb_w - frame_w * v.scale) / 2);
  v.offset_y = std::round((fb_h - frame_h * v.scale) / 2);
  return v;
}

// Frame pixels at 1:1, centred.
inline ViewTransform actual_size_view(double frame_w, double frame_h, double fb_w, double fb_h) {
  ViewTransform v;
  v.offset_x = std::round((fb_w - frame_w) / 2);
  v.offset_y = std::round((fb_h - frame_h) / 2);
  return v;
}

// Zooms by `factor` keeping the frame point under (fb_x, fb_y) fixed.
inline ViewTransform zoom_around(ViewTransform v, double factor, double fb_x, double fb_y) {
  const double new_scale = std::clamp(v.scale * factor, 1.0 / 64, 256.0);
  const double fx = v.to_frame_x(fb_x), fy = v.to_frame_y(fb_y);
  v.scale = new_scale;
  v.offset_x = fb_x - fx * new_scale;
  v.offset_y = fb_y - fy * new_scale;
  return v;
}

inline ViewTransform pan(ViewTransform v, double dx, double dy) {
  v.offset_x += dx;
  v.offset_y += dy;
  return v;
}

}  // namespace handoff::view
