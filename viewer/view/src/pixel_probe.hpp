#pragma once
// The pixel inspector: one frame pixel's own samples in its format (Y Cb Cr
// codes, R G B / B G R (A) codes, a grey code or a float), read back from the
// renderer's textures, and the R'G'B' the view draws for them.
//
// Thread safety: the renderer's thread, its GL context current. GL state it
// changes (GL_PACK_ALIGNMENT) is restored.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include <handoff/frame.hpp>

#include "frame_renderer.hpp"
#include "view_transform.hpp"

namespace handoff::view {

struct PixelProbe {
  bool valid = false;
  int x = 0, y = 0;  // frame coordinates
  PixelFormat format = PixelFormat::NV12;
  int code_y = 0, code_cb = 0, code_cr = 0;  // the YUV formats (p010: the 10-bit codes)
  // RGB and integer grey formats: the codes in the frame's own order (rgb8:
  // R G B; bgr8: B G R; rgba8: R G B A; bgra8: B G R A; gray8 / gray16: one).
  std::array<int, 4> codes{};
  int code_count = 0;
  double value = 0.0;                 // gray32f: the float (NaN / inf as they are)
  std::array<std::uint8_t, 3> rgb{};  // what is drawn (alpha not drawn)
};

// The pixel at frame coordinates (fx, fy) of the renderer's frame; invalid
// outside it or when there is no frame. `value_range`: the user's grey range
// (DrawOptions::value_range). Reads texels back (a GPU sync).
PixelProbe probe_pixel(const FrameRenderer& renderer, const Colorimetry& colorimetry,
                       const std::optional<ValueRange>& value_range, double fx, double fy);
// The frame pixel drawn at view point (bx, by) (framebuffer pixels, top-left
// origin: a cursor's position) with the frame placed by `view`: the one the
// renderer samples for the framebuffer pixel holding that point.
PixelProbe probe_view_pixel(const FrameRenderer& renderer, const Colorimetry& colorimetry,
                            const std::optional<ValueRange>& value_range, const ViewTransform& view, double bx,
                            double by);

// The sample's values as the panel shows them, named by the format's own
// channels: "Y 81  Cb 90  Cr 240", "B 10  G 20  R 30  A 255", "gray 4095",
// "value 0.25" ("value nan").
std::string probe_text(const PixelProbe& probe);

}  // namespace handoff::view
