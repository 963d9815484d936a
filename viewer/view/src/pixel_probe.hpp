#pragma once
// The pixel inspector: the raw Y / Cb / Cr codes of one frame pixel, read back
// from the renderer's plane textures, and the R'G'B' they give.
//
// Thread safety: the renderer's thread, its GL context current. GL state it
// changes (GL_PACK_ALIGNMENT) is restored.
#include <array>
#include <cstdint>

#include <handoff/frame.hpp>

#include "frame_renderer.hpp"

namespace handoff::view {

struct PixelProbe {
  bool valid = false;
  int x = 0, y = 0;        // frame coordinates
  int code_y = 0, code_cb = 0, code_cr = 0;
  std::array<std::uint8_t, 3> rgb{};
};

// The pixel at frame coordinates (fx, fy) of the renderer's frame; invalid
// outside it or when there is no frame. Reads two texels back (a GPU sync).
PixelProbe probe_pixel(const FrameRenderer& renderer, const Colorimetry& colorimetry, double fx, double fy);

}  // namespace handoff::view
