#include "rgb_rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace handoff::view {

std::int16_t rgb_row_weight(float w) {
  return std::int16_t(std::clamp(std::lround(double(w) * 32768.0), 0l, 32767l));
}

std::int16_t rgb_column_weight(float w) {
  return std::int16_t(std::clamp(std::lround(double(w) * 16384.0), 0l, 16384l));
}

void fill_rgb_taps(const float* w, std::size_t width, std::int16_t* taps) {
  for (std::size_t j = 0; j < width; ++j) {
    const std::int16_t b = rgb_column_weight(w[j]), a = std::int16_t(16384 - b);
    for (std::size_t c = 0; c < 4; ++c) {
      taps[8 * j + 2 * c] = a;
      taps[8 * j + 2 * c + 1] = b;
    }
  }
}

namespace {

// The rules of rgb_rows.hpp, one sample / one pixel at a time.
inline std::int16_t mix_rows(std::uint8_t a, std::uint8_t b, std::int32_t w15) {
  const std::int32_t d = (std::int32_t(b) - std::int32_t(a)) * 128;
  return std::int16_t(std::int32_t(a) * 128 + ((d * w15 + (1 << 14)) >> 15));
}

inline std::uint32_t mix_columns(const std::int16_t* row, std::int32_t x0, const std::int16_t* tap, RgbTexel t) {
  const std::int16_t* a = row + std::size_t(t.channels) * std::size_t(x0);
  const std::int16_t* b = a + t.channels;
  std::uint32_t px = 0xff000000u;
  for (unsigned c = 0; c < 3; ++c) {
    const unsigned s = t.swap ? 2 - c : c;
    const std::int32_t acc = std::int32_t(a[s]) * tap[0] + std::int32_t(b[s]) * tap[1];
    px |= std::uint32_t((acc + (1 << 20)) >> 21) << (8 * c);
  }
  return px;
}

void portable_vertical(const std::uint8_t* a, const std::uint8_t* b, std::int16_t w15, std::size_t n,
                       std::int16_t* out) {
  for (std::size_t k = 0; k < n; ++k) out[k] = mix_rows(a[k], b[k], w15);
}

void portable_horizontal(const std::int16_t* row, const std::int32_t* x0, const std::int16_t* taps,
                         std::size_t width, RgbTexel t, std::uint8_t* out) {
  for (std::size_t j = 0; j < width; ++j) {
    const std::uint32_t px = mix_columns(row, x0[j], taps + 8 * j, t);
    std::memcpy(out + 4 * j, &px, 4);  // little-endian: red's byte first
  }
}

constexpr RgbRowKernels portable_kernels{portable_vertical, portable_horizontal};

#if defined(__x86_64__) || defined(__i386__)

// 16 samples a step: both rows widened to 16 bits, mulhrs (round half up of
// x y / 2^15) for the weighted difference.
__attribute__((target("avx2"))) void avx2_vertical(const std::uint8_t* a, const std::uint8_t* b, std::int16_t w15,
                                                   std::size_t n, std::int16_t* out) {
  const __m256i w = _mm256_set1_epi16(w15);
  std::size_t k = 0;
  for (; k + 16 <= n; k += 16) {
    const __m256i va = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + k)));
    const __m256i vb = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k)));
    const __m256i d = _mm256_slli_epi16(_mm256_sub_epi16(vb, va), 7);
    const __m256i q = _mm256_add_epi16(_mm256_slli_epi16(va, 7), _mm256_mulhrs_epi16(d, w));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k), q);
  }
  for (; k < n; ++k) out[k] = mix_rows(a[k], b[k], w15);
}

// Output pixels j and j + 1, one a lane: 4 channels as int32 codes.
__attribute__((target("avx2"), always_inline)) inline __m256i avx2_two_pixels(
    const std::uint8_t* base, std::size_t stride, const std::int32_t* x0, const std::int16_t* taps, std::size_t j,
    __m256i shuffle, __m256i round) {
  const __m256i texels = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(base + stride * std::size_t(x0[j + 1])),
                                             reinterpret_cast<const __m128i*>(base + stride * std::size_t(x0[j])));
  const __m256i sum = _mm256_madd_epi16(_mm256_shuffle_epi8(texels, shuffle),
                                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(taps + 8 * j)));
  return _mm256_srai_epi32(_mm256_add_epi32(sum, round), 21);
}

// Two output pixels a 256-bit step: each lane loads the pixel's two texels
// (16 bytes from the first), a byte shuffle pairs their channels (a, b) in
// the output's order (the fourth pair zero) and madd applies the taps.
// Eight pixels are rounded, narrowed and stored together.
__attribute__((target("avx2"))) void avx2_horizontal(const std::int16_t* row, const std::int32_t* x0,
                                                     const std::int16_t* taps, std::size_t width, RgbTexel t,
                                                     std::uint8_t* out) {
  alignas(16) std::int8_t pairs[16];
  const int next = 2 * t.channels;  // bytes from a texel's sample to its neighbour's
  for (int c = 0; c < 3; ++c) {
    const int s = 2 * (t.swap ? 2 - c : c);
    pairs[4 * c] = std::int8_t(s);
    pairs[4 * c + 1] = std::int8_t(s + 1);
    pairs[4 * c + 2] = std::int8_t(s + next);
    pairs[4 * c + 3] = std::int8_t(s + next + 1);
  }
  for (int k = 12; k < 16; ++k) pairs[k] = -128;  // zero
  const __m256i shuffle = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(pairs)));
  const __m256i round = _mm256_set1_epi32(1 << 20), alpha = _mm256_set1_epi32(std::int32_t(0xff000000u));
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const auto* base = reinterpret_cast<const std::uint8_t*>(row);
  const std::size_t stride = 2 * std::size_t(t.channels);
  std::size_t j = 0;
  for (; j + 8 <= width; j += 8) {
    const __m256i p01 = avx2_two_pixels(base, stride, x0, taps, j, shuffle, round),
                  p23 = avx2_two_pixels(base, stride, x0, taps, j + 2, shuffle, round),
                  p45 = avx2_two_pixels(base, stride, x0, taps, j + 4, shuffle, round),
                  p67 = avx2_two_pixels(base, stride, x0, taps, j + 6, shuffle, round);
    // packs: [p0 p2 | p1 p3], [p4 p6 | p5 p7]; packus: [p0 p2 p4 p6 | p1 p3 p5 p7]
    const __m256i bytes = _mm256_packus_epi16(_mm256_packs_epi32(p01, p23), _mm256_packs_epi32(p45, p67));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 4 * j),
                        _mm256_or_si256(_mm256_permutevar8x32_epi32(bytes, order), alpha));
  }
  for (; j < width; ++j) {
    const std::uint32_t px = mix_columns(row, x0[j], taps + 8 * j, t);
    std::memcpy(out + 4 * j, &px, 4);
  }
}

constexpr RgbRowKernels avx2_kernels{avx2_vertical, avx2_horizontal};

#endif

}  // namespace

const RgbRowKernels& portable_rgb_row_kernels() { return portable_kernels; }

const RgbRowKernels* avx2_rgb_row_kernels() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return &avx2_kernels;
#endif
  return nullptr;
}

const RgbRowKernels& rgb_row_kernels() {
  static const RgbRowKernels& k = avx2_rgb_row_kernels() ? *avx2_rgb_row_kernels() : portable_kernels;
  return k;
}

}  // namespace handoff::view
