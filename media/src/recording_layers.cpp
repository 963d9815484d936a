// Dense layers in recordings (docs/recording.md "Layers"): each layer of a
// frame is a foxglove.RawImage on "<image topic>/layers/<index>" with the
// frame's timestamps; its settings are JSON in the channel metadata
// ("handoff.layer"). Samples as media::pack_layer converts them:
//   class map   u8 / i8 ids: mono8; u16 / i16: mono16; u32 / i32: 32FC1 (exact to |id| <= 2^24)
//   scalar map  32FC1
//   masks       mono8, 0 / 255, the masks stacked top to bottom (height = count x mask_height)
#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>

#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace handoff::media {

namespace {

constexpr double kMaxExactId = 16777216.0;  // 2^24: every integer up to it is a float

std::string number(double v, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  out += '"';
}

std::string hex_color(Color8 c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

void common_settings(std::string& j, float opacity, const std::optional<RectF>& target) {
  j += ",\"opacity\":" + number(opacity, 9);
  if (target) {
    j += ",\"target\":[" + number(target->x, 9) + "," + number(target->y, 9) + "," + number(target->w, 9) + "," +
         number(target->h, 9) + "]";
  }
}

std::string class_settings(const ClassMap& m) {
  std::string j = "{\"kind\":\"class_map\",\"ids\":\"" + std::string(to_string(m.ids.type)) + "\",\"colors\":{";
  bool first = true;
  for (const auto& [id, c] : m.colors) {
    j += (first ? "\"" : ",\"") + std::to_string(id) + "\":\"" + hex_color(c) + "\"";
    first = false;
  }
  j += "},\"names\":{";
  first = true;
  for (const auto& [id, name] : m.names) {
    j += (first ? "\"" : ",\"") + std::to_string(id) + "\":";
    json_string(j, name);
    first = false;
  }
  j += "},\"transparent\":[";
  for (std::size_t i = 0; i < m.transparent.size(); ++i) j += (i ? "," : "") + std::to_string(m.transparent[i]);
  j += "]";
  common_settings(j, m.opacity, m.target);
  return j + "}";
}

std::string scalar_settings(const ScalarMap& s) {
  std::string j = "{\"kind\":\"scalar_map\",\"colormap\":\"" + std::string(to_string(s.colormap)) + "\"";
  if (s.range) j += ",\"range\":[" + number((*s.range)[0], 17) + "," + number((*s.range)[1], 17) + "]";
  common_settings(j, s.opacity, s.target);
  return j + "}";
}

std::string mask_settings(const InstanceMasks& k) {
  std::string j = "{\"kind\":\"instance_masks\",\"mask_height\":" + std::to_string(k.masks.height);
  common_settings(j, k.opacity, k.target);
  return j + "}";
}

// A host frame of `format` over packed samples (the RawImage encoder's input).
Frame gray_frame(PixelFormat format, std::uint32_t w, std::uint32_t h, const void* data) {
  return FrameLayout::packed(format, w, h).describe(MemoryKind::Host, {const_cast<void*>(data)});
}

// 32-bit ids as floats, each exact or an error naming the field.
std::vector<float> ids_as_floats(const LayerArray& ids, std::size_t i) {
  std::vector<float> out(std::size_t(ids.width) * ids.height);
  const auto* p = static_cast<const std::uint8_t*>(ids.data);
  for (std::size_t k = 0; k < out.size(); ++k) {
    double v;
    if (ids.type == SampleType::U32) {
      std::uint32_t u;
      std::memcpy(&u, p + 4 * k, 4);
      v = u;
    } else {
      std::int32_t s;
      std::memcpy(&s, p + 4 * k, 4);
      v = s;
    }
    if (std::fabs(v) > kMaxExactId)
      throw InvalidFrame("layers[" + std::to_string(i) + "].ids",
                         "id " + number(v, 17) + " is not exact in a 32FC1 sample (recorded ids lie within +-2^24)");
    out[k] = float(v);
  }
  return out;
}

LayerMessage encode_one(const Layer& layer, std::uint64_t timestamp_ns, std::size_t i) {
  Layer packed = layer;
  pack_layer(packed);
  LayerMessage m;
  m.index = i;
  const LayerArray& a = layer_array(packed);
  if (const auto* c = std::get_if<ClassMap>(&packed)) {
    m.settings = class_settings(*c);
    if (sample_size(a.type) == 4) {
      const std::vector<float> f = ids_as_floats(a, i);
      encode_raw_image(gray_frame(PixelFormat::GRAY32F, a.width, a.height, f.data()), timestamp_ns, m.image);
    } else {
      const PixelFormat format = sample_size(a.type) == 1 ? PixelFormat::GRAY8 : PixelFormat::GRAY16;
      encode_raw_image(gray_frame(format, a.width, a.height, a.data), timestamp_ns, m.image);
    }
  } else if (const auto* s = std::get_if<ScalarMap>(&packed)) {
    m.settings = scalar_settings(*s);
    encode_raw_image(gray_frame(PixelFormat::GRAY32F, a.width, a.height, a.data), timestamp_ns, m.image);
  } else {
    m.settings = mask_settings(std::get<InstanceMasks>(packed));
    std::vector<std::uint8_t> shown(a.row_bytes() * a.height * a.count);
    const auto* p = static_cast<const std::uint8_t*>(a.data);
    for (std::size_t k = 0; k < shown.size(); ++k) shown[k] = p[k] ? 255 : 0;  // visible in Foxglove
    encode_raw_image(gray_frame(PixelFormat::GRAY8, a.width, a.height * a.count, shown.data()), timestamp_ns,
                     m.image);
  }
  return m;
}

// --- reading ------------------------------------------------------------------------

using simdjson::dom::element;

struct SettingsReader {
  const std::string& file;
  const std::string& location;
  [[noreturn]] void fail(std::string_view field, const std::string& detail) const {
    throw ParseError(file, location, "handoff.layer." + std::string(field), detail);
  }
  double number(element e, std::string_view field) const {
    double d = 0;
    if (e.get_double().get(d) != simdjson::SUCCESS) fail(field, "not a number");
    return d;
  }
  std::int64_t integer(element e, std::string_view field) const {
    std::int64_t v = 0;
    if (e.get_int64().get(v) != simdjson::SUCCESS) fail(field, "not an integer");
    return v;
  }
  std::string_view text(element e, std::string_view field) const {
    std::string_view s;
    if (e.get_string().get(s) != simdjson::SUCCESS) fail(field, "not a string");
    return s;
  }
  std::int64_t id_key(std::string_view key, std::string_view field) const {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), v);
    if (key.empty() || ec != std::errc() || end != key.data() + key.size())
      fail(field, "key \"" + std::string(key) + "\" is not an integer id");
    return v;
  }
  void common(simdjson::dom::object o, float& opacity, std::optional<RectF>& target) const {
    element e;
    if (o["opacity"].get(e) == simdjson::SUCCESS) opacity = float(number(e, "opacity"));
    if (o["target"].get(e) == simdjson::SUCCESS) {
      simdjson::dom::array a;
      if (e.get_array().get(a) != simdjson::SUCCESS || a.size() != 4) fail("target", "not [x, y, w, h]");
      float v[4];
      std::size_t k = 0;
      for (element x : a) v[k++] = float(number(x, "target"));
      target = RectF{v[0], v[1], v[2], v[3]};
    }
  }
};

// The sample type a recorded class map's ids have ("u8" .. "i32").
SampleType id_type(const SettingsReader& r, std::string_view name) {
  for (SampleType t : {SampleType::U8, SampleType::I8, SampleType::U16, SampleType::I16, SampleType::U32,
                       SampleType::I32})
    if (to_string(t) == name) return t;
  r.fail("ids", "\"" + std::string(name) + "\" is not one of u8, i8, u16, i16, u32, i32");
}

void read_class_settings(const SettingsReader& r, simdjson::dom::object o, ClassMap& m) {
  element e;
  if (o["colors"].get(e) == simdjson::SUCCESS) {
    simdjson::dom::object colors;
    if (e.get_object().get(colors) != simdjson::SUCCESS) r.fail("colors", "not an object of id: \"#rrggbb\"");
    for (auto [key, value] : colors) {
      const auto c = parse_hex_color(r.text(value, "colors"));
      if (!c) r.fail("colors", "the colour of id " + std::string(key) + " is not \"#rrggbb\"");
      m.colors[r.id_key(key, "colors")] = *c;
    }
  }
  if (o["names"].get(e) == simdjson::SUCCESS) {
    simdjson::dom::object names;
    if (e.get_object().get(names) != simdjson::SUCCESS) r.fail("names", "not an object of id: name");
    for (auto [key, value] : names) m.names[r.id_key(key, "names")] = std::string(r.text(value, "names"));
  }
  if (o["transparent"].get(e) == simdjson::SUCCESS) {
    simdjson::dom::array ids;
    if (e.get_array().get(ids) != simdjson::SUCCESS) r.fail("transparent", "not an array of ids");
    for (element id : ids) m.transparent.push_back(r.integer(id, "transparent"));
  }
  r.common(o, m.opacity, m.target);
}

// The encoding a layer of `kind` with ids / values of `type` is recorded in.
PixelFormat recorded_format(std::size_t kind, SampleType type) {
  if (kind == 2) return PixelFormat::GRAY8;
  if (kind == 1) return PixelFormat::GRAY32F;
  switch (sample_size(type)) {
    case 1: return PixelFormat::GRAY8;
    case 2: return PixelFormat::GRAY16;
    default: return PixelFormat::GRAY32F;
  }
}

// An owned copy of recorded 32FC1 ids as `type`; ParseError for a sample that is not such an id.
LayerArray ids_from_floats(const LayerArray& view, SampleType type, const SettingsReader& r) {
  LayerArray out = view;
  out.type = type;
  out.pitch = 0;
  auto storage = std::shared_ptr<std::uint8_t[]>(new std::uint8_t[out.row_bytes() * out.height]);
  const double lo = type == SampleType::U32 ? 0.0 : -kMaxExactId;
  for (std::uint32_t y = 0; y < view.height; ++y) {
    const auto* row = static_cast<const std::uint8_t*>(view.data) + y * view.row_pitch();
    for (std::uint32_t x = 0; x < view.width; ++x) {
      float f;
      std::memcpy(&f, row + 4 * x, 4);
      if (!(f >= lo && f <= kMaxExactId) || f != std::floor(f))
        throw ParseError(r.file, r.location, "RawImage.data",
                         "sample (" + std::to_string(x) + ", " + std::to_string(y) + ") = " + number(f, 9) +
                             " is not a recorded " + std::string(to_string(type)) + " id");
      const auto v = static_cast<std::int32_t>(f);
      std::memcpy(storage.get() + (std::size_t(y) * view.width + x) * 4, &v, 4);
    }
  }
  out.data = storage.get();
  out.owner = std::move(storage);
  return out;
}

}  // namespace

std::string layer_topic(std::string_view image_topic, std::size_t index) {
  return std::string(image_topic) + std::string(kLayersInfix) + std::to_string(index);
}

std::optional<std::size_t> layer_topic_index(std::string_view image_topic, std::string_view topic) {
  const std::string prefix = std::string(image_topic) + std::string(kLayersInfix);
  if (topic.size() <= prefix.size() || topic.substr(0, prefix.size()) != prefix) return std::nullopt;
  const std::string_view digits = topic.substr(prefix.size());
  if (digits.size() > 2 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;  // 0 .. kMaxLayers - 1
  std::size_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + std::size_t(c - '0');
  }
  return v < kMaxLayers ? std::optional(v) : std::nullopt;
}

void encode_layer_messages(const OverlayFrame& overlays, std::uint64_t timestamp_ns, std::vector<LayerMessage>& out) {
  out.clear();
  validate_layers(overlays, -1);
  for (std::size_t i = 0; i < overlays.layers.size(); ++i) {
    if (layer_array(overlays.layers[i]).count == 0) continue;  // no masks this frame: no message
    out.push_back(encode_one(overlays.layers[i], timestamp_ns, i));
  }
}

Layer decode_layer_message(const RawImageView& image, std::string_view settings, const std::string& file,
                           const std::string& location) {
  const SettingsReader r{file, location};
  simdjson::dom::parser parser;
  element root;
  simdjson::dom::object o;
  if (parser.parse(settings.data(), settings.size(), true).get(root) != simdjson::SUCCESS ||
      root.get_object().get(o) != simdjson::SUCCESS)
    throw ParseError(file, location, "handoff.layer", "the layer's channel metadata is not a JSON object");
  element e;
  if (o["kind"].get(e) != simdjson::SUCCESS) r.fail("kind", "missing");
  const std::string_view kind_name = r.text(e, "kind");
  const std::size_t kind = kind_name == "class_map" ? 0 : kind_name == "scalar_map" ? 1 : kind_name == "instance_masks" ? 2 : 3;
  if (kind == 3) r.fail("kind", "\"" + std::string(kind_name) + "\" is not class_map, scalar_map or instance_masks");
  SampleType type = kind == 0 ? SampleType::U8 : kind == 1 ? SampleType::F32 : SampleType::U8;
  if (kind == 0) {
    if (o["ids"].get(e) != simdjson::SUCCESS) r.fail("ids", "missing");
    type = id_type(r, r.text(e, "ids"));
  }
  const PixelFormat format = recorded_format(kind, type);
  const MessagePlace where{file, [&] { return location; }};
  if (raw_image_format(image.encoding) != format)
    throw ParseError(file, location, "RawImage.encoding",
                     "\"" + std::string(image.encoding) + "\" where a " + std::string(kind_name) +
                         (kind == 0 ? " of " + std::string(to_string(type)) + " ids" : std::string()) + " is " +
                         std::string(raw_image_encoding(format)));
  for (auto [name, v] : {std::pair{"RawImage.width", image.width}, std::pair{"RawImage.height", image.height}})
    if (std::string problem = dimension_problem(name, v); !problem.empty()) throw ParseError(file, location, name, problem);
  check_raw_image(image, format, image.width, image.height, where);
  LayerArray view;
  view.type = kind == 0 && sample_size(type) == 4 ? SampleType::F32 : type;
  view.width = image.width;
  view.height = image.height;
  view.pitch = image.step;
  view.data = image.data.data();
  if (kind == 0) {
    ClassMap m;
    read_class_settings(r, o, m);
    m.ids = sample_size(type) == 4 ? ids_from_floats(view, type, r) : packed_ids(view);
    return m;
  }
  if (kind == 1) {
    ScalarMap s;
    if (o["colormap"].get(e) == simdjson::SUCCESS) {
      try {
        s.colormap = parse_colormap(r.text(e, "colormap"));
      } catch (const InvalidFrame& bad) {
        r.fail("colormap", std::string(bad.what()).substr(bad.field().size() + 2));
      }
    }
    if (o["range"].get(e) == simdjson::SUCCESS) {
      simdjson::dom::array a;
      if (e.get_array().get(a) != simdjson::SUCCESS || a.size() != 2) r.fail("range", "not [lo, hi]");
      s.range = std::array<double, 2>{r.number(a.at(0).value(), "range"), r.number(a.at(1).value(), "range")};
    }
    r.common(o, s.opacity, s.target);
    s.values = packed_scalars(view);
    return s;
  }
  InstanceMasks k;
  if (o["mask_height"].get(e) != simdjson::SUCCESS) r.fail("mask_height", "missing");
  const std::int64_t h = r.integer(e, "mask_height");
  if (h <= 0 || image.height % std::uint64_t(h) != 0)
    r.fail("mask_height", std::to_string(h) + " does not divide the image's " + std::to_string(image.height) + " rows");
  r.common(o, k.opacity, k.target);
  view.height = std::uint32_t(h);
  view.count = image.height / std::uint32_t(h);
  view.image_stride = view.pitch * std::size_t(h);
  k.masks = packed_masks(view, 0.5f);
  return k;
}

}  // namespace handoff::media
