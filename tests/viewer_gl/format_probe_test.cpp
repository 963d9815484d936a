// The renderer's side of the new formats, white-box: the pixel inspector's
// values for every format (the sample's own codes in the frame's order, and
// the colour drawn), the texture each format takes, the automatic range of
// gray32f frames (robust to outliers, stable from frame to frame, NaN
// ignored) and what the renderer draws with it, and GL-buffer frames of
// three-plane and packed formats uploaded GPU-side.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <handoff/frame_copy.hpp>
#include <handoff/gl_buffer.hpp>
#include <handoff/host_frame.hpp>

#include "format_frames.hpp"
#include "frame_renderer.hpp"
#include "frame_target.hpp"
#include "gl_test_context.hpp"
#include "pixel_probe.hpp"
#include "value_range.hpp"
#include "view_convert.hpp"
#include "view_transform.hpp"

namespace handoff::view::test {
namespace {

class FormatProbe : public GlTest {};

int sample8(const Frame& f, int plane, std::uint32_t x, std::uint32_t y, std::size_t k) {
  const Plane& p = f.planes[std::size_t(plane)];
  return static_cast<const std::uint8_t*>(p.data)[std::size_t(y) * p.pitch + std::size_t(x) * p.components + k];
}
int sample16(const Frame& f, int plane, std::uint32_t x, std::uint32_t y, std::size_t k) {
  const Plane& p = f.planes[std::size_t(plane)];
  std::uint16_t v = 0;
  std::memcpy(
      &v, static_cast<const std::uint8_t*>(p.data) + std::size_t(y) * p.pitch + (std::size_t(x) * p.components + k) * 2,
      2);
  return v;
}

// The Y Cb Cr codes of pixel (x, y) read from the frame itself (the chroma
// sample of its 2x2 block, or its 4:2:2 pair).
std::array<int, 3> yuv_codes(const Frame& f, std::uint32_t x, std::uint32_t y) {
  switch (f.format) {
    case PixelFormat::NV12:
      return {sample8(f, 0, x, y, 0), sample8(f, 1, x / 2, y / 2, 0), sample8(f, 1, x / 2, y / 2, 1)};
    case PixelFormat::P010:
      return {sample16(f, 0, x, y, 0) >> 6, sample16(f, 1, x / 2, y / 2, 0) >> 6, sample16(f, 1, x / 2, y / 2, 1) >> 6};
    case PixelFormat::I420:
      return {sample8(f, 0, x, y, 0), sample8(f, 1, x / 2, y / 2, 0), sample8(f, 2, x / 2, y / 2, 0)};
    case PixelFormat::YUYV:
      return {sample8(f, 0, x, y, 0), sample8(f, 0, x & ~1u, y, 1), sample8(f, 0, x | 1u, y, 1)};
    default:  // uyvy
      return {sample8(f, 0, x, y, 1), sample8(f, 0, x & ~1u, y, 0), sample8(f, 0, x | 1u, y, 0)};
  }
}

constexpr std::uint32_t kW = 37, kH = 21;
const std::uint32_t kPoints[][2] = {{0, 0}, {1, 0}, {5, 3}, {36, 20}, {35, 19}, {18, 11}};

TEST_F(FormatProbe, YuvProbeShowsTheCodesAndTheirColour) {
  // Both paths: the CPU path reads its host copy (no texture upload).
  for (ViewerConvert convert : {ViewerConvert::Gpu, ViewerConvert::Cpu}) {
    FrameRenderer r(convert);
    const Colorimetry c{ColorMatrix::BT601, ColorRange::Full, ChromaSiting::Left};
    unsigned seed = 10;
    for (PixelFormat f :
         {PixelFormat::NV12, PixelFormat::P010, PixelFormat::I420, PixelFormat::YUYV, PixelFormat::UYVY}) {
      const FormatFrame ff = yuv_format_frame(f, kW, kH, c, seed++);
      r.upload(ff.frame);
      for (const auto& pt : kPoints) {
        const PixelProbe p = probe_pixel(r, c, std::nullopt, pt[0] + 0.5, pt[1] + 0.5);
        ASSERT_TRUE(p.valid);
        EXPECT_EQ(p.format, f);
        const std::array<int, 3> want = yuv_codes(ff.frame, pt[0], pt[1]);
        EXPECT_EQ((std::array<int, 3>{p.code_y, p.code_cb, p.code_cr}), want)
            << to_string(f) << " at " << pt[0] << "," << pt[1];
        const Rgb64 rgb = yuv_reference(want[0], want[1], want[2], f == PixelFormat::P010 ? 10 : 8, c);
        for (int k = 0; k < 3; ++k) EXPECT_NEAR(p.rgb[std::size_t(k)], rgb[std::size_t(k)], 1.0) << to_string(f);
        char text[64];
        std::snprintf(text, sizeof text, "Y %d  Cb %d  Cr %d", want[0], want[1], want[2]);
        EXPECT_EQ(probe_text(p), text);
      }
    }
  }
}

TEST_F(FormatProbe, RgbProbeShowsTheCodesInTheFramesOrder) {
  // Both paths: the CPU path reads its host copy (no texture upload).
  for (ViewerConvert convert : {ViewerConvert::Gpu, ViewerConvert::Cpu}) {
    FrameRenderer r(convert);
    unsigned seed = 20;
    for (PixelFormat f : {PixelFormat::RGB8, PixelFormat::BGR8, PixelFormat::RGBA8, PixelFormat::BGRA8}) {
      const FormatFrame ff = rgb_format_frame(f, kW, kH, seed++);
      r.upload(ff.frame);
      const int n = f == PixelFormat::RGB8 || f == PixelFormat::BGR8 ? 3 : 4;
      for (const auto& pt : kPoints) {
        const PixelProbe p = probe_pixel(r, Colorimetry{}, std::nullopt, pt[0], pt[1]);
        ASSERT_TRUE(p.valid);
        ASSERT_EQ(p.code_count, n);
        for (int k = 0; k < n; ++k)
          EXPECT_EQ(p.codes[std::size_t(k)], sample8(ff.frame, 0, pt[0], pt[1], std::size_t(k)))
              << to_string(f) << " sample " << k;
        const Rgb64& want = ff.at(pt[0], pt[1]);
        for (int k = 0; k < 3; ++k) EXPECT_EQ(double(p.rgb[std::size_t(k)]), want[std::size_t(k)]) << to_string(f);
      }
      const PixelProbe p = probe_pixel(r, Colorimetry{}, std::nullopt, 2, 2);
      const std::string names = f == PixelFormat::RGB8    ? "R G B"
                                : f == PixelFormat::BGR8  ? "B G R"
                                : f == PixelFormat::RGBA8 ? "R G B A"
                                                          : "B G R A";
      std::string text;
      for (int k = 0; k < n; ++k)
        text.append(k ? "  " : "").append(1, names[std::size_t(2 * k)]).append(" ").append(std::to_string(p.codes[std::size_t(k)]));
      EXPECT_EQ(probe_text(p), text);
    }
  }
}

TEST_F(FormatProbe, GreyProbeShowsTheValueAndItsGrey) {
  // Both paths: the CPU path reads its host copy (no texture upload).
  for (ViewerConvert convert : {ViewerConvert::Gpu, ViewerConvert::Cpu}) {
    FrameRenderer r(convert);
    const ValueRange range{-1.0, 3.0};
    const FormatFrame g16 = gray_format_frame(PixelFormat::GRAY16, kW, kH, 30, std::nullopt);
    r.upload(g16.frame);
    for (const auto& pt : kPoints) {
      const PixelProbe p = probe_pixel(r, Colorimetry{}, std::nullopt, pt[0], pt[1]);
      EXPECT_EQ(p.code_count, 1);
      EXPECT_EQ(p.codes[0], sample16(g16.frame, 0, pt[0], pt[1], 0));
      EXPECT_NEAR(p.rgb[0], g16.at(pt[0], pt[1])[0], 0.5);
      EXPECT_EQ(probe_text(p), "gray " + std::to_string(p.codes[0]));
    }
    const FormatFrame g32 = gray_format_frame(PixelFormat::GRAY32F, kW, kH, 31, range);
    r.upload(g32.frame);
    bool saw_nan = false, saw_inf = false;
    for (std::uint32_t y = 0; y < kH; ++y)
      for (std::uint32_t x = 0; x < kW; ++x) {
        const PixelProbe p = probe_pixel(r, Colorimetry{}, range, x, y);
        float want = 0;
        std::memcpy(
            &want, static_cast<const std::uint8_t*>(g32.frame.planes[0].data) + y * g32.frame.planes[0].pitch + x * 4, 4);
        if (std::isnan(want)) {
          saw_nan = true;
          EXPECT_TRUE(std::isnan(p.value));
          EXPECT_EQ(probe_text(p), "value nan");
        } else {
          saw_inf |= std::isinf(want);
          EXPECT_EQ(p.value, double(want));
        }
        EXPECT_NEAR(p.rgb[0], g32.at(x, y)[0], 0.5) << x << "," << y;
      }
    EXPECT_TRUE(saw_nan && saw_inf);
  }
}

// The inspector names the frame pixel drawn under the cursor, wherever in
// that screen pixel the cursor is, at zooms and pans that put pixel edges
// anywhere (the renderer samples pixel centres): frame pixel (x, y) is drawn
// as R = 6x, G = 12y, so the drawn colour says which one it is. (No view puts
// a pixel centre exactly on a texel edge: there the GPU's interpolation decides.)
TEST_F(FormatProbe, TheProbedPixelIsTheOneDrawnUnderTheCursor) {
  Frame f = allocate_host_frame(PixelFormat::RGB8, kW, kH);
  for (std::uint32_t y = 0; y < kH; ++y)
    for (std::uint32_t x = 0; x < kW; ++x) {
      std::uint8_t* px = static_cast<std::uint8_t*>(f.planes[0].data) + y * f.planes[0].pitch + x * 3;
      px[0] = std::uint8_t(6 * x);
      px[1] = std::uint8_t(12 * y);
      px[2] = 77;
    }
  constexpr int fb_w = 96, fb_h = 64;
  const ViewTransform views[] = {{7.81, -100.3, -40.6}, {3.3, -13.37, 4.61}, {2.0, 3.0, -1.0},
                                 {1.37, 3.9, 2.2},       {13.7, -170.05, -99.95}};
  for (ViewerConvert convert : {ViewerConvert::Gpu, ViewerConvert::Cpu}) {
    FrameRenderer r(convert);
    r.upload(f);
    for (const ViewTransform& view : views) {
      FrameTarget target;
      target.resize(fb_w, fb_h);
      target.bind();
      DrawOptions o;
      o.view = view;
      o.nearest = true;  // zoomed in: flat pixels (ViewerState::nearest_when_zoomed)
      r.draw(o, fb_w, fb_h);
      std::vector<std::uint8_t> rgba;
      target.read_rgba(rgba);
      FrameTarget::unbind();
      const PixelRect rect = covered_pixels(kW, kH, view, fb_w, fb_h);
      ASSERT_GT(rect.width() * rect.height(), 0) << view.scale;
      int off = 0;
      std::string first;
      for (int y = rect.y0; y < rect.y1; ++y)
        for (int x = rect.x0; x < rect.x1; ++x)
          for (double within : {0.0, 0.5, 0.99}) {  // xdotool's whole pixels, and points inside one
            const PixelProbe p = probe_view_pixel(r, Colorimetry{}, std::nullopt, view, x + within, y + within);
            const std::uint8_t* drawn = &rgba[(std::size_t(y) * fb_w + std::size_t(x)) * 4];
            if (p.valid && p.codes[0] == drawn[0] && p.codes[1] == drawn[1]) continue;
            if (!off++)
              first = "view pixel (" + std::to_string(x) + ", " + std::to_string(y) + ") + " + std::to_string(within) +
                      " draws frame pixel (" + std::to_string(drawn[0] / 6) + ", " + std::to_string(drawn[1] / 12) +
                      "), the probe says (" + std::to_string(p.x) + ", " + std::to_string(p.y) + ")";
          }
      EXPECT_EQ(off, 0) << (convert == ViewerConvert::Gpu ? "gpu" : "cpu") << " at zoom " << view.scale << ": "
                        << first;
    }
  }
}

TEST_F(FormatProbe, EachFormatTakesItsTextures) {
  const auto internal = [](PixelFormat f) {
    const TextureSpecs s = frame_textures(f, kW, kH);
    std::vector<GLenum> v;
    for (int i = 0; i < s.count; ++i) v.push_back(s.spec[std::size_t(i)].internal);
    return v;
  };
  EXPECT_EQ(internal(PixelFormat::I420), (std::vector<GLenum>{GL_R8, GL_R16, GL_R16}));
  EXPECT_EQ(internal(PixelFormat::YUYV), (std::vector<GLenum>{GL_RG8, GL_RGBA16}));
  EXPECT_EQ(internal(PixelFormat::BGR8), (std::vector<GLenum>{GL_RGB8}));
  EXPECT_EQ(internal(PixelFormat::GRAY16), (std::vector<GLenum>{GL_R16}));
  EXPECT_EQ(internal(PixelFormat::GRAY32F), (std::vector<GLenum>{GL_R32F}));
  const TextureSpecs yuyv = frame_textures(PixelFormat::YUYV, kW, kH);
  EXPECT_EQ(yuyv.spec[0].width, kW);                // luma: the frame's width
  EXPECT_EQ(yuyv.spec[1].width, chroma_width(kW));  // one texel a pair
  EXPECT_EQ(yuyv.spec[1].height, kH);               // 4:2:2: every row
}

TEST(ValueRangeCheck, NamesTheFieldWhenLoIsNotBelowHi) {
  EXPECT_NO_THROW(check_value_range(ValueRange{0, 1}, "x"));
  try {
    check_value_range(ValueRange{3, 3}, "ViewerOptions::value_range");
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("ViewerOptions::value_range: lo 3, hi 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_value_range(ValueRange{0, std::numeric_limits<double>::infinity()}, "x"), UsageError);
}

// gray32f with no range given: drawn over the automatic range of its data,
// which a few huge values do not stretch.
TEST_F(FormatProbe, Gray32fDrawnOverItsAutomaticRange) {
  for (ViewerConvert convert : {ViewerConvert::Gpu, ViewerConvert::Cpu}) {
    FrameRenderer r(convert);
    FormatFrame ff = gray_format_frame(PixelFormat::GRAY32F, 64, 48, 40, ValueRange{0.0, 10.0});
    const Plane& p = ff.frame.planes[0];
    for (std::uint32_t i = 0; i < 10; ++i) {  // hot pixels far outside
      const float hot = 1e7f;
      std::memcpy(static_cast<std::uint8_t*>(p.data) + (i * 4) * p.pitch + (i * 5) * 4, &hot, 4);
    }
    r.upload(ff.frame);
    const std::optional<ValueRange> ar = r.auto_range();
    ASSERT_TRUE(ar);
    EXPECT_LT(ar->hi, 13.0) << "the outliers stretched the range";
    EXPECT_GT(ar->hi, 11.0);
    EXPECT_LT(ar->lo, -1.0);
    EXPECT_GT(ar->lo, -3.0);
    EXPECT_EQ(r.gray_range(std::nullopt), ar);
    FrameTarget target;
    target.resize(64, 48);
    target.bind();
    r.draw(DrawOptions{}, 64, 48);
    std::vector<std::uint8_t> rgba;
    target.read_rgba(rgba);
    FrameTarget::unbind();
    std::size_t off = 0;
    for (std::uint32_t y = 0; y < 48; ++y)
      for (std::uint32_t x = 0; x < 64; ++x) {
        float v = 0;
        std::memcpy(&v, static_cast<const std::uint8_t*>(p.data) + y * p.pitch + x * 4, 4);
        const double want = std::isfinite(v) ? clamp01((v - ar->lo) / (ar->hi - ar->lo)) * 255.0 : kNonFiniteCode;
        if (std::abs(double(rgba[(std::size_t(y) * 64 + x) * 4]) - want) > 1.0) ++off;
      }
    EXPECT_EQ(off, 0u);
  }
}

// float_mapping: any finite lo < hi becomes finite float parts with a
// normal scale > 0, and float arithmetic with them places a value where
// double arithmetic does (within 1/4096), however wide, narrow or far out
// the range (the grey and scalar-map shaders and their CPU twins use it).
TEST(FloatMappingTest, FiniteForAnyRangeAndPlacesValuesAsDoubleDoes) {
  constexpr double kMax = std::numeric_limits<float>::max();
  const auto place = [](const FloatMapping& m, float v) {  // the shaders' arithmetic, in float
    return std::clamp((v * m.prescale - m.lo) * m.scale + m.offset, 0.0f, 1.0f);
  };
  const std::array<double, 2> ranges[] = {{0, 1},        {-3e38, 3e38},    {-1e300, 1e300}, {0, 1e300},
                                          {-1e39, 1e39}, {1e-30, 2e-30},  {0, 1e25},       {-kMax, kMax},
                                          {1e38, 1e39},  {-1e308, 1.7e308}, {5, 5e30},     {-2e30, -1e30}};
  const float values[] = {0.0f, 1.0f, -1.0f, 1.5e-30f, 3e25f, 1e38f, -1e38f, 3e38f, -3e38f, float(kMax), -float(kMax)};
  for (const auto& [lo, hi] : ranges) {
    const FloatMapping m = float_mapping(lo, hi);
    ASSERT_TRUE(std::isfinite(m.prescale) && m.prescale >= 0 && std::isfinite(m.lo)) << lo << " " << hi;
    ASSERT_TRUE(m.scale >= std::numeric_limits<float>::min() && std::isfinite(m.scale)) << lo << " " << hi;
    for (float v : values) {
      const double want = std::clamp((double(v) / 2 - lo / 2) / (hi / 2 - lo / 2), 0.0, 1.0);
      EXPECT_NEAR(place(m, v), want, 1.0 / 4096) << "v " << v << " in (" << lo << ", " << hi << ")";
    }
  }
  // Narrower than float tells apart: widened about the middle, which draws 0.5.
  for (const auto& [lo, hi, v] : {std::array<double, 3>{0, 1e-45, 0}, {1e17, 1e17 + 1e3, 1e17},
                                  {1e7 - 0.5, 1e7 + 0.5, 1e7}, {1.0, std::nextafter(1.0, 2.0), 1.0}, {0, 1e-300, 0},
                                  {kMax - 1e30, kMax + 1e30, kMax}}) {
    const FloatMapping m = float_mapping(lo, hi);
    ASSERT_TRUE(m.scale >= std::numeric_limits<float>::min() && std::isfinite(m.scale) && std::isfinite(m.lo));
    EXPECT_NEAR(place(m, float(v)), 0.5, 1e-6) << lo << " " << hi;
  }
  // Not a range: the identity, not a throw.
  EXPECT_EQ(float_mapping(1, 0).scale, 1.0f);
  EXPECT_EQ(float_mapping(std::nan(""), 1).scale, 1.0f);
}

// gray32f data at float's ends never stops the renderer, on either path: a
// constant frame (any value, however large) is drawn mid grey, as is data
// spread over less than float tells apart (denormals); a given range too
// wide or narrow for float draws as double arithmetic places the values;
// the pixel inspector reports the grey drawn.
TEST_F(FormatProbe, Gray32fExtremeDataDrawsOnBothPaths) {
  constexpr float kMax = std::numeric_limits<float>::max();
  const auto frame_of = [](std::initializer_list<float> four) {
    Frame f = allocate_host_frame(PixelFormat::GRAY32F, 8, 8, HostFrameOptions{.alignment = 4});
    const float* v = four.begin();
    for (std::uint32_t y = 0; y < 8; ++y)
      for (std::uint32_t x = 0; x < 8; ++x)
        std::memcpy(static_cast<std::uint8_t*>(f.planes[0].data) + y * f.planes[0].pitch + x * 4,
                    &v[(y / 4) * 2 + x / 4], 4);
    return f;
  };
  const auto drawn = [](FrameRenderer& r, const Frame& f, std::optional<ValueRange> range) {
    r.upload(f);
    FrameTarget target;
    target.resize(8, 8);
    target.bind();
    DrawOptions o;
    o.value_range = range;
    o.nearest = true;
    EXPECT_NO_THROW(r.draw(o, 8, 8));
    std::vector<std::uint8_t> rgba;
    target.read_rgba(rgba);
    FrameTarget::unbind();
    const std::array<int, 4> out{rgba[0], rgba[4 * 4], rgba[(4 * 8) * 4], rgba[(4 * 8 + 4) * 4]};
    // The pixel inspector says the grey drawn.
    for (std::size_t k = 0; k < 4; ++k)
      EXPECT_NEAR(probe_pixel(r, Colorimetry{}, range, 4.0 * double(k % 2), 4.0 * double(k / 2)).rgb[0], out[k], 1)
          << "probe of sample " << k;
    return out;
  };
  for (ViewerConvert convert : {ViewerConvert::Gpu, ViewerConvert::Cpu}) {
    SCOPED_TRACE(convert == ViewerConvert::Cpu ? "cpu" : "gpu");
    for (float c : {0.0f, 1e7f, -1e7f, 1e16f, 1e17f, 1e20f, -1e17f, 3e38f, kMax, -kMax, 1e-45f}) {
      FrameRenderer r(convert);  // a fresh automatic range for each
      for (int v : drawn(r, frame_of({c, c, c, c}), std::nullopt))
        EXPECT_NEAR(v, 128, 1) << "a constant " << c << " frame is drawn mid grey";
    }
    FrameRenderer r(convert);
    for (int v : drawn(r, frame_of({0.0f, 1e-45f, 1e-45f, 0.0f}), std::nullopt))
      EXPECT_NEAR(v, 128, 1) << "denormal data: narrower than float tells apart";
    // Given ranges beyond float's span, or below its resolution.
    const auto expect_near = [](std::array<int, 4> got, std::array<int, 4> want) {
      for (std::size_t k = 0; k < 4; ++k) EXPECT_NEAR(got[k], want[k], 1) << "sample " << k;
    };
    expect_near(drawn(r, frame_of({0.0f, 1.0f, 2.0f, 3.0f}), ValueRange{-1e300, 1e300}), {128, 128, 128, 128});
    expect_near(drawn(r, frame_of({0.0f, 1.0f, 2.0f, 3.0f}), ValueRange{0, 1e300}), {0, 0, 0, 0});
    expect_near(drawn(r, frame_of({1e38f, -1e38f, 3e38f, -3e38f}), ValueRange{-3e38, 3e38}), {170, 85, 255, 0});
    expect_near(drawn(r, frame_of({0.0f, 1.0f, -1.0f, 2.0f}), ValueRange{0, 1e-300}), {128, 255, 0, 255});
  }
}

// The automatic range follows one stream: frames of the same shape move it
// part way (a jump past the range's width is taken at once, media::ScalarRange);
// a frame of another size or format starts it again.
TEST_F(FormatProbe, AutoRangeStartsAgainForAnotherStreamShape) {
  FrameRenderer r(ViewerConvert::Gpu);
  const auto ramp = [](std::uint32_t w, std::uint32_t h, float top) {
    Frame f = allocate_host_frame(PixelFormat::GRAY32F, w, h, HostFrameOptions{.alignment = 4});
    for (std::uint32_t y = 0; y < h; ++y)
      for (std::uint32_t x = 0; x < w; ++x) {
        const float v = top * float(y * w + x) / float(w * h - 1);
        std::memcpy(static_cast<std::uint8_t*>(f.planes[0].data) + y * f.planes[0].pitch + x * 4, &v, 4);
      }
    return f;
  };
  r.upload(ramp(40, 30, 1.0f));
  const double first = r.auto_range()->hi;
  EXPECT_NEAR(first, 0.99, 0.02);
  r.upload(ramp(40, 30, 1.5f));
  EXPECT_GT(r.auto_range()->hi, first + 0.01) << "the same stream: part way";
  EXPECT_LT(r.auto_range()->hi, 1.4) << "the same stream: part way";
  r.upload(ramp(40, 30, 100.0f));
  EXPECT_NEAR(r.auto_range()->hi, 99.0, 2.0) << "a jump: the new frame's own range at once";
  r.upload(ramp(40, 30, 1.0f));
  r.upload(ramp(41, 30, 1.2f));
  EXPECT_NEAR(r.auto_range()->hi, 1.19, 0.03) << "another size: the new frame's own range";
}

// The float64 reference of framebuffer pixel (bx, by) of an i420 / yuyv /
// uyvy frame drawn with `view`: where the shaders sample (the view
// transform, flat pixels when `nearest`), bilinear with clamp to edge over
// luma and over the chroma grid at the siting, then the formulas.
Rgb64 view_reference(const Frame& f, const Colorimetry& c, const ViewTransform& v, bool nearest, int bx, int by) {
  double px = (bx + 0.5 - v.offset_x) / v.scale, py = (by + 0.5 - v.offset_y) / v.scale;
  if (nearest) {
    px = std::floor(px) + 0.5;
    py = std::floor(py) + 0.5;
  }
  const bool packed = f.format != PixelFormat::I420, yuyv = f.format == PixelFormat::YUYV;
  const int w = int(f.width), h = int(f.height), cw = int(chroma_width(f.width)),
            ch = packed ? h : int(chroma_height(f.height));
  const auto luma = [&](int x, int y) {
    return double(sample8(f, 0, std::uint32_t(x), std::uint32_t(y), packed && !yuyv ? 1 : 0));
  };
  const auto chroma = [&](int which, int i, int j) {  // which 0: Cb, 1: Cr
    if (!packed) return double(sample8(f, 1 + which, std::uint32_t(i), std::uint32_t(j), 0));
    return double(sample8(f, 0, std::uint32_t(2 * i + which), std::uint32_t(j), yuyv ? 1 : 0));
  };
  const auto bilinear = [](auto at, int nw, int nh, double tx, double ty) {
    const double x = std::floor(tx), y = std::floor(ty), fx = tx - x, fy = ty - y;
    const auto t = [&](double xx, double yy) {
      return at(std::clamp(int(xx), 0, nw - 1), std::clamp(int(yy), 0, nh - 1));
    };
    return (1 - fy) * ((1 - fx) * t(x, y) + fx * t(x + 1, y)) + fy * ((1 - fx) * t(x, y + 1) + fx * t(x + 1, y + 1));
  };
  const Siting2 s = siting_of(c.siting);
  const double sy = packed ? 0.0 : s.y, suby = packed ? 1.0 : 2.0;
  const double cx = (px - 0.5 - s.x) / 2.0, cy = (py - 0.5 - sy) / suby;
  const double Y = bilinear(luma, w, h, px - 0.5, py - 0.5);
  const double cb = bilinear([&](int i, int j) { return chroma(0, i, j); }, cw, ch, cx, cy);
  const double cr = bilinear([&](int i, int j) { return chroma(1, i, j); }, cw, ch, cx, cy);
  return yuv_reference(Y, cb, cr, 8, c);
}

struct View {
  const char* name;
  int fb_w, fb_h;
  ViewTransform view;
  bool nearest;
  bool exact_weights;  // texel-centre or quarter positions: the shader filters these exactly too
};

// i420, yuyv and uyvy on both colour paths at views other than 1:1: the CPU
// path (ViewConverter's planar and packed rows) within 1 code of the float64
// reference everywhere; the shader within 1 where its filter weights are
// exact, and within 4 elsewhere (llvmpipe filters the 8-bit luma texture in
// 8-bit fixed point, as for nv12: convert_path_test.cpp).
TEST_F(FormatProbe, PlanarAndPackedYuvAtEveryViewOnBothPaths) {
  const View views[] = {
      {"one_to_one", int(kW), int(kH), {}, false, true},
      {"fitted_down", 24, 14, fit_view(kW, kH, 24, 14), false, false},
      {"zoomed_filtered", 90, 70, ViewTransform{2.6, -7.3, 3.9}, false, false},
      {"zoomed_flat", 90, 70, ViewTransform{3.0, -7.0, 4.0}, true, true},
      {"panned_off", 40, 30, ViewTransform{1.0, 9.0, -6.0}, false, true},
  };
  unsigned seed = 70;
  for (PixelFormat f : {PixelFormat::I420, PixelFormat::YUYV, PixelFormat::UYVY})
    for (ChromaSiting siting : {ChromaSiting::Left, ChromaSiting::Center, ChromaSiting::TopLeft}) {
      const Colorimetry c{ColorMatrix::BT709, ColorRange::Limited, siting};
      const FormatFrame ff = yuv_format_frame(f, kW, kH, c, seed++);
      for (ViewerConvert convert : {ViewerConvert::Cpu, ViewerConvert::Gpu}) {
        FrameRenderer r(convert);
        r.upload(ff.frame);
        for (const View& v : views) {
          FrameTarget target;
          target.resize(v.fb_w, v.fb_h);
          target.bind();
          DrawOptions o;
          o.colorimetry = c;
          o.view = v.view;
          o.nearest = v.nearest;
          r.draw(o, v.fb_w, v.fb_h);
          std::vector<std::uint8_t> rgba;
          target.read_rgba(rgba);
          FrameTarget::unbind();
          const double tolerance = convert == ViewerConvert::Cpu || v.exact_weights ? 1.0 : 4.0;
          const PixelRect rect = covered_pixels(kW, kH, v.view, v.fb_w, v.fb_h);
          ASSERT_FALSE(rect.empty()) << v.name;
          std::size_t off = 0;
          std::string first;
          for (int y = rect.y0; y < rect.y1; ++y)
            for (int x = rect.x0; x < rect.x1; ++x) {
              const Rgb64 want = view_reference(ff.frame, c, v.view, v.nearest, x, y);
              const std::uint8_t* got = &rgba[(std::size_t(y) * std::size_t(v.fb_w) + std::size_t(x)) * 4];
              for (int k = 0; k < 3; ++k)
                if (std::abs(double(got[k]) - want[std::size_t(k)]) > tolerance) {
                  if (!off)
                    first = off_text(x, y, k, int(got[k]), want[std::size_t(k)]);
                  ++off;
                  break;
                }
            }
          EXPECT_EQ(off, 0u) << to_string(f) << " " << to_string(siting) << " "
                             << (convert == ViewerConvert::Cpu ? "cpu" : "gpu") << " " << v.name << ": " << first;
        }
      }
    }
}

// What the RGB and grey shaders draw at framebuffer pixel (bx, by): flat
// pixels (nearest) take their frame pixel's 1:1 reference; filtered, RGB codes
// mix bilinearly and grey values mix bilinearly over their finite texels (the
// grey shader's rule), then map through the range.
Rgb64 rgb_grey_reference(const FormatFrame& ff, const ValueRange& range, const ViewTransform& v, bool nearest, int bx,
                         int by) {
  const Frame& f = ff.frame;
  const double px = (bx + 0.5 - v.offset_x) / v.scale, py = (by + 0.5 - v.offset_y) / v.scale;
  const int w = int(f.width), h = int(f.height);
  if (nearest)
    return ff.at(std::uint32_t(std::clamp(int(std::floor(px)), 0, w - 1)),
                 std::uint32_t(std::clamp(int(std::floor(py)), 0, h - 1)));
  const double tx = px - 0.5, ty = py - 0.5, x0 = std::floor(tx), y0 = std::floor(ty), fx = tx - x0, fy = ty - y0;
  const double wt[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};
  const int dx[4] = {0, 1, 0, 1}, dy[4] = {0, 0, 1, 1};
  const auto at = [&](int k) {
    return std::pair{std::uint32_t(std::clamp(int(x0) + dx[k], 0, w - 1)),
                     std::uint32_t(std::clamp(int(y0) + dy[k], 0, h - 1))};
  };
  if (is_rgb(f.format)) {
    Rgb64 out{};
    for (int k = 0; k < 4; ++k)
      for (int c = 0; c < 3; ++c) out[std::size_t(c)] += wt[k] * ff.at(at(k).first, at(k).second)[std::size_t(c)];
    return out;
  }
  double sum = 0, weight = 0;
  for (int k = 0; k < 4; ++k) {
    const auto [x, y] = at(k);
    double value = 0;
    if (f.format == PixelFormat::GRAY32F) {
      float fv;
      std::memcpy(&fv, static_cast<const std::uint8_t*>(f.planes[0].data) + y * f.planes[0].pitch + x * 4, 4);
      value = fv;
    } else {
      value = sample16(f, 0, x, y, 0);
    }
    if (std::isfinite(value) && wt[k] > 0) {
      sum += wt[k] * value;
      weight += wt[k];
    }
  }
  const double g = clamp01((sum / weight - range.lo) / (range.hi - range.lo)) * 255.0;
  return {g, g, g};
}

// The RGB and grey shaders (both paths draw these with the shader) zoomed in
// flat, filtered and fitted down: within 1 code, except RGB at fractional
// filter weights, within 2 (a texture unit filtering 8-bit texels in 8-bit
// fixed point, as llvmpipe does, is about a code off the float64 mix; grey
// filters in the shader, in float).
TEST_F(FormatProbe, RgbAndGreyAtEveryView) {
  struct Case {
    PixelFormat format;
    bool with_non_finite;
  };
  const View views[] = {
      {"fitted_down", 24, 14, fit_view(kW, kH, 24, 14), false, false},
      {"zoomed_filtered", 90, 70, ViewTransform{2.6, -7.3, 3.9}, false, false},
      {"zoomed_flat", 90, 70, ViewTransform{3.0, -7.0, 4.0}, true, true},
  };
  const ValueRange range{-1.0, 3.0};
  for (const Case c :
       {Case{PixelFormat::BGR8, false}, Case{PixelFormat::RGBA8, false}, Case{PixelFormat::GRAY16, false},
        Case{PixelFormat::GRAY32F, false}, Case{PixelFormat::GRAY32F, true}}) {
    FormatFrame ff = is_rgb(c.format)
                         ? rgb_format_frame(c.format, kW, kH, 80)
                         : gray_format_frame(c.format, kW, kH, 81,
                                             c.format == PixelFormat::GRAY32F ? std::optional(range) : std::nullopt);
    if (c.format == PixelFormat::GRAY32F && !c.with_non_finite) {  // finite only: filtered views have no tie to break
      const Plane& p = ff.frame.planes[0];
      for (std::uint32_t y = 0; y < kH; ++y)
        for (std::uint32_t x = 0; x < kW; ++x) {
          float v;
          std::memcpy(&v, static_cast<std::uint8_t*>(p.data) + y * p.pitch + x * 4, 4);
          if (!std::isfinite(v)) {
            v = 0.5f;
            std::memcpy(static_cast<std::uint8_t*>(p.data) + y * p.pitch + x * 4, &v, 4);
            ff.want[std::size_t(y) * kW + x] =
                Rgb64{clamp01(1.5 / 4.0) * 255.0, clamp01(1.5 / 4.0) * 255.0, clamp01(1.5 / 4.0) * 255.0};
          }
        }
    }
    const ValueRange shown = c.format == PixelFormat::GRAY16 ? ValueRange{0, 65535} : range;
    FrameRenderer r(ViewerConvert::Cpu);
    r.upload(ff.frame);
    for (const View& v : views) {
      if (c.with_non_finite && !v.nearest) continue;
      FrameTarget target;
      target.resize(v.fb_w, v.fb_h);
      target.bind();
      DrawOptions o;
      o.view = v.view;
      o.nearest = v.nearest;
      o.value_range = c.format == PixelFormat::GRAY32F ? std::optional(range) : std::nullopt;
      r.draw(o, v.fb_w, v.fb_h);
      std::vector<std::uint8_t> rgba;
      target.read_rgba(rgba);
      FrameTarget::unbind();
      const PixelRect rect = covered_pixels(kW, kH, v.view, v.fb_w, v.fb_h);
      std::size_t off = 0;
      std::string first;
      for (int y = rect.y0; y < rect.y1; ++y)
        for (int x = rect.x0; x < rect.x1; ++x) {
          const Rgb64 want = rgb_grey_reference(ff, shown, v.view, v.nearest, x, y);
          const std::uint8_t* got = &rgba[(std::size_t(y) * std::size_t(v.fb_w) + std::size_t(x)) * 4];
          for (int k = 0; k < 3; ++k)
            if (std::abs(double(got[k]) - want[std::size_t(k)]) > (is_rgb(c.format) && !v.nearest ? 2.0 : 1.0)) {
              if (!off)
                first = off_text(x, y, k, int(got[k]), want[std::size_t(k)]);
              ++off;
              break;
            }
        }
      EXPECT_EQ(off, 0u) << to_string(c.format) << " " << v.name << ": " << first;
    }
  }
}

// The GL-buffer upload (GL_PIXEL_UNPACK_BUFFER offsets) of a three-plane and
// a packed format draws what the host frame draws.
TEST_F(FormatProbe, GlBufferFramesDrawLikeHostFrames) {
  FrameRenderer r(ViewerConvert::Gpu);
  for (PixelFormat f : {PixelFormat::I420, PixelFormat::UYVY, PixelFormat::BGRA8, PixelFormat::GRAY32F}) {
    const FormatFrame ff = is_yuv(f)   ? yuv_format_frame(f, kW, kH, Colorimetry{}, 50)
                           : is_rgb(f) ? rgb_format_frame(f, kW, kH, 51)
                                       : gray_format_frame(f, kW, kH, 52, ValueRange{0, 1});
    const FrameLayout l = FrameLayout::contiguous(f, kW, kH, 256);
    std::vector<std::uint8_t> bytes(l.buffer_bytes(0));
    copy_frame(ff.frame, l.describe(MemoryKind::Host, {bytes.data()}));
    GLuint buffer = 0;
    glCreateBuffers(1, &buffer);
    glNamedBufferStorage(buffer, GLsizeiptr(bytes.size()), bytes.data(), 0);
    Frame gl = l.describe(MemoryKind::GlBuffer);
    gl.gl_buffer = buffer;
    r.upload(gl);
    glDeleteBuffers(1, &buffer);
    FrameTarget target;
    target.resize(kW, kH);
    target.bind();
    DrawOptions o;
    o.value_range = ValueRange{0, 1};
    r.draw(o, kW, kH);
    std::vector<std::uint8_t> rgba;
    target.read_rgba(rgba);
    FrameTarget::unbind();
    std::string first;
    EXPECT_EQ(
        count_off(
            ff, [&](std::uint32_t x, std::uint32_t y) { return &rgba[(std::size_t(y) * kW + x) * 4]; }, 1.0, &first),
        0u)
        << to_string(f) << ": " << first;
  }
}

}  // namespace
}  // namespace handoff::view::test
