#pragma once
// The part of gst-plugins-bad's public gst/cuda library (GStreamer 1.22,
// libgstcuda-1.0) that handoff's elements and tests call, declared here
// because the library's own headers include the CUDA toolkit's cuda.h, which
// a machine without the toolkit lacks. CUcontext and CUdevice appear as what
// they are at the ABI level (a pointer, an int). Each declaration is checked
// against the real headers where the toolkit is present
// (tests/gst/gst_cuda_abi_check.cpp); handoff code includes only this file.
#include <gst/gst.h>

extern "C" {

typedef struct _GstCudaContext GstCudaContext;  // a GstObject

gboolean gst_cuda_load_library(void);
GType gst_cuda_context_get_type(void);
GstCudaContext* gst_cuda_context_new(guint device_id);
GstCudaContext* gst_cuda_context_new_wrapped(void* cuda_context /* CUcontext */, int device /* CUdevice */);
gpointer gst_cuda_context_get_handle(GstCudaContext* ctx);
gboolean gst_cuda_handle_context_query(GstElement* element, GstQuery* query, GstCudaContext* cuda_ctx);
GstContext* gst_context_new_cuda_context(GstCudaContext* cuda_ctx);
void gst_cuda_memory_init_once(void);
gboolean gst_is_cuda_memory(GstMemory* mem);
GstBufferPool* gst_cuda_buffer_pool_new(GstCudaContext* context);

}  // extern "C"

namespace handoff::gst::abi {

// GST_CUDA_CONTEXT_TYPE: the GstContext type the context query asks for.
inline constexpr const char* kCudaContextType = "gst.cuda.context";
// GST_MAP_CUDA (gstcudamemory.h): map the device memory, not system memory.
inline constexpr unsigned kMapCuda = unsigned(GST_MAP_FLAG_LAST) << 1;
// GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY.
inline constexpr const char* kCudaMemoryFeature = "memory:CUDAMemory";

// The public head of struct _GstCudaMemory: the GstMemory and its context
// (then a GstVideoInfo and private fields handoff does not touch).
struct CudaMemoryHead {
  GstMemory mem;
  GstCudaContext* context;
};

}  // namespace handoff::gst::abi
