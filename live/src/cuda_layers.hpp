#pragma once
// A publisher's CUDA layers: checked with the frame, then copied to the host
// for the overlay block (the wire carries host bytes; a subscriber in another
// process cannot read the caller's device memory).
#include <handoff/cuda_stream.hpp>
#include <handoff/media/overlay.hpp>

#include <optional>

namespace handoff::live::detail {

// validate_layers, CUDA layers accepted when all of them are on one device.
// Throws InvalidFrame naming the field.
void check_publish_layers(const media::OverlayFrame& overlays);

// `overlays` with every CUDA layer replaced by a packed host copy, made
// after the work queued on `stream` (the caller's writes) and finished on
// return; nullopt when no layer is in CUDA memory (nothing to copy).
// Throws handoff::Error naming the driver call and the layer.
std::optional<media::OverlayFrame> host_layers(const media::OverlayFrame& overlays, CudaStream stream);

}  // namespace handoff::live::detail
