#pragma once
// memory:CUDAMemory in the elements: gst-plugins-bad's GstCudaMemory (the
// public gst/cuda library, 1.22), as far as handoff uses it. The library's
// own headers need the CUDA toolkit's cuda.h, so the few declarations used
// are handoff's (gst_cuda_abi.hpp), checked against those headers where the
// toolkit is present (tests/gst/gst_cuda_abi_check.cpp).
//
// CudaShare wraps the viewer's CUDA primary context in a GstCudaContext and
// offers it to upstream elements through the "gst.cuda.context" context
// query, so decoders and cudaupload allocate in the context the viewer copies
// from: their device memory then goes device to device into the viewer.
#include <gst/gst.h>

#include <memory>
#include <string>

namespace handoff::gst {

// True when the build has gst/cuda (memory:CUDAMemory caps are offered).
bool cuda_memory_available() noexcept;
// GST_MAP_CUDA: map a GstCudaMemory's device memory instead of system memory.
GstMapFlags cuda_map_flag() noexcept;

class CudaShare {
 public:
  // The primary context of `device` wrapped for GStreamer; null (with a debug
  // line saying why) where CUDA or gst/cuda is unusable. Never throws.
  // `problem` (when given) says why a usable CUDA driver gave no context for
  // `device` (no such device, ...); it stays empty where CUDA is simply absent.
  static std::unique_ptr<CudaShare> open(int device, std::string* problem = nullptr);
  virtual ~CudaShare() = default;

  // Answers a "gst.cuda.context" context query with this context; false for others.
  virtual bool answer_context_query(GstElement* element, GstQuery* query) const = 0;
  // True when `mem` is a GstCudaMemory of this CUDA context.
  virtual bool owns(GstMemory* mem) const = 0;
  virtual int device() const noexcept = 0;
  virtual void* context() const noexcept = 0;  // the CUcontext
};

}  // namespace handoff::gst
