// CudaShare over gst/cuda (builds with gstreamer-cuda-1.0).
#include "cuda_memory.hpp"

#include <handoff/cuda.hpp>

#include "gst_cuda_abi.hpp"

GST_DEBUG_CATEGORY_STATIC(handoff_gst_cuda_debug);
#define GST_CAT_DEFAULT handoff_gst_cuda_debug

namespace handoff::gst {

bool cuda_memory_available() noexcept { return true; }
GstMapFlags cuda_map_flag() noexcept { return GstMapFlags(abi::kMapCuda); }

namespace {

class GstCudaShare final : public CudaShare {
 public:
  GstCudaShare(cuda::PrimaryContext ctx, GstCudaContext* wrapped) : ctx_(std::move(ctx)), wrapped_(wrapped) {}
  ~GstCudaShare() override { gst_object_unref(wrapped_); }  // before ctx_ releases the primary context

  bool answer_context_query(GstElement* element, GstQuery* query) const override {
    return gst_cuda_handle_context_query(element, query, wrapped_) != FALSE;
  }
  bool owns(GstMemory* mem) const override {
    if (!mem || !gst_is_cuda_memory(mem)) return false;
    const auto* head = reinterpret_cast<const abi::CudaMemoryHead*>(mem);
    return head->context && gst_cuda_context_get_handle(head->context) == ctx_.handle();
  }
  int device() const noexcept override { return ctx_.device(); }
  void* context() const noexcept override { return ctx_.handle(); }

 private:
  cuda::PrimaryContext ctx_;  // retained while GStreamer uses the wrapper
  GstCudaContext* wrapped_;
};

void init_debug() {
  static const bool once = [] {
    GST_DEBUG_CATEGORY_INIT(handoff_gst_cuda_debug, "handoffcuda", 0, "handoff elements: CUDA memory");
    return true;
  }();
  (void)once;
}

}  // namespace

std::unique_ptr<CudaShare> CudaShare::open(int device, std::string* problem) {
  init_debug();
  const cuda::Driver& drv = cuda::driver();
  if (!drv.usable()) {
    GST_DEBUG("no CUDA context to offer: %s", drv.describe().c_str());
    return nullptr;
  }
  auto refuse = [&](const std::string& why) -> std::unique_ptr<CudaShare> {
    GST_DEBUG("no CUDA context to offer: %s", why.c_str());
    if (problem) *problem = why;
    return nullptr;
  };
  try {
    if (!gst_cuda_load_library()) return refuse("gst/cuda could not load the CUDA driver library");
    gst_cuda_memory_init_once();
    cuda::PrimaryContext ctx(drv, device);
    GstCudaContext* wrapped = gst_cuda_context_new_wrapped(ctx.handle(), device);
    if (!wrapped) return refuse("gst_cuda_context_new_wrapped failed for device " + std::to_string(device));
    return std::make_unique<GstCudaShare>(std::move(ctx), wrapped);
  } catch (const std::exception& e) {
    return refuse(e.what());
  }
}

}  // namespace handoff::gst
