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

// Thread-safe (pure).
ShaderColor fold_color(Colorimetry c, PixelFormat f);

}  // namespace handoff::view
