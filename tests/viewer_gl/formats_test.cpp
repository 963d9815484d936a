// Every pixel format through handoff::Viewer::show() and snapshot(), each
// pixel against the float64 reference of format_frames.hpp (within 1 code),
// at odd sizes: YUV over every matrix and range (and each siting), RGB codes
// as they are, grey over its range, NaN / inf drawn neutral. Also acquire /
// present in every format, and frames whose planes do not fit their format
// refused naming the field, the viewer going on.
//
// Built twice, like viewer_api_test.cpp: headless (EGL) in
// handoff_viewer_gl_tests, in a window (Xvfb) in handoff_viewer_window_tests.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <handoff/frame_copy.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/viewer.hpp>

#include "viewer_display_test.hpp"

#include "format_frames.hpp"

namespace handoff::view::test {
namespace {

class ViewerFormats : public ViewerDisplayTest {
 protected:
  static ViewerOptions options(std::optional<ValueRange> range = std::nullopt) {
    ViewerOptions o = test_view_options("formats");
    o.value_range = range;
    return o;
  }
  static void expect_no_gl_errors(const Viewer& v) {
    const ViewerDiagnostics d = v.diagnostics();
    EXPECT_EQ(d.gl_errors, 0u) << d.first_gl_error;
  }
};

std::size_t off_pixels(const RgbaImage& img, const FormatFrame& f, std::string* first) {
  return count_off(
      f, [&](std::uint32_t x, std::uint32_t y) { return img.pixel(x, y); }, 1.0, first);
}

void expect_shown(Viewer& v, const FormatFrame& f, const std::string& what) {
  v.show(f.frame);
  const RgbaImage img = v.snapshot();
  ASSERT_EQ(img.width(), f.frame.width) << what;
  ASSERT_EQ(img.height(), f.frame.height) << what;
  std::string first;
  EXPECT_EQ(off_pixels(img, f, &first), 0u) << what << ": first off " << first;
}

constexpr std::uint32_t kW = 37, kH = 21;  // odd both ways: the last chroma column and row half used

TEST_F(ViewerFormats, YuvFormatsEveryMatrixAndRangeWithinOneCode) {
  Viewer v(options());
  const ChromaSiting sitings[3] = {ChromaSiting::Left, ChromaSiting::Center, ChromaSiting::TopLeft};
  unsigned seed = 1;
  for (PixelFormat f : {PixelFormat::NV12, PixelFormat::P010, PixelFormat::I420, PixelFormat::YUYV, PixelFormat::UYVY})
    for (ColorMatrix m : {ColorMatrix::BT601, ColorMatrix::BT709, ColorMatrix::BT2020})
      for (ColorRange r : {ColorRange::Limited, ColorRange::Full}) {
        const Colorimetry c{m, r, sitings[seed % 3]};
        expect_shown(v, yuv_format_frame(f, kW, kH, c, seed++),
                     std::string(to_string(f)) + " " + std::string(to_string(m)) + " " + std::string(to_string(r)) +
                         " siting " + std::string(to_string(c.siting)));
      }
  expect_no_gl_errors(v);
}

// The pattern is one where exchanging U and V, or a pair's Y0 and Y1, moves
// many pixels by more than the tolerance: the test above would catch either.
TEST_F(ViewerFormats, ThePatternTellsUFromVAndY0FromY1) {
  for (PixelFormat f : {PixelFormat::I420, PixelFormat::YUYV, PixelFormat::UYVY}) {
    const Colorimetry c{};
    const FormatFrame good = yuv_format_frame(f, kW, kH, c, 7);
    const FormatFrame uv = yuv_format_frame(f, kW, kH, c, 7, /*swap_uv=*/true);
    const auto as_codes = [](const FormatFrame& ff) {
      std::vector<std::uint8_t> px(ff.want.size() * 4);
      for (std::size_t i = 0; i < ff.want.size(); ++i)
        for (int k = 0; k < 3; ++k) px[i * 4 + std::size_t(k)] = std::uint8_t(std::lround(ff.want[i][std::size_t(k)]));
      return px;
    };
    const std::vector<std::uint8_t> good_px = as_codes(good);
    const auto pixel = [&](std::uint32_t x, std::uint32_t y) { return &good_px[(std::size_t(y) * kW + x) * 4]; };
    EXPECT_GT(count_off(uv, pixel, 1.0), std::size_t(kW * kH / 2)) << to_string(f) << ": U and V exchanged";
    if (f != PixelFormat::I420) {
      const FormatFrame y01 = yuv_format_frame(f, kW, kH, c, 7, false, /*swap_y=*/true);
      EXPECT_GT(count_off(y01, pixel, 1.0), std::size_t(kW * kH / 2)) << to_string(f) << ": Y0 and Y1 exchanged";
    }
  }
}

TEST_F(ViewerFormats, RgbFormatsShowTheirCodes) {
  Viewer v(options());
  unsigned seed = 100;
  for (PixelFormat f : {PixelFormat::RGB8, PixelFormat::BGR8, PixelFormat::RGBA8, PixelFormat::BGRA8})
    expect_shown(v, rgb_format_frame(f, kW, kH, seed++), std::string(to_string(f)));
  expect_no_gl_errors(v);
}

TEST_F(ViewerFormats, GreyFormatsOverTheirFullRange) {
  Viewer v(options());
  expect_shown(v, gray_format_frame(PixelFormat::GRAY8, kW, kH, 200, std::nullopt), "gray8");
  expect_shown(v, gray_format_frame(PixelFormat::GRAY16, kW, kH, 201, std::nullopt), "gray16 over 0..65535");
  expect_no_gl_errors(v);
}

TEST_F(ViewerFormats, GreyFormatsOverAGivenRangeNonFiniteNeutral) {
  const ValueRange r16{1000.0, 40000.0}, r32{-1.5, 4.0};
  Viewer v16(options(r16));
  expect_shown(v16, gray_format_frame(PixelFormat::GRAY16, kW, kH, 300, r16), "gray16 over 1000..40000");
  // gray8 ignores the range: always its codes.
  expect_shown(v16, gray_format_frame(PixelFormat::GRAY8, kW, kH, 301, std::nullopt), "gray8 with a range given");
  expect_no_gl_errors(v16);
  Viewer v32(options(r32));
  expect_shown(v32, gray_format_frame(PixelFormat::GRAY32F, kW, kH, 302, r32), "gray32f over -1.5..4");
  expect_no_gl_errors(v32);
}

TEST_F(ViewerFormats, ARangeWithLoNotBelowHiIsRefusedNamingIt) {
  for (const ValueRange r : {ValueRange{2.0, 2.0}, ValueRange{5.0, 1.0}, ValueRange{0.0, std::nan("")}}) {
    try {
      Viewer v(options(r));
      ADD_FAILURE() << "no UsageError for " << r.lo << ".." << r.hi;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("ViewerOptions::value_range"), std::string::npos) << e.what();
    }
  }
}

// acquire() hands out a buffer of the format's layout; what is written there is what is shown.
TEST_F(ViewerFormats, AcquireAndPresentInEveryFormat) {
  Viewer v(options(ValueRange{-1.0, 2.0}));
  unsigned seed = 400;
  for (PixelFormat f : kPixelFormats) {
    const FormatFrame src =
        is_yuv(f)   ? yuv_format_frame(f, kW, kH, Colorimetry{}, seed++)
        : is_rgb(f) ? rgb_format_frame(f, kW, kH, seed++)
                    : gray_format_frame(f, kW, kH, seed++,
                                        f == PixelFormat::GRAY8 ? std::nullopt : std::optional(ValueRange{-1.0, 2.0}));
    ViewerFrame slot = v.acquire(f, kW, kH);
    ASSERT_EQ(slot.frame().format, f);
    copy_frame(src.frame, slot.frame());
    v.present(std::move(slot));
    const RgbaImage img = v.snapshot();
    std::string first;
    EXPECT_EQ(off_pixels(img, src, &first), 0u) << to_string(f) << ": first off " << first;
  }
  expect_no_gl_errors(v);
}

TEST_F(ViewerFormats, PlanesThatDoNotFitTheFormatAreRefusedNamingTheField) {
  Viewer v(options());
  const FormatFrame rgb = rgb_format_frame(PixelFormat::RGB8, kW, kH, 500);
  Frame f = rgb.frame;
  f.planes[0].components = 1;  // an rgb8 pixel is 3 samples
  expect_invalid(v, f, "planes[0] (pixels).shape");
  f = rgb.frame;
  f.planes[0].pitch = kW * 3 - 1;  // shorter than a row
  expect_invalid(v, f, "planes[0] (pixels).pitch");
  const FormatFrame i420 = yuv_format_frame(PixelFormat::I420, kW, kH, Colorimetry{}, 501);
  f = i420.frame;
  f.planes[2].data = nullptr;
  expect_invalid(v, f, "planes[2] (v).data");
  f = i420.frame;
  f.planes[1].width = kW;  // U is half width
  expect_invalid(v, f, "planes[1] (u).shape");
  const FormatFrame yuyv = yuv_format_frame(PixelFormat::YUYV, kW, kH, Colorimetry{}, 502);
  f = yuyv.frame;
  f.planes[0].width = kW;  // 4:2:2 rows are whole pairs: W rounded up to even
  expect_invalid(v, f, "planes[0] (pixels).shape");
  // Nothing was taken: the viewer goes on.
  expect_shown(v, rgb, "rgb8 after the refusals");
  EXPECT_EQ(v.stats().submitted, 1u);
  expect_no_gl_errors(v);
}

}  // namespace
}  // namespace handoff::view::test
