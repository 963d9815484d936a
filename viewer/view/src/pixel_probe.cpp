#include "pixel_probe.hpp"

#include "frame_target.hpp"

#include <handoff/media/color.hpp>

namespace handoff::view {

PixelProbe probe_pixel(const FrameRenderer& renderer, const Colorimetry& c, double fx, double fy) {
  PixelProbe p;
  if (!renderer.has_frame() || fx < 0 || fy < 0 || fx >= renderer.width() || fy >= renderer.height()) return p;
  p.valid = true;
  p.x = int(fx);
  p.y = int(fy);
  const bool p010 = renderer.format() == PixelFormat::P010;
  const GLenum type = p010 ? GL_UNSIGNED_SHORT : GL_UNSIGNED_BYTE;
  std::uint16_t y16 = 0, c16[2] = {0, 0};
  std::uint8_t y8 = 0, c8[2] = {0, 0};
  {
    PackStateScope pack;
    glGetTextureSubImage(renderer.luma_texture(), 0, p.x, p.y, 0, 1, 1, 1, GL_RED, type, p010 ? 2 : 1,
                         p010 ? static_cast<void*>(&y16) : static_cast<void*>(&y8));
    // The chroma sample this pixel's block uses (nearest).
    glGetTextureSubImage(renderer.chroma_texture(), 0, p.x / 2, p.y / 2, 0, 1, 1, 1, GL_RG, type,
                         p010 ? 4 : 2, p010 ? static_cast<void*>(c16) : static_cast<void*>(c8));
  }
  if (p010) {
    p.code_y = y16 >> 6;
    p.code_cb = c16[0] >> 6;
    p.code_cr = c16[1] >> 6;
  } else {
    p.code_y = y8;
    p.code_cb = c8[0];
    p.code_cr = c8[1];
  }
  p.rgb = media::yuv_to_rgb8(p.code_y, p.code_cb, p.code_cr, c.matrix, c.range, renderer.format());
  return p;
}

}  // namespace handoff::view
