#pragma once
// YCbCr <-> RGB, the one source of truth for the viewer's colour.
//
// Non-constant-luminance Y'CbCr per ITU-R BT.601 / BT.709 / BT.2020 (H.273):
//   Kr, Kb = 0.299, 0.114 (601) | 0.2126, 0.0722 (709) | 0.2627, 0.0593 (2020); Kg = 1 - Kr - Kb
//   Limited range, n bits: Y' = (Y - 16*2^(n-8)) / (219*2^(n-8)), Pb = (Cb - 2^(n-1)) / (224*2^(n-8))
//   Full range,    n bits: Y' = Y / (2^n - 1),                    Pb = (Cb - 2^(n-1)) / (2^n - 1)
//   R = Y' + 2(1-Kr) Pr;  B = Y' + 2(1-Kb) Pb;  G = (Y' - Kr R - Kb B) / Kg
//
// yuv_to_rgb_transform() folds all of it into rgb = M * s + offset, where s is
// what the GL shader samples (see SampleInput). The shader uploads M and offset
// as uniforms; the CPU reference (yuv_to_rgb) applies the very same numbers.
#include <handoff/frame.hpp>

#include <array>
#include <cstdint>

namespace handoff::media {

struct LumaCoefficients {
  double kr, kb;
  double kg() const { return 1.0 - kr - kb; }
};
LumaCoefficients luma_coefficients(ColorMatrix matrix);

// How the shader sees a sample.
enum class SampleInput : std::uint8_t {
  // UNORM textures: NV12 from R8/RG8 -> code / 255; P010 from R16/RG16 ->
  // (code10 << 6) / 65535 (the 16-bit word as stored).
  Unorm,
  // Integer code values (8-bit codes for NV12, 10-bit codes for P010), e.g.
  // from an R16UI texture after >> 6, or the CPU reference.
  Code,
};

struct ColorTransform {
  // Row-major 3x3: rgb[i] = sum_j m[3*i + j] * s[j] + offset[i], s = (Y, Cb, Cr).
  std::array<double, 9> m{};
  std::array<double, 3> offset{};
  // Same values as float for glUniformMatrix3fv (transpose = GL_TRUE since row-major).
  std::array<float, 9> m_float() const;
  std::array<float, 3> offset_float() const;
};

// The transform from sampled (Y, Cb, Cr) to R'G'B' in [0, 1] (unclamped).
ColorTransform yuv_to_rgb_transform(ColorMatrix matrix, ColorRange range, PixelFormat format,
                                    SampleInput input = SampleInput::Unorm);

// Bits per sample of a format: 8 (NV12) or 10 (P010).
constexpr int bit_depth(PixelFormat f) { return f == PixelFormat::NV12 ? 8 : 10; }

struct Rgb {
  double r, g, b;
};

// Reference: codes (8- or 10-bit per `format`) -> R'G'B' in [0,1], unclamped, float64.
Rgb yuv_to_rgb(int y, int cb, int cr, ColorMatrix matrix, ColorRange range, PixelFormat format);

// Codes -> 8-bit RGB (clamped, rounded), as the viewer displays them.
std::array<std::uint8_t, 3> yuv_to_rgb8(int y, int cb, int cr, ColorMatrix matrix, ColorRange range,
                                        PixelFormat format);

struct YuvCodes {
  int y, cb, cr;
};
// R'G'B' in [0,1] -> codes (rounded, clamped to the format's code range) for test patterns.
YuvCodes rgb_to_yuv(double r, double g, double b, ColorMatrix matrix, ColorRange range, PixelFormat format);

// Float coefficients of RGB -> Y'CbCr codes as used by the scene kernel:
//   Y = ky[0] r + ky[1] g + ky[2] b + ky[3], same for Cb (kcb) and Cr (kcr),
// r, g, b in [0,1], codes in the format's bit depth (not rounded).
struct RgbToYuvCoefficients {
  float ky[4], kcb[4], kcr[4];
  float max_code;  // 255 or 1023
};
RgbToYuvCoefficients rgb_to_yuv_coefficients(ColorMatrix matrix, ColorRange range, PixelFormat format);

// CPU reference conversion of a whole host frame to packed RGB8 (rgb_pitch
// bytes per row, 3 bytes a pixel). Chroma is upsampled by nearest neighbour
// (each 2x2 luma block uses its chroma sample). `frame` must be MemoryKind::Host.
void frame_to_rgb8(const Frame& frame, std::uint8_t* rgb, std::size_t rgb_pitch);

}  // namespace handoff::media
