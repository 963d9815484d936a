#pragma once
// Dense layers for round-trip tests (live attach, recordings): a frame with
// two boxes and one layer of each kind, in sample types that need converting
// (u16 ids in pitched rows, f64 scalars, bool masks), and a comparison of
// what came back against what was sent, converted as media::pack_layer
// converts (what every carrier delivers).
#include <handoff/media/overlay.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace handoff::test {

// `bytes` as the owner of a host LayerArray of `type`.
inline media::LayerArray owned_array(media::SampleType type, std::uint32_t w, std::uint32_t h, std::uint32_t count,
                                     std::size_t pitch, const std::vector<std::uint8_t>& bytes) {
  auto storage = std::make_shared<std::vector<std::uint8_t>>(bytes);
  media::LayerArray a;
  a.type = type;
  a.width = w;
  a.height = h;
  a.count = count;
  a.pitch = pitch;
  a.data = storage->data();
  a.owner = storage;
  return a;
}

template <typename T>
std::vector<std::uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<std::uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Two boxes and three layers: a class map, a scalar map, two instance masks.
inline media::OverlayFrame layered_overlays(std::int64_t frame = 3) {
  media::OverlayFrame f;
  f.frame = frame;
  f.add_box(2, 2, 20, 12, "a", 0.9f, 1);
  f.add_box(30, 4, 50, 30, "b", 0.8f, 2);
  // u16 ids, 20 x 10, rows padded to 24 samples.
  std::vector<std::uint16_t> ids(24 * 10, 0xEEEE);
  for (std::uint32_t y = 0; y < 10; ++y)
    for (std::uint32_t x = 0; x < 20; ++x) ids[y * 24 + x] = std::uint16_t(x < 4 ? 300 : (x + 3 * y) % 5);
  media::ClassMap m;
  m.ids = owned_array(media::SampleType::U16, 20, 10, 1, 48, bytes_of(ids));
  m.colors = {{1, {200, 10, 10, 255}}, {300, {10, 10, 200, 255}}};
  m.names = {{0, "background"}, {1, "road"}, {300, "car \"big\""}};
  m.transparent = {0};
  m.opacity = 0.4f;
  m.target = media::RectF{2, 3, 50, 40};
  f.layers.push_back(m);
  std::vector<double> values(16 * 8);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = double(i % 16) * 0.5 - double(i / 16);
  values[5] = NAN;
  media::ScalarMap s;
  s.values = owned_array(media::SampleType::F64, 16, 8, 1, 0, bytes_of(values));
  s.colormap = media::Colormap::Viridis;
  s.range = std::array<double, 2>{-4.0, 8.0};
  s.opacity = 0.7f;
  f.layers.push_back(s);
  std::vector<std::uint8_t> masks(2 * 6 * 12);
  for (std::size_t i = 0; i < masks.size(); ++i) masks[i] = (i * 7 % 3) == 0;
  media::InstanceMasks k;
  k.masks = owned_array(media::SampleType::Bool, 12, 6, 2, 0, masks);
  k.opacity = 0.6f;
  f.layers.push_back(k);
  return f;
}

// "" when `got`'s layers are `sent`'s, converted as pack_layer converts
// (settings equal, colours' RGB, every sample's bytes); else the first difference.
inline std::string layer_difference(const media::OverlayFrame& got, const media::OverlayFrame& sent) {
  std::ostringstream o;
  if (got.layers.size() != sent.layers.size()) {
    o << got.layers.size() << " layers, sent " << sent.layers.size();
    return o.str();
  }
  for (std::size_t i = 0; i < sent.layers.size(); ++i) {
    media::Layer want = sent.layers[i];
    media::pack_layer(want);
    const media::Layer& have = got.layers[i];
    if (have.index() != want.index()) return "layers[" + std::to_string(i) + "]: another kind";
    const media::LayerArray &a = media::layer_array(have), &b = media::layer_array(want);
    if (a.type != b.type || a.width != b.width || a.height != b.height || a.count != b.count) {
      o << "layers[" << i << "]: " << media::to_string(a.type) << " " << a.count << "x" << a.height << "x" << a.width
        << ", sent " << media::to_string(b.type) << " " << b.count << "x" << b.height << "x" << b.width;
      return o.str();
    }
    for (std::uint32_t n = 0; n < a.count; ++n)
      for (std::uint32_t y = 0; y < a.height; ++y) {
        const auto* ra = static_cast<const std::uint8_t*>(a.data) + n * a.image_pitch() + y * a.row_pitch();
        const auto* rb = static_cast<const std::uint8_t*>(b.data) + n * b.image_pitch() + y * b.row_pitch();
        if (std::memcmp(ra, rb, a.row_bytes()) != 0) {
          o << "layers[" << i << "]: image " << n << " row " << y << " differs";
          return o.str();
        }
      }
    auto same_target = [](const std::optional<media::RectF>& p, const std::optional<media::RectF>& q) {
      return p.has_value() == q.has_value() && (!p || (p->x == q->x && p->y == q->y && p->w == q->w && p->h == q->h));
    };
    const std::string at = "layers[" + std::to_string(i) + "]: ";
    if (const auto* c = std::get_if<media::ClassMap>(&have)) {
      const auto& w = std::get<media::ClassMap>(want);
      if (c->names != w.names) return at + "names differ";
      if (c->transparent != w.transparent) return at + "transparent ids differ";
      if (c->colors.size() != w.colors.size()) return at + "colour count differs";
      for (const auto& [id, col] : w.colors) {
        auto it = c->colors.find(id);
        if (it == c->colors.end() || it->second.r != col.r || it->second.g != col.g || it->second.b != col.b)
          return at + "colour of id " + std::to_string(id) + " differs";
      }
      if (c->opacity != w.opacity || !same_target(c->target, w.target)) return at + "opacity or target differs";
    } else if (const auto* s = std::get_if<media::ScalarMap>(&have)) {
      const auto& w = std::get<media::ScalarMap>(want);
      if (s->colormap != w.colormap || s->range != w.range || s->opacity != w.opacity ||
          !same_target(s->target, w.target))
        return at + "colormap, range, opacity or target differs";
    } else {
      const auto& k = std::get<media::InstanceMasks>(have);
      const auto& w = std::get<media::InstanceMasks>(want);
      if (k.threshold != w.threshold || k.opacity != w.opacity || !same_target(k.target, w.target))
        return at + "threshold, opacity or target differs";
    }
  }
  return "";
}

}  // namespace handoff::test
