#pragma once
// The viewer's own copy of a call's dense layers (OverlayFrame::layers), made
// inside show() / present() so the caller's arrays are free when it returns.
// Each host array is copied once into packed host memory the copy owns
// (reused from earlier frames' copies: layer_buffer), converted on the way to
// what the display's textures take (CUDA arrays are the ring's to copy, device
// to device, and the display's to convert):
//   class ids   8-bit when every id of a 32- or 64-bit map is in 0..255
//               (layer_buffers.hpp); else as they are (64-bit ids whole: the
//               display uploads their low 32 bits, and the inspector and
//               legend show the ids themselves)
//   scalars     f32 (f16, f64 and integers converted; NaN and +-inf kept)
//   masks       u8, 1 inside (sample > threshold), 0 outside; threshold 0.5
// The display never converts host layers, so the producer pays for the copy
// and the display rate stays that of the frame.
//
// Thread safety: pure; any thread.
#include <handoff/media/overlay.hpp>

namespace handoff::view {

// Validates `overlays`' layers (validate_layers, CUDA device `cuda_device`)
// and returns a copy of `overlays` whose host layers own converted host
// copies. CUDA layers stay as they are: the ring copies them device to device
// into its GL buffers (PushRing::copy_cuda_layers) and the display converts
// them there. Throws InvalidFrame naming the field.
media::OverlayFrame copy_layers(const media::OverlayFrame& overlays, int cuda_device);

// Half-precision bits to float (media's).
using media::half_to_float;

}  // namespace handoff::view
