#include "layer_copy.hpp"

#include <handoff/frame_validate.hpp>


namespace handoff::view {

namespace {

using media::LayerArray;

// The conversion is media's (shared with the live publisher and the recording writer).
LayerArray copy_ids(const LayerArray& a) { return media::packed_ids(a); }
LayerArray copy_scalars(const LayerArray& a) { return media::packed_scalars(a); }
LayerArray copy_masks(const LayerArray& a, float threshold) { return media::packed_masks(a, threshold); }

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
