// Dense layers on the wire. Every layer:
//   u8 kind (0 class map, 1 scalar map, 2 instance masks) | u8 sample type |
//   u32 width | u32 height | u32 count | f32 opacity | u8 has_target [f32 x, y, w, h]
//   class map:  u32 n, n x (i64 id, u8 r, g, b, a) colours | u32 n, n x (i64 id, str16) names |
//               u32 n, n x i64 transparent ids
//   scalar map: u8 colormap | u8 has_range [f64 lo, hi]
//   masks:      nothing (samples are 0 / 1; the threshold is 0.5)
//   u64 sample bytes, then the samples, packed (width x height x count).
// Ids of colours and names strictly increase (so one encoding per layer).
#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/live/protocol.hpp>

#include "layer_codec.hpp"

#include <cmath>
#include <cstring>
#include <memory>

namespace handoff::live::detail {

namespace {

// Colours, names and transparent ids per class map at most (what one palette holds).
constexpr std::uint64_t kMaxEntries = std::uint64_t(media::kMaxPaletteSpan);

std::string at(std::size_t i, std::string_view field) { return "layers[" + std::to_string(i) + "]." + std::string(field); }

void put_common(WireWriter& w, std::uint8_t kind, const media::LayerArray& a, float opacity,
                const std::optional<media::RectF>& target) {
  w.u8(kind);
  w.u8(static_cast<std::uint8_t>(a.type));
  w.u32(a.width);
  w.u32(a.height);
  w.u32(a.count);
  w.f32(opacity);
  w.u8(target ? 1 : 0);
  if (target)
    for (float v : {target->x, target->y, target->w, target->h}) w.f32(v);
}

void put_class_settings(WireWriter& w, const media::ClassMap& m, std::size_t i) {
  if (m.names.size() > kMaxEntries || m.transparent.size() > kMaxEntries)
    throw InvalidFrame(at(i, "names"), "more than " + std::to_string(kMaxEntries) + " names or transparent ids");
  w.u32(static_cast<std::uint32_t>(m.colors.size()));
  for (const auto& [id, c] : m.colors) {
    w.i64(id);
    for (std::uint8_t v : {c.r, c.g, c.b, c.a}) w.u8(v);
  }
  w.u32(static_cast<std::uint32_t>(m.names.size()));
  for (const auto& [id, name] : m.names) {
    if (name.size() > kMaxTextBytes)
      throw InvalidFrame(at(i, "names"), "the name of id " + std::to_string(id) + " is longer than " +
                                              std::to_string(kMaxTextBytes) + " bytes");
    for (unsigned char ch : name)
      if (ch < 0x20 || ch == 0x7f)
        throw InvalidFrame(at(i, "names"), "the name of id " + std::to_string(id) + " has control characters");
    w.i64(id);
    w.str16(name);
  }
  w.u32(static_cast<std::uint32_t>(m.transparent.size()));
  for (std::int64_t id : m.transparent) w.i64(id);
}

void put_samples(WireWriter& w, const media::LayerArray& packed) {
  const std::size_t bytes = packed.row_bytes() * packed.height * packed.count;
  w.u64(bytes);
  w.bytes(packed.data, bytes);
}

void encode_one(WireWriter& w, const media::Layer& layer, std::size_t i) {
  if (media::layer_array(layer).memory != MemoryKind::Host)
    throw InvalidFrame(at(i, "memory"), "a publisher sends host layers only (copy CUDA layers to the host first)");
  media::Layer packed = layer;
  media::pack_layer(packed);
  if (const auto* m = std::get_if<media::ClassMap>(&packed)) {
    put_common(w, 0, m->ids, m->opacity, m->target);
    put_class_settings(w, *m, i);
  } else if (const auto* s = std::get_if<media::ScalarMap>(&packed)) {
    put_common(w, 1, s->values, s->opacity, s->target);
    w.u8(static_cast<std::uint8_t>(s->colormap));
    w.u8(s->range ? 1 : 0);
    if (s->range) {
      w.f64((*s->range)[0]);
      w.f64((*s->range)[1]);
    }
  } else {
    const auto& k = std::get<media::InstanceMasks>(packed);
    put_common(w, 2, k.masks, k.opacity, k.target);
  }
  put_samples(w, media::layer_array(packed));
}

// --- decoding ---------------------------------------------------------------------

struct Common {
  std::uint8_t kind;
  media::LayerArray array;
  float opacity;
  std::optional<media::RectF> target;
};

bool flag(WireReader& r, const std::string& field) {
  const std::uint8_t v = r.u8(field);
  if (v > 1) r.fail(field, "not 0 or 1");
  return v == 1;
}

// The sample types a packed layer of `kind` has.
bool wire_type(std::uint8_t kind, media::SampleType t) {
  using media::SampleType;
  switch (kind) {
    case 0: return media::is_integer(t) && media::sample_size(t) <= 4;
    case 1: return t == SampleType::F32;
    default: return t == SampleType::U8;
  }
}

Common read_common(WireReader& r, std::size_t i) {
  Common c{};
  c.kind = r.u8(at(i, "kind"));
  if (c.kind > 2) r.fail(at(i, "kind"), "kind " + std::to_string(c.kind) + " is not 0 (class map), 1 (scalar map) or 2 (masks)");
  const std::uint8_t type = r.u8(at(i, "type"));
  c.array.type = static_cast<media::SampleType>(type);
  if (type > std::uint8_t(media::SampleType::Bool) || !wire_type(c.kind, c.array.type))
    r.fail(at(i, "type"), "sample type value " + std::to_string(type) + " is not what a packed " +
                              std::string(c.kind == 0 ? "class map" : c.kind == 1 ? "scalar map" : "mask stack") +
                              " holds (ids u8 .. i32, scalars f32, masks u8)");
  c.array.width = r.u32(at(i, "width"));
  c.array.height = r.u32(at(i, "height"));
  c.array.count = r.u32(at(i, "count"));
  for (auto [name, v] : {std::pair{"width", c.array.width}, std::pair{"height", c.array.height}})
    if (std::string problem = dimension_problem(name, v); !problem.empty()) r.fail(at(i, name), problem);
  c.opacity = r.f32(at(i, "opacity"));
  if (flag(r, at(i, "has_target"))) {
    media::RectF t;
    t.x = r.f32(at(i, "target"));
    t.y = r.f32(at(i, "target"));
    t.w = r.f32(at(i, "target"));
    t.h = r.f32(at(i, "target"));
    c.target = t;
  }
  return c;
}

std::uint32_t entries(WireReader& r, const std::string& field, std::uint64_t record_bytes) {
  const std::uint32_t n = r.u32(field);
  if (n > kMaxEntries || n * record_bytes > r.remaining())
    r.fail(field, std::to_string(n) + " entries do not fit the block (at most " + std::to_string(kMaxEntries) + ")");
  return n;
}

void read_class_settings(WireReader& r, std::size_t i, media::ClassMap& m) {
  std::int64_t last = 0;
  const std::uint32_t colors = entries(r, at(i, "colors"), 12);
  for (std::uint32_t k = 0; k < colors; ++k) {
    const std::int64_t id = r.i64(at(i, "colors"));
    if (k > 0 && id <= last) r.fail(at(i, "colors"), "ids do not strictly increase");
    media::Color8 c;
    c.r = r.u8(at(i, "colors"));
    c.g = r.u8(at(i, "colors"));
    c.b = r.u8(at(i, "colors"));
    c.a = r.u8(at(i, "colors"));
    m.colors.emplace_hint(m.colors.end(), id, c);
    last = id;
  }
  const std::uint32_t names = entries(r, at(i, "names"), 10);
  for (std::uint32_t k = 0; k < names; ++k) {
    const std::int64_t id = r.i64(at(i, "names"));
    if (k > 0 && id <= last) r.fail(at(i, "names"), "ids do not strictly increase");
    m.names.emplace_hint(m.names.end(), id, r.str16(at(i, "names"), kMaxTextBytes));
    last = id;
  }
  const std::uint32_t transparent = entries(r, at(i, "transparent"), 8);
  m.transparent.resize(transparent);
  for (auto& id : m.transparent) id = r.i64(at(i, "transparent"));
}

// The samples, copied into memory the layer owns.
void read_samples(WireReader& r, std::size_t i, media::LayerArray& a, bool binary) {
  std::uint64_t expected = 0;
  const std::uint64_t bytes = r.u64(at(i, "samples"));
  if (__builtin_mul_overflow(std::uint64_t(a.row_bytes()) * a.height, std::uint64_t(a.count), &expected) ||
      bytes != expected)
    r.fail(at(i, "samples"), std::to_string(bytes) + " bytes where " + std::to_string(a.count) + " x " +
                                 std::to_string(a.height) + " x " + std::to_string(a.width) + " samples of " +
                                 std::string(media::to_string(a.type)) + " take " + std::to_string(expected));
  auto data = r.view(at(i, "samples"), bytes);
  if (binary)
    for (std::byte b : data)
      if (std::to_integer<std::uint8_t>(b) > 1) r.fail(at(i, "samples"), "a mask sample is not 0 or 1");
  auto storage = std::shared_ptr<std::uint8_t[]>(new std::uint8_t[std::max<std::uint64_t>(bytes, 1)]);
  std::memcpy(storage.get(), data.data(), bytes);
  a.data = storage.get();
  a.owner = std::move(storage);
}

media::Layer decode_one(WireReader& r, std::size_t i) {
  Common c = read_common(r, i);
  media::Layer layer;
  if (c.kind == 0) {
    media::ClassMap m;
    read_class_settings(r, i, m);
    m.opacity = c.opacity;
    m.target = c.target;
    layer = std::move(m);
  } else if (c.kind == 1) {
    media::ScalarMap s;
    const std::uint8_t colormap = r.u8(at(i, "colormap"));
    if (colormap > std::uint8_t(media::Colormap::Plasma))
      r.fail(at(i, "colormap"), "colormap value " + std::to_string(colormap) + " is not one of 0..5");
    s.colormap = static_cast<media::Colormap>(colormap);
    if (flag(r, at(i, "has_range"))) {
      const double lo = r.f64(at(i, "range")), hi = r.f64(at(i, "range"));
      s.range = std::array<double, 2>{lo, hi};
    }
    s.opacity = c.opacity;
    s.target = c.target;
    layer = std::move(s);
  } else {
    media::InstanceMasks k;
    k.opacity = c.opacity;
    k.target = c.target;
    layer = std::move(k);
  }
  read_samples(r, i, c.array, c.kind == 2);
  std::visit(
      [&](auto& l) {
        using T = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<T, media::ClassMap>) l.ids = std::move(c.array);
        else if constexpr (std::is_same_v<T, media::ScalarMap>) l.values = std::move(c.array);
        else l.masks = std::move(c.array);
      },
      layer);
  return layer;
}

}  // namespace

void encode_layers(const media::OverlayFrame& overlays, WireWriter& w) {
  media::validate_layers(overlays, -1);  // at most kMaxLayers; packing reads the arrays
  w.u32(static_cast<std::uint32_t>(overlays.layers.size()));
  for (std::size_t i = 0; i < overlays.layers.size(); ++i) encode_one(w, overlays.layers[i], i);
}

void decode_layers(WireReader& r, media::OverlayFrame& out) {
  const std::uint32_t n = r.u32("layers");
  if (n > kMaxLayers) r.fail("layers", std::to_string(n) + " layers exceed " + std::to_string(kMaxLayers));
  out.layers.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) out.layers.push_back(decode_one(r, i));
  try {
    media::validate_layers(out, -1);
  } catch (const InvalidFrame& e) {
    const std::string what = e.what();
    r.fail(e.field(), what.substr(e.field().size() + 2));
  }
}

}  // namespace handoff::live::detail
