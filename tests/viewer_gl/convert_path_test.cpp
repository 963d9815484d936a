// The CPU colour path (ViewerConvert::Cpu: ViewConverter and FrameRenderer's
// blit) against a float64 reference of what the shaders compute, and against
// the shader path itself on this GL:
//  - ViewConverter alone (no GL) at many views (1:1, fitted down, zoomed in
//    flat and filtered, panned off the edges, tiny and odd frames), every
//    matrix, range and siting, NV12 and P010 (with stray low bits): every
//    pixel within 1 code of the reference;
//  - FrameRenderer(Cpu) into an FBO: the same within 1 code; the shader path
//    (FrameRenderer(Gpu)) on the same frames differs from the CPU path by no
//    more than its own distance to the reference plus 1 (llvmpipe filters
//    8-bit textures in 8-bit fixed point: up to 4 codes off the reference on
//    random content at fractional weights, recorded as a test property);
//  - what the CPU path caches (the converted view) follows the frame, the view
//    and the colorimetry; the plane textures follow the frame (pixel probe);
//  - grey frames (gray8, gray16, gray32f with NaN / +-inf holes) over their
//    ranges: within 1 code of the grey shader's rule in float64, and of the
//    shader itself through FrameRenderer;
//  - RGB frames (rgb8, bgr8, rgba8, bgra8) within 1 code of GL's filter in
//    float64, and the AVX2 row kernels giving the portable kernels' bytes;
//  - bad arguments are refused naming what is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <handoff/error.hpp>
#include <handoff/gl_context.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/media/color.hpp>

#include "frame_renderer.hpp"
#include "frame_target.hpp"
#include "gl_test_context.hpp"
#include "pixel_probe.hpp"
#include "rgb_rows.hpp"
#include "view_convert.hpp"
#include "view_transform.hpp"

namespace handoff::view::test {
namespace {

// A frame of random samples (P010: whole 16-bit words, low bits included).
struct RandomFrame {
  PixelFormat format;
  std::uint32_t w, h;
  std::size_t luma_pitch, chroma_pitch;
  std::vector<std::uint8_t> luma, chroma;

  RandomFrame(PixelFormat f, std::uint32_t width, std::uint32_t height, std::uint32_t seed, std::size_t pad = 0)
      : format(f), w(width), h(height) {
    const std::size_t bps = bytes_per_sample(f);
    luma_pitch = w * bps + pad * bps;
    chroma_pitch = chroma_width(w) * 2 * bps + pad * bps;
    luma.resize(luma_pitch * h);
    chroma.resize(chroma_pitch * chroma_height(h));
    std::mt19937 rng(seed);
    for (auto& b : luma) b = std::uint8_t(rng());
    for (auto& b : chroma) b = std::uint8_t(rng());
  }
  HostPlanes planes() const {
    return HostPlanes{format, w, h, luma.data(), luma_pitch, chroma.data(), chroma_pitch};
  }
  Frame frame(Colorimetry c) const {
    return host_planes_frame(format, w, h, const_cast<std::uint8_t*>(luma.data()), luma_pitch,
                             const_cast<std::uint8_t*>(chroma.data()), chroma_pitch, c);
  }
  // Raw stored sample (byte or 16-bit word) of a plane at (x, y), component k.
  double sample(bool chroma_plane, int x, int y, int k) const {
    const std::size_t bps = bytes_per_sample(format);
    const std::vector<std::uint8_t>& v = chroma_plane ? chroma : luma;
    const std::size_t pitch = chroma_plane ? chroma_pitch : luma_pitch;
    const std::size_t at = std::size_t(y) * pitch + (std::size_t(x) * (chroma_plane ? 2 : 1) + std::size_t(k)) * bps;
    if (bps == 1) return v[at];
    std::uint16_t s;
    std::memcpy(&s, &v[at], 2);
    return s;
  }
};

// The float64 reference of one framebuffer pixel (bx, by): where
// yuv_frame_vert / yuv_frame_frag (or _nearest_frag) sample, GL's bilinear
// filter with clamp to edge on UNORM textures, the media library's transform,
// clamp, round to 8 bits.
std::array<int, 3> reference_pixel(const RandomFrame& f, const Colorimetry& c, const ViewTransform& v, bool nearest,
                                   int bx, int by) {
  double px = (bx + 0.5 - v.offset_x) / v.scale, py = (by + 0.5 - v.offset_y) / v.scale;
  if (nearest) {
    px = std::floor(px) + 0.5;
    py = std::floor(py) + 0.5;
  }
  const auto bilinear = [&](bool chroma, int k, double tx, double ty) {
    const int nw = int(chroma ? chroma_width(f.w) : f.w), nh = int(chroma ? chroma_height(f.h) : f.h);
    const double x = std::floor(tx), y = std::floor(ty), fx = tx - x, fy = ty - y;
    const auto t = [&](double xx, double yy) {
      return f.sample(chroma, std::clamp(int(xx), 0, nw - 1), std::clamp(int(yy), 0, nh - 1), k);
    };
    return (1 - fy) * ((1 - fx) * t(x, y) + fx * t(x + 1, y)) + fy * ((1 - fx) * t(x, y + 1) + fx * t(x + 1, y + 1));
  };
  const double sx = c.siting == ChromaSiting::Center ? 0.5 : 0.0, sy = c.siting == ChromaSiting::TopLeft ? 0.0 : 0.5;
  const double max = f.format == PixelFormat::NV12 ? 255.0 : 65535.0;
  const double s[3] = {bilinear(false, 0, px - 0.5, py - 0.5) / max,
                       bilinear(true, 0, (px - 0.5 - sx) / 2, (py - 0.5 - sy) / 2) / max,
                       bilinear(true, 1, (px - 0.5 - sx) / 2, (py - 0.5 - sy) / 2) / max};
  const media::ColorTransform t = media::yuv_to_rgb_transform(c.matrix, c.range, f.format, media::SampleInput::Unorm);
  std::array<int, 3> rgb{};
  for (int i = 0; i < 3; ++i) {
    double value = t.offset[std::size_t(i)];
    for (int j = 0; j < 3; ++j) value += t.m[std::size_t(3 * i + j)] * s[j];
    rgb[std::size_t(i)] = int(std::lround(std::clamp(value, 0.0, 1.0) * 255.0));
  }
  return rgb;
}

struct ViewCase {
  const char* name;
  std::uint32_t frame_w, frame_h;
  int fb_w, fb_h;
  ViewTransform view;
  bool nearest;
};

std::vector<ViewCase> view_cases() {
  std::vector<ViewCase> v;
  v.push_back({"one_to_one", 64, 48, 64, 48, {}, false});
  v.push_back({"fitted_down", 97, 61, 64, 40, fit_view(97, 61, 64, 40), false});
  v.push_back({"quarter", 128, 96, 40, 30, fit_view(128, 96, 40, 30), false});
  v.push_back({"zoomed_filtered", 40, 30, 96, 72, ViewTransform{3.7, -13.37, 7.93}, false});
  v.push_back({"zoomed_flat", 40, 30, 96, 72, ViewTransform{3.7, -13.37, 7.93}, true});
  v.push_back({"panned_off_left_top", 50, 40, 48, 36, ViewTransform{1.0, -7.0, -5.0}, false});
  v.push_back({"panned_off_right_bottom", 33, 21, 40, 30, ViewTransform{1.31, 11.6, 9.2}, false});
  v.push_back({"letterboxed_odd", 61, 37, 80, 80, fit_view(61, 37, 80, 80), false});
  v.push_back({"one_pixel", 1, 1, 9, 7, fit_view(1, 1, 9, 7), false});
  v.push_back({"two_by_three_flat", 2, 3, 16, 16, fit_view(2, 3, 16, 16), true});
  return v;
}

struct Worst {
  int error = 0;
  std::string where;
  std::size_t pixels = 0;
  void see(int err, const std::string& at) {
    if (err > error) {
      error = err;
      where = at;
    }
  }
};

std::string at_text(const ViewCase& vc, const Colorimetry& c, PixelFormat f, int x, int y, int k) {
  return std::string(vc.name) + " " + std::string(to_string(f)) + " " + std::string(to_string(c.matrix)) + " " +
         std::string(to_string(c.range)) + " " + std::string(to_string(c.siting)) + " pixel (" +
         std::to_string(x) + ", " + std::to_string(y) + ") channel " + "RGB"[k];
}

std::vector<Colorimetry> all_colorimetries() {
  std::vector<Colorimetry> v;
  for (auto m : {ColorMatrix::BT601, ColorMatrix::BT709, ColorMatrix::BT2020})
    for (auto r : {ColorRange::Limited, ColorRange::Full})
      for (auto s : {ChromaSiting::Left, ChromaSiting::Center, ChromaSiting::TopLeft}) v.push_back({m, r, s});
  return v;
}

TEST(ViewConvert, EveryPixelOfEveryViewWithinOneCodeOfFloat64Reference) {
  ViewConverter conv(2);
  Worst worst;
  std::uint32_t seed = 1;
  for (const ViewCase& vc : view_cases())
    for (auto format : {PixelFormat::NV12, PixelFormat::P010})
      for (const Colorimetry& c : all_colorimetries()) {
        const std::size_t pad = seed % 3;  // pitched rows in some
        const RandomFrame f(format, vc.frame_w, vc.frame_h, seed++, pad);
        const PixelRect r = covered_pixels(f.w, f.h, vc.view, vc.fb_w, vc.fb_h);
        ASSERT_FALSE(r.empty()) << vc.name;
        std::vector<std::uint8_t> out(std::size_t(r.width()) * std::size_t(r.height()) * 4, 7);
        conv.convert(f.planes(), c, vc.view, vc.nearest, r, ByteOrder::Rgba, out.data(), r.width() * 4);
        for (int y = r.y0; y < r.y1; ++y)
          for (int x = r.x0; x < r.x1; ++x) {
            const std::uint8_t* px = &out[(std::size_t(y - r.y0) * std::size_t(r.width()) + std::size_t(x - r.x0)) * 4];
            const auto want = reference_pixel(f, c, vc.view, vc.nearest, x, y);
            for (int k = 0; k < 3; ++k)
              worst.see(std::abs(int(px[k]) - want[std::size_t(k)]), at_text(vc, c, format, x, y, k));
            ASSERT_EQ(px[3], 255);
            ++worst.pixels;
          }
      }
  EXPECT_GT(worst.pixels, 100000u);
  EXPECT_LE(worst.error, 1) << "worst at " << worst.where;
  RecordProperty("max_error", worst.error);
}

// An RGB-family frame of random bytes, rows pitched, and the float64
// reference of a framebuffer pixel's channel: filtered as GL filters a UNORM
// texture (clamp to edge, bilinear or flat), codes shown as they are.
struct RgbFrame {
  PixelFormat format;
  std::uint32_t w, h;
  std::size_t n, pitch;
  bool bgr;
  std::vector<std::uint8_t> bytes;
  RgbFrame(PixelFormat f, std::uint32_t width, std::uint32_t height, std::uint32_t seed, std::size_t pad)
      : format(f), w(width), h(height) {
    n = f == PixelFormat::RGBA8 || f == PixelFormat::BGRA8 ? 4 : 3;
    bgr = f == PixelFormat::BGR8 || f == PixelFormat::BGRA8;
    pitch = w * n + pad;
    bytes.resize(pitch * h);
    std::uint32_t state = seed;
    for (auto& b : bytes) b = std::uint8_t((state = state * 1664525u + 1013904223u) >> 24);
  }
  HostPlanes planes() const { return HostPlanes{format, w, h, bytes.data(), pitch, nullptr, 0}; }
  double sample(int x, int y, int channel) const {  // channel 0 R, 1 G, 2 B, whatever the byte order
    const int at = bgr ? 2 - channel : channel;
    x = std::clamp(x, 0, int(w) - 1);
    y = std::clamp(y, 0, int(h) - 1);
    return double(bytes[std::size_t(y) * pitch + std::size_t(x) * n + std::size_t(at)]);
  }
  int reference(const ViewTransform& v, bool nearest, int bx, int by, int channel) const {
    double px = (bx + 0.5 - v.offset_x) / v.scale, py = (by + 0.5 - v.offset_y) / v.scale;
    if (nearest) {
      px = std::floor(px) + 0.5;
      py = std::floor(py) + 0.5;
    }
    const double tx = px - 0.5, ty = py - 0.5, x0 = std::floor(tx), y0 = std::floor(ty);
    const double fx = tx - x0, fy = ty - y0;
    const int k = channel;
    const double value = (1 - fy) * ((1 - fx) * sample(int(x0), int(y0), k) + fx * sample(int(x0) + 1, int(y0), k)) +
                         fy * ((1 - fx) * sample(int(x0), int(y0) + 1, k) + fx * sample(int(x0) + 1, int(y0) + 1, k));
    return int(std::lround(value));
  }
};

// Every pixel of `rect`, written from out + row * pitch on, against the reference.
void check_rgb(const RgbFrame& f, const ViewTransform& v, bool nearest, const PixelRect& rect, ByteOrder order,
               const std::uint8_t* out, std::ptrdiff_t pitch, const char* name, Worst& worst) {
  for (int y = rect.y0; y < rect.y1; ++y)
    for (int x = rect.x0; x < rect.x1; ++x) {
      const std::uint8_t* got = out + std::ptrdiff_t(y - rect.y0) * pitch + std::ptrdiff_t(x - rect.x0) * 4;
      for (int k = 0; k < 3; ++k) {
        const int byte = order == ByteOrder::Rgba ? k : 2 - k;
        worst.see(std::abs(int(got[byte]) - f.reference(v, nearest, x, y, k)),
                  std::string(name) + " " + std::string(to_string(f.format)) + " pixel (" + std::to_string(x) + ", " +
                      std::to_string(y) + ") channel " + "RGB"[k] + (order == ByteOrder::Rgba ? " rgba" : " bgra"));
      }
      ASSERT_EQ(got[3], 255);
      ++worst.pixels;
    }
}

constexpr PixelFormat kRgbFormats[] = {PixelFormat::RGB8, PixelFormat::BGR8, PixelFormat::RGBA8, PixelFormat::BGRA8};

// RGB frames: rows pitched, the byte order of each format into either output
// byte order, alpha ignored.
TEST(ViewConvert, RgbFramesOfEveryViewWithinOneCodeOfFloat64Reference) {
  ViewConverter conv(2);
  Worst worst;
  std::uint32_t seed = 11;
  for (const ViewCase& vc : view_cases())
    for (auto format : kRgbFormats)
      for (const ByteOrder order : {ByteOrder::Rgba, ByteOrder::Bgra}) {
        const RgbFrame f(format, vc.frame_w, vc.frame_h, seed, seed % 5);
        ++seed;
        const PixelRect r = covered_pixels(vc.frame_w, vc.frame_h, vc.view, vc.fb_w, vc.fb_h);
        ASSERT_FALSE(r.empty()) << vc.name;
        std::vector<std::uint8_t> out(std::size_t(r.width()) * std::size_t(r.height()) * 4, 7);
        conv.convert(f.planes(), Colorimetry{}, vc.view, vc.nearest, r, order, out.data(), r.width() * 4);
        check_rgb(f, vc.view, vc.nearest, r, order, out.data(), r.width() * 4, vc.name, worst);
      }
  EXPECT_GT(worst.pixels, 10000u);
  EXPECT_LE(worst.error, 1) << "worst at " << worst.where;
}

// RGB frames wide enough for the row kernels' vector loops and their tails:
// odd widths and heights scaled down and up (filtered and flat), a
// sub-rectangle of the covered pixels (its first column and row inside the
// frame), rows written bottom-up, on one thread and two.
TEST(ViewConvert, RgbFramesOfOddSizesSubRectsAndBottomUpRowsWithinOneCode) {
  struct Case {
    const char* name;
    std::uint32_t w, h;
    int fb_w, fb_h;
    ViewTransform view;
    bool nearest;
    bool sub;
  };
  const Case cases[] = {
      {"down_odd", 203, 77, 131, 61, fit_view(203, 77, 131, 61), false, false},
      {"down_odd_sub", 203, 77, 131, 61, fit_view(203, 77, 131, 61), false, true},
      {"up_odd", 67, 45, 157, 111, fit_view(67, 45, 157, 111), false, false},
      {"up_odd_sub_flat", 67, 45, 157, 111, fit_view(67, 45, 157, 111), true, true},
      {"one_to_one_wide", 129, 9, 129, 9, {}, false, false},
      {"panned_sub", 101, 33, 90, 40, ViewTransform{1.17, -23.4, -3.9}, false, true},
  };
  Worst worst;
  std::uint32_t seed = 501;
  for (const unsigned threads : {1u, 2u}) {
    ViewConverter conv(threads);
    for (const Case& c : cases)
      for (auto format : kRgbFormats)
        for (const ByteOrder order : {ByteOrder::Rgba, ByteOrder::Bgra})
          for (const bool bottom_up : {false, true}) {
            const RgbFrame f(format, c.w, c.h, seed, seed % 7);
            ++seed;
            PixelRect r = covered_pixels(c.w, c.h, c.view, c.fb_w, c.fb_h);
            ASSERT_FALSE(r.empty()) << c.name;
            if (c.sub) r = PixelRect{r.x0 + 3, r.y0 + 2, r.x1 - 5, r.y1 - 1};
            const std::ptrdiff_t row = std::ptrdiff_t(r.width()) * 4 + 8;  // pitched output rows
            std::vector<std::uint8_t> out(std::size_t(row) * std::size_t(r.height()), 7);
            std::uint8_t* first = bottom_up ? out.data() + row * (r.height() - 1) : out.data();
            const std::ptrdiff_t pitch = bottom_up ? -row : row;
            conv.convert(f.planes(), Colorimetry{}, c.view, c.nearest, r, order, first, pitch);
            check_rgb(f, c.view, c.nearest, r, order, first, pitch, c.name, worst);
          }
  }
  EXPECT_GT(worst.pixels, 100000u);
  EXPECT_LE(worst.error, 1) << "worst at " << worst.where;
}

// The AVX2 RGB row kernels give the portable kernels' bytes: random rows of
// every length up to a few vector steps, every row weight class (0, tiny,
// half, near 1), random taps and texels (both edges' weight-0 taps among
// them), 3 and 4 channels, swapped or not.
TEST(RgbRowKernels, Avx2GivesThePortableKernelsBytes) {
  const RgbRowKernels* avx2 = avx2_rgb_row_kernels();
  if (!avx2) GTEST_SKIP() << "this CPU has no AVX2";
  const RgbRowKernels& portable = portable_rgb_row_kernels();
  std::mt19937 rng(7);
  for (const std::size_t channels : {3u, 4u})
    for (std::size_t texels = 1; texels < 70; texels += texels < 20 ? 1 : 7) {
      const std::size_t n = channels * texels;
      std::vector<std::uint8_t> a(n), b(n);
      for (auto& v : a) v = std::uint8_t(rng());
      for (auto& v : b) v = std::uint8_t(rng());
      for (const float w : {0.0f, 1.0f / 65536.0f, 0.5f, 0.333333f, 0.999999f}) {
        std::vector<std::int16_t> row_p(rgb_row_samples(texels, channels), 0), row_a = row_p;
        portable.vertical(a.data(), b.data(), rgb_row_weight(w), n, row_p.data());
        avx2->vertical(a.data(), b.data(), rgb_row_weight(w), n, row_a.data());
        ASSERT_EQ(row_p, row_a) << channels << " channels, " << texels << " texels, weight " << w;
        for (const bool swap : {false, true}) {
          const std::size_t width = texels * 2 + 3;
          std::vector<std::int32_t> x0(width);
          std::vector<float> weights(width);
          for (std::size_t j = 0; j < width; ++j) {
            x0[j] = std::int32_t(rng() % texels);
            weights[j] = x0[j] + 1 == std::int32_t(texels) || rng() % 4 == 0 ? 0.0f : float(rng() % 1000) / 1000.0f;
          }
          std::vector<std::int16_t> taps(8 * width);
          fill_rgb_taps(weights.data(), width, taps.data());
          std::vector<std::uint8_t> out_p(4 * width), out_a(4 * width);
          portable.horizontal(row_p.data(), x0.data(), taps.data(), width, RgbTexel{std::uint8_t(channels), swap},
                              out_p.data());
          avx2->horizontal(row_p.data(), x0.data(), taps.data(), width, RgbTexel{std::uint8_t(channels), swap},
                           out_a.data());
          ASSERT_EQ(out_p, out_a) << channels << " channels, " << texels << " texels, swap " << swap;
        }
      }
    }
}

// A grey frame of random samples (gray32f: values around 0..10 with NaN
// and +-inf holes), rows pitched.
struct GreyFrame {
  PixelFormat format;
  std::uint32_t w, h;
  std::size_t pitch;
  std::vector<std::uint8_t> bytes;
  GreyFrame(PixelFormat f, std::uint32_t width, std::uint32_t height, std::uint32_t seed)
      : format(f), w(width), h(height) {
    const std::size_t bps = bytes_per_sample(f);
    pitch = (w + seed % 3) * bps;
    bytes.resize(pitch * h);
    std::mt19937 rng(seed);
    for (std::uint32_t y = 0; y < h; ++y)
      for (std::uint32_t x = 0; x < w; ++x) {
        std::uint8_t* at = &bytes[y * pitch + x * bps];
        if (f == PixelFormat::GRAY8) *at = std::uint8_t(rng());
        else if (f == PixelFormat::GRAY16) {
          const auto v = std::uint16_t(rng());
          std::memcpy(at, &v, 2);
        } else {
          const std::uint32_t r = rng() % 16;
          float v = float(rng() % 10000) / 1000.0f;
          if (r == 0) v = std::numeric_limits<float>::quiet_NaN();
          if (r == 1) v = std::numeric_limits<float>::infinity();
          if (r == 2) v = -std::numeric_limits<float>::infinity();
          std::memcpy(at, &v, 4);
        }
      }
  }
  HostPlanes planes() const { return HostPlanes{format, w, h, bytes.data(), pitch, nullptr, 0}; }
  Frame frame() const {
    Frame f;
    f.format = format;
    f.width = w;
    f.height = h;
    f.memory = MemoryKind::Host;
    f.planes[0] = Plane{const_cast<std::uint8_t*>(bytes.data()), 0, pitch, w, h, 1};
    return f;
  }
  // The sample as the grey shader reads it: UNORM for the integer formats, the float itself.
  double sample(int x, int y) const {
    x = std::clamp(x, 0, int(w) - 1);
    y = std::clamp(y, 0, int(h) - 1);
    const std::uint8_t* at = &bytes[std::size_t(y) * pitch + std::size_t(x) * bytes_per_sample(format)];
    if (format == PixelFormat::GRAY8) return *at / 255.0;
    if (format == PixelFormat::GRAY16) {
      std::uint16_t v;
      std::memcpy(&v, at, 2);
      return v / 65535.0;
    }
    float v;
    std::memcpy(&v, at, 4);
    return v;
  }
};

// gray_frame_frag.glsl in float64: the four texels, non-finite ones out of
// the mix, the nearest one's finiteness deciding a hole; (s - lo) * scale
// clamped, rounded to 8 bits.
int grey_reference(const GreyFrame& f, const GrayMapping& g, const ViewTransform& v, bool nearest, int bx, int by) {
  double px = (bx + 0.5 - v.offset_x) / v.scale, py = (by + 0.5 - v.offset_y) / v.scale;
  if (nearest) {
    px = std::floor(px) + 0.5;
    py = std::floor(py) + 0.5;
  }
  const double tx = px - 0.5, ty = py - 0.5, x0 = std::floor(tx), y0 = std::floor(ty), fx = tx - x0, fy = ty - y0;
  const double s[4] = {f.sample(int(x0), int(y0)), f.sample(int(x0) + 1, int(y0)), f.sample(int(x0), int(y0) + 1),
                       f.sample(int(x0) + 1, int(y0) + 1)};
  const double w[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};
  double sum = 0, weight = 0, nearest_w = -1;
  bool nearest_finite = true;
  for (int k = 0; k < 4; ++k) {
    if (w[k] > nearest_w) {
      nearest_w = w[k];
      nearest_finite = std::isfinite(s[k]);
    }
    if (std::isfinite(s[k]) && w[k] > 0) {
      sum += w[k] * s[k];
      weight += w[k];
    }
  }
  const double out = !nearest_finite || weight <= 0 ? g.non_finite : std::clamp((sum / weight - g.lo) * g.scale, 0.0, 1.0);
  return int(std::lround(out * 255.0));
}

// Whether the texel nearest to framebuffer pixel (bx, by) is a tie between a
// finite and a non-finite texel (two weights within 1e-4): there the shader's
// float interpolation picks either (a hole or not), as any GPU would.
bool hole_tie(const GreyFrame& f, const ViewTransform& v, int bx, int by) {
  const double px = (bx + 0.5 - v.offset_x) / v.scale, py = (by + 0.5 - v.offset_y) / v.scale;
  const double tx = px - 0.5, ty = py - 0.5, x0 = std::floor(tx), y0 = std::floor(ty), fx = tx - x0, fy = ty - y0;
  const double s[4] = {f.sample(int(x0), int(y0)), f.sample(int(x0) + 1, int(y0)), f.sample(int(x0), int(y0) + 1),
                       f.sample(int(x0) + 1, int(y0) + 1)};
  const double w[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};
  const double top = *std::max_element(w, w + 4);
  bool finite = false, hole = false;
  for (int k = 0; k < 4; ++k)
    if (w[k] > top - 1e-4) (std::isfinite(s[k]) ? finite : hole) = true;
  return finite && hole;
}

// Grey frames: gray8 / gray16 over their full range and a narrower one,
// gray32f over a range with NaN and +-inf holes; R = G = B, alpha 255.
TEST(ViewConvert, GreyFramesOfEveryViewWithinOneCodeOfFloat64Reference) {
  ViewConverter conv(2);
  Worst worst;
  std::size_t holes = 0;
  std::uint32_t seed = 40;
  for (const ViewCase& vc : view_cases())
    for (auto format : {PixelFormat::GRAY8, PixelFormat::GRAY16, PixelFormat::GRAY32F})
      for (const GrayMapping g : {GrayMapping{0.0f, 1.0f, 0.5f}, GrayMapping{0.2f, 2.5f, 0.5f},
                                  GrayMapping{1.5f, 0.125f, 128.0f / 255.0f}}) {
        const GreyFrame f(format, vc.frame_w, vc.frame_h, seed++);
        const PixelRect r = covered_pixels(f.w, f.h, vc.view, vc.fb_w, vc.fb_h);
        ASSERT_FALSE(r.empty()) << vc.name;
        std::vector<std::uint8_t> out(std::size_t(r.width()) * std::size_t(r.height()) * 4, 7);
        for (const ByteOrder order : {ByteOrder::Rgba, ByteOrder::Bgra}) {
          conv.convert(f.planes(), Colorimetry{}, vc.view, vc.nearest, r, order, out.data(), r.width() * 4, g);
          for (int y = r.y0; y < r.y1; ++y)
            for (int x = r.x0; x < r.x1; ++x) {
              const std::uint8_t* px =
                  &out[(std::size_t(y - r.y0) * std::size_t(r.width()) + std::size_t(x - r.x0)) * 4];
              const int want = grey_reference(f, g, vc.view, vc.nearest, x, y);
              holes += want == int(std::lround(g.non_finite * 255.0));
              for (int k = 0; k < 3; ++k)
                worst.see(std::abs(int(px[k]) - want), at_text(vc, Colorimetry{}, format, x, y, k) + " lo " +
                                                            std::to_string(g.lo) + " scale " + std::to_string(g.scale));
              ASSERT_EQ(px[3], 255);
              ++worst.pixels;
            }
        }
      }
  EXPECT_GT(worst.pixels, 30000u);
  EXPECT_GT(holes, 100u) << "the gray32f frames' holes were drawn somewhere";
  EXPECT_LE(worst.error, 1) << "worst at " << worst.where;
}

TEST(ViewConvert, ByteOrderAndBottomUpRows) {
  const RandomFrame f(PixelFormat::NV12, 31, 17, 99);
  const Colorimetry c{};
  const ViewTransform v = fit_view(31, 17, 50, 30);
  const PixelRect r = covered_pixels(31, 17, v, 50, 30);
  const std::size_t row = std::size_t(r.width()) * 4;
  std::vector<std::uint8_t> rgba(row * std::size_t(r.height())), bgra_up(rgba.size());
  ViewConverter conv(1);
  conv.convert(f.planes(), c, v, false, r, ByteOrder::Rgba, rgba.data(), std::ptrdiff_t(row));
  conv.convert(f.planes(), c, v, false, r, ByteOrder::Bgra, bgra_up.data() + row * std::size_t(r.height() - 1),
               -std::ptrdiff_t(row));
  for (int y = 0; y < r.height(); ++y)
    for (int x = 0; x < r.width(); ++x) {
      const std::uint8_t* a = &rgba[std::size_t(y) * row + std::size_t(x) * 4];
      const std::uint8_t* b = &bgra_up[std::size_t(r.height() - 1 - y) * row + std::size_t(x) * 4];
      ASSERT_EQ(a[0], b[2]);
      ASSERT_EQ(a[1], b[1]);
      ASSERT_EQ(a[2], b[0]);
      ASSERT_EQ(b[3], 255);
    }
}

TEST(ViewConvert, CoveredPixelsAreThoseWhoseCentresTheFrameCovers) {
  EXPECT_EQ(covered_pixels(64, 48, ViewTransform{}, 64, 48), (PixelRect{0, 0, 64, 48}));
  // 1920x1080 fitted into 1280x720: exactly the view.
  EXPECT_EQ(covered_pixels(1920, 1080, fit_view(1920, 1080, 1280, 720), 1280, 720), (PixelRect{0, 0, 1280, 720}));
  // Frame [10.4, 10.4 + 2 * 3) x [-2, 4): centres 10.5 .. 15.5 and 0.5 .. 3.5.
  EXPECT_EQ(covered_pixels(3, 3, ViewTransform{2.0, 10.4, -2.0}, 100, 100), (PixelRect{10, 0, 16, 4}));
  // An edge exactly on a pixel centre: that pixel is in on the left and top, out on the right and bottom.
  EXPECT_EQ(covered_pixels(4, 4, ViewTransform{1.0, 0.5, 0.5}, 10, 10), (PixelRect{0, 0, 4, 4}));
  EXPECT_TRUE(covered_pixels(4, 4, ViewTransform{1.0, 20.0, 0.0}, 10, 10).empty()) << "right of the view";
  EXPECT_TRUE(covered_pixels(4, 4, ViewTransform{1.0, -4.0, 0.0}, 10, 10).empty()) << "left of the view";
  EXPECT_TRUE(covered_pixels(4, 4, ViewTransform{0.0, 0.0, 0.0}, 10, 10).empty()) << "scale 0";
  EXPECT_TRUE(covered_pixels(4, 4, ViewTransform{std::nan(""), 0.0, 0.0}, 10, 10).empty()) << "NaN scale";
  EXPECT_TRUE(covered_pixels(4, 4, ViewTransform{1.0, INFINITY, 0.0}, 10, 10).empty()) << "infinite offset";
  EXPECT_TRUE(covered_pixels(0, 4, ViewTransform{}, 10, 10).empty()) << "no frame";
  EXPECT_TRUE(covered_pixels(4, 4, ViewTransform{}, 0, 10).empty()) << "no framebuffer";
}

TEST(ViewConvert, BadArgumentsAreRefusedNamingWhatIsWrong) {
  const RandomFrame f(PixelFormat::P010, 16, 8, 5);
  const PixelRect r{0, 0, 16, 8};
  std::vector<std::uint8_t> out(16 * 8 * 4 + 4);
  ViewConverter conv(1);
  const auto refused = [&](HostPlanes p, PixelRect rect, std::uint8_t* o, std::ptrdiff_t pitch, const char* text) {
    try {
      conv.convert(p, Colorimetry{}, ViewTransform{}, false, rect, ByteOrder::Rgba, o, pitch);
      ADD_FAILURE() << "accepted; expected: " << text;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  HostPlanes p = f.planes();
  p.luma = nullptr;
  refused(p, r, out.data(), 64, "no frame planes");
  p = f.planes();
  p.chroma_pitch = 8;
  refused(p, r, out.data(), 64, "pitch is below its packed row");
  p = f.planes();
  p.luma_pitch = 33;
  refused(p, r, out.data(), 64, "2-byte aligned");
  refused(f.planes(), PixelRect{0, 0, 17, 8}, out.data(), 68, "outside the frame's pixels");
  refused(f.planes(), PixelRect{-1, 0, 16, 8}, out.data(), 68, "outside the frame's pixels");
  refused(f.planes(), r, out.data() + 1, 64, "4-byte aligned");
  refused(f.planes(), r, out.data(), 62, "4-byte aligned");
  // Nothing to do is no error.
  EXPECT_NO_THROW(conv.convert(f.planes(), Colorimetry{}, ViewTransform{}, false, PixelRect{}, ByteOrder::Rgba,
                               out.data(), 64));
}

// --- through GL ------------------------------------------------------------------

struct Drawn {
  int w = 0, h = 0;
  std::vector<std::uint8_t> rgba;  // top-down
};

// Uploads `frame` (none: draws what the renderer has) and draws it into an FBO of the case's size.
Drawn draw_with(FrameRenderer& renderer, const Frame* frame, const Colorimetry& c, const ViewCase& vc) {
  FrameTarget target;
  target.resize(vc.fb_w, vc.fb_h);
  if (frame) renderer.upload(*frame);
  target.bind();
  DrawOptions o;
  o.colorimetry = c;
  o.view = vc.view;
  o.nearest = vc.nearest;
  renderer.draw(o, vc.fb_w, vc.fb_h);
  Drawn d{vc.fb_w, vc.fb_h, {}};
  target.read_rgba(d.rgba);
  FrameTarget::unbind();
  return d;
}

using ConvertPathGl = GlTest;

TEST_F(ConvertPathGl, AutoChoosesCpuOnThisSoftwareRasteriserAndSaysSo) {
  const char* name = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  FrameRenderer automatic, gpu(ViewerConvert::Gpu), cpu(ViewerConvert::Cpu);
  EXPECT_EQ(automatic.cpu_convert(), is_software_renderer(name)) << name;
  EXPECT_FALSE(gpu.cpu_convert());
  EXPECT_TRUE(cpu.cpu_convert());
  EXPECT_NE(automatic.convert_text().find(name), std::string::npos) << automatic.convert_text();
  EXPECT_TRUE(is_software_renderer("llvmpipe (LLVM 15.0.6, 256 bits)"));
  EXPECT_TRUE(is_software_renderer("Google SwiftShader"));
  EXPECT_FALSE(is_software_renderer("NVIDIA H200/PCIe/SSE2"));
  EXPECT_FALSE(is_software_renderer(""));
}

TEST_F(ConvertPathGl, CpuPathMatchesReferenceAndShaderInAnFbo) {
  FrameRenderer cpu(ViewerConvert::Cpu), gpu(ViewerConvert::Gpu);
  Worst to_reference, to_shader, shader_to_reference;
  std::uint32_t seed = 100;
  const Colorimetry colorimetries[] = {{ColorMatrix::BT709, ColorRange::Limited, ChromaSiting::Left},
                                       {ColorMatrix::BT2020, ColorRange::Full, ChromaSiting::Center},
                                       {ColorMatrix::BT601, ColorRange::Limited, ChromaSiting::TopLeft}};
  for (const ViewCase& vc : view_cases())
    for (auto format : {PixelFormat::NV12, PixelFormat::P010})
      for (const Colorimetry& c : colorimetries) {
        const RandomFrame f(format, vc.frame_w, vc.frame_h, seed++);
        const Frame frame = f.frame(c);
        const Drawn a = draw_with(cpu, &frame, c, vc);
        const Drawn b = draw_with(gpu, &frame, c, vc);
        const PixelRect r = covered_pixels(f.w, f.h, vc.view, vc.fb_w, vc.fb_h);
        for (int y = 0; y < vc.fb_h; ++y)
          for (int x = 0; x < vc.fb_w; ++x) {
            const std::size_t at = (std::size_t(y) * std::size_t(vc.fb_w) + std::size_t(x)) * 4;
            const bool inside = x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1;
            const auto want = inside ? reference_pixel(f, c, vc.view, vc.nearest, x, y) : std::array<int, 3>{};
            for (int k = 0; k < 3; ++k) {
              const std::string where = at_text(vc, c, format, x, y, k);
              if (inside) {
                to_reference.see(std::abs(int(a.rgba[at + std::size_t(k)]) - want[std::size_t(k)]), where);
                shader_to_reference.see(std::abs(int(b.rgba[at + std::size_t(k)]) - want[std::size_t(k)]), where);
              }
              to_shader.see(std::abs(int(a.rgba[at + std::size_t(k)]) - int(b.rgba[at + std::size_t(k)])), where);
            }
            ++to_shader.pixels;
          }
      }
  EXPECT_LE(to_reference.error, 1) << "worst at " << to_reference.where;
  EXPECT_LE(to_shader.error, shader_to_reference.error + 1)
      << "worst at " << to_shader.where << "; the shader's own worst error: " << shader_to_reference.error << " at "
      << shader_to_reference.where;
  RecordProperty("max_error_to_reference", to_reference.error);
  RecordProperty("max_difference_to_shader", to_shader.error);
  RecordProperty("shader_max_error_to_reference", shader_to_reference.error);
}

// Grey frames through FrameRenderer: the CPU path (the converter, then the
// blit) against the grey shader on the same frames and ranges.
TEST_F(ConvertPathGl, GreyCpuPathMatchesTheShaderInAnFbo) {
  FrameRenderer cpu(ViewerConvert::Cpu), gpu(ViewerConvert::Gpu);
  Worst to_shader;
  std::size_t ties = 0;  // channels at a hole's tie (left out: hole_tie)
  std::uint32_t seed = 300;
  for (const ViewCase& vc : view_cases())
    for (auto format : {PixelFormat::GRAY8, PixelFormat::GRAY16, PixelFormat::GRAY32F})
      for (const std::optional<ValueRange> range : {std::optional<ValueRange>{}, std::optional{ValueRange{1.0, 7.5}}}) {
        if (format == PixelFormat::GRAY32F && !range) continue;  // its automatic range differs frame to frame
        const GreyFrame f(format, vc.frame_w, vc.frame_h, seed++);
        const Frame frame = f.frame();
        Drawn drawn[2];
        FrameRenderer* renderers[2] = {&cpu, &gpu};
        for (int i = 0; i < 2; ++i) {
          FrameTarget target;
          target.resize(vc.fb_w, vc.fb_h);
          renderers[i]->upload(frame);
          target.bind();
          DrawOptions o;
          o.view = vc.view;
          o.nearest = vc.nearest;
          o.value_range = range;
          renderers[i]->draw(o, vc.fb_w, vc.fb_h);
          drawn[i] = Drawn{vc.fb_w, vc.fb_h, {}};
          target.read_rgba(drawn[i].rgba);
          FrameTarget::unbind();
        }
        for (std::size_t at = 0; at < drawn[0].rgba.size(); ++at) {
          const int x = int((at / 4) % std::size_t(vc.fb_w)), y = int((at / 4) / std::size_t(vc.fb_w));
          if (format == PixelFormat::GRAY32F && !vc.nearest && hole_tie(f, vc.view, x, y)) {
            ++ties;
            continue;
          }
          to_shader.see(std::abs(int(drawn[0].rgba[at]) - int(drawn[1].rgba[at])),
                        std::string(vc.name) + " " + std::string(to_string(format)) + " pixel " + std::to_string(x) +
                            "," + std::to_string(y));
          ++to_shader.pixels;
        }
      }
  EXPECT_TRUE(cpu.cpu_convert());
  EXPECT_GT(to_shader.pixels, 10000u);
  EXPECT_LT(ties * 50, to_shader.pixels) << "ties are rare";
  EXPECT_LE(to_shader.error, 1) << "worst at " << to_shader.where;
}

TEST_F(ConvertPathGl, TheConvertedViewFollowsFrameViewAndColorimetry) {
  FrameRenderer cached(ViewerConvert::Cpu);
  const ViewCase vc{"fitted", 97, 61, 64, 40, fit_view(97, 61, 64, 40), false};
  const RandomFrame f1(PixelFormat::NV12, 97, 61, 1), f2(PixelFormat::NV12, 97, 61, 2);
  const Colorimetry bt709{}, bt601{ColorMatrix::BT601, ColorRange::Full, ChromaSiting::Center};
  const auto fresh = [&](const RandomFrame& f, const Colorimetry& c, const ViewCase& v) {
    FrameRenderer r(ViewerConvert::Cpu);
    const Frame frame = f.frame(c);
    return draw_with(r, &frame, c, v).rgba;
  };
  const auto again = [&](const Colorimetry& c, const ViewCase& v) {  // no upload: the frame already there
    return draw_with(cached, nullptr, c, v).rgba;
  };
  const Frame first = f1.frame(bt709), second = f2.frame(bt601);
  EXPECT_EQ(draw_with(cached, &first, bt709, vc).rgba, fresh(f1, bt709, vc));
  EXPECT_EQ(again(bt709, vc), fresh(f1, bt709, vc)) << "drawn again unchanged";
  EXPECT_EQ(again(bt601, vc), fresh(f1, bt601, vc)) << "colorimetry changed";
  ViewCase zoomed = vc;
  zoomed.view = zoom_around(vc.view, 2.5, 20, 13);
  zoomed.nearest = true;
  EXPECT_EQ(again(bt601, zoomed), fresh(f1, bt601, zoomed)) << "view changed";
  EXPECT_EQ(draw_with(cached, &second, bt601, zoomed).rgba, fresh(f2, bt601, zoomed)) << "frame changed";
  ViewCase bigger = vc;
  bigger.fb_w = 128;
  bigger.fb_h = 80;
  bigger.view = fit_view(97, 61, 128, 80);
  EXPECT_EQ(again(bt601, bigger), fresh(f2, bt601, bigger)) << "framebuffer resized";
}

TEST_F(ConvertPathGl, PlaneTexturesAndProbeHoldTheFrameShown) {
  FrameRenderer r(ViewerConvert::Cpu);
  const Colorimetry c{};
  for (int code : {40, 200}) {
    RandomFrame f(PixelFormat::P010, 8, 6, 3);
    for (std::size_t i = 0; i < f.luma.size(); i += 2) {
      const std::uint16_t s = std::uint16_t(code << 6);
      std::memcpy(&f.luma[i], &s, 2);
    }
    const Frame frame = f.frame(c);
    draw_with(r, &frame, c, ViewCase{"1:1", 8, 6, 8, 6, {}, false});
    const PixelProbe p = probe_pixel(r, c, std::nullopt, 3.0, 2.0);
    ASSERT_TRUE(p.valid);
    EXPECT_EQ(p.code_y, code) << "the textures were filled from the frame now shown";
    std::uint16_t texel = 0;
    glGetTextureSubImage(r.luma_texture(), 0, 5, 5, 0, 1, 1, 1, GL_RED, GL_UNSIGNED_SHORT, 2, &texel);
    EXPECT_EQ(texel >> 6, code);
  }
}

TEST_F(ConvertPathGl, GlBufferFramesReachTheCpuPath) {
  const RandomFrame f(PixelFormat::NV12, 45, 23, 8, 3);  // pitched rows: read back and repacked
  const Colorimetry c{};
  const std::size_t luma_bytes = f.luma.size(), offset = 256;
  GLuint buffer = 0;
  glCreateBuffers(1, &buffer);
  glNamedBufferData(buffer, GLsizeiptr(offset + luma_bytes + f.chroma.size()), nullptr, GL_STATIC_DRAW);
  glNamedBufferSubData(buffer, GLintptr(offset), GLsizeiptr(luma_bytes), f.luma.data());
  glNamedBufferSubData(buffer, GLintptr(offset + luma_bytes), GLsizeiptr(f.chroma.size()), f.chroma.data());
  Frame g = f.frame(c);
  g.memory = MemoryKind::GlBuffer;
  g.gl_buffer = buffer;
  g.planes[0].data = g.planes[1].data = nullptr;
  g.planes[0].offset = offset;
  g.planes[1].offset = offset + luma_bytes;
  const ViewCase vc{"fitted", 45, 23, 60, 40, fit_view(45, 23, 60, 40), false};
  FrameRenderer from_buffer(ViewerConvert::Cpu), from_host(ViewerConvert::Cpu);
  const Frame host = f.frame(c);
  const Drawn a = draw_with(from_buffer, &g, c, vc);
  const Drawn b = draw_with(from_host, &host, c, vc);
  EXPECT_EQ(a.rgba, b.rgba);
  glDeleteBuffers(1, &buffer);
}

}  // namespace
}  // namespace handoff::view::test
