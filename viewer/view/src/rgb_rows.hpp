#pragma once
// The CPU colour path's RGB-family row kernels (rgb8, bgr8, rgba8, bgra8),
// in fixed point: ViewConverter mixes an output row's two source rows
// vertically into 16-bit texels, then resamples them horizontally into packed
// 8-bit pixels, red and blue placed as the output wants them. Bilinear as GL
// filters a UNORM8 texture, within 0.52 of a code of the exact mix before the
// final rounding (so within 1 code of a float64 reference after it):
//  - vertical: q = 128 a + round_half_up(128 (b - a) w15 / 2^15), w15 the
//    row weight in Q15 (at most 32767); q holds the code in Q7 (0..32640);
//  - horizontal: code = (qa (2^14 - w14) + qb w14 + 2^20) >> 21, w14 the
//    column weight in Q14 (0..2^14).
// The same integer sums on every CPU: the AVX2 kernels give the portable
// kernels' bytes (tests compare them).
//
// Thread safety: the kernels are pure functions of their arguments.
#include <cstddef>
#include <cstdint>

namespace handoff::view {

// The layout of a source texel and where its channels go.
struct RgbTexel {
  std::uint8_t channels = 3;  // 3 or 4 bytes a pixel (a fourth is alpha, not drawn)
  bool swap = false;          // red and blue trade places on the way out
};

// The weight of the second texel in the fixed point each pass uses.
std::int16_t rgb_row_weight(float w);     // Q15, for vertical
std::int16_t rgb_column_weight(float w);  // Q14, for the taps

// Horizontal taps of output pixel j, as the kernels read them: 8 int16 at
// taps + 8 j, the pair (2^14 - w14, w14) four times.
void fill_rgb_taps(const float* w, std::size_t width, std::int16_t* taps);

// How long a vertically mixed row must be for `texels` texels of `channels`
// samples: the horizontal kernels read 16 bytes from a texel on (its
// neighbour, and for 3 channels 4 bytes past it).
constexpr std::size_t rgb_row_samples(std::size_t texels, std::size_t channels) {
  return channels * (texels + 1) + 8;
}

struct RgbRowKernels {
  // out[k] = the vertical mix of a[k] and b[k] (Q7) for k < n.
  void (*vertical)(const std::uint8_t* a, const std::uint8_t* b, std::int16_t w15, std::size_t n,
                   std::int16_t* out);
  // Output pixel j (4 bytes: red at 0, green, blue at 2 after `texel.swap`;
  // 255 at 3) from texels x0[j] and x0[j] + 1 of `row` (`texel.channels`
  // samples each) with taps + 8 j. The row's length: rgb_row_samples.
  void (*horizontal)(const std::int16_t* row, const std::int32_t* x0, const std::int16_t* taps, std::size_t width,
                     RgbTexel texel, std::uint8_t* out);
};

// The kernels for this CPU (AVX2 where it has it).
const RgbRowKernels& rgb_row_kernels();
// The kernels every CPU runs; and the AVX2 ones, null where the CPU (or the
// build's target) lacks them.
const RgbRowKernels& portable_rgb_row_kernels();
const RgbRowKernels* avx2_rgb_row_kernels();

}  // namespace handoff::view
