#include "color_fold.hpp"

namespace handoff::viewer {
namespace {

// Linear map from codes to R'G'B': rgb = M * code + b, in float64.
struct CodeToRgb {
  double m[3][3];  // [row = R,G,B][col = Y,Cb,Cr]
  double b[3];
};

struct Coefficients {
  double kr, kb;
  double y_offset, y_scale;  // Y' = (code - y_offset) / y_scale
  double c_offset, c_scale;  // Cb = (code - c_offset) / c_scale
};

Coefficients coefficients(Colorimetry c, int bits) {
  Coefficients k{};
  switch (c.matrix) {
    case ColorMatrix::BT601: k.kr = 0.299; k.kb = 0.114; break;
    case ColorMatrix::BT709: k.kr = 0.2126; k.kb = 0.0722; break;
    case ColorMatrix::BT2020: k.kr = 0.2627; k.kb = 0.0593; break;
  }
  const double s = static_cast<double>(1 << (bits - 8));
  if (c.range == ColorRange::Limited) {
    k.y_offset = 16 * s; k.y_scale = 219 * s;
    k.c_offset = 128 * s; k.c_scale = 224 * s;
  } else {
    const double max = static_cast<double>((1 << bits) - 1);
    k.y_offset = 0; k.y_scale = max;
    k.c_offset = 128 * s; k.c_scale = max;
  }
  return k;
}

CodeToRgb code_to_rgb(Colorimetry c, PixelFormat f) {
  const Coefficients k = coefficients(c, f == PixelFormat::NV12 ? 8 : 10);
  const double kg = 1.0 - k.kr - k.kb;
  // R = Y + 2(1-Kr) Cr; B = Y + 2(1-Kb) Cb; G = (Y - Kr R - Kb B) / Kg.
  const double rv = 2 * (1 - k.kr), bu = 2 * (1 - k.kb);
  const double gu = -k.kb * bu / kg, gv = -k.kr * rv / kg;
  const double yy = 1.0 / k.y_scale, cc = 1.0 / k.c_scale;
  CodeToRgb t{};
  const double rows[3][3] = {{1, 0, rv}, {1, gu, gv}, {1, bu, 0}};
  for (int r = 0; r < 3; ++r) {
    t.m[r][0] = rows[r][0] * yy;
    t.m[r][1] = rows[r][1] * cc;
    t.m[r][2] = rows[r][2] * cc;
    t.b[r] = -(t.m[r][0] * k.y_offset + (t.m[r][1] + t.m[r][2]) * k.c_offset);
  }
  return t;
}

}  // namespace

ShaderColor fold_color(Colorimetry c, PixelFormat f) {
  const CodeToRgb t = code_to_rgb(c, f);
  // Normalized texture value -> code.
  const double code_per_unit = f == PixelFormat::NV12 ? 255.0 : 65535.0 / 64.0;
  ShaderColor s{};
  for (int col = 0; col < 3; ++col)
    for (int row = 0; row < 3; ++row)
      s.rgb_from_yuv[col * 3 + row] = static_cast<float>(t.m[row][col] * code_per_unit);
  for (int r = 0; r < 3; ++r) s.bias[r] = static_cast<float>(t.b[r]);
  return s;
}

std::array<double, 3> rgb_from_codes(Colorimetry c, PixelFormat f, int y, int cb, int cr) {
  const CodeToRgb t = code_to_rgb(c, f);
  std::array<double, 3> out{};
  for (int r = 0; r < 3; ++r) out[r] = t.m[r][0] * y + t.m[r][1] * cb + t.m[r][2] * cr + t.b[r];
  return out;
}

}  // namespace handoff::viewer
