#pragma once
// Frames of every pixel format filled with seeded random samples, and the
// float64 reference of what the viewer must draw for each pixel at scale 1,
// computed here from the formulas, not from the viewer's own colour code:
//  - YUV: the chroma sample a pixel sees is the bilinear mix of the chroma
//    grid (4:2:0: half size both ways; 4:2:2: half width) at the pixel's
//    position for the siting (chroma i at luma position sub * i + siting),
//    then BT.601 / 709 / 2020 limited or full range (H.273) to R'G'B';
//  - RGB: the codes themselves (B G R order for bgr8 / bgra8; alpha not drawn);
//  - grey: (v - lo) / (hi - lo) clamped, NaN / inf drawn as code 128.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <cstdio>
#include <string>
#include <vector>

#include <handoff/frame.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/viewer.hpp>

namespace handoff::view::test {

using Rgb64 = std::array<double, 3>;  // 0..255, unrounded

struct FormatFrame {
  Frame frame;
  std::vector<Rgb64> want;  // width x height, row-major
  const Rgb64& at(std::uint32_t x, std::uint32_t y) const { return want[std::size_t(y) * frame.width + x]; }
};

inline double clamp01(double v) { return std::clamp(v, 0.0, 1.0); }

// R'G'B' (0..255) of interpolated codes y, cb, cr of an n-bit YUV format.
inline Rgb64 yuv_reference(double y, double cb, double cr, int bits, Colorimetry c) {
  double kr = 0.2126, kb = 0.0722;  // BT.709
  if (c.matrix == ColorMatrix::BT601) kr = 0.299, kb = 0.114;
  if (c.matrix == ColorMatrix::BT2020) kr = 0.2627, kb = 0.0593;
  const double s = std::ldexp(1.0, bits - 8), max = std::ldexp(1.0, bits) - 1.0, mid = std::ldexp(1.0, bits - 1);
  double Y, Pb, Pr;
  if (c.range == ColorRange::Limited) {
    Y = (y - 16.0 * s) / (219.0 * s);
    Pb = (cb - mid) / (224.0 * s);
    Pr = (cr - mid) / (224.0 * s);
  } else {
    Y = y / max;
    Pb = (cb - mid) / max;
    Pr = (cr - mid) / max;
  }
  const double r = Y + 2.0 * (1.0 - kr) * Pr, b = Y + 2.0 * (1.0 - kb) * Pb;
  const double g = (Y - kr * r - kb * b) / (1.0 - kr - kb);
  return {clamp01(r) * 255.0, clamp01(g) * 255.0, clamp01(b) * 255.0};
}

struct Siting2 {
  double x, y;
};
inline Siting2 siting_of(ChromaSiting s) {
  return {s == ChromaSiting::Center ? 0.5 : 0.0, s == ChromaSiting::TopLeft ? 0.0 : 0.5};
}

// One axis of the chroma a pixel sees: texels i0, i1 and the weight of i1.
struct Mix {
  std::uint32_t i0, i1;
  double w;
};
inline Mix chroma_mix(std::uint32_t x, double siting, double sub, std::uint32_t n) {
  const double u = (double(x) - siting) / sub;
  const double f = std::floor(u);
  const auto clampi = [n](double i) { return std::uint32_t(std::clamp(i, 0.0, double(n - 1))); };
  return {clampi(f), clampi(f + 1), u - f};
}

inline void put8(const Plane& p, std::uint32_t x, std::uint32_t y, std::size_t k, int v) {
  static_cast<std::uint8_t*>(p.data)[std::size_t(y) * p.pitch + std::size_t(x) * p.components + k] = std::uint8_t(v);
}
inline void put16(const Plane& p, std::uint32_t x, std::uint32_t y, std::size_t k, std::uint16_t v) {
  std::memcpy(static_cast<std::uint8_t*>(p.data) + std::size_t(y) * p.pitch + (std::size_t(x) * p.components + k) * 2,
              &v, 2);
}

// A YUV frame of random codes and its reference. swap_uv / swap_y: the
// reference of a frame whose U and V (or 4:2:2 pair luma Y0 / Y1) were
// exchanged, to show that the pattern tells them apart.
inline FormatFrame yuv_format_frame(PixelFormat f, std::uint32_t w, std::uint32_t h, Colorimetry c, unsigned seed,
                                    bool swap_uv = false, bool swap_y = false) {
  std::mt19937 rng(seed);
  const bool p010 = f == PixelFormat::P010, packed = f == PixelFormat::YUYV || f == PixelFormat::UYVY;
  const int bits = p010 ? 10 : 8, max = (1 << bits) - 1;
  std::uniform_int_distribution<int> code(0, max);
  const std::uint32_t cw = chroma_width(w), ch = packed ? h : chroma_height(h), lw = packed ? 2 * cw : w;
  std::vector<int> Y(std::size_t(lw) * h), U(std::size_t(cw) * ch), V(U.size());
  for (auto& v : Y) v = code(rng);
  for (auto& v : U) v = code(rng);
  for (auto& v : V) v = code(rng);
  HostFrameOptions o;
  o.colorimetry = c;
  o.alignment = 64;
  FormatFrame out{allocate_host_frame(f, w, h, o), {}};
  const Frame& fr = out.frame;
  const auto y_at = [&](std::uint32_t x, std::uint32_t r) { return Y[std::size_t(r) * lw + x]; };
  const auto u_at = [&](std::uint32_t i, std::uint32_t j) { return U[std::size_t(j) * cw + i]; };
  const auto v_at = [&](std::uint32_t i, std::uint32_t j) { return V[std::size_t(j) * cw + i]; };
  for (std::uint32_t r = 0; r < h; ++r)
    for (std::uint32_t x = 0; x < lw; ++x) {
      if (packed) {
        const std::uint32_t k = x / 2;
        const bool yuyv = f == PixelFormat::YUYV;
        // yuyv: Y0 U Y1 V; uyvy: U Y0 V Y1 (element x of the plane holds 2 samples)
        put8(fr.planes[0], x, r, yuyv ? 0 : 1, y_at(x, r));
        put8(fr.planes[0], x, r, yuyv ? 1 : 0, x % 2 == 0 ? u_at(k, r) : v_at(k, r));
      } else if (x < w) {
        if (p010)
          put16(fr.planes[0], x, r, 0, std::uint16_t(y_at(x, r) << 6));
        else
          put8(fr.planes[0], x, r, 0, y_at(x, r));
      }
    }
  if (!packed)
    for (std::uint32_t j = 0; j < ch; ++j)
      for (std::uint32_t i = 0; i < cw; ++i) {
        if (f == PixelFormat::I420) {
          put8(fr.planes[1], i, j, 0, u_at(i, j));
          put8(fr.planes[2], i, j, 0, v_at(i, j));
        } else if (p010) {
          put16(fr.planes[1], i, j, 0, std::uint16_t(u_at(i, j) << 6));
          put16(fr.planes[1], i, j, 1, std::uint16_t(v_at(i, j) << 6));
        } else {
          put8(fr.planes[1], i, j, 0, u_at(i, j));
          put8(fr.planes[1], i, j, 1, v_at(i, j));
        }
      }
  const Siting2 s = siting_of(c.siting);
  const double sub_y = packed ? 1.0 : 2.0, sit_y = packed ? 0.0 : s.y;
  out.want.resize(std::size_t(w) * h);
  for (std::uint32_t r = 0; r < h; ++r)
    for (std::uint32_t x = 0; x < w; ++x) {
      const Mix mx = chroma_mix(x, s.x, 2.0, cw), my = chroma_mix(r, sit_y, sub_y, ch);
      const auto mix = [&](auto plane) {
        const double top = plane(mx.i0, my.i0) * (1 - mx.w) + plane(mx.i1, my.i0) * mx.w;
        const double bottom = plane(mx.i0, my.i1) * (1 - mx.w) + plane(mx.i1, my.i1) * mx.w;
        return top * (1 - my.w) + bottom * my.w;
      };
      const double cb = mix(u_at), cr = mix(v_at);
      const std::uint32_t yx = swap_y && packed ? (x ^ 1u) : x;
      out.want[std::size_t(r) * w + x] = yuv_reference(y_at(yx, r), swap_uv ? cr : cb, swap_uv ? cb : cr, bits, c);
    }
  return out;
}

inline FormatFrame rgb_format_frame(PixelFormat f, std::uint32_t w, std::uint32_t h, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> code(0, 255);
  FormatFrame out{allocate_host_frame(f, w, h, HostFrameOptions{.alignment = 4}), {}};
  const bool bgr = f == PixelFormat::BGR8 || f == PixelFormat::BGRA8;
  const std::size_t n = f == PixelFormat::RGBA8 || f == PixelFormat::BGRA8 ? 4 : 3;
  out.want.resize(std::size_t(w) * h);
  for (std::uint32_t r = 0; r < h; ++r)
    for (std::uint32_t x = 0; x < w; ++x) {
      int v[4];
      for (std::size_t k = 0; k < n; ++k) {
        v[k] = code(rng);
        put8(out.frame.planes[0], x, r, k, v[k]);
      }
      out.want[std::size_t(r) * w + x] =
          bgr ? Rgb64{double(v[2]), double(v[1]), double(v[0])} : Rgb64{double(v[0]), double(v[1]), double(v[2])};
    }
  return out;
}

inline constexpr double kNonFiniteCode = 128.0;

// gray8 / gray16 random codes, gray32f random values in [lo - span / 4,
// hi + span / 4] (some clamp) with NaN, +inf and -inf at a few pixels; the
// reference over `range` (gray8: 0..255, gray16 without one: 0..65535).
inline FormatFrame gray_format_frame(PixelFormat f, std::uint32_t w, std::uint32_t h, unsigned seed,
                                     std::optional<ValueRange> range) {
  std::mt19937 rng(seed);
  FormatFrame out{allocate_host_frame(f, w, h, HostFrameOptions{.alignment = 4}), {}};
  const Plane& p = out.frame.planes[0];
  ValueRange r = f == PixelFormat::GRAY8 ? ValueRange{0, 255} : range.value_or(ValueRange{0, 65535});
  if (f == PixelFormat::GRAY8) range.reset();
  const double span = r.hi - r.lo;
  std::uniform_real_distribution<double> real(r.lo - span / 4, r.hi + span / 4);
  std::uniform_int_distribution<int> code(0, f == PixelFormat::GRAY8 ? 255 : 65535);
  out.want.resize(std::size_t(w) * h);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) {
      double v = 0;
      if (f == PixelFormat::GRAY32F) {
        float fv = float(real(rng));
        const std::uint32_t i = y * w + x;
        if (i % 97 == 5) fv = std::numeric_limits<float>::quiet_NaN();
        if (i % 97 == 40) fv = std::numeric_limits<float>::infinity();
        if (i % 97 == 77) fv = -std::numeric_limits<float>::infinity();
        std::memcpy(static_cast<std::uint8_t*>(p.data) + std::size_t(y) * p.pitch + std::size_t(x) * 4, &fv, 4);
        v = fv;
      } else if (f == PixelFormat::GRAY16) {
        v = code(rng);
        put16(p, x, y, 0, std::uint16_t(v));
      } else {
        v = code(rng);
        put8(p, x, y, 0, int(v));
      }
      const double g = std::isfinite(v) ? clamp01((v - r.lo) / span) * 255.0 : kNonFiniteCode;
      out.want[std::size_t(y) * w + x] = {g, g, g};
    }
  return out;
}

// "(x, y) channel k: got, want w" for a pixel off its reference.
inline std::string off_text(long x, long y, int k, int got, double want) {
  char text[128];
  std::snprintf(text, sizeof text, "(%ld, %ld) channel %d: %d, want %f", x, y, k, got, want);
  return text;
}

// Pixels of `got` (RGBA, w x h) more than `tolerance` from the reference.
template <typename Pixel>
std::size_t count_off(const FormatFrame& f, Pixel got, double tolerance, std::string* first = nullptr) {
  std::size_t off = 0;
  for (std::uint32_t y = 0; y < f.frame.height; ++y)
    for (std::uint32_t x = 0; x < f.frame.width; ++x) {
      const std::uint8_t* g = got(x, y);
      const Rgb64& want = f.at(x, y);
      for (int k = 0; k < 3; ++k)
        if (std::abs(double(g[k]) - want[std::size_t(k)]) > tolerance) {
          if (!off && first)
            *first = off_text(long(x), long(y), k, int(g[k]), want[std::size_t(k)]);
          ++off;
          break;
        }
    }
  return off;
}

}  // namespace handoff::view::test
