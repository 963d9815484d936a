#include "cuda_layers.hpp"

#include <handoff/cuda.hpp>
#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>
#include <handoff/cuda_copy_2d.hpp>
#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <variant>

namespace handoff::live::detail {

namespace {

std::string at(std::size_t i) { return "layers[" + std::to_string(i) + "]"; }

// "layers[i].ids" and the like: the field of the layer's array.
std::string array_field(const media::Layer& l, std::size_t i) {
  if (std::holds_alternative<media::ClassMap>(l)) return at(i) + ".ids";
  if (std::holds_alternative<media::ScalarMap>(l)) return at(i) + ".values";
  return at(i) + ".masks";
}

}  // namespace

void check_publish_layers(const media::OverlayFrame& overlays) {
  int device = -1;
  std::size_t first = 0;
  for (std::size_t i = 0; i < overlays.layers.size(); ++i) {
    const media::LayerArray& a = media::layer_array(overlays.layers[i]);
    if (a.memory != MemoryKind::Cuda) continue;
    if (a.device < 0)
      throw InvalidFrame(array_field(overlays.layers[i], i) + ".device",
                         "a CUDA layer on device " + std::to_string(a.device) + ": its device ordinal is 0 or above");
    if (device < 0) {
      device = a.device;
      first = i;
    } else if (a.device != device) {
      throw InvalidFrame(array_field(overlays.layers[i], i) + ".device",
                         "on CUDA device " + std::to_string(a.device) + ", " + at(first) + " on device " +
                             std::to_string(device) + ": a frame's CUDA layers are on one device");
    }
  }
  media::validate_layers(overlays, device);  // -1: no CUDA layer
}

std::optional<media::OverlayFrame> host_layers(const media::OverlayFrame& overlays, CudaStream stream) {
  if (std::none_of(overlays.layers.begin(), overlays.layers.end(),
                   [](const media::Layer& l) { return media::layer_array(l).memory == MemoryKind::Cuda; }))
    return std::nullopt;
  const cuda::Driver& drv = cuda::driver();
  media::OverlayFrame out = overlays;
  bool waited = false;
  for (std::size_t i = 0; i < out.layers.size(); ++i) {
    media::LayerArray& a = media::layer_array(out.layers[i]);
    if (a.memory != MemoryKind::Cuda) continue;
    auto* ctx = static_cast<cuda::abi::CUctx_st*>(a.cuda_context);
    if (!waited) {
      // The caller's writes first: its stream, in the stream's own context.
      auto* stream_ctx = stream.context() ? static_cast<cuda::abi::CUctx_st*>(stream.context()) : ctx;
      cuda::ScopedContext current(drv, stream_ctx);
      HANDOFF_CU_CHECK(drv.api().cuStreamSynchronize(static_cast<cuda::abi::CUstream>(stream.handle())),
                       "publish: the caller's stream, before copying " + at(i) + " to the host");
      waited = true;
    }
    const std::size_t images = a.count;  // 0 masks: nothing of the caller's is read
    const std::size_t image_bytes = a.row_bytes() * a.height;
    std::shared_ptr<std::uint8_t[]> host(new std::uint8_t[std::max<std::size_t>(image_bytes * images, 1)]);
    {
      cuda::ScopedContext current(drv, ctx);
      const auto* from = static_cast<const std::byte*>(a.data);
      for (std::size_t n = 0; n < images; ++n)
        cuda::copy_2d_async(drv, {true, from + n * a.image_pitch(), a.row_pitch()},
                            {false, host.get() + n * image_bytes, a.row_bytes()}, a.row_bytes(), a.height, nullptr,
                            "publish: the copy of CUDA " + at(i) + " to the host");
      HANDOFF_CU_CHECK(drv.api().cuStreamSynchronize(nullptr), "publish: the copy of CUDA " + at(i) + " to the host");
    }
    a.memory = MemoryKind::Host;
    a.data = host.get();
    a.pitch = 0;
    a.image_stride = 0;
    a.device = -1;
    a.cuda_context = nullptr;
    a.owner = std::move(host);
  }
  return out;
}

}  // namespace handoff::live::detail
