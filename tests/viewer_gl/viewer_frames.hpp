#pragma once
// Host NV12 / P010 frames for the Viewer API tests: flat colours, a frame of
// four quadrants, and the colour the viewer must show for them (the viewer
// core's float64 reference, handoff/media/color.hpp).
#include <array>
#include <cstdint>
#include <cstring>

#include <handoff/frame.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/media/color.hpp>

namespace handoff::view::test {

struct Yuv {
  int y, cb, cr;  // codes: 8-bit (NV12) or 10-bit (P010)
};

inline void put_sample(void* row, std::size_t i, int code, PixelFormat f) {
  if (f == PixelFormat::NV12) {
    static_cast<std::uint8_t*>(row)[i] = static_cast<std::uint8_t>(code);
  } else {
    const std::uint16_t s = static_cast<std::uint16_t>(code << 6);
    std::memcpy(static_cast<std::uint8_t*>(row) + i * 2, &s, 2);
  }
}

// Fills a host frame: each 2x2 block takes the colour `at(x, y)` of its top-left pixel.
template <typename At>
void fill_frame(const Frame& f, At at) {
  auto* luma = static_cast<std::uint8_t*>(f.planes[0].data);
  auto* chroma = static_cast<std::uint8_t*>(f.planes[1].data);
  for (std::uint32_t y = 0; y < f.height; ++y)
    for (std::uint32_t x = 0; x < f.width; ++x) put_sample(luma + y * f.planes[0].pitch, x, at(x, y).y, f.format);
  for (std::uint32_t cy = 0; cy < chroma_height(f.height); ++cy)
    for (std::uint32_t cx = 0; cx < chroma_width(f.width); ++cx) {
      const Yuv c = at(cx * 2, cy * 2);
      put_sample(chroma + cy * f.planes[1].pitch, cx * 2, c.cb, f.format);
      put_sample(chroma + cy * f.planes[1].pitch, cx * 2 + 1, c.cr, f.format);
    }
}

inline Frame solid_frame(PixelFormat format, std::uint32_t w, std::uint32_t h, Yuv c, std::int64_t index = 0,
                         Colorimetry colorimetry = {}) {
  HostFrameOptions o;
  o.colorimetry = colorimetry;
  Frame f = allocate_host_frame(format, w, h, o);
  fill_frame(f, [&](std::uint32_t, std::uint32_t) { return c; });
  f.index = index;
  return f;
}

// Four quadrants in four colours (limited-range codes of red, green, blue, grey).
inline std::array<Yuv, 4> quadrant_colours(PixelFormat f, Colorimetry c) {
  const double rgb[4][3] = {{0.8, 0.1, 0.1}, {0.1, 0.7, 0.2}, {0.2, 0.2, 0.9}, {0.5, 0.5, 0.5}};
  std::array<Yuv, 4> out{};
  for (int i = 0; i < 4; ++i) {
    const media::YuvCodes y = media::rgb_to_yuv(rgb[i][0], rgb[i][1], rgb[i][2], c.matrix, c.range, f);
    out[std::size_t(i)] = Yuv{y.y, y.cb, y.cr};
  }
  return out;
}

inline int quadrant(std::uint32_t x, std::uint32_t y, std::uint32_t w, std::uint32_t h) {
  return (x >= w / 2 ? 1 : 0) + (y >= h / 2 ? 2 : 0);
}

inline Frame quadrant_frame(PixelFormat format, std::uint32_t w, std::uint32_t h, Colorimetry c) {
  const auto q = quadrant_colours(format, c);
  HostFrameOptions o;
  o.colorimetry = c;
  Frame f = allocate_host_frame(format, w, h, o);
  fill_frame(f, [&](std::uint32_t x, std::uint32_t y) { return q[std::size_t(quadrant(x, y, w, h))]; });
  return f;
}

inline std::array<std::uint8_t, 3> expected_rgb(Yuv c, PixelFormat f, Colorimetry col) {
  return media::yuv_to_rgb8(c.y, c.cb, c.cr, col.matrix, col.range, f);
}

}  // namespace handoff::view::test
