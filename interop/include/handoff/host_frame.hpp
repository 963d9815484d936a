#pragma once
// Pitched frames of any format in host memory, for tests, examples and CPU
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

// Allocates a zero-filled host frame: one allocation, the planes one after the
// other (the luma plane first, chroma right after it at offset pitch * height),
// all with the same pitch, so an even-width NV12 / P010 frame is also the
// classic single-buffer layout. The frame's owner frees the memory when the last copy of the frame
// (and the last DLPack export of it) is gone.
// Throws InvalidFrame for bad dimensions, UsageError for a bad alignment.
// Thread safety: any thread.
Frame allocate_host_frame(PixelFormat format, std::uint32_t width, std::uint32_t height,
                          const HostFrameOptions& options = {});

// A Frame describing the two host planes of an NV12 / P010 frame someone else
// owns (owner empty: keep the memory alive while the Frame is used): luma
// rows of `width` samples,
// interleaved chroma rows of chroma_width(width) pairs. Checks nothing
// (validate() does). Thread safety: any thread.
Frame host_planes_frame(PixelFormat format, std::uint32_t width, std::uint32_t height, void* luma,
                        std::size_t luma_pitch, void* chroma, std::size_t chroma_pitch,
                        const Colorimetry& colorimetry = {});

// True for an NV12 / P010 frame whose luma and chroma share one pitch and chroma starts right after the
// last luma row, with an even width (so chroma rows are exactly one luma row
// long): the frame is then one (H + ceil(H/2)) x W array of samples.
bool is_stacked(const Frame& frame) noexcept;

// Writes a deterministic pattern into a host frame (whose memory the caller
// may write, e.g. from allocate_host_frame), for tests. Sample k of element
// (x, y), k = plane index + component index (capped at 3), is
//   k = 0: 7x + 13y + seed          (luma; R, B or grey of the packed formats)
//   k = 1: 5x + 3y + seed + 64      (chroma U, i420's U; the second sample)
//   k = 2: 11x + 2y + seed + 128    (chroma V, i420's V; the third)
//   k = 3: 3x + 5y + seed + 192     (alpha)
// taken mod 256 (8-bit formats), mod 1024 and shifted into the top 10 bits
// (p010), mod 65536 (gray16), or mod 4096 times 0.25 (gray32f); x counts
// elements of the plane (chroma pairs, 4:2:2 pairs' samples are its two
// components).
// Throws UsageError for frames not in host memory.
void fill_test_pattern(const Frame& frame, std::uint32_t seed = 0);

}  // namespace handoff
