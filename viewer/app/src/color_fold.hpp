#pragma once
// Folds a frame's colorimetry into the two shader uniforms the renderer uses:
//   rgb = rgb_from_yuv * (Y, Cb, Cr as normalized texture values) + bias
// The coefficients (Kr, Kb, range offsets and scales) come from the viewer
// core's colour model, the single source of truth shared with the float64
// reference; this file only rescales them for the texture encoding
// (unorm8 = code / 255, unorm16 holding a 10-bit code << 6 = code * 64 / 65535).
#include <array>

#include <handoff/frame.hpp>

namespace handoff::viewer {

struct ShaderColor {
  std::array<float, 9> rgb_from_yuv{};  // column-major 3x3, as glUniformMatrix3fv wants it
  std::array<float, 3> bias{};
};

// Thread-safe (pure).
ShaderColor fold_color(Colorimetry c, PixelFormat f);

// Same fold in float64, for tests and the pixel inspector: R'G'B' in [0, 1]
// (unclamped) from raw codes (8-bit for NV12, 10-bit for P010).
std::array<double, 3> rgb_from_codes(Colorimetry c, PixelFormat f, int y, int cb, int cr);

}  // namespace handoff::viewer
