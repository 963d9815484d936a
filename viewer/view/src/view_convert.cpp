#include "view_convert.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include <handoff/error.hpp>

#include "color_fold.hpp"
#include "rgb_rows.hpp"

namespace handoff::view {
namespace {

static_assert(std::endian::native == std::endian::little, "pixels are packed as little-endian 32-bit words");

// Bytes of one pixel of an RGB-family format (3 or 4; alpha is not drawn).
std::size_t rgb_stride(PixelFormat f) { return f == PixelFormat::RGBA8 || f == PixelFormat::BGRA8 ? 4 : 3; }

// First pixel (of a row or column) whose centre b + 0.5 is at or past `edge`.
int first_centre_at(double edge) { return int(std::ceil(edge - 0.5)); }

template <typename T>
const T* row_of(const std::uint8_t* plane, std::size_t pitch, std::int32_t row) {
  return reinterpret_cast<const T*>(plane + std::size_t(row) * pitch);
}

// out[k] = a[k] + w (b[k] - a[k]) over n samples, as float.
template <typename T>
[[gnu::always_inline]] inline void lerp_samples(const T* __restrict a, const T* __restrict b, float w, std::size_t n,
                                                float* __restrict out) {
  if (w == 0.0f || a == b) {
    for (std::size_t k = 0; k < n; ++k) out[k] = float(a[k]);
    return;
  }
  for (std::size_t k = 0; k < n; ++k) {
    const float fa = float(a[k]);
    out[k] = fa + w * (float(b[k]) - fa);
  }
}
// The horizontal pass, the matrix, clamping and rounding to 8 bits (as a
// UNORM8 framebuffer stores the shader's output) for one output row. Written
// as plain loops over restrict pointers so that the compiler vectorizes them
// (the gathers too, with AVX2: see RowKernels).
// L: the row's luma, filtered vertically; C: its chroma pairs. x0 / w: the
// first texel and the weight of the next one per output pixel (the next one
// is x0 + 1: the rows carry one clamped texel past their end).
[[gnu::always_inline]] inline void horizontal_and_matrix_body(
    const float* __restrict L, const float* __restrict C, const std::int32_t* __restrict lx0,
    const float* __restrict lxw, const std::int32_t* __restrict cx0, const float* __restrict cxw, std::size_t width,
    const float* __restrict m, const float* __restrict bias, int red_at, float* __restrict Y, float* __restrict Cb,
    float* __restrict Cr, std::uint8_t* __restrict out) {
  for (std::size_t j = 0; j < width; ++j) {
    const std::int32_t i = lx0[j];
    const float a = L[i], b = L[i + 1];
    Y[j] = a + lxw[j] * (b - a);
  }
  for (std::size_t j = 0; j < width; ++j) {
    const std::int32_t i = 2 * cx0[j];
    const float w = cxw[j];
    const float a0 = C[i], a1 = C[i + 1], b0 = C[i + 2], b1 = C[i + 3];
    Cb[j] = a0 + w * (b0 - a0);
    Cr[j] = a1 + w * (b1 - a1);
  }
  const float m0 = m[0], m1 = m[1], m2 = m[2], m3 = m[3], m4 = m[4], m5 = m[5], m6 = m[6], m7 = m[7], m8 = m[8];
  const float b0 = bias[0] + 0.5f, b1 = bias[1] + 0.5f, b2 = bias[2] + 0.5f;  // + 0.5: round when truncated
  const unsigned rs = red_at == 0 ? 0u : 16u, bs = 16u - rs;
  std::uint32_t* __restrict o = reinterpret_cast<std::uint32_t*>(out);
  for (std::size_t j = 0; j < width; ++j) {
    const float y = Y[j], cb = Cb[j], cr = Cr[j];
    float rr = m0 * y + m3 * cb + m6 * cr + b0;
    float gg = m1 * y + m4 * cb + m7 * cr + b1;
    float bb = m2 * y + m5 * cb + m8 * cr + b2;
    rr = rr < 0.5f ? 0.5f : rr > 255.5f ? 255.5f : rr;  // clamp to [0, 1] before rounding, as the shader does
    gg = gg < 0.5f ? 0.5f : gg > 255.5f ? 255.5f : gg;
    bb = bb < 0.5f ? 0.5f : bb > 255.5f ? 255.5f : bb;
    const auto ri = std::uint32_t(std::int32_t(rr)), gi = std::uint32_t(std::int32_t(gg)),
               bi = std::uint32_t(std::int32_t(bb));
    o[j] = (ri << rs) | (gi << 8) | (bi << bs) | 0xff000000u;
  }
}

// The row kernels, compiled twice: for the build's baseline and with AVX2
// (chosen at run time; no FMA, so that both give the same bits). Plain
// function pointers rather than target_clones: an ifunc resolver runs before
// the sanitizers' runtimes are up and crashes them.
struct RowKernels {
  void (*lerp8)(const std::uint8_t*, const std::uint8_t*, float, std::size_t, float*);
  void (*lerp16)(const std::uint16_t*, const std::uint16_t*, float, std::size_t, float*);
  void (*horizontal)(const float*, const float*, const std::int32_t*, const float*, const std::int32_t*,
                     const float*, std::size_t, const float*, const float*, int, float*, float*, float*,
                     std::uint8_t*);
};

#define HANDOFF_ROW_KERNELS(name, attributes)                                                                    \
  attributes void name##_lerp8(const std::uint8_t* a, const std::uint8_t* b, float w, std::size_t n, float* o) { \
    lerp_samples(a, b, w, n, o);                                                                                \
  }                                                                                                             \
  attributes void name##_lerp16(const std::uint16_t* a, const std::uint16_t* b, float w, std::size_t n,         \
                                float* o) {                                                                     \
    lerp_samples(a, b, w, n, o);                                                                                \
  }                                                                                                             \
  attributes void name##_horizontal(const float* L, const float* C, const std::int32_t* lx0, const float* lxw,   \
                                    const std::int32_t* cx0, const float* cxw, std::size_t width, const float* m, \
                                    const float* bias, int red_at, float* Y, float* Cb, float* Cr,             \
                                    std::uint8_t* out) {                                                        \
    horizontal_and_matrix_body(L, C, lx0, lxw, cx0, cxw, width, m, bias, red_at, Y, Cb, Cr, out);               \
  }                                                                                                             \
  constexpr RowKernels name##_kernels{name##_lerp8, name##_lerp16, name##_horizontal};

HANDOFF_ROW_KERNELS(baseline, )
#if defined(__x86_64__) || defined(__i386__)
HANDOFF_ROW_KERNELS(avx2, __attribute__((target("avx2"))))
#endif
#undef HANDOFF_ROW_KERNELS

const RowKernels& row_kernels() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return avx2_kernels;
#endif
  return baseline_kernels;
}

}  // namespace

ChromaOffset chroma_offset(ChromaSiting s) {
  return ChromaOffset{s == ChromaSiting::Center ? 0.5 : 0.0, s == ChromaSiting::TopLeft ? 0.0 : 0.5};
}

HostPlanes host_planes(const Frame& f) {
  return HostPlanes{f.format,
                    f.width,
                    f.height,
                    static_cast<const std::uint8_t*>(f.planes[0].data),
                    f.planes[0].pitch,
                    static_cast<const std::uint8_t*>(f.planes[1].data),
                    f.planes[1].pitch,
                    static_cast<const std::uint8_t*>(f.planes[2].data),
                    f.planes[2].pitch};
}

PixelRect covered_pixels(std::uint32_t frame_w, std::uint32_t frame_h, const ViewTransform& v, int fb_w, int fb_h) {
  PixelRect r;
  if (frame_w == 0 || frame_h == 0 || fb_w <= 0 || fb_h <= 0 || !(v.scale > 0) || !std::isfinite(v.offset_x) ||
      !std::isfinite(v.offset_y))
    return r;
  const auto clip = [](double b, int limit) { return int(std::clamp(b, 0.0, double(limit))); };
  r.x0 = clip(first_centre_at(v.offset_x), fb_w);
  r.x1 = clip(first_centre_at(v.offset_x + double(frame_w) * v.scale), fb_w);
  r.y0 = clip(first_centre_at(v.offset_y), fb_h);
  r.y1 = clip(first_centre_at(v.offset_y + double(frame_h) * v.scale), fb_h);
  if (r.empty()) r = PixelRect{};
  return r;
}

ViewConverter::ViewConverter(unsigned threads) : pool_(threads) {}

namespace {

// The texels output pixels [start, start + count) of one axis sample, the way
// the shaders do: p = (b + 0.5 - offset) / scale in frame pixels; luma at
// p - 0.5 (texel centres), chroma sample i sits at luma position sub * i +
// siting (sub 2, or 1 down a 4:2:2 frame), so at (p - 0.5 - siting) / sub;
// flat pixels snap p to floor(p) + 0.5 first.
// Clamped to edge as GL_CLAMP_TO_EDGE does.
template <typename Axis>
void fill_axis(Axis& a, int start, int count, double offset, double scale, bool nearest, bool chroma,
               double siting, std::int32_t n, double sub = 2.0) {
  a.i0.resize(std::size_t(count));
  a.i1.resize(std::size_t(count));
  a.w.resize(std::size_t(count));
  for (int k = 0; k < count; ++k) {
    double p = (double(start + k) + 0.5 - offset) / scale;
    if (nearest) p = std::floor(p) + 0.5;
    const double c = chroma ? (p - 0.5 - siting) / sub : p - 0.5;
    const double fl = std::floor(c);
    const auto i = std::int32_t(std::clamp(fl, -1.0, double(n)));
    a.i0[std::size_t(k)] = std::clamp(i, 0, n - 1);
    a.i1[std::size_t(k)] = std::clamp(i + 1, 0, n - 1);
    // Both texels the same (clamped at an edge): weight 0, so that the row's
    // next sample is never needed (horizontal_and_matrix reads i0 + 1).
    a.w[std::size_t(k)] = a.i0[std::size_t(k)] == a.i1[std::size_t(k)] ? 0.0f : float(c - fl);
  }
}

}  // namespace

void ViewConverter::convert(const HostPlanes& planes, const Colorimetry& c, const ViewTransform& view, bool nearest,
                            const PixelRect& rect, ByteOrder order, std::uint8_t* out, std::ptrdiff_t pitch,
                            const GrayMapping& gray, const RowsDone& done) {
  const PixelFormat f = planes.format;
  const bool gray16 = f == PixelFormat::GRAY16, gray32f = f == PixelFormat::GRAY32F;
  const bool p010 = f == PixelFormat::P010, i420 = f == PixelFormat::I420;
  const bool packed = f == PixelFormat::YUYV || f == PixelFormat::UYVY;
  // RGB and grey: one plane, every channel (or the one value) on the luma grid.
  const bool rgb = is_rgb(f), grey = is_gray(f), one_plane = rgb || grey;
  if (!is_yuv(f) && !one_plane)
    throw UsageError("ViewConverter::convert: " + std::string(to_string(f)) + " is not a YUV, RGB or grey format");
  if (!planes.luma || (!packed && !one_plane && !planes.chroma) || (i420 && !planes.v) || planes.width == 0 ||
      planes.height == 0)
    throw UsageError("ViewConverter::convert: no frame planes");
  if (grey && !(std::isfinite(gray.lo) && std::isfinite(gray.scale) && gray.scale > 0 &&
                std::isfinite(gray.prescale) && gray.prescale >= 0 && std::isfinite(gray.offset)))
    throw UsageError("ViewConverter::convert: a grey mapping needs a finite lo, a positive scale and a finite "
                     "prescale >= 0 (float_mapping gives them for any range)");
  const std::size_t bps = p010 || gray16 ? 2 : gray32f ? 4 : 1;
  const std::size_t cw_ = chroma_width(planes.width);
  const bool short_rows = rgb    ? planes.luma_pitch < planes.width * rgb_stride(f)
                          : grey ? planes.luma_pitch < planes.width * bps
                          : packed ? planes.luma_pitch < cw_ * 4
                          : i420 ? planes.luma_pitch < planes.width || planes.chroma_pitch < cw_ || planes.v_pitch < cw_
                                 : planes.luma_pitch < planes.width * bps || planes.chroma_pitch < cw_ * 2 * bps;
  if (short_rows) throw UsageError("ViewConverter::convert: a plane pitch is below its packed row");
  if (p010 && ((reinterpret_cast<std::uintptr_t>(planes.luma) | reinterpret_cast<std::uintptr_t>(planes.chroma) |
                planes.luma_pitch | planes.chroma_pitch) & 1u))
    throw UsageError("ViewConverter::convert: P010 planes and pitches must be 2-byte aligned");
  if ((gray16 || gray32f) && ((reinterpret_cast<std::uintptr_t>(planes.luma) | planes.luma_pitch) & (bps - 1)))
    throw UsageError("ViewConverter::convert: gray16 / gray32f planes and pitches must be aligned to their samples");
  if ((reinterpret_cast<std::uintptr_t>(out) | std::uintptr_t(pitch < 0 ? -pitch : pitch)) & 3u)
    throw UsageError("ViewConverter::convert: the output and its pitch must be 4-byte aligned");
  if (rect.empty() || !out) return;
  // The rect must be inside what the frame covers (then every pixel maps into the frame).
  const PixelRect all = covered_pixels(planes.width, planes.height, view, rect.x1, rect.y1);
  if (rect.x0 < all.x0 || rect.y0 < all.y0 || rect.x1 > all.x1 || rect.y1 > all.y1)
    throw UsageError("ViewConverter::convert: the rect reaches outside the frame's pixels");

  const auto lw = std::int32_t(planes.width), lh = std::int32_t(planes.height);
  // 4:2:2: a chroma sample on every row (vertically the luma's own positions).
  const auto cw = std::int32_t(cw_), ch = packed ? lh : std::int32_t(chroma_height(planes.height));
  fill_axis(luma_x_, rect.x0, rect.width(), view.offset_x, view.scale, nearest, false, 0.0, lw);
  fill_axis(luma_y_, rect.y0, rect.height(), view.offset_y, view.scale, nearest, false, 0.0, lh);
  if (one_plane) {
    // RGB: every channel sampled on the luma grid (convert_rows resamples
    // the interleaved row as it is); grey: the value, as luma (its chroma
    // row is zeros). The chroma tables only size the scratch.
    chroma_x_ = luma_x_;
    chroma_y_ = luma_y_;
  } else {
    const ChromaOffset siting = chroma_offset(c.siting);
    fill_axis(chroma_x_, rect.x0, rect.width(), view.offset_x, view.scale, nearest, true, siting.x, cw);
    fill_axis(chroma_y_, rect.y0, rect.height(), view.offset_y, view.scale, nearest, true, packed ? 0.0 : siting.y,
              ch, packed ? 1.0 : 2.0);
  }
  // Column tables relative to the first source column a row uses.
  const std::int32_t lbase = luma_x_.i0.front(), cbase = chroma_x_.i0.front();
  lbase_ = lbase;
  cbase_ = cbase;
  for (auto& i : luma_x_.i0) i -= lbase;
  for (auto& i : luma_x_.i1) i -= lbase;
  for (auto& i : chroma_x_.i0) i -= cbase;
  for (auto& i : chroma_x_.i1) i -= cbase;
  rect_ = rect;

  // The shader's uniforms, rescaled: raw samples in, 0..255 out (RGB: the
  // identity; codes in, codes out, as the RGB shader shows them).
  float m[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, bias[3] = {0, 0, 0};
  if (grey) {
    // The grey shader's clamp((s / unit * prescale - lo) * scale + offset, 0, 1), in
    // 0..255, as a matrix on the raw sample: every channel k * s + bias,
    // chroma ignored (in double: each part is finite, their product may not be in float).
    const double unit = gray16 ? 65535.0 : 255.0;
    const auto k = float(std::min(double(gray.prescale) * gray.scale * 255.0 / unit, 1e30));
    for (float& x : m) x = 0.0f;
    m[0] = m[1] = m[2] = k;
    bias[0] = bias[1] = bias[2] =
        float(std::clamp((gray.offset - double(gray.lo) * gray.scale) * 255.0, -1e30, 1e30));
  } else if (!rgb) {
    const ShaderColor sc = fold_color(c, planes.format);
    const float in_scale = 255.0f / (p010 ? 65535.0f : 255.0f);
    for (int i = 0; i < 9; ++i) m[i] = sc.rgb_from_yuv[std::size_t(i)] * in_scale;
    for (int i = 0; i < 3; ++i) bias[i] = sc.bias[std::size_t(i)] * 255.0f;
  }

  // Bands of rows, a few per thread (rows cost the same, bands balance the cores).
  const int rows = rect.height();
  const unsigned bands = std::min<unsigned>(unsigned(rows), pool_.threads() * 2);
  if (scratch_.size() < bands) scratch_.resize(bands);
  // The source columns a row uses; the rows carry one more (any finite value: its weight is 0).
  const std::size_t lcols = std::size_t(luma_x_.i1.back() + 1), cpairs = std::size_t(chroma_x_.i1.back() + 1);
  HostPlanes p = planes;
  if (i420) {
    p.luma += std::size_t(lbase);
    p.chroma += std::size_t(cbase);
    p.v += std::size_t(cbase);
  } else if (grey) {
    p.luma += std::size_t(lbase) * bps;
  } else if (!packed && !rgb) {  // a packed row holds luma and chroma: vertical_pass offsets them
    p.luma += std::size_t(lbase) * bps;
    p.chroma += std::size_t(cbase) * 2 * bps;
  }
  for (unsigned b = 0; b < bands; ++b) {
    Scratch& s = scratch_[b];
    s.luma.resize(lcols + 1);
    s.chroma.resize(2 * cpairs + 2);
    s.a.resize(std::max(2 * lcols, 4 * cpairs));
    s.b.resize(cpairs);
    s.y.resize(std::size_t(rect.width()));
    s.cb.resize(std::size_t(rect.width()));
    s.cr.resize(std::size_t(rect.width()));
    if (grey) std::fill(s.chroma.begin(), s.chroma.end(), 0.0f);  // the matrix ignores it; kept finite
    if (rgb) {
      // Past the mixed texels: the one more a row carries, and the kernels' read past it (zeros; weight 0).
      const std::size_t n = rgb_stride(f);
      s.rgb.resize(rgb_row_samples(lcols, n));
      std::fill(s.rgb.begin() + std::ptrdiff_t(n * lcols), s.rgb.end(), std::int16_t(0));
    }
  }
  if (rgb) {
    rgb_taps_.resize(8 * std::size_t(rect.width()));
    fill_rgb_taps(luma_x_.w.data(), std::size_t(rect.width()), rgb_taps_.data());
  }
  pool_.run(bands, [&](unsigned band) {
    const int first = int(std::int64_t(rows) * band / bands), last = int(std::int64_t(rows) * (band + 1) / bands);
    // With `done`: a few rows at a time (4 rows of a 1280-pixel view are 20 KB), handed over while cached.
    const int step = done ? 4 : std::max(last - first, 1);
    for (int r = first; r < last; r += step) {
      const int end = std::min(r + step, last);
      if (gray32f) float_gray_rows(p, r, end, gray, out, pitch);
      else convert_rows(p, r, end, scratch_[band], m, bias, order, out, pitch);
      if (done) done(r, end);
    }
  });
}

// gray32f rows, as gray_frame_frag.glsl draws them: the four texels around
// each position (bilinear weights; flat pixels: the nearest) mixed in float,
// NaN / +-inf texels left out of the mix; a position whose nearest texel
// (the largest weight, the first of equal ones) is not finite, or with no
// finite texel, is drawn in the mapping's non-finite grey.
void ViewConverter::float_gray_rows(const HostPlanes& p, int first, int last, const GrayMapping& gray,
                                    std::uint8_t* out, std::ptrdiff_t pitch) const {
  const std::size_t width = std::size_t(rect_.width());
  const auto byte = [](float v) { return std::uint32_t(std::int32_t(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f)); };
  const std::uint32_t hole = byte(gray.non_finite);
  for (int r = first; r < last; ++r) {
    const float* r0 = row_of<float>(p.luma, p.luma_pitch, luma_y_.i0[std::size_t(r)]);
    const float* r1 = row_of<float>(p.luma, p.luma_pitch, luma_y_.i1[std::size_t(r)]);
    const float fy = luma_y_.w[std::size_t(r)];
    auto* o = reinterpret_cast<std::uint32_t*>(out + std::ptrdiff_t(r) * pitch);
    for (std::size_t j = 0; j < width; ++j) {
      const std::int32_t x0 = luma_x_.i0[j], x1 = luma_x_.i1[j];
      const float fx = luma_x_.w[j];
      const float s[4] = {r0[x0], r0[x1], r1[x0], r1[x1]};
      const float w[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};
      float sum = 0, weight = 0, nearest_w = -1;
      bool nearest_finite = true;
      for (int k = 0; k < 4; ++k) {
        const bool ok = std::isfinite(s[k]);
        if (w[k] > nearest_w) {
          nearest_w = w[k];
          nearest_finite = ok;
        }
        if (ok && w[k] > 0) {
          sum += w[k] * s[k];
          weight += w[k];
        }
      }
      const std::uint32_t v = !nearest_finite || weight <= 0
                                  ? hole
                                  : byte((sum / weight * gray.prescale - gray.lo) * gray.scale + gray.offset);
      o[j] = v | (v << 8) | (v << 16) | 0xff000000u;
    }
  }
}

// Vertical pass of output row y of a YUV frame: the two source rows of each
// plane mixed into s.luma and s.chroma (interleaved Cb Cr pairs, as nv12
// stores them), whatever the format's layout (RGB: convert_rows).
void ViewConverter::vertical_pass(const HostPlanes& p, std::size_t y, std::size_t lcols, std::size_t csamples,
                                  Scratch& s) const {
  const RowKernels& k = row_kernels();
  const auto rows8 = [](const std::uint8_t* plane, std::size_t pitch, const Axis& a, std::size_t at) {
    return std::pair{row_of<std::uint8_t>(plane, pitch, a.i0[at]), row_of<std::uint8_t>(plane, pitch, a.i1[at])};
  };
  const float ly = luma_y_.w[y], cy = chroma_y_.w[y];
  switch (p.format) {
    case PixelFormat::GRAY8:  // the value as luma; the chroma row stays zeros (convert())
      k.lerp8(row_of<std::uint8_t>(p.luma, p.luma_pitch, luma_y_.i0[y]),
              row_of<std::uint8_t>(p.luma, p.luma_pitch, luma_y_.i1[y]), ly, lcols, s.luma.data());
      return;
    case PixelFormat::GRAY16:
      k.lerp16(row_of<std::uint16_t>(p.luma, p.luma_pitch, luma_y_.i0[y]),
               row_of<std::uint16_t>(p.luma, p.luma_pitch, luma_y_.i1[y]), ly, lcols, s.luma.data());
      return;
    case PixelFormat::P010:
      k.lerp16(row_of<std::uint16_t>(p.luma, p.luma_pitch, luma_y_.i0[y]),
               row_of<std::uint16_t>(p.luma, p.luma_pitch, luma_y_.i1[y]), ly, lcols, s.luma.data());
      k.lerp16(row_of<std::uint16_t>(p.chroma, p.chroma_pitch, chroma_y_.i0[y]),
               row_of<std::uint16_t>(p.chroma, p.chroma_pitch, chroma_y_.i1[y]), cy, csamples, s.chroma.data());
      return;
    case PixelFormat::I420: {  // U and V rows mixed apart, then interleaved
      const auto [l0, l1] = rows8(p.luma, p.luma_pitch, luma_y_, y);
      const auto [u0, u1] = rows8(p.chroma, p.chroma_pitch, chroma_y_, y);
      const auto [v0, v1] = rows8(p.v, p.v_pitch, chroma_y_, y);
      const std::size_t pairs = csamples / 2;
      k.lerp8(l0, l1, ly, lcols, s.luma.data());
      k.lerp8(u0, u1, cy, pairs, s.a.data());
      k.lerp8(v0, v1, cy, pairs, s.b.data());
      for (std::size_t i = 0; i < pairs; ++i) {
        s.chroma[2 * i] = s.a[i];
        s.chroma[2 * i + 1] = s.b[i];
      }
      return;
    }
    case PixelFormat::YUYV:
    case PixelFormat::UYVY: {  // one packed row mixed twice: its luma columns, then its chroma pairs
      const std::size_t y_at = p.format == PixelFormat::YUYV ? 0 : 1;  // Y0 U Y1 V / U Y0 V Y1
      const auto [r0, r1] = rows8(p.luma, p.luma_pitch, luma_y_, y);   // 4:2:2 chroma rows are luma rows
      k.lerp8(r0 + 2 * std::size_t(lbase_), r1 + 2 * std::size_t(lbase_), ly, 2 * lcols, s.a.data());
      for (std::size_t i = 0; i < lcols; ++i) s.luma[i] = s.a[2 * i + y_at];
      k.lerp8(r0 + 4 * std::size_t(cbase_), r1 + 4 * std::size_t(cbase_), ly, 2 * csamples, s.a.data());
      for (std::size_t i = 0; i < csamples / 2; ++i) {
        s.chroma[2 * i] = s.a[4 * i + 1 - y_at];
        s.chroma[2 * i + 1] = s.a[4 * i + 3 - y_at];
      }
      return;
    }
    default: {  // nv12
      const auto [l0, l1] = rows8(p.luma, p.luma_pitch, luma_y_, y);
      const auto [c0, c1] = rows8(p.chroma, p.chroma_pitch, chroma_y_, y);
      k.lerp8(l0, l1, ly, lcols, s.luma.data());
      k.lerp8(c0, c1, cy, csamples, s.chroma.data());
    }
  }
}

void ViewConverter::convert_rows(const HostPlanes& p, int first, int last, Scratch& s, const float* m,
                                 const float* bias, ByteOrder order, std::uint8_t* out, std::ptrdiff_t pitch) const {
  const std::size_t width = std::size_t(rect_.width());
  // The source columns a row uses (the rows carry one more: see convert()).
  const std::size_t lcols = std::size_t(luma_x_.i1.back() + 1), csamples = 2 * std::size_t(chroma_x_.i1.back() + 1);
  const int red_at = order == ByteOrder::Rgba ? 0 : 2;
  const RowKernels& k = row_kernels();
  if (is_rgb(p.format)) {
    // The row's channels mixed vertically in 16-bit fixed point, then resampled and packed in one pass.
    const std::size_t n = rgb_stride(p.format);
    const bool bgr = p.format == PixelFormat::BGR8 || p.format == PixelFormat::BGRA8;
    const RgbTexel texel{std::uint8_t(n), bgr != (order == ByteOrder::Bgra)};
    const RgbRowKernels& rk = rgb_row_kernels();
    for (int r = first; r < last; ++r) {
      const std::uint8_t* r0 = row_of<std::uint8_t>(p.luma, p.luma_pitch, luma_y_.i0[std::size_t(r)]);
      const std::uint8_t* r1 = row_of<std::uint8_t>(p.luma, p.luma_pitch, luma_y_.i1[std::size_t(r)]);
      rk.vertical(r0 + n * std::size_t(lbase_), r1 + n * std::size_t(lbase_),
                  rgb_row_weight(luma_y_.w[std::size_t(r)]), n * lcols, s.rgb.data());
      rk.horizontal(s.rgb.data(), luma_x_.i0.data(), rgb_taps_.data(), width, texel,
                    out + std::ptrdiff_t(r) * pitch);
    }
    return;
  }
  for (int r = first; r < last; ++r) {
    vertical_pass(p, std::size_t(r), lcols, csamples, s);
    k.horizontal(s.luma.data(), s.chroma.data(), luma_x_.i0.data(), luma_x_.w.data(), chroma_x_.i0.data(),
                 chroma_x_.w.data(), width, m, bias, red_at, s.y.data(), s.cb.data(), s.cr.data(),
                 out + std::ptrdiff_t(r) * pitch);
  }
}

}  // namespace handoff::view
