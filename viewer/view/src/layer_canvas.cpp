// LayerRenderer's CPU path (see layer_renderer.hpp): the visible layers
// blended into the frame's pixels where FrameRenderer's CPU path converts
// them, at the window's size, the way layer_ids_frag.glsl and
// layer_scalar_frag.glsl draw them. On llvmpipe the shaders cost a texture
// upload of the full-size layers per frame and a filtered fetch per window
// pixel; here each window pixel costs a table look-up or a bilinear tap, and
// only when a new frame or a layer control changes (the converted image is
// kept between redraws).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <variant>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "layer_renderer.hpp"
#include "value_range.hpp"  // float_mapping

namespace handoff::view {

namespace {

using media::LayerArray;
using media::SampleType;

// First pixel (of a row or column) whose centre b + 0.5 is at or past `edge`
// (covered_pixels' rule: the pixels a triangle edge at `edge` covers).
int first_centre_at(double edge) { return int(std::ceil(edge - 0.5)); }

// The framebuffer pixels a layer's target covers, unclipped.
PixelRect target_pixels(const media::RectF& t, const ViewTransform& v) {
  PixelRect r;
  r.x0 = first_centre_at(v.to_fb_x(t.x));
  r.x1 = first_centre_at(v.to_fb_x(double(t.x) + t.w));
  r.y0 = first_centre_at(v.to_fb_y(t.y));
  r.y1 = first_centre_at(v.to_fb_y(double(t.y) + t.h));
  return r;
}

PixelRect intersect(const PixelRect& a, const PixelRect& b) {
  PixelRect r{std::max(a.x0, b.x0), std::max(a.y0, b.y0), std::min(a.x1, b.x1), std::min(a.y1, b.y1)};
  return r.empty() ? PixelRect{} : r;
}

// The layer coordinate (0..1 over the target) of pixel b's centre on one axis,
// as the vertex shader's noperspective v_uv gives it there.
float uv_at(int b, double left, double extent) { return float((double(b) + 0.5 - left) / extent); }

// Nearest texels (layer_ids_frag's id_at, nearest_texel's rule) of pixels
// [first, first + count), into t.
void nearest_texels(int first, int count, double left, double extent, std::uint32_t size,
                    std::vector<std::int32_t>& t) {
  t.resize(std::size_t(std::max(count, 0)));
  const NearestAxis axis = nearest_axis(left, extent, size);
  for (int k = 0; k < count; ++k) t[std::size_t(k)] = nearest_texel(first + k, axis, size);
}

// Bilinear taps (GL_LINEAR, clamp to edge) of pixels [first, first + count).
struct Taps {
  std::vector<std::int32_t> i0, i1;
  std::vector<float> w;
};
void linear_taps(int first, int count, double left, double extent, std::uint32_t size, Taps& t) {
  const std::size_t n = std::size_t(std::max(count, 0));
  t.i0.resize(n);
  t.i1.resize(n);
  t.w.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const float s = uv_at(first + int(k), left, extent) * float(size) - 0.5f;
    const float f = std::floor(s);
    const auto i = std::int32_t(f);
    t.i0[k] = std::clamp<std::int32_t>(i, 0, std::int32_t(size) - 1);
    t.i1[k] = std::clamp<std::int32_t>(i + 1, 0, std::int32_t(size) - 1);
    t.w[k] = s - f;
  }
}

// A colour in the output's byte order, packed as its 4 bytes are in memory;
// the fourth byte 255: drawn at the layer's opacity, 0: not drawn.
std::uint32_t pack(media::Color8 c, ByteOrder order, std::uint8_t flag) {
  const std::uint8_t b[4] = {order == ByteOrder::Rgba ? c.r : c.b, c.g, order == ByteOrder::Rgba ? c.b : c.r, flag};
  std::uint32_t v;
  std::memcpy(&v, b, 4);
  return v;
}

// One row of a layer's colours (pack()) blended into the framebuffer row
// `px`: c * a + d * (1 - a) per channel, the GL blend (SRC_ALPHA,
// ONE_MINUS_SRC_ALPHA) of an 8-bit framebuffer, with `a` in 1/256 steps
// (within 1 code of the rounded float blend; exact at 0, 1/2, 1). Flag 1 (an
// outline) is drawn opaque; the framebuffer's alpha byte stays. Two channels
// at a time in one 32-bit word (bytes 0 and 2, then 1 and 3): each lane's
// c * w + d * (256 - w) + 128 is at most 255 * 256 + 128, so it stays in its
// 16 bits, and the sums are those of a byte at a time. One loop of word
// maths, which the compiler vectorises.
// `a`: the opacity in 1/256 steps (blend_weight).
std::uint32_t blend_weight(float opacity) { return std::uint32_t(std::lround(double(opacity) * 256.0)); }
[[gnu::always_inline]] inline void blend_row_from(const std::uint32_t* colours, std::size_t from, std::size_t n,
                                                  std::uint32_t a, std::uint8_t* px) {
  std::uint32_t* __restrict d = reinterpret_cast<std::uint32_t*>(px);
  const std::uint32_t* __restrict c = colours;
  for (std::size_t i = from; i < n; ++i) {
    const std::uint32_t ci = c[i], di = d[i], flag = ci >> 24;
    const std::uint32_t w = flag == 255 ? a : flag == 1 ? 256u : 0u, v = 256u - w;
    const std::uint32_t even = (((ci & 0x00ff00ffu) * w + (di & 0x00ff00ffu) * v + 0x00800080u) >> 8) & 0x00ff00ffu;
    const std::uint32_t green = (((ci >> 8) & 0xffu) * w + ((di >> 8) & 0xffu) * v + 0x80u) & 0xff00u;
    d[i] = even | green | (di & 0xff000000u);
  }
}
void blend_row(const std::uint32_t* colours, std::size_t n, std::uint32_t a, std::uint8_t* px) {
  blend_row_from(colours, 0, n, a, px);
}

#if defined(__x86_64__) || defined(__i386__)
// The same sums 8 pixels at a time in 16-bit lanes (each lane's sum fits, as
// above): w and 256 - w in both halves of a pixel's word for bytes 0 and 2;
// in the low half only for byte 1 (green), whose sum is left in bits 8..15.
__attribute__((target("avx2"))) void blend_row_avx2(const std::uint32_t* colours, std::size_t n, std::uint32_t a,
                                                    std::uint8_t* px) {
  auto* d = reinterpret_cast<std::uint32_t*>(px);
  const __m256i ff = _mm256_set1_epi32(255), one = _mm256_set1_epi32(1), opaque = _mm256_set1_epi32(256),
                wa = _mm256_set1_epi32(int(a)), even_mask = _mm256_set1_epi32(0x00ff00ff),
                byte = _mm256_set1_epi32(0xff), round2 = _mm256_set1_epi32(0x00800080),
                round1 = _mm256_set1_epi32(0x80), green_mask = _mm256_set1_epi32(0xff00),
                alpha = _mm256_set1_epi32(int(0xff000000u));
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i ci = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(colours + i));
    const __m256i di = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d + i));
    const __m256i flag = _mm256_srli_epi32(ci, 24);
    const __m256i w = _mm256_or_si256(_mm256_and_si256(_mm256_cmpeq_epi32(flag, ff), wa),
                                      _mm256_and_si256(_mm256_cmpeq_epi32(flag, one), opaque));
    const __m256i v = _mm256_sub_epi32(opaque, w);
    const __m256i w2 = _mm256_or_si256(w, _mm256_slli_epi32(w, 16)), v2 = _mm256_or_si256(v, _mm256_slli_epi32(v, 16));
    const __m256i even = _mm256_srli_epi16(
        _mm256_add_epi16(_mm256_add_epi16(_mm256_mullo_epi16(_mm256_and_si256(ci, even_mask), w2),
                                          _mm256_mullo_epi16(_mm256_and_si256(di, even_mask), v2)),
                         round2),
        8);
    const __m256i green = _mm256_and_si256(
        _mm256_add_epi16(_mm256_add_epi16(_mm256_mullo_epi16(_mm256_and_si256(_mm256_srli_epi32(ci, 8), byte), w),
                                          _mm256_mullo_epi16(_mm256_and_si256(_mm256_srli_epi32(di, 8), byte), v)),
                         round1),
        green_mask);
    const __m256i out = _mm256_or_si256(_mm256_or_si256(even, green), _mm256_and_si256(di, alpha));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), out);
  }
  blend_row_from(colours, i, n, a, px);
}
#endif

// Pixels [from, n) of a scalar row: two taps of the vertically filtered
// row each, through the colour map. The shader's lerps, a * (1 - w) + b * w
// (no overflow between huge values of opposite signs): a non-finite tap
// makes v NaN or inf (even at weight 0, as 0 * inf is NaN): a hole, not
// drawn. Then the range as float_mapping gives it.
struct ScalarPixels {
  const float* column;  // the filtered source columns from c0
  const std::int32_t *i0, *i1;
  const float* w;
  std::size_t n;
  std::int32_t c0;
  float prescale, lo, scale, offset;
  const std::uint32_t* colours;  // 257: [256] a hole
  std::uint32_t* row;
};
[[gnu::always_inline]] inline void scalar_pixels_from(const ScalarPixels& p, std::size_t from) {
  for (std::size_t k = from; k < p.n; ++k) {
    const float v0 = p.column[std::size_t(p.i0[k] - p.c0)], v1 = p.column[std::size_t(p.i1[k] - p.c0)];
    const float v = v0 * (1.0f - p.w[k]) + v1 * p.w[k];
    const float x = std::clamp((v * p.prescale - p.lo) * p.scale + p.offset, 0.0f, 1.0f);
    const float t = std::isfinite(v) ? x * 255.0f + 0.5f : 256.0f;
    p.row[k] = p.colours[std::size_t(t)];
  }
}
void scalar_pixels(const ScalarPixels& p) { scalar_pixels_from(p, 0); }

#if defined(__x86_64__) || defined(__i386__)
// The same operations 8 pixels at a time, with AVX2 gathers (no FMA, so the
// same bits): v - v is 0 exactly for finite v; max / min clamp as
// std::clamp does for every finite or infinite value.
__attribute__((target("avx2"))) void scalar_pixels_avx2(const ScalarPixels& p) {
  const __m256i c0 = _mm256_set1_epi32(p.c0);
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f), lo = _mm256_set1_ps(p.lo),
               scale = _mm256_set1_ps(p.scale), prescale = _mm256_set1_ps(p.prescale),
               offset = _mm256_set1_ps(p.offset), c255 = _mm256_set1_ps(255.0f), half = _mm256_set1_ps(0.5f),
               hole = _mm256_set1_ps(256.0f);
  const auto* colours = reinterpret_cast<const int*>(p.colours);
  std::size_t k = 0;
  for (; k + 8 <= p.n; k += 8) {
    const __m256i a = _mm256_sub_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.i0 + k)), c0);
    const __m256i b = _mm256_sub_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.i1 + k)), c0);
    const __m256 v0 = _mm256_i32gather_ps(p.column, a, 4), v1 = _mm256_i32gather_ps(p.column, b, 4);
    const __m256 w = _mm256_loadu_ps(p.w + k);
    const __m256 v = _mm256_add_ps(_mm256_mul_ps(v0, _mm256_sub_ps(one, w)), _mm256_mul_ps(v1, w));
    const __m256 finite = _mm256_cmp_ps(_mm256_sub_ps(v, v), zero, _CMP_EQ_OQ);
    const __m256 x = _mm256_min_ps(
        _mm256_max_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(_mm256_mul_ps(v, prescale), lo), scale), offset),
                      zero),
        one);
    const __m256 t = _mm256_blendv_ps(hole, _mm256_add_ps(_mm256_mul_ps(x, c255), half), finite);
    const __m256i c = _mm256_i32gather_epi32(colours, _mm256_cvttps_epi32(t), 4);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p.row + k), c);
  }
  scalar_pixels_from(p, k);
}
#endif

// A scalar map's vertical pass: n columns of two source rows mixed,
// out[x] = r0[x] * (1 - wy) + r1[x] * wy (the shader's lerp, no FMA).
void mix_rows(const float* r0, const float* r1, float wy, std::size_t n, float* out) {
  const float wx = 1.0f - wy;
  for (std::size_t x = 0; x < n; ++x) out[x] = r0[x] * wx + r1[x] * wy;
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) void mix_rows_avx2(const float* r0, const float* r1, float wy, std::size_t n,
                                                   float* out) {
  const float wx = 1.0f - wy;
  const __m256 w = _mm256_set1_ps(wy), u = _mm256_set1_ps(wx);
  std::size_t x = 0;
  for (; x + 8 <= n; x += 8) {
    const __m256 a = _mm256_loadu_ps(r0 + x), b = _mm256_loadu_ps(r1 + x);
    _mm256_storeu_ps(out + x, _mm256_add_ps(_mm256_mul_ps(a, u), _mm256_mul_ps(b, w)));
  }
  for (; x < n; ++x) out[x] = r0[x] * wx + r1[x] * wy;
}

#endif

// Plain function pointers rather than target_clones (an ifunc resolver runs
// before the sanitizers' runtimes are up), as view_convert.cpp does.
struct CanvasKernels {
  void (*scalar)(const ScalarPixels&) = scalar_pixels;
  void (*mix)(const float*, const float*, float, std::size_t, float*) = mix_rows;
  void (*blend)(const std::uint32_t*, std::size_t, std::uint32_t, std::uint8_t*) = blend_row;
};
const CanvasKernels& kernels() {
  static const CanvasKernels k = [] {
    CanvasKernels c;
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_cpu_supports("avx2")) {
      c.scalar = scalar_pixels_avx2;
      c.mix = mix_rows_avx2;
      c.blend = blend_row_avx2;
    }
#endif
    return c;
  }();
  return k;
}

// The id at texel (x, y) of a copied class map, by its value (as ClassMap keys it).
std::int64_t id_at(const LayerArray& a, std::int32_t x, std::int32_t y) {
  const auto* row = static_cast<const std::uint8_t*>(a.data) + std::size_t(y) * a.row_bytes();
  switch (a.type) {
    case SampleType::U8: return row[x];
    case SampleType::I8: return std::int8_t(row[x]);
    case SampleType::U16: { std::uint16_t v; std::memcpy(&v, row + 2 * x, 2); return v; }
    case SampleType::I16: { std::int16_t v; std::memcpy(&v, row + 2 * x, 2); return v; }
    case SampleType::U32: { std::uint32_t v; std::memcpy(&v, row + 4 * x, 4); return v; }
    case SampleType::I32: { std::int32_t v; std::memcpy(&v, row + 4 * x, 4); return v; }
    case SampleType::U64:
    case SampleType::I64: { std::int64_t v; std::memcpy(&v, row + 8 * x, 8); return v; }
    default: return 0;
  }
}

// What one layer needs while it is drawn: where, and how each pixel is coloured.
struct Job {
  PixelRect pixels;            // framebuffer pixels, inside the frame's rect
  double left = 0, top = 0;    // the target's framebuffer corner
  double extent_x = 1, extent_y = 1;
  bool operator==(const Job&) const = default;
};

// Where a layer's taps were made for: kept while the layer's size and place stay.
struct TapsFor {
  Job job;
  std::uint32_t width = 0, height = 0;
  bool operator==(const TapsFor&) const = default;
};

// A scalar map's colours of one framebuffer row (pack()): its bilinear taps,
// the colour map and the range.
class ScalarRows {
 public:
  void prepare(const media::ScalarMap& s, const std::array<double, 2>& range, const Job& job, ByteOrder order) {
    a_ = &s.values;
    const TapsFor f{job, a_->width, a_->height};
    if (!(f == taps_for_)) {
      linear_taps(job.pixels.x0, job.pixels.width(), job.left, job.extent_x, a_->width, tx_);
      linear_taps(job.pixels.y0, job.pixels.height(), job.top, job.extent_y, a_->height, ty_);
      taps_for_ = f;
    }
    y0_ = job.pixels.y0;
    const auto& table = media::colormap_table(s.colormap);
    for (std::size_t k = 0; k < 256; ++k) colours_[k] = pack(table[k], order, 255);
    mapping_ = float_mapping(range[0], range[1]);
    // The source columns the row's taps read: filtered down first, once per
    // column (a contiguous loop), then across per pixel (two taps).
    const std::size_t n = tx_.w.size();
    c0_ = n ? tx_.i0.front() : 0;
    c1_ = n ? tx_.i1.back() + 1 : 0;
  }
  std::size_t columns() const { return std::size_t(std::max(c1_ - c0_, 0)); }
  // Row y's colours into row[0, width); `column`: columns() floats of scratch.
  void paint(int y, float* __restrict column, std::uint32_t* __restrict row) const {
    const std::size_t r = std::size_t(y - y0_), n = tx_.w.size();
    const auto* r0 = static_cast<const float*>(a_->data) + std::size_t(ty_.i0[r]) * a_->width + c0_;
    const auto* r1 = static_cast<const float*>(a_->data) + std::size_t(ty_.i1[r]) * a_->width + c0_;
    const CanvasKernels& k = kernels();
    k.mix(r0, r1, ty_.w[r], columns(), column);
    k.scalar(ScalarPixels{column, tx_.i0.data(), tx_.i1.data(), tx_.w.data(), n, c0_, mapping_.prescale, mapping_.lo,
                          mapping_.scale, mapping_.offset, colours_.data(), row});
  }

 private:
  const LayerArray* a_ = nullptr;
  TapsFor taps_for_;
  Taps tx_, ty_;
  int y0_ = 0;
  std::array<std::uint32_t, 257> colours_{};  // [256]: a hole, not drawn
  FloatMapping mapping_;
  std::int32_t c0_ = 0, c1_ = 0;
};

// Class maps and instance masks: nearest texels through the palette; ids
// outside it take the default colours (class maps) or none (masks). Masks
// get an opaque outline where a neighbour one display pixel away differs.
class IdRows {
 public:
  void prepare(const media::Layer& l, std::int64_t palette_first, const std::vector<media::Color8>& entries,
               const std::uint16_t* instances, const Job& job, ByteOrder order) {
    masks_ = std::holds_alternative<media::InstanceMasks>(l);
    a_ = masks_ ? &std::get<media::InstanceMasks>(l).masks : &std::get<media::ClassMap>(l).ids;
    const TapsFor f{job, a_->width, a_->height};
    if (!(f == taps_for_)) {
      // One pixel more each side: the outline looks at the neighbours.
      nearest_texels(job.pixels.x0 - 1, job.pixels.width() + 2, job.left, job.extent_x, a_->width, tx_);
      nearest_texels(job.pixels.y0 - 1, job.pixels.height() + 2, job.top, job.extent_y, a_->height, ty_);
      taps_for_ = f;
    }
    y0_ = job.pixels.y0;
    n_ = std::size_t(job.pixels.width());
    palette_first_ = palette_first;
    instances_ = instances;
    order_ = order;
    palette_.resize(entries.size());
    for (std::size_t k = 0; k < palette_.size(); ++k) palette_[k] = pack(entries[k], order, entries[k].a ? 255 : 0);
    // 8-bit ids and a palette of 0..255 (a class map's, unless its colours lie far off): a look-up.
    direct_ = a_->type == SampleType::U8 && !masks_ && palette_first_ == 0 && palette_.size() >= 256;
  }
  void paint(int y, std::uint32_t* __restrict row) const {
    const std::size_t r = std::size_t(y - y0_) + 1;
    const std::int32_t* tx = tx_.data();
    if (direct_) {
      const auto* ids = static_cast<const std::uint8_t*>(a_->data) + std::size_t(ty_[r]) * a_->row_bytes();
      const std::uint32_t* palette = palette_.data();
      for (std::size_t k = 0; k < n_; ++k) row[k] = palette[ids[tx[k + 1]]];
    } else if (!masks_) {
      for (std::size_t k = 0; k < n_; ++k) row[k] = colour_of(id_at(*a_, tx[k + 1], ty_[r]));
    } else {
      const auto id_of = [&](std::size_t x, std::size_t yy) {
        return instances_[std::size_t(ty_[yy]) * a_->width + std::size_t(tx[x])];
      };
      for (std::size_t k = 0; k < n_; ++k) {
        const std::uint16_t id = id_of(k + 1, r);
        row[k] = colour_of(id);
        if (id != 0 && (id_of(k, r) != id || id_of(k + 2, r) != id || id_of(k + 1, r - 1) != id ||
                        id_of(k + 1, r + 1) != id))
          row[k] = (row[k] & 0x00ffffffu) | (1u << 24);  // the outline, opaque (pack's flag byte)
      }
    }
  }

 private:
  std::uint32_t colour_of(std::int64_t id) const {
    const std::uint64_t e = std::uint64_t(id) - std::uint64_t(palette_first_);  // any two ids, no overflow
    if (e < palette_.size()) return palette_[std::size_t(e)];
    return masks_ ? 0u : pack(media::default_class_color(id), order_, 255);
  }

  bool masks_ = false;
  const LayerArray* a_ = nullptr;
  TapsFor taps_for_;
  std::vector<std::int32_t> tx_, ty_;
  int y0_ = 0;
  std::size_t n_ = 0;
  std::int64_t palette_first_ = 0;
  const std::uint16_t* instances_ = nullptr;
  ByteOrder order_ = ByteOrder::Rgba;
  std::vector<std::uint32_t> palette_;
  bool direct_ = false;
};

// One layer of a composite: where it goes, its opacity, its row painter
// (kept per layer index from frame to frame, with their taps).
struct CanvasLayer {
  bool drawn = false, scalar = false;
  Job job;
  std::uint32_t weight = 0;  // blend_weight(opacity)
  ScalarRows scalar_rows;
  IdRows id_rows;
};

}  // namespace

struct LayerRenderer::Canvas {
  std::vector<CanvasLayer> layers;  // per layer index
  PixelRect rect;
  std::size_t columns = 0;  // scratch floats a row needs (ScalarRows::columns)
};

void LayerRenderer::CanvasDeleter::operator()(Canvas* c) const { delete c; }

bool LayerRenderer::fits(const ViewTransform& view) const {
  if (!overlays_) return true;
  const PixelRect frame = target_pixels(media::RectF{0, 0, float(frame_w_), float(frame_h_)}, view);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    // Only host arrays are read here: layers in device memory take the shaders.
    const media::Layer& l = layer(i);
    const auto& a = std::holds_alternative<media::ClassMap>(l)    ? std::get<media::ClassMap>(l).ids
                    : std::holds_alternative<media::ScalarMap>(l) ? std::get<media::ScalarMap>(l).values
                                                                  : std::get<media::InstanceMasks>(l).masks;
    if (a.memory != MemoryKind::Host) return false;
    const LayerControl& c = controls_[i];
    const float opacity = c.opacity.value_or(std::visit([](const auto& x) { return x.opacity; }, l));
    if (!c.visible || opacity <= 0.0f) continue;
    const PixelRect t = target_pixels(layers_[i].target, view);
    if (t.empty()) continue;
    if (t.x0 < frame.x0 || t.y0 < frame.y0 || t.x1 > frame.x1 || t.y1 > frame.y1) return false;
  }
  return true;
}

std::uint64_t LayerRenderer::cpu_key() const {
  // FNV-1a over the generation and each control that changes the pixels.
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](std::uint64_t v) {
    for (int k = 0; k < 8; ++k) h = (h ^ ((v >> (8 * k)) & 0xff)) * 1099511628211ull;
  };
  mix(generation_);
  mix(reinterpret_cast<std::uintptr_t>(overlays_));
  for (const LayerControl& c : controls_) {
    std::uint32_t bits = 0;
    const float o = c.opacity.value_or(-1.0f);
    std::memcpy(&bits, &o, 4);
    mix((std::uint64_t(c.visible) << 40) | (std::uint64_t(c.opacity.has_value()) << 32) | bits);
  }
  return h;
}

bool LayerRenderer::prepare_composite(const ViewTransform& view, const PixelRect& rect, ByteOrder order) {
  if (!overlays_ || rect.empty()) return false;
  if (!canvas_) canvas_.reset(new Canvas);
  Canvas& c = *canvas_;
  c.layers.resize(layers_.size());
  c.rect = rect;
  c.columns = 0;
  bool any = false;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    CanvasLayer& cl = c.layers[i];
    cl.drawn = false;
    const LayerControl& control = controls_[i];
    const media::Layer& l = overlays_->layers[i];
    const float opacity = control.opacity.value_or(std::visit([](const auto& x) { return x.opacity; }, l));
    if (!control.visible || opacity <= 0.0f) continue;
    const Gpu& g = layers_[i];
    Job job;
    job.pixels = intersect(target_pixels(g.target, view), rect);
    if (job.pixels.empty()) continue;
    job.left = view.to_fb_x(g.target.x);
    job.top = view.to_fb_y(g.target.y);
    job.extent_x = double(g.target.w) * view.scale;
    job.extent_y = double(g.target.h) * view.scale;
    cl.drawn = any = true;
    cl.job = job;
    cl.weight = blend_weight(opacity);
    cl.scalar = std::holds_alternative<media::ScalarMap>(l);
    if (cl.scalar) {
      cl.scalar_rows.prepare(std::get<media::ScalarMap>(l), g.range, job, order);
      c.columns = std::max(c.columns, cl.scalar_rows.columns());
    } else {
      cl.id_rows.prepare(l, g.palette_lo, g.entries, g.instances.data(), job, order);
    }
  }
  return any;
}

void LayerRenderer::composite_rows(int first, int last, std::uint8_t* out, std::ptrdiff_t pitch) const {
  if (!canvas_ || first >= last) return;
  const Canvas& c = *canvas_;
  // A layer row and a scalar map's filtered columns, per thread (kept: the
  // converter's and the pool's threads live as long as their owners).
  thread_local std::vector<std::uint32_t> row;
  thread_local std::vector<float> column;
  if (row.size() < std::size_t(c.rect.width())) row.resize(std::size_t(c.rect.width()));
  if (column.size() < c.columns) column.resize(c.columns);
  const CanvasKernels& k = kernels();
  // Every layer's rows drawn in one pass, layer after layer on each row
  // while it is in the cache (layers in the order given: later ones on top).
  for (int r = first; r < last; ++r) {
    const int y = c.rect.y0 + r;
    std::uint8_t* line = out + std::ptrdiff_t(r) * pitch;
    for (const CanvasLayer& l : c.layers) {
      if (!l.drawn || y < l.job.pixels.y0 || y >= l.job.pixels.y1) continue;
      if (l.scalar) l.scalar_rows.paint(y, column.data(), row.data());
      else l.id_rows.paint(y, row.data());
      k.blend(row.data(), std::size_t(l.job.pixels.width()), l.weight,
              line + std::ptrdiff_t(l.job.pixels.x0 - c.rect.x0) * 4);
    }
  }
}

void LayerRenderer::composite(const ViewTransform& view, const PixelRect& rect, ByteOrder order, std::uint8_t* out,
                              std::ptrdiff_t pitch) {
  if (!prepare_composite(view, rect, order)) return;
  if (!pool_) pool_ = std::make_unique<media::BandPool>(0);
  const int rows = rect.height();
  const unsigned bands = std::min<unsigned>(unsigned(rows), pool_->threads() * 4);
  pool_->run(bands, [&](unsigned band) {
    composite_rows(int(std::int64_t(rows) * band / bands), int(std::int64_t(rows) * (band + 1) / bands), out, pitch);
  });
}

}  // namespace handoff::view
