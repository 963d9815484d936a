#pragma once
// Dense layers (media::OverlayFrame::layers) in the overlay block of the live
// protocol, after the vector overlays (docs/live.md "Layers"). Private to
// overlay_codec.cpp.
#include <handoff/media/overlay.hpp>

#include "wire.hpp"

namespace handoff::live::detail {

// Writes a count, then each layer's settings and its samples packed and
// converted as media::pack_layer converts (ids 8 / 16 / 32 bits, scalars f32,
// masks u8 0 / 1). Throws InvalidFrame for a layer it cannot send (CUDA, a
// name with control characters or longer than kMaxTextBytes).
void encode_layers(const media::OverlayFrame& overlays, WireWriter& w);

// Reads what encode_layers wrote into out.layers (each layer owning a copy of
// its samples), then checks them with media::validate_layers (out's objects
// read already). Throws ProtocolError naming "overlays.layers[i].<field>".
void decode_layers(WireReader& r, media::OverlayFrame& out);

}  // namespace handoff::live::detail
