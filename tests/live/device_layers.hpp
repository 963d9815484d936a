#pragma once
// A frame's layers copied into CUDA memory, as a model's output tensors are:
// for the live tests on the fake driver and on a real GPU.
#include <handoff/cuda.hpp>
#include <handoff/media/overlay.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>

#include <algorithm>
#include <vector>

namespace handoff::live::test {

// The layers of `host` as CUDA arrays in the primary context (one cuMemAlloc
// each, pitches kept), freed with the object.
class DeviceLayers {
 public:
  explicit DeviceLayers(const media::OverlayFrame& host) : overlays(host), ctx_(0) {
    const auto& api = cuda::driver().api();
    cuda::ScopedContext cur(ctx_);
    for (media::Layer& l : overlays.layers) {
      media::LayerArray& a = media::layer_array(l);
      const std::size_t bytes = a.image_pitch() * std::max<std::uint32_t>(a.count, 1);
      cuda::abi::CUdeviceptr p = 0;
      HANDOFF_CU_CHECK(api.cuMemAlloc(&p, bytes));
      ptrs_.push_back(p);
      HANDOFF_CU_CHECK(api.cuMemcpyHtoD(p, a.data, bytes));
      a.memory = MemoryKind::Cuda;
      a.device = 0;
      a.cuda_context = ctx_.handle();
      a.data = reinterpret_cast<void*>(p);
      a.owner.reset();
    }
  }
  ~DeviceLayers() {
    cuda::ScopedContext cur(ctx_);
    for (const cuda::abi::CUdeviceptr p : ptrs_) cuda::driver().api().cuMemFree(p);
  }
  media::OverlayFrame overlays;

 private:
  cuda::PrimaryContext ctx_;
  std::vector<cuda::abi::CUdeviceptr> ptrs_;
};

}  // namespace handoff::live::test
