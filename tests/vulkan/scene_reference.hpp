#pragma once
// CPU reference of shaders/vk/scene.glsl, for the producer tests: the same
// integer geometry, the same float conversion (results may differ from the
// GPU's by one code where rounding lands on .5).
#include <handoff/frame.hpp>
#include <handoff/vk_producer.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace handoff::test {

struct Rgb {
  int r, g, b;
};

inline Rgb scene_rgb(int x, int y, int w, int h, std::uint32_t frame) {
  static constexpr std::array<Rgb, 7> bars{{{191, 191, 191}, {191, 191, 0}, {0, 191, 191}, {0, 191, 0},
                                            {191, 0, 191}, {191, 0, 0}, {0, 0, 191}}};
  Rgb c;
  if (y < (h * 2) / 3) {
    c = bars[(x * 7) / w];
  } else {
    int v = w > 1 ? (x * 255) / (w - 1) : 0;
    c = {v, v, v};
  }
  int n = int(frame % 1000000u);
  int s = std::max(2, std::min(w, h) / 8);
  int range = std::max(1, w - s);
  int t = (n * 4) % (2 * range);
  int sx = t < range ? t : 2 * range - t;
  int sy = std::max(0, h / 2 - s / 2);
  if (x >= sx && x < sx + s && y >= sy && y < sy + s) c = {255, 255, 255};
  int r = std::max(1, std::min(w, h) / 10);
  int cx = w - 1 - (n * 3) % w;
  int cy = (h * 5) / 6;
  int dx = x - cx, dy = y - cy;
  if (dx * dx + dy * dy <= r * r) c = {255, 128, 0};
  return c;
}

struct SceneCodes {
  PixelFormat format;
  Colorimetry colorimetry;
  int w, h;
  std::uint32_t frame;

  std::uint32_t max() const { return format == PixelFormat::P010 ? 1023 : 255; }
  std::uint32_t q(float v) const { return std::uint32_t(std::clamp(std::floor(v + 0.5f), 0.0f, float(max()))); }
  float scale() const { return format == PixelFormat::P010 ? 4.0f : 1.0f; }

  std::uint32_t luma_code(float r, float g, float b) const {
    auto k = luma_coefficients(colorimetry.matrix);
    float kg = 1.0f - k.kr - k.kb;
    float y = k.kr * r / 255.0f + kg * g / 255.0f + k.kb * b / 255.0f;
    return colorimetry.range == ColorRange::Full ? q(y * float(max())) : q((16.0f + 219.0f * y) * scale());
  }
  std::array<std::uint32_t, 2> chroma_code(float r, float g, float b) const {
    auto k = luma_coefficients(colorimetry.matrix);
    float kg = 1.0f - k.kr - k.kb;
    r /= 255.0f, g /= 255.0f, b /= 255.0f;
    float y = k.kr * r + kg * g + k.kb * b;
    float cb = (b - y) / (2.0f * (1.0f - k.kb));
    float cr = (r - y) / (2.0f * (1.0f - k.kr));
    if (colorimetry.range == ColorRange::Full) {
      float mid = format == PixelFormat::P010 ? 512.0f : 128.0f;
      return {q(mid + cb * float(max())), q(mid + cr * float(max()))};
    }
    return {q((128.0f + 224.0f * cb) * scale()), q((128.0f + 224.0f * cr) * scale())};
  }
  std::uint32_t luma(int x, int y) const {
    Rgb c = scene_rgb(x, y, w, h, frame);
    return luma_code(float(c.r), float(c.g), float(c.b));
  }
  std::array<std::uint32_t, 2> chroma(int cx, int cy) const {
    int x0 = 2 * cx, y0 = 2 * cy, x1 = std::min(x0 + 1, w - 1), y1 = std::min(y0 + 1, h - 1);
    Rgb a = scene_rgb(x0, y0, w, h, frame), b = scene_rgb(x1, y0, w, h, frame);
    Rgb c = scene_rgb(x0, y1, w, h, frame), d = scene_rgb(x1, y1, w, h, frame);
    return chroma_code(float(a.r + b.r + c.r + d.r) / 4.0f, float(a.g + b.g + c.g + d.g) / 4.0f,
                       float(a.b + b.b + c.b + d.b) / 4.0f);
  }
};

}  // namespace handoff::test
