#pragma once
// Pitched NV12 / P010 frames in host memory, for tests, examples and CPU
// producers (the count of live frame storage: handoff/diagnostics.hpp).
#include <handoff/frame.hpp>

#include <cstddef>
#include <cstdint>

namespace handoff {

struct HostFrameOptions {
  // Pitch and base alignment in bytes: a power of two, at least the sample
  // size, at most 4096. Each plane's pitch is its packed row rounded up to it.
  std::size_t alignment = 256;
  Colorimetry colorimetry{};
};

// Allocates a zero-filled host frame: one allocation, the luma plane first and
// the chroma plane right after it (offset pitch * height), both with the same
// pitch, so an even-width frame is also the classic single-buffer NV12 / P010
// layout. The frame's owner frees the memory when the last copy of the frame
// (and the last DLPack export of it) is gone.
// Throws InvalidFrame for bad dimensions, UsageError for a bad alignment.
// Thread safety: any thread.
Frame allocate_host_frame(PixelFormat format, std::uint32_t width, std::uint32_t height,
                          const HostFrameOptions& options = {});

// A Frame describing host planes someone else owns (owner empty: keep the
// memory alive while the Frame is used): luma rows of `width` samples,
// interleaved chroma rows of chroma_width(width) pairs. Checks nothing
// (validate() does). Thread safety: any thread.
Frame host_planes_frame(PixelFormat format, std::uint32_t width, std::uint32_t height, void* luma,
                        std::size_t luma_pitch, void* chroma, std::size_t chroma_pitch,
                        const Colorimetry& colorimetry = {});

// True when luma and chroma share one pitch and chroma starts right after the
// last luma row, with an even width (so chroma rows are exactly one luma row
// long): the frame is then one (H + ceil(H/2)) x W array of samples.
bool is_stacked(const Frame& frame) noexcept;

// Writes a deterministic pattern into a host frame (whose memory the caller
// may write, e.g. from allocate_host_frame), for tests. Values, before P010's
// shift into the top 10 bits (v << 6), with m = 256 (NV12) or 1024 (P010):
//   luma(x, y)      = (7x + 13y + seed) mod m
//   chroma U(x, y)  = (5x + 3y + seed + 64) mod m
//   chroma V(x, y)  = (11x + 2y + seed + 128) mod m
// Throws UsageError for frames not in host memory.
void fill_test_pattern(const Frame& frame, std::uint32_t seed = 0);

}  // namespace handoff
