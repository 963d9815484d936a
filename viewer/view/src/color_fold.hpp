#pragma once
// The two shader uniforms of the renderer, from the media library's colour model
// (handoff/media/color.hpp, the single source of truth shared with the float64
// reference): rgb = rgb_from_yuv * (Y, Cb, Cr as sampled from UNORM textures) + bias.
#include <array>

#include <handoff/frame.hpp>

namespace handoff::view {

struct ShaderColor {
  std::array<float, 9> rgb_from_yuv{};  // column-major 3x3, as glUniformMatrix3fv wants it (transpose = GL_FALSE)
  std::array<float, 3> bias{};
};

// The format whose codes the media library's colour maths take for a YUV
// format: P010 for the 10-bit one, NV12 for the 8-bit ones (i420, yuyv, uyvy
// have nv12's codes; color.hpp's bit_depth knows nv12 and p010 only).
constexpr PixelFormat yuv_code_format(PixelFormat f) { return f == PixelFormat::P010 ? PixelFormat::P010 : PixelFormat::NV12; }

// Thread-safe (pure). Any YUV format (yuv_code_format).
ShaderColor fold_color(Colorimetry c, PixelFormat f);

}  // namespace handoff::view
