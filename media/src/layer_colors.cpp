// The colours of dense layers: colormap tables, the default class palette and
// the automatic range of scalar maps.
#include <handoff/error.hpp>
#include <handoff/media/overlay.hpp>

#include "colormap_tables.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace handoff::media {

namespace {

std::array<Color8, 256> to_colors(const std::uint8_t (&t)[256][3]) {
  std::array<Color8, 256> out{};
  for (std::size_t i = 0; i < 256; ++i) out[i] = Color8{t[i][0], t[i][1], t[i][2], 255};
  return out;
}

std::array<Color8, 256> gray_table() {
  std::array<Color8, 256> out{};
  for (std::size_t i = 0; i < 256; ++i) {
    const auto v = static_cast<std::uint8_t>(i);
    out[i] = Color8{v, v, v, 255};
  }
  return out;
}

// HSV (h in 0..1) to 8-bit RGB.
Color8 hsv(double h, double s, double v) {
  const double h6 = h * 6.0;
  const int sector = static_cast<int>(h6) % 6;
  const double f = h6 - std::floor(h6);
  const double p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  double r = v, g = t, b = p;
  switch (sector) {
    case 1: r = q, g = v, b = p; break;
    case 2: r = p, g = v, b = t; break;
    case 3: r = p, g = q, b = v; break;
    case 4: r = t, g = p, b = v; break;
    case 5: r = v, g = p, b = q; break;
    default: break;
  }
  auto code = [](double x) { return static_cast<std::uint8_t>(std::lround(std::clamp(x, 0.0, 1.0) * 255.0)); };
  return Color8{code(r), code(g), code(b), 255};
}

}  // namespace

const std::array<Color8, 256>& colormap_table(Colormap c) {
  static const std::array<Color8, 256> gray = gray_table(), viridis = to_colors(detail::kViridis),
                                       turbo = to_colors(detail::kTurbo), inferno = to_colors(detail::kInferno),
                                       magma = to_colors(detail::kMagma), plasma = to_colors(detail::kPlasma);
  switch (c) {
    case Colormap::Gray: return gray;
    case Colormap::Viridis: return viridis;
    case Colormap::Turbo: return turbo;
    case Colormap::Inferno: return inferno;
    case Colormap::Magma: return magma;
    case Colormap::Plasma: return plasma;
  }
  throw UsageError("colormap_table: colormap value " + std::to_string(int(c)) + " is not a colormap");
}

Color8 default_class_color(std::int64_t id) {
  // frac(id * (golden ratio - 1)) over the id's low 32 bits in fixed point
  // (the layer shader computes the same from a 32-bit id: layer_ids_frag.glsl).
  const auto u = static_cast<std::uint32_t>(id);
  const std::uint32_t walk = u * 0x9E3779B9u;
  const double hue = static_cast<double>(walk >> 8) / 16777216.0;
  // Brightness in turns of three (and saturation against it), so that ids a
  // Fibonacci number apart, close in hue, still differ.
  const std::size_t level = u % 3u;
  constexpr double kValue[] = {0.95, 0.70, 0.95};
  constexpr double kSaturation[] = {0.90, 0.80, 0.55};
  return hsv(hue, kSaturation[level], kValue[level]);
}

std::array<double, 2> ScalarRange::update(const float* values, std::size_t count) {
  scratch_.clear();
  const std::size_t step = count > kMaxSamples ? (count + kMaxSamples - 1) / kMaxSamples : 1;
  for (std::size_t i = 0; i < count; i += step)
    if (std::isfinite(values[i])) scratch_.push_back(values[i]);
  if (scratch_.empty()) return range_;
  auto percentile = [&](double p) {
    const auto k = static_cast<std::size_t>(std::lround(p * double(scratch_.size() - 1)));
    std::nth_element(scratch_.begin(), scratch_.begin() + std::ptrdiff_t(k), scratch_.end());
    return double(scratch_[k]);
  };
  double lo = percentile(0.01), hi = percentile(0.99);
  if (!(hi > lo)) {
    // A constant map: its value in the middle of the range, 0.5 each way, or
    // 8 float steps of it where 0.5 is below that (v +- 0.5 would round to v
    // in float, and in double from 2^53): the ends stay exact in float.
    const double v = lo;
    const double half = v == 0 ? 0.5 : std::max(0.5, std::ldexp(1.0, std::ilogb(v) - 20));
    lo = v - half;
    hi = v + half;
  }
  const double width = range_[1] - range_[0];
  const bool jump = !valid_ || std::abs(lo - range_[0]) > width || std::abs(hi - range_[1]) > width;
  if (jump) {
    range_ = {lo, hi};
  } else {
    constexpr double kFollow = 0.2;  // a fifth of the way each frame: settles in ~20 frames
    range_ = {range_[0] + kFollow * (lo - range_[0]), range_[1] + kFollow * (hi - range_[1])};
  }
  valid_ = true;
  return range_;
}

}  // namespace handoff::media
