// Packed host copies of layers, converted to the sample types the viewer
// draws from (docs/layers.md "Memory and timing"): the one conversion the
// viewer's show(), the live publisher and the recording writer share.
#include <handoff/media/overlay.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace handoff::media {

namespace {

// A packed host array of `type` with `a`'s shape, owned by the result.
LayerArray packed_like(const LayerArray& a, SampleType type, std::uint8_t*& bytes, const LayerStorage& storage) {
  LayerArray out;
  out.type = type;
  out.width = a.width;
  out.height = a.height;
  out.count = a.count;
  const std::size_t total = out.row_bytes() * out.height * std::max<std::uint32_t>(out.count, 1);
  std::shared_ptr<std::uint8_t[]> memory =
      storage ? storage(total) : std::shared_ptr<std::uint8_t[]>(new std::uint8_t[std::max<std::size_t>(total, 1)]);
  bytes = memory.get();
  out.data = bytes;
  out.owner = std::move(memory);
  return out;
}

template <typename T>
T load(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Sample `i` of a row as a double (scalars, float masks).
double sample(const std::uint8_t* row, std::size_t i, SampleType t) {
  switch (t) {
    case SampleType::U8:
    case SampleType::Bool: return row[i];
    case SampleType::U16: return load<std::uint16_t>(row + 2 * i);
    case SampleType::U32: return load<std::uint32_t>(row + 4 * i);
    case SampleType::U64: return double(load<std::uint64_t>(row + 8 * i));
    case SampleType::I8: return load<std::int8_t>(row + i);
    case SampleType::I16: return load<std::int16_t>(row + 2 * i);
    case SampleType::I32: return load<std::int32_t>(row + 4 * i);
    case SampleType::I64: return double(load<std::int64_t>(row + 8 * i));
    case SampleType::F16: return half_to_float(load<std::uint16_t>(row + 2 * i));
    case SampleType::F32: return load<float>(row + 4 * i);
    case SampleType::F64: return load<double>(row + 8 * i);
  }
  return NAN;
}

// Calls f(source row, destination row) for every row of every image.
template <typename F>
void for_rows(const LayerArray& src, const LayerArray& dst, std::uint8_t* out, F&& f) {
  const auto* in = static_cast<const std::uint8_t*>(src.data);
  for (std::uint32_t n = 0; n < src.count; ++n)
    for (std::uint32_t y = 0; y < src.height; ++y)
      f(in + n * src.image_pitch() + y * src.row_pitch(), out + (std::size_t(n) * dst.height + y) * dst.row_bytes());
}

}  // namespace

float half_to_float(std::uint16_t h) {
  const int sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float v;
  if (exponent == 0) v = std::ldexp(float(mantissa), -24);  // zero and subnormals
  else if (exponent == 31) v = mantissa ? NAN : INFINITY;
  else v = std::ldexp(float(mantissa | 0x400), exponent - 25);
  return sign ? -v : v;
}

LayerArray packed_ids(const LayerArray& a, const LayerStorage& storage, bool whole) {
  const bool wide = sample_size(a.type) == 8 && !whole;
  const SampleType to = !wide ? a.type : a.type == SampleType::U64 ? SampleType::U32 : SampleType::I32;
  std::uint8_t* out = nullptr;
  LayerArray c = packed_like(a, to, out, storage);
  for_rows(a, c, out, [&](const std::uint8_t* s, std::uint8_t* d) {
    if (!wide) {
      std::memcpy(d, s, c.row_bytes());
      return;
    }
    for (std::uint32_t x = 0; x < a.width; ++x) {
      const auto low = static_cast<std::uint32_t>(load<std::uint64_t>(s + 8 * x));  // the low 32 bits
      std::memcpy(d + 4 * x, &low, 4);
    }
  });
  return c;
}

LayerArray packed_scalars(const LayerArray& a, const LayerStorage& storage) {
  std::uint8_t* out = nullptr;
  LayerArray c = packed_like(a, SampleType::F32, out, storage);
  for_rows(a, c, out, [&](const std::uint8_t* s, std::uint8_t* d) {
    if (a.type == SampleType::F32) {
      std::memcpy(d, s, c.row_bytes());
      return;
    }
    auto* f = reinterpret_cast<float*>(d);
    for (std::uint32_t x = 0; x < a.width; ++x) f[x] = static_cast<float>(sample(s, x, a.type));
  });
  return c;
}

LayerArray packed_masks(const LayerArray& a, float threshold, const LayerStorage& storage) {
  std::uint8_t* out = nullptr;
  LayerArray c = packed_like(a, SampleType::U8, out, storage);
  for_rows(a, c, out, [&](const std::uint8_t* s, std::uint8_t* d) {
    for (std::uint32_t x = 0; x < a.width; ++x) d[x] = sample(s, x, a.type) > double(threshold) ? 1 : 0;
  });
  return c;
}

namespace {

// A class map whose 64-bit ids became their low 32 bits (`to`: u32 or i32):
// its colours, names and transparent ids go with the ids they now are.
void narrow_keys(ClassMap& m, SampleType to) {
  const auto low = [to](std::int64_t id) {
    return to == SampleType::U32 ? std::int64_t(std::uint32_t(id)) : std::int64_t(std::int32_t(id));
  };
  std::map<std::int64_t, Color8> colors;
  for (const auto& [id, c] : m.colors) colors.emplace(low(id), c);
  std::map<std::int64_t, std::string> names;
  for (const auto& [id, n] : m.names) names.emplace(low(id), n);
  for (std::int64_t& id : m.transparent) id = low(id);
  m.colors = std::move(colors);
  m.names = std::move(names);
}

}  // namespace

void pack_layer(Layer& layer) {
  if (auto* m = std::get_if<ClassMap>(&layer)) {
    const bool wide = sample_size(m->ids.type) == 8;
    m->ids = packed_ids(m->ids);
    if (wide) narrow_keys(*m, m->ids.type);
  } else if (auto* s = std::get_if<ScalarMap>(&layer)) s->values = packed_scalars(s->values);
  else {
    auto& k = std::get<InstanceMasks>(layer);
    k.masks = packed_masks(k.masks, k.threshold);
    k.threshold = 0.5f;
  }
}

const LayerArray& layer_array(const Layer& layer) {
  if (const auto* m = std::get_if<ClassMap>(&layer)) return m->ids;
  if (const auto* s = std::get_if<ScalarMap>(&layer)) return s->values;
  return std::get<InstanceMasks>(layer).masks;
}

LayerArray& layer_array(Layer& layer) { return const_cast<LayerArray&>(layer_array(std::as_const(layer))); }

}  // namespace handoff::media
