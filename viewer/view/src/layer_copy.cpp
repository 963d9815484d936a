#include "layer_copy.hpp"

#include "layer_buffers.hpp"

#include <handoff/frame_validate.hpp>

#include <algorithm>

namespace handoff::view {

namespace {

using media::LayerArray;

// The conversion is media's (shared with the live publisher and the recording
// writer), into buffers reused from earlier frames' copies (layer_buffers.hpp).
const media::LayerStorage kStorage = [](std::size_t bytes) { return layer_buffer(bytes); };

// 32- and 64-bit ids that all fit 0..255 (most class maps) become 8-bit:
// a quarter of the bytes to store, upload or read, the same ids.
bool try_narrow_ids(const LayerArray& a, LayerArray& c) {
  const std::size_t bytes = media::sample_size(a.type);
  if (bytes < 4) return false;
  c = LayerArray();
  c.type = media::SampleType::U8;
  c.width = a.width;
  c.height = a.height;
  c.count = a.count;
  auto storage = layer_buffer(c.row_bytes() * c.height * std::max<std::uint32_t>(c.count, 1));
  const auto* in = static_cast<const std::uint8_t*>(a.data);
  for (std::uint32_t n = 0; n < a.count; ++n)
    for (std::uint32_t y = 0; y < a.height; ++y)
      if (!narrow_ids_to_u8(in + n * a.image_pitch() + y * a.row_pitch(), a.width, bytes,
                            storage.get() + (std::size_t(n) * c.height + y) * c.row_bytes()))
        return false;
  c.data = storage.get();
  c.owner = std::move(storage);
  return true;
}

LayerArray copy_ids(const LayerArray& a) {
  if (LayerArray narrow; try_narrow_ids(a, narrow)) return narrow;
  return media::packed_ids(a, kStorage, true);  // 64-bit ids whole: the inspector and legend show them
}
LayerArray copy_scalars(const LayerArray& a) { return media::packed_scalars(a, kStorage); }
LayerArray copy_masks(const LayerArray& a, float threshold) { return media::packed_masks(a, threshold, kStorage); }

}  // namespace

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
          if (a->memory == MemoryKind::Cuda) return;  // copied device to device by the ring (PushRing)
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
