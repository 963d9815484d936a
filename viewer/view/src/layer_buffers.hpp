#pragma once
// Host memory for the viewer's copies of dense layers (layer_copy.cpp), and
// the narrowing of wide class ids on the way in.
//
// A copy made inside show() into freshly allocated memory pays a page fault
// per 4 KiB on first touch (16 MB of layers: ~4,000 faults, a good part of
// show()'s time); the buffers here go back to a small pool when the display
// lets go of the frame's layers, and the next frame's copy reuses them.
//
// Thread safety: any thread (the pool takes a lock per buffer).
#include <cstddef>
#include <cstdint>
#include <memory>

namespace handoff::view {

// `bytes` of host memory, reused from a buffer of the same size that was let
// go (the pool keeps a few, up to 128 MiB in all) or allocated. Contents undefined.
std::shared_ptr<std::uint8_t[]> layer_buffer(std::size_t bytes);
// Buffers of `bytes` waiting in the pool (for tests). When the pool is full
// the oldest buffers go, so the newest sizes are the ones kept.
std::size_t pooled_layer_buffers(std::size_t bytes);

// Copies the low bytes of `count` ids of `source_bytes` (4 or 8) each from
// `in` into 8-bit `out`: true when every id, signed or not, is in 0..255 (a
// negative one has its high bits set, as one above 255 has); false otherwise
// (`out` is then of no use: the caller copies the ids wide).
bool narrow_ids_to_u8(const std::uint8_t* in, std::size_t count, std::size_t source_bytes, std::uint8_t* out);

}  // namespace handoff::view
