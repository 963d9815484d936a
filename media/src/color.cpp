#include <handoff/error.hpp>
#include <handoff/media/color.hpp>

#include <cmath>

namespace handoff::media {
namespace {

// Code-domain range parameters for n bits: Y' = (Y - y_off) / y_scale, P = (C - c_off) / c_scale.
struct RangeParams {
  double y_off, y_scale, c_off, c_scale, max_code;
};

RangeParams range_params(ColorRange range, PixelFormat format) {
  const int n = bit_depth(format);
  const double s = std::ldexp(1.0, n - 8);  // 1 (8-bit) or 4 (10-bit)
  const double max_code = std::ldexp(1.0, n) - 1.0;
  const double mid = std::ldexp(1.0, n - 1);
  if (range == ColorRange::Limited) return {16.0 * s, 219.0 * s, mid, 224.0 * s, max_code};
  return {0.0, max_code, mid, max_code, max_code};
}

// Code value per unit of sampled UNORM value.
double unorm_to_code(PixelFormat format) {
  return format == PixelFormat::NV12 ? 255.0 : 65535.0 / 64.0;
}

}  // namespace

LumaCoefficients luma_coefficients(ColorMatrix matrix) {
  switch (matrix) {
    case ColorMatrix::BT601: return {0.299, 0.114};
    case ColorMatrix::BT709: return {0.2126, 0.0722};
    case ColorMatrix::BT2020: return {0.2627, 0.0593};
  }
  throw UsageError("luma_coefficients: unknown ColorMatrix " + std::to_string(int(matrix)));
}

std::array<float, 9> ColorTransform::m_float() const {
  std::array<float, 9> r{};
  for (std::size_t i = 0; i < 9; ++i) r[i] = static_cast<float>(m[i]);
  return r;
}

std::array<float, 3> ColorTransform::offset_float() const {
  return {static_cast<float>(offset[0]), static_cast<float>(offset[1]), static_cast<float>(offset[2])};
}

ColorTransform yuv_to_rgb_transform(ColorMatrix matrix, ColorRange range, PixelFormat format, SampleInput input) {
  const LumaCoefficients k = luma_coefficients(matrix);
  const double kg = k.kg();
  // (Y', Pb, Pr) -> R'G'B'.
  const double c[9] = {1.0, 0.0, 2.0 * (1.0 - k.kr),
                       1.0, -2.0 * k.kb * (1.0 - k.kb) / kg, -2.0 * k.kr * (1.0 - k.kr) / kg,
                       1.0, 2.0 * (1.0 - k.kb), 0.0};
  const RangeParams p = range_params(range, format);
  const double in = input == SampleInput::Unorm ? unorm_to_code(format) : 1.0;
  // (Y', Pb, Pr) = diag(a) * s + b
  const double a[3] = {in / p.y_scale, in / p.c_scale, in / p.c_scale};
  const double b[3] = {-p.y_off / p.y_scale, -p.c_off / p.c_scale, -p.c_off / p.c_scale};
  ColorTransform t;
  for (int i = 0; i < 3; ++i) {
    double off = 0.0;
    for (int j = 0; j < 3; ++j) {
      t.m[3 * i + j] = c[3 * i + j] * a[j];
      off += c[3 * i + j] * b[j];
    }
    t.offset[i] = off;
  }
  return t;
}

Rgb yuv_to_rgb(int y, int cb, int cr, ColorMatrix matrix, ColorRange range, PixelFormat format) {
  const ColorTransform t = yuv_to_rgb_transform(matrix, range, format, SampleInput::Code);
  const double s[3] = {double(y), double(cb), double(cr)};
  double o[3];
  for (int i = 0; i < 3; ++i) o[i] = t.m[3 * i] * s[0] + t.m[3 * i + 1] * s[1] + t.m[3 * i + 2] * s[2] + t.offset[i];
  return {o[0], o[1], o[2]};
}

std::array<std::uint8_t, 3> yuv_to_rgb8(int y, int cb, int cr, ColorMatrix matrix, ColorRange range,
                                        PixelFormat format) {
  const Rgb c = yuv_to_rgb(y, cb, cr, matrix, range, format);
  auto q = [](double v) {
    v = v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v);
    return static_cast<std::uint8_t>(std::lround(v * 255.0));
  };
  return {q(c.r), q(c.g), q(c.b)};
}

YuvCodes rgb_to_yuv(double r, double g, double b, ColorMatrix matrix, ColorRange range, PixelFormat format) {
  const LumaCoefficients k = luma_coefficients(matrix);
  const double yp = k.kr * r + k.kg() * g + k.kb * b;
  const double pb = (b - yp) / (2.0 * (1.0 - k.kb));
  const double pr = (r - yp) / (2.0 * (1.0 - k.kr));
  const RangeParams p = range_params(range, format);
  auto code = [&](double v) {
    const long c = std::lround(v);
    return static_cast<int>(c < 0 ? 0 : (c > long(p.max_code) ? long(p.max_code) : c));
  };
  return {code(yp * p.y_scale + p.y_off), code(pb * p.c_scale + p.c_off), code(pr * p.c_scale + p.c_off)};
}

RgbToYuvCoefficients rgb_to_yuv_coefficients(ColorMatrix matrix, ColorRange range, PixelFormat format) {
  const LumaCoefficients k = luma_coefficients(matrix);
  const RangeParams p = range_params(range, format);
  const double kg = k.kg();
  const double db = 2.0 * (1.0 - k.kb), dr = 2.0 * (1.0 - k.kr);
  RgbToYuvCoefficients c{};
  const double ky[4] = {k.kr * p.y_scale, kg * p.y_scale, k.kb * p.y_scale, p.y_off};
  const double kcb[4] = {-k.kr / db * p.c_scale, -kg / db * p.c_scale, (1.0 - k.kb) / db * p.c_scale, p.c_off};
  const double kcr[4] = {(1.0 - k.kr) / dr * p.c_scale, -kg / dr * p.c_scale, -k.kb / dr * p.c_scale, p.c_off};
  for (int i = 0; i < 4; ++i) {
    c.ky[i] = static_cast<float>(ky[i]);
    c.kcb[i] = static_cast<float>(kcb[i]);
    c.kcr[i] = static_cast<float>(kcr[i]);
  }
  c.max_code = static_cast<float>(p.max_code);
  return c;
}

void frame_to_rgb8(const Frame& f, std::uint8_t* rgb, std::size_t rgb_pitch) {
  if (f.memory != MemoryKind::Host) throw UsageError("frame_to_rgb8: the frame is not in host memory");
  if (!f.planes[0].data || !f.planes[1].data || !rgb) throw UsageError("frame_to_rgb8: null pointer");
  if (rgb_pitch < std::size_t(f.width) * 3) throw UsageError("frame_to_rgb8: rgb_pitch below width * 3");
  const bool ten = f.format == PixelFormat::P010;
  const auto* luma = static_cast<const std::uint8_t*>(f.planes[0].data);
  const auto* chroma = static_cast<const std::uint8_t*>(f.planes[1].data);
  auto sample = [ten](const std::uint8_t* row, std::size_t i) -> int {
    if (!ten) return row[i];
    return (row[2 * i] | (row[2 * i + 1] << 8)) >> 6;
  };
  const Colorimetry& c = f.colorimetry;
  for (std::uint32_t y = 0; y < f.height; ++y) {
    const std::uint8_t* lrow = luma + y * f.planes[0].pitch;
    const std::uint8_t* crow = chroma + (y / 2) * f.planes[1].pitch;
    std::uint8_t* out = rgb + y * rgb_pitch;
    for (std::uint32_t x = 0; x < f.width; ++x) {
      const auto px = yuv_to_rgb8(sample(lrow, x), sample(crow, 2 * (x / 2)), sample(crow, 2 * (x / 2) + 1),
                                  c.matrix, c.range, f.format);
      out[3 * x] = px[0];
      out[3 * x + 1] = px[1];
      out[3 * x + 2] = px[2];
    }
  }
}

}  // namespace handoff::media
