#include "layer_renderer.hpp"

#include <handoff/gl_check.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "frame_renderer.hpp"  // build_program
#include "value_range.hpp"     // float_mapping

namespace handoff::view {

namespace {

using handoff::UniqueGlTexture;
using media::LayerArray;
using media::SampleType;

UniqueGlTexture make_texture(GLenum internal_format, std::uint32_t w, std::uint32_t h, GLenum filter) {
  GLuint name = 0;
  glCreateTextures(GL_TEXTURE_2D, 1, &name);
  UniqueGlTexture t(name);
  glTextureStorage2D(name, 1, internal_format, GLsizei(w), GLsizei(h));
  glTextureParameteri(name, GL_TEXTURE_MIN_FILTER, GLint(filter));
  glTextureParameteri(name, GL_TEXTURE_MAG_FILTER, GLint(filter));
  glTextureParameteri(name, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTextureParameteri(name, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  return t;
}

// Packed rows (any width) from host memory, whatever the unpack state was
// (the frame path uploads from GL buffers: no unpack buffer may be bound here).
void fill(GLuint texture, std::uint32_t w, std::uint32_t h, GLenum format, GLenum type, const void* data) {
  GLint alignment = 4, unpack_buffer = 0;
  glGetIntegerv(GL_UNPACK_ALIGNMENT, &alignment);
  glGetIntegerv(GL_PIXEL_UNPACK_BUFFER_BINDING, &unpack_buffer);
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  HANDOFF_GL_CHECK(glTextureSubImage2D(texture, 0, 0, 0, GLsizei(w), GLsizei(h), format, type, data),
                   "layer texture");
  glPixelStorei(GL_UNPACK_ALIGNMENT, alignment);
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, GLuint(unpack_buffer));
}

}  // namespace

GLuint LayerRenderer::Texture::ensure(GLenum internal_format, std::uint32_t w, std::uint32_t h, GLenum filter) {
  if (!name || format != internal_format || width != w || height != h) {
    name = make_texture(internal_format, w, h, filter);
    format = internal_format;
    width = w;
    height = h;
  }
  return name.get();
}

namespace {

const LayerArray& array_of(const media::Layer& l) {
  if (const auto* c = std::get_if<media::ClassMap>(&l)) return c->ids;
  if (const auto* s = std::get_if<media::ScalarMap>(&l)) return s->values;
  return std::get<media::InstanceMasks>(l).masks;
}

float opacity_of(const media::Layer& l) {
  return std::visit([](const auto& x) { return x.opacity; }, l);
}

// The id at sample `i` of a copied class map, by its value (as ClassMap keys
// it: uint64 ids by their bits).
std::int64_t id_at(const LayerArray& a, std::size_t i) {
  const auto* p = static_cast<const std::uint8_t*>(a.data);
  switch (a.type) {
    case SampleType::U8: return p[i];
    case SampleType::I8: return std::int8_t(p[i]);
    case SampleType::U16: { std::uint16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case SampleType::I16: { std::int16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case SampleType::U32: { std::uint32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case SampleType::I32: { std::int32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case SampleType::U64:
    case SampleType::I64: { std::int64_t v; std::memcpy(&v, p + 8 * i, 8); return v; }
    default: return 0;
  }
}

std::string format_value(double v) {
  std::ostringstream o;
  o.precision(6);
  o << v;
  return o.str();
}

}  // namespace

LayerRenderer::LayerRenderer()
    : ids_program_(build_program("layer_vert", "layer_ids_frag")),
      scalar_program_(build_program("layer_vert", "layer_scalar_frag")) {
  GLuint vao = 0;
  glCreateVertexArrays(1, &vao);
  vao_.reset(vao);
  for (media::Colormap c : media::kColormaps) {
    UniqueGlTexture t = make_texture(GL_RGBA8, 256, 1, GL_NEAREST);
    fill(t.get(), 256, 1, GL_RGBA, GL_UNSIGNED_BYTE, media::colormap_table(c).data());
    colormaps_[std::size_t(c)] = std::move(t);
  }
}

void LayerRenderer::set_layers(const media::OverlayFrame* overlays, std::uint32_t frame_w, std::uint32_t frame_h) {
  overlays_ = overlays && !overlays->layers.empty() ? overlays : nullptr;
  frame_w_ = frame_w;
  frame_h_ = frame_h;
  const std::size_t n = overlays_ ? overlays_->layers.size() : 0;
  // The panel's settings stay while the layers keep their kinds; a change starts afresh.
  std::vector<std::size_t> kinds(n);
  for (std::size_t i = 0; i < n; ++i) kinds[i] = overlays_->layers[i].index();
  if (kinds != kinds_) {
    kinds_ = kinds;
    controls_.assign(n, LayerControl{});
    auto_ranges_.assign(n, media::ScalarRange{});
  }
  layers_.resize(n);
  for (std::size_t i = 0; i < n; ++i) prepare(i);
  ++generation_;
  textures_current_ = false;  // filled at the first draw() (a CPU composite needs none)
}

// What both paths need of layer i: its place, range, id width and palette.
void LayerRenderer::prepare(std::size_t i) {
  const media::Layer& l = overlays_->layers[i];
  const LayerArray& a = array_of(l);
  Gpu& g = layers_[i];
  const auto target = std::visit([](const auto& x) { return x.target; }, l);
  g.target = target.value_or(media::RectF{0, 0, float(frame_w_), float(frame_h_)});
  if (a.memory == MemoryKind::GlBuffer) {  // a CUDA layer: converted on the GPU, into its texture now
    upload_from_buffer(i);
    make_palette(i);
    return;
  }
  if (const auto* s = std::get_if<media::ScalarMap>(&l)) {
    g.range = s->range ? *s->range
                       : auto_ranges_[i].update(static_cast<const float*>(a.data), std::size_t(a.width) * a.height);
  } else if (std::holds_alternative<media::ClassMap>(l)) {
    const std::size_t bytes = std::min<std::size_t>(media::sample_size(a.type), 4);  // 64-bit ids: the low 32 bits
    g.bits = int(bytes * 8);
    g.is_signed = a.type == SampleType::I8 || a.type == SampleType::I16 || a.type == SampleType::I32;
    g.legend_valid = false;
  } else {
    // Instance masks: one index per texel, the last mask on top (0: none).
    g.instances.assign(std::size_t(a.width) * a.height, 0);
    const auto* m = static_cast<const std::uint8_t*>(a.data);
    const std::size_t plane = std::size_t(a.width) * a.height;
    for (std::uint32_t k = 0; k < a.count; ++k)
      for (std::size_t p = 0; p < plane; ++p)
        if (m[k * plane + p]) g.instances[p] = std::uint16_t(std::min<std::uint32_t>(k + 1, 65535));
    g.bits = 16;
    g.is_signed = false;
  }
  make_palette(i);
}

void LayerRenderer::upload(std::size_t i) {
  const media::Layer& l = overlays_->layers[i];
  const LayerArray& a = array_of(l);
  Gpu& g = layers_[i];
  if (a.memory == MemoryKind::GlBuffer) {
    // (its texture was filled on the GPU by prepare())
  } else if (std::holds_alternative<media::ScalarMap>(l)) {
    fill(g.data.ensure(GL_R32F, a.width, a.height, GL_LINEAR), a.width, a.height, GL_RED, GL_FLOAT, a.data);
  } else if (std::holds_alternative<media::ClassMap>(l)) {
    const std::size_t bytes = media::sample_size(a.type);
    const GLenum internal = bytes == 1 ? GL_R8UI : bytes == 2 ? GL_R16UI : GL_R32UI;
    const GLenum type = bytes == 1 ? GL_UNSIGNED_BYTE : bytes == 2 ? GL_UNSIGNED_SHORT : GL_UNSIGNED_INT;
    fill(g.data.ensure(internal, a.width, a.height, GL_NEAREST), a.width, a.height, GL_RED_INTEGER, type,
         bytes == 8 ? low_ids(i).data() : a.data);
  } else {
    fill(g.data.ensure(GL_R16UI, a.width, a.height, GL_NEAREST), a.width, a.height, GL_RED_INTEGER,
         GL_UNSIGNED_SHORT, g.instances.data());
  }
  upload_palette(i);
}

namespace {

// A 32-bit texel outside the palette (`first`, `size`) with the default colour
// of `low`: default_class_color sees only the top 24 bits of low * golden and
// low % 3, so another low byte of the product, where low % 3 stays, is the
// same colour. `low` itself where none is found (not seen: 255 tries).
std::uint32_t same_colour_outside(std::uint32_t low, std::uint32_t first, std::uint64_t size) {
  constexpr std::uint32_t kGolden = 0x9E3779B9u;
  constexpr std::uint32_t kInverse = [] {  // kGolden's inverse mod 2^32 (Newton's iteration)
    std::uint32_t x = kGolden;
    for (int k = 0; k < 5; ++k) x *= 2u - kGolden * x;
    return x;
  }();
  static_assert(kGolden * kInverse == 1u);
  const std::uint32_t walk = low * kGolden;
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    const std::uint32_t other = ((walk & ~0xFFu) | byte) * kInverse;
    if (other % 3u == low % 3u && std::uint32_t(other - first) >= size) return other;
  }
  return low;
}

}  // namespace

// A 64-bit class map's ids as its 32-bit texture holds them: the low 32 bits,
// which the palette (palette_first) and the default colours go by, as on the
// CPU; an id outside the palette whose low 32 bits fall inside it (2^32 apart
// from a coloured or transparent id) takes a texel outside it of its own colour.
const std::vector<std::uint32_t>& LayerRenderer::low_ids(std::size_t i) {
  const LayerArray& a = array_of(overlays_->layers[i]);
  Gpu& g = layers_[i];
  const std::size_t n = std::size_t(a.width) * a.height;
  g.low_ids.resize(n);
  const auto* p = static_cast<const std::uint8_t*>(a.data);  // the packed copy (layer_copy)
  const auto size = std::uint64_t(g.palette_size);
  const auto first = std::uint32_t(g.palette_first);
  for (std::size_t k = 0; k < n; ++k) {
    std::uint64_t id;
    std::memcpy(&id, p + 8 * k, 8);
    auto low = std::uint32_t(id);
    if (id - std::uint64_t(g.palette_lo) >= size && std::uint32_t(low - first) < size)
      low = same_colour_outside(low, first, size);
    g.low_ids[k] = low;
  }
  return g.low_ids;
}

// Class maps: entries for the ids given colours or made transparent, and 0..255
// and the hidden ids where the palette stays within kMaxPaletteSpan ids; ids
// outside take the default colours in the shader. Instance masks:
// entry 0 (none) transparent, entry k + 1 the colour of the k-th boxed object.
void LayerRenderer::make_palette(std::size_t i) {
  const media::Layer& l = overlays_->layers[i];
  Gpu& g = layers_[i];
  std::vector<media::Color8>& entries = g.entries;
  entries.clear();
  if (const auto* m = std::get_if<media::ClassMap>(&l)) {
    // Ids by their order for the map's type (uint64 ids unsigned); ids it cannot hold are never drawn.
    const SampleType t = m->ids.type;
    const auto order = [t](std::int64_t id) { return media::class_id_order(t, id); };
    constexpr std::uint64_t kSpan = media::kMaxPaletteSpan;
    bool any = false;
    std::int64_t lo = 0, hi = 0;
    // Takes `id` into [lo, hi] where the palette stays within kSpan ids (validate_layers
    // saw to it for colours and transparent ids).
    const auto take = [&](std::int64_t id) {
      if (!media::class_id_fits(t, id)) return;
      if (!any) {
        lo = hi = id;
        any = true;
        return;
      }
      const std::int64_t l2 = order(id) < order(lo) ? id : lo, h2 = order(id) > order(hi) ? id : hi;
      if (order(h2) - order(l2) < kSpan) lo = l2, hi = h2;
    };
    for (const auto& [id, c] : m->colors) take(id);
    for (std::int64_t id : m->transparent) take(id);
    take(0);  // 0..255 where they fit: most maps' ids (8-bit maps are then a look-up on the CPU)
    take(255);
    for (std::int64_t id : controls_[i].hidden) take(id);
    const std::size_t size = std::size_t(order(hi) - order(lo) + 1);
    entries.resize(size);
    for (std::size_t k = 0; k < size; ++k) {
      const auto id = std::int64_t(std::uint64_t(lo) + k);
      auto it = m->colors.find(id);
      media::Color8 c = it != m->colors.end() ? it->second : media::default_class_color(id);
      c.a = 255;
      entries[k] = c;
    }
    const auto hide = [&](std::int64_t id) {
      const std::uint64_t k = std::uint64_t(id) - std::uint64_t(lo);
      if (media::class_id_fits(t, id) && k < size) entries[std::size_t(k)].a = 0;
    };
    for (std::int64_t id : m->transparent) hide(id);
    for (std::int64_t id : controls_[i].hidden) hide(id);
    g.palette_lo = lo;
    g.palette_first = int(std::uint32_t(std::uint64_t(lo)));  // the shader's ids are 32-bit
  } else if (std::holds_alternative<media::InstanceMasks>(l)) {
    entries.push_back(media::Color8{0, 0, 0, 0});
    for (const media::OverlayObject& o : overlays_->objects)
      if (o.has_box) {
        media::Color8 c = media::object_color(o);
        c.a = 255;
        entries.push_back(c);
      }
    g.palette_first = 0;
    g.palette_lo = 0;
  } else {
    return;  // scalar maps: the colormap textures
  }
  g.palette_size = int(entries.size());
}

void LayerRenderer::upload_palette(std::size_t i) {
  Gpu& g = layers_[i];
  if (g.entries.empty()) return;  // scalar maps
  const std::uint32_t rows = std::uint32_t((g.entries.size() + 255) / 256);
  std::vector<media::Color8> padded(std::size_t(rows) * 256);
  std::copy(g.entries.begin(), g.entries.end(), padded.begin());
  fill(g.palette.ensure(GL_RGBA8, 256, rows, GL_NEAREST), 256, rows, GL_RGBA, GL_UNSIGNED_BYTE, padded.data());
}

void LayerRenderer::refresh_palettes() {
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    make_palette(i);
    if (!textures_current_) continue;
    // 64-bit host ids: their texels depend on the palette (low_ids).
    const LayerArray& a = array_of(overlays_->layers[i]);
    if (a.memory != MemoryKind::GlBuffer && media::sample_size(a.type) == 8) upload(i);
    else upload_palette(i);
  }
  ++generation_;
}

void LayerRenderer::draw(const ViewTransform& view, int fb_w, int fb_h) {
  if (!overlays_ || fb_w <= 0 || fb_h <= 0) return;
  if (!textures_current_) {
    for (std::size_t i = 0; i < layers_.size(); ++i) upload(i);
    textures_current_ = true;
  }
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_CULL_FACE);
  glDisable(GL_DEPTH_TEST);
  glEnable(GL_BLEND);
  glBlendEquation(GL_FUNC_ADD);
  glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  glBindVertexArray(vao_.get());
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const LayerControl& c = controls_[i];
    const media::Layer& l = overlays_->layers[i];
    const float opacity = c.opacity.value_or(opacity_of(l));
    if (!c.visible || opacity <= 0.0f) continue;
    const Gpu& g = layers_[i];
    const bool scalar = std::holds_alternative<media::ScalarMap>(l);
    const GLuint p = scalar ? scalar_program_.get() : ids_program_.get();
    glUseProgram(p);
    glUniform4f(glGetUniformLocation(p, "u_target"), g.target.x, g.target.y, g.target.w, g.target.h);
    glUniform2f(glGetUniformLocation(p, "u_view_scale"), float(view.scale), float(view.scale));
    glUniform2f(glGetUniformLocation(p, "u_view_offset"), float(view.offset_x), float(view.offset_y));
    glUniform2f(glGetUniformLocation(p, "u_fb_size"), float(fb_w), float(fb_h));
    glUniform1f(glGetUniformLocation(p, "u_opacity"), opacity);
    glBindTextureUnit(0, g.data.name.get());
    if (scalar) {
      const FloatMapping m = float_mapping(g.range[0], g.range[1]);
      glUniform4f(glGetUniformLocation(p, "u_map"), m.prescale, m.lo, m.scale, m.offset);
      glBindTextureUnit(1, colormaps_[std::size_t(std::get<media::ScalarMap>(l).colormap)].get());
    } else {
      const bool masks = std::holds_alternative<media::InstanceMasks>(l);
      glUniform1i(glGetUniformLocation(p, "u_bits"), g.bits);
      glUniform1i(glGetUniformLocation(p, "u_signed"), g.is_signed ? 1 : 0);
      glUniform1i(glGetUniformLocation(p, "u_palette_first"), g.palette_first);
      glUniform1i(glGetUniformLocation(p, "u_palette_size"), g.palette_size);
      glUniform1i(glGetUniformLocation(p, "u_defaults"), masks ? 0 : 1);
      glUniform1i(glGetUniformLocation(p, "u_outline"), masks ? 1 : 0);
      // Where the target lies on the framebuffer (nearest_axis: the CPU composite's numbers).
      const media::LayerArray& a = array_of(l);
      const NearestAxis ax = nearest_axis(view.to_fb_x(g.target.x), double(g.target.w) * view.scale, a.width);
      const NearestAxis ay = nearest_axis(view.to_fb_y(g.target.y), double(g.target.h) * view.scale, a.height);
      glUniform2f(glGetUniformLocation(p, "u_origin"), ax.origin, ay.origin);
      glUniform2f(glGetUniformLocation(p, "u_texels"), ax.texels, ay.texels);
      glBindTextureUnit(1, g.palette.name.get());
    }
    glDrawArrays(GL_TRIANGLES, 0, 6);
  }
  glBindTextureUnit(0, 0);
  glBindTextureUnit(1, 0);
  glBindVertexArray(0);
  glDisable(GL_BLEND);
  HANDOFF_GL_CHECK(glUseProgram(0), "LayerRenderer draw");
}

const std::vector<std::int64_t>& LayerRenderer::legend_ids(std::size_t i) {
  Gpu& g = layers_[i];
  if (g.legend_valid) return g.legend;
  g.legend.clear();
  if (const auto* m = std::get_if<media::ClassMap>(&overlays_->layers[i])) {
    // Named and coloured ids, and those a sample of the map holds (every
    // 16,384th of its pixels at most).
    const LayerArray& a = m->ids;
    std::set<std::int64_t> seen;
    for (const auto& [id, name] : m->names) seen.insert(id);
    for (const auto& [id, c] : m->colors) seen.insert(id);
    const std::size_t n = std::size_t(a.width) * a.height;
    const std::size_t step = std::max<std::size_t>(1, n / 16384);
    if (a.memory == MemoryKind::GlBuffer) {  // the same sample, read back from the texture
      for (std::int64_t id : sampled_ids(i, step, (n + step - 1) / step)) {
        if (seen.size() >= 256) break;
        seen.insert(id);
      }
    } else {
      for (std::size_t p = 0; p < n && seen.size() < 256; p += step) seen.insert(id_at(a, p));
    }
    g.legend.assign(seen.begin(), seen.end());
    if (g.legend.size() > 256) g.legend.resize(256);
  }
  g.legend_valid = true;
  return g.legend;
}

std::optional<std::array<double, 2>> LayerRenderer::range(std::size_t i) const {
  if (!overlays_ || i >= layers_.size() || !std::holds_alternative<media::ScalarMap>(overlays_->layers[i]))
    return std::nullopt;
  return layers_[i].range;
}

LayerProbe LayerRenderer::probe(std::size_t i, double fx, double fy) const {
  LayerProbe r;
  if (!overlays_ || i >= layers_.size()) return r;
  const media::Layer& l = overlays_->layers[i];
  r.kind = std::string(media::layer_kind(l));
  const LayerArray& a = array_of(l);
  const media::RectF& t = layers_[i].target;
  const double u = (fx - t.x) / t.w, v = (fy - t.y) / t.h;
  if (!(u >= 0 && u < 1 && v >= 0 && v < 1)) {
    r.text = "outside";
    return r;
  }
  const auto x = std::min<std::size_t>(std::size_t(u * a.width), a.width - 1);
  const auto y = std::min<std::size_t>(std::size_t(v * a.height), a.height - 1);
  const std::size_t p = y * a.width + x;
  const bool gpu = a.memory == MemoryKind::GlBuffer;  // a CUDA layer: one texel read back
  if (const auto* m = std::get_if<media::ClassMap>(&l)) {
    const std::int64_t id = gpu ? texel_id(i, std::uint32_t(x), std::uint32_t(y)) : id_at(a, p);
    r.text = "id " + media::class_id_text(a.type, id);
    if (auto it = m->names.find(id); it != m->names.end()) r.text += " (" + it->second + ")";
  } else if (std::holds_alternative<media::ScalarMap>(l)) {
    const float value = gpu ? read_float_texel(layers_[i].data.name.get(), std::uint32_t(x), std::uint32_t(y))
                            : static_cast<const float*>(a.data)[p];  // the nearest sample
    r.text = std::isfinite(value) ? "value " + format_value(value) : "hole (" + format_value(value) + ")";
  } else {
    const auto* m = static_cast<const std::uint8_t*>(a.data);
    const std::size_t plane = std::size_t(a.width) * a.height;
    std::int64_t top = -1;
    if (gpu) top = texel_id(i, std::uint32_t(x), std::uint32_t(y)) - 1;  // the composited index
    for (std::uint32_t k = 0; !gpu && k < a.count; ++k)
      if (m[k * plane + p]) top = k;
    if (top < 0) {
      r.text = "no mask";
    } else {
      r.text = "mask " + std::to_string(top);
      std::int64_t seen = -1;
      for (const media::OverlayObject& o : overlays_->objects)
        if (o.has_box && ++seen == top && !o.label.empty()) r.text += " (" + std::string(overlays_->text(o.label)) + ")";
    }
  }
  return r;
}

}  // namespace handoff::view
