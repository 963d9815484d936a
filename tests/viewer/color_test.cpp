// Colour reference: known values, 75% bars, the shader transform equals the
// reference, round trips for all 12 matrix x range x depth combinations.
#include <handoff/media/color.hpp>
#include <handoff/media/frame_source.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>

namespace handoff::media {
namespace {

constexpr ColorMatrix kMatrices[] = {ColorMatrix::BT601, ColorMatrix::BT709, ColorMatrix::BT2020};
constexpr ColorRange kRanges[] = {ColorRange::Limited, ColorRange::Full};
constexpr PixelFormat kFormats[] = {PixelFormat::NV12, PixelFormat::P010};

using Rgb8 = std::array<std::uint8_t, 3>;

TEST(Color, LimitedRangeWhiteAndBlack) {
  for (ColorMatrix m : kMatrices) {
    EXPECT_EQ(yuv_to_rgb8(235, 128, 128, m, ColorRange::Limited, PixelFormat::NV12), (Rgb8{255, 255, 255}));
    EXPECT_EQ(yuv_to_rgb8(16, 128, 128, m, ColorRange::Limited, PixelFormat::NV12), (Rgb8{0, 0, 0}));
    EXPECT_EQ(yuv_to_rgb8(940, 512, 512, m, ColorRange::Limited, PixelFormat::P010), (Rgb8{255, 255, 255}));
    EXPECT_EQ(yuv_to_rgb8(64, 512, 512, m, ColorRange::Limited, PixelFormat::P010), (Rgb8{0, 0, 0}));
    EXPECT_EQ(yuv_to_rgb8(255, 128, 128, m, ColorRange::Full, PixelFormat::NV12), (Rgb8{255, 255, 255}));
    EXPECT_EQ(yuv_to_rgb8(0, 128, 128, m, ColorRange::Full, PixelFormat::NV12), (Rgb8{0, 0, 0}));
    EXPECT_EQ(yuv_to_rgb8(1023, 512, 512, m, ColorRange::Full, PixelFormat::P010), (Rgb8{255, 255, 255}));
    const Rgb w = yuv_to_rgb(235, 128, 128, m, ColorRange::Limited, PixelFormat::NV12);
    EXPECT_NEAR(w.r, 1.0, 1e-12);
    EXPECT_NEAR(w.g, 1.0, 1e-12);
    EXPECT_NEAR(w.b, 1.0, 1e-12);
    // Below black / above white are not clamped by the float reference.
    EXPECT_LT(yuv_to_rgb(4, 128, 128, m, ColorRange::Limited, PixelFormat::NV12).r, 0.0);
  }
}

// SMPTE / ITU 75% colour bars, 8-bit limited range (published code values).
struct Bar {
  double r, g, b;
  int y, cb, cr;
};
TEST(Color, SeventyFivePercentBarsBt601) {
  const Bar bars[] = {{0.75, 0.75, 0.75, 180, 128, 128}, {0.75, 0.75, 0, 162, 44, 142}, {0, 0.75, 0.75, 131, 156, 44},
                      {0, 0.75, 0, 112, 72, 58},         {0.75, 0, 0.75, 84, 184, 198}, {0.75, 0, 0, 65, 100, 212},
                      {0, 0, 0.75, 35, 212, 114}};
  for (const Bar& b : bars) {
    const YuvCodes c = rgb_to_yuv(b.r, b.g, b.b, ColorMatrix::BT601, ColorRange::Limited, PixelFormat::NV12);
    EXPECT_EQ(c.y, b.y) << b.r << b.g << b.b;
    EXPECT_EQ(c.cb, b.cb) << b.r << b.g << b.b;
    EXPECT_EQ(c.cr, b.cr) << b.r << b.g << b.b;
  }
}

TEST(Color, SeventyFivePercentBarsBt709) {
  const Bar bars[] = {{0.75, 0.75, 0.75, 180, 128, 128}, {0.75, 0.75, 0, 168, 44, 136}, {0, 0.75, 0.75, 145, 147, 44},
                      {0, 0.75, 0, 133, 63, 52},         {0.75, 0, 0.75, 63, 193, 204}, {0.75, 0, 0, 51, 109, 212},
                      {0, 0, 0.75, 28, 212, 120}};
  for (const Bar& b : bars) {
    const YuvCodes c = rgb_to_yuv(b.r, b.g, b.b, ColorMatrix::BT709, ColorRange::Limited, PixelFormat::NV12);
    EXPECT_EQ(c.y, b.y) << b.r << b.g << b.b;
    EXPECT_EQ(c.cb, b.cb) << b.r << b.g << b.b;
    EXPECT_EQ(c.cr, b.cr) << b.r << b.g << b.b;
    // And back: 75% -> 191 (0.75 * 255 = 191.25) within the 8-bit quantisation.
    const Rgb8 rgb = yuv_to_rgb8(b.y, b.cb, b.cr, ColorMatrix::BT709, ColorRange::Limited, PixelFormat::NV12);
    const double want[3] = {b.r * 255, b.g * 255, b.b * 255};
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(rgb[i], want[i], 2.0) << i;
  }
}

TEST(Color, CoefficientsAreTheStandardOnes) {
  EXPECT_DOUBLE_EQ(luma_coefficients(ColorMatrix::BT601).kr, 0.299);
  EXPECT_DOUBLE_EQ(luma_coefficients(ColorMatrix::BT709).kb, 0.0722);
  EXPECT_DOUBLE_EQ(luma_coefficients(ColorMatrix::BT2020).kr, 0.2627);
  // BT.709 limited 8-bit, code domain: R = 1.164 (Y-16) + 1.793 (Cr-128) (the textbook matrix).
  const ColorTransform t = yuv_to_rgb_transform(ColorMatrix::BT709, ColorRange::Limited, PixelFormat::NV12, SampleInput::Code);
  EXPECT_NEAR(t.m[0] * 255, 1.164, 1e-3);
  EXPECT_NEAR(t.m[2] * 255, 1.793, 1e-3);
  EXPECT_NEAR(t.m[4] * 255, -0.213, 1e-3);
  EXPECT_NEAR(t.m[5] * 255, -0.533, 1e-3);
  EXPECT_NEAR(t.m[7] * 255, 2.112, 1e-3);
  EXPECT_EQ(t.m[1], 0.0);
  EXPECT_EQ(t.m[8], 0.0);
}

TEST(Color, ShaderTransformMatchesTheReference) {
  std::mt19937 rng(7);
  for (ColorMatrix m : kMatrices)
    for (ColorRange r : kRanges)
      for (PixelFormat f : kFormats) {
        const ColorTransform t = yuv_to_rgb_transform(m, r, f, SampleInput::Unorm);
        const auto mf = t.m_float();
        const auto of = t.offset_float();
        const int max = f == PixelFormat::NV12 ? 255 : 1023;
        std::uniform_int_distribution<int> d(0, max);
        for (int i = 0; i < 200; ++i) {
          const int c[3] = {d(rng), d(rng), d(rng)};
          // What a UNORM texture returns for each code.
          double s[3];
          for (int k = 0; k < 3; ++k) s[k] = f == PixelFormat::NV12 ? c[k] / 255.0 : (c[k] << 6) / 65535.0;
          const Rgb ref = yuv_to_rgb(c[0], c[1], c[2], m, r, f);
          const double want[3] = {ref.r, ref.g, ref.b};
          for (int row = 0; row < 3; ++row) {
            const double got = t.m[3 * row] * s[0] + t.m[3 * row + 1] * s[1] + t.m[3 * row + 2] * s[2] + t.offset[row];
            ASSERT_NEAR(got, want[row], 1e-9);
            const double gotf = double(mf[3 * row]) * s[0] + double(mf[3 * row + 1]) * s[1] +
                                double(mf[3 * row + 2]) * s[2] + double(of[row]);
            ASSERT_NEAR(gotf, want[row], 1e-5);  // the float uniforms are good to well under a code
          }
        }
      }
}

TEST(Color, RoundTripAllCombinations) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> d(0.0, 1.0);
  for (ColorMatrix m : kMatrices)
    for (ColorRange r : kRanges)
      for (PixelFormat f : kFormats) {
        // Tolerance: half a code in each of Y, Cb, Cr, amplified by the matrix (< 2 codes of 8-bit RGB at 8 bits).
        const double tol = f == PixelFormat::NV12 ? 2.5 / 255.0 : 0.7 / 255.0;
        for (int i = 0; i < 500; ++i) {
          const double rgb[3] = {d(rng), d(rng), d(rng)};
          const YuvCodes c = rgb_to_yuv(rgb[0], rgb[1], rgb[2], m, r, f);
          const Rgb back = yuv_to_rgb(c.y, c.cb, c.cr, m, r, f);
          ASSERT_NEAR(back.r, rgb[0], tol) << int(m) << int(r) << int(f);
          ASSERT_NEAR(back.g, rgb[1], tol) << int(m) << int(r) << int(f);
          ASSERT_NEAR(back.b, rgb[2], tol) << int(m) << int(r) << int(f);
        }
      }
}

TEST(Color, KernelCoefficientsAgreeWithTheReference) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> d(0.0, 1.0);
  for (ColorMatrix m : kMatrices)
    for (ColorRange r : kRanges)
      for (PixelFormat f : kFormats) {
        const RgbToYuvCoefficients k = rgb_to_yuv_coefficients(m, r, f);
        EXPECT_EQ(k.max_code, f == PixelFormat::NV12 ? 255.0f : 1023.0f);
        for (int i = 0; i < 100; ++i) {
          const double c[3] = {d(rng), d(rng), d(rng)};
          const YuvCodes ref = rgb_to_yuv(c[0], c[1], c[2], m, r, f);
          auto eval = [&](const float* q) { return q[0] * c[0] + q[1] * c[1] + q[2] * c[2] + q[3]; };
          EXPECT_NEAR(eval(k.ky), ref.y, 0.5001);
          EXPECT_NEAR(eval(k.kcb), ref.cb, 0.5001);
          EXPECT_NEAR(eval(k.kcr), ref.cr, 0.5001);
        }
      }
}

TEST(Color, FullRangeChromaExtremes) {
  // Full-range 8-bit: pure blue has Pb = +0.5 -> Cb = 255.5 -> clamped to 255.
  const YuvCodes blue = rgb_to_yuv(0, 0, 1, ColorMatrix::BT709, ColorRange::Full, PixelFormat::NV12);
  EXPECT_EQ(blue.cb, 255);
  const YuvCodes lblue = rgb_to_yuv(0, 0, 1, ColorMatrix::BT709, ColorRange::Limited, PixelFormat::NV12);
  EXPECT_EQ(lblue.cb, 240);
  const YuvCodes lred10 = rgb_to_yuv(1, 0, 0, ColorMatrix::BT2020, ColorRange::Limited, PixelFormat::P010);
  EXPECT_EQ(lred10.cr, 960);
}

TEST(Color, FrameToRgb8UsesTheFramesColorimetry) {
  HostFrame fr(PixelFormat::NV12, 3, 3);
  // Luma ramp; chroma neutral except the second column pair.
  for (std::uint32_t y = 0; y < 3; ++y)
    for (std::uint32_t x = 0; x < 3; ++x) fr.luma()[y * fr.luma_pitch() + x] = std::uint8_t(16 + 40 * x + 20 * y);
  for (std::uint32_t i = 0; i < fr.chroma_pitch() * 2; ++i) fr.chroma()[i] = 128;
  fr.chroma()[2] = 44;   // U of chroma sample (1, 0)
  fr.chroma()[3] = 136;  // V
  const Colorimetry c{ColorMatrix::BT709, ColorRange::Limited, ChromaSiting::Left};
  std::uint8_t rgb[3 * 3 * 3];
  frame_to_rgb8(fr.frame(c), rgb, 9);
  for (std::uint32_t y = 0; y < 3; ++y)
    for (std::uint32_t x = 0; x < 3; ++x) {
      const int cu = (x / 2 == 1 && y / 2 == 0) ? 44 : 128, cv = (x / 2 == 1 && y / 2 == 0) ? 136 : 128;
      const Rgb8 want = yuv_to_rgb8(16 + 40 * x + 20 * y, cu, cv, c.matrix, c.range, PixelFormat::NV12);
      for (int k = 0; k < 3; ++k) EXPECT_EQ(rgb[y * 9 + x * 3 + k], want[k]) << x << "," << y;
    }
  EXPECT_EQ(rgb[0], 0);  // Y = 16 at (0, 0) is black
}

}  // namespace
}  // namespace handoff::media
