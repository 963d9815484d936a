#pragma once
// The viewer's own copy of a call's dense layers (OverlayFrame::layers), made
// inside show() / present() so the caller's arrays are free when it returns.
// Each array is copied once into packed host memory the copy owns (reused
// from earlier frames' copies: layer_buffer), converted
// on the way to what the display's textures take:
//   class ids   8-bit when every id of a 32- or 64-bit map is in 0..255
//               (layer_buffers.hpp); else 8, 16, 32 bits as they are, 64-bit
//               ids keeping their low 32 bits (the palette and the shader's
//               default colours use those)
//   scalars     f32 (f16, f64 and integers converted; NaN and +-inf kept)
//   masks       u8, 1 inside (sample > threshold), 0 outside; threshold 0.5
// The display never converts, so the producer pays for the copy and the
// display rate stays that of the frame.
//
// Thread safety: pure; any thread.
#include <handoff/media/overlay.hpp>

namespace handoff::view {

// Validates `overlays`' layers (validate_layers, CUDA device `cuda_device`)
// and returns a copy of `overlays` whose layers own converted host copies.
// Throws InvalidFrame naming the field; CUDA layers: InvalidFrame (not drawn
// from CUDA memory by this build of the viewer).
media::OverlayFrame copy_layers(const media::OverlayFrame& overlays, int cuda_device);

// Half-precision bits to float (IEEE 754 binary16: subnormals, inf, NaN).
float half_to_float(std::uint16_t h);

}  // namespace handoff::view
