#include "color_fold.hpp"

#include <handoff/media/color.hpp>

namespace handoff::view {

ShaderColor fold_color(Colorimetry c, PixelFormat f) {
  const media::ColorTransform t = yuv_to_rgb_transform(c.matrix, c.range, yuv_code_format(f), media::SampleInput::Unorm);
  const std::array<float, 9> m = t.m_float();  // row-major
  ShaderColor s{};
  for (int row = 0; row < 3; ++row)
    for (int col = 0; col < 3; ++col) s.rgb_from_yuv[std::size_t(col * 3 + row)] = m[std::size_t(row * 3 + col)];
  s.bias = t.offset_float();
  return s;
}

}  // namespace handoff::view
