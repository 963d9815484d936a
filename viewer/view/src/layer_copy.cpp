#include "layer_copy.hpp"

#include "layer_buffers.hpp"

#include <handoff/frame_validate.hpp>

#include <cmath>
#include <cstring>
#include <memory>

namespace handoff::view {

namespace {

using media::LayerArray;
using media::SampleType;

// A packed host array of `type` with `a`'s shape, owned by the result.
LayerArray packed_like(const LayerArray& a, SampleType type, std::uint8_t*& bytes) {
  LayerArray out;
  out.type = type;
  out.width = a.width;
  out.height = a.height;
  out.count = a.count;
  const std::size_t total = out.row_bytes() * out.height * std::max<std::uint32_t>(out.count, 1);
  auto storage = layer_buffer(total);  // reused from an earlier frame's layers when it can
  bytes = storage.get();
  out.data = bytes;
  out.owner = std::move(storage);
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
      f(in + n * src.image_pitch() + y * src.row_pitch(),
        out + (std::size_t(n) * dst.height + y) * dst.row_bytes());
}

// 32- and 64-bit ids that all fit 0..255 (most class maps) become 8-bit:
// a quarter of the bytes to store, upload or read, the same ids.
bool try_narrow_ids(const LayerArray& a, LayerArray& c) {
  const std::size_t bytes = media::sample_size(a.type);
  if (bytes < 4) return false;
  std::uint8_t* out = nullptr;
  c = packed_like(a, SampleType::U8, out);
  bool fits = true;
  for_rows(a, c, out, [&](const std::uint8_t* s, std::uint8_t* d) {
    fits = fits && narrow_ids_to_u8(s, a.width, bytes, d);
  });
  return fits;
}

LayerArray copy_ids(const LayerArray& a) {
  if (LayerArray narrow; try_narrow_ids(a, narrow)) return narrow;
  const bool wide = media::sample_size(a.type) == 8;
  const SampleType to = !wide ? a.type : a.type == SampleType::U64 ? SampleType::U32 : SampleType::I32;
  std::uint8_t* out = nullptr;
  LayerArray c = packed_like(a, to, out);
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

LayerArray copy_scalars(const LayerArray& a) {
  std::uint8_t* out = nullptr;
  LayerArray c = packed_like(a, SampleType::F32, out);
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

LayerArray copy_masks(const LayerArray& a, float threshold) {
  std::uint8_t* out = nullptr;
  LayerArray c = packed_like(a, SampleType::U8, out);
  for_rows(a, c, out, [&](const std::uint8_t* s, std::uint8_t* d) {
    for (std::uint32_t x = 0; x < a.width; ++x) d[x] = sample(s, x, a.type) > double(threshold) ? 1 : 0;
  });
  return c;
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

media::OverlayFrame copy_layers(const media::OverlayFrame& overlays, int cuda_device) {
  media::validate_layers(overlays, cuda_device);
  media::OverlayFrame out = overlays;
  for (std::size_t i = 0; i < out.layers.size(); ++i) {
    std::visit(
        [&](auto& layer) {
          using T = std::decay_t<decltype(layer)>;
          LayerArray* a;
          if constexpr (std::is_same_v<T, media::ClassMap>) a = &layer.ids;
          else if constexpr (std::is_same_v<T, media::ScalarMap>) a = &layer.values;
          else a = &layer.masks;
          if (a->memory != MemoryKind::Host) {
            throw InvalidFrame("layers[" + std::to_string(i) + "].memory",
                               "CUDA layers are not drawn by this viewer yet: pass host arrays");
          }
          if constexpr (std::is_same_v<T, media::ClassMap>) *a = copy_ids(*a);
          else if constexpr (std::is_same_v<T, media::ScalarMap>) *a = copy_scalars(*a);
          else {
            *a = copy_masks(*a, layer.threshold);
            layer.threshold = 0.5f;
          }
        },
        out.layers[i]);
  }
  return out;
}

}  // namespace handoff::view
