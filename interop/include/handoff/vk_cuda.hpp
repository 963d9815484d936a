#pragma once
// Vulkan memory in CUDA: cuImportExternalMemory of an exported descriptor and
// one device pointer covering the object (cuExternalMemoryGetMappedBuffer).
// Release follows the driver API's contract: cuMemFree the mapped pointer,
// then cuDestroyExternalMemory. External semaphores (Vulkan -> CUDA stream and
// back) where the driver supports them. Every object here keeps its primary
// context retained (a new retain of the caller's), so it stays valid, and so do
// its pointers, after the caller's own PrimaryContext is gone.
//
//   cuda::PrimaryContext ctx(0);
//   VkFrameBuffer vkframe(vk, PixelFormat::NV12, 1920, 1080);
//   Frame f = import_vk_frame(ctx, vkframe);  // MemoryKind::Cuda, owner keeps the import
//   DLManagedTensor* t = export_dlpack(f, FramePart::Luma);
//
// Descriptors: OPAQUE_FD imports as CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
// DMA_BUF as CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD where the driver accepts
// it. A DMA-BUF image plane the driver refuses goes the EGLImage route
// (import_dmabuf_plane below, cuda_egl.hpp); buffers have no such route.
// Ownership: the import takes ExportedMemory::fd on success only.
#include <cstdint>
#include <memory>

#include <handoff/cuda_stream.hpp>
#include <handoff/cuda.hpp>
#include <handoff/cuda_egl.hpp>
#include <handoff/frame.hpp>
#include <handoff/vk_memory.hpp>
#include <handoff/vk_producer.hpp>

namespace handoff {

// Throws handoff::Error naming both UUIDs when the CUDA device is not the
// Vulkan device (interop across GPUs is refused).
void check_vk_cuda_device(const VkDeviceInfo& vk, const cuda::DeviceInfo& cuda);

// Exported Vulkan memory imported into CUDA and mapped as one range.
// Thread safety: construct and destroy on any thread (the context is pushed
// for each driver call); the pointer may be used on any thread with the
// context current. Destruction never throws (failures are logged).
// Ownership: holds a retain of the primary context, the import and the mapping.
class CudaVkMemory {
 public:
  // Imports `memory` into `ctx`'s device and maps [offset, offset + size) of it
  // (default: the whole object, memory.offset / memory.size). Throws
  // handoff::Error naming the CUDA call and error; on failure nothing is left
  // and the descriptor is still the caller's (when the import was what failed).
  CudaVkMemory(const cuda::PrimaryContext& ctx, ExportedMemory& memory);
  CudaVkMemory(const cuda::PrimaryContext& ctx, ExportedMemory& memory, std::uint64_t offset,
               std::uint64_t size);
  ~CudaVkMemory();
  CudaVkMemory(const CudaVkMemory&) = delete;
  CudaVkMemory& operator=(const CudaVkMemory&) = delete;

  std::uint64_t device_pointer() const noexcept;  // a CUdeviceptr, at `offset`
  std::uint64_t size() const noexcept { return size_; }
  void* context() const noexcept;  // CUcontext, retained while this lives
  int device() const noexcept;

 private:
  struct Handles;  // the context's retain, the import and the mapping (vk_cuda.cpp)
  std::unique_ptr<Handles> handles_;
  std::uint64_t lead_ = 0;  // offset - the mapping's start: device_pointer() is the mapping + lead_
  std::uint64_t size_ = 0;
};

// A VkFrameBuffer's memory in CUDA as a Frame (MemoryKind::Cuda, device and
// primary context set, plane pointers at their offsets in one mapping; owner
// keeps the import alive, so the frame exports through DLPack / CAI like any
// CUDA frame). `index` / colorimetry are copied from `producer` when given.
// Refuses a CUDA device other than the buffer's Vulkan device (check_vk_cuda_device).
// The Vulkan buffer must outlive the frame's use (CUDA holds the allocation,
// but only Vulkan writes it). Synchronise first: after VkFrameProducer::produce()
// (CPU fence) the frame is complete; with semaphores, wait on a stream.
Frame import_vk_frame(const cuda::PrimaryContext& ctx, const VkFrameBuffer& buffer);
Frame import_vk_frame(const cuda::PrimaryContext& ctx, VkFrameProducer& producer);

// A DMA-BUF plane (`memory`, type DmaBuf, laid out as `plane` says; plane.fd
// is ignored: memory.fd is used) in CUDA by whichever route the platform
// takes: external memory first (cuImportExternalMemory, DMABUF_FD: the plane
// at device_pointer, pitch plane.pitch; takes memory.fd), then, where the
// driver refuses it, the EGLImage route through `egl_display` (null: skip it;
// memory.fd stays the caller's). When neither works the Error names both
// failures. `owner` keeps the import, and its primary context, alive.
struct CudaDmaBufPlane {
  std::shared_ptr<void> owner;
  std::uint64_t device_pointer = 0;  // 0 when the EGL route gave a CUDA array
  void* array = nullptr;             // CUarray (EGL route, tiled images)
  std::uint32_t pitch = 0;           // 0 for a CUDA array
  bool via_egl_image = false;
};
CudaDmaBufPlane import_dmabuf_plane(const cuda::PrimaryContext& ctx, ExportedMemory& memory, const DmaBufPlane& plane,
                                    void* egl_display);

// A Vulkan semaphore imported into CUDA (OPAQUE_FD). Error where the driver
// refuses (CUDA_ERROR_NOT_SUPPORTED), so callers fall back to CPU fences.
// Thread safety: as CudaVkMemory. Ownership: holds a retain of the primary
// context and the imported semaphore.
class CudaVkSemaphore {
 public:
  CudaVkSemaphore(const cuda::PrimaryContext& ctx, const VkExportableSemaphore& semaphore);
  // From a descriptor exported elsewhere (VkExportableSemaphore::export_fd()):
  // takes `fd` on success only.
  CudaVkSemaphore(const cuda::PrimaryContext& ctx, UniqueFd& fd);
  CudaVkSemaphore(const CudaVkSemaphore&) = delete;
  CudaVkSemaphore& operator=(const CudaVkSemaphore&) = delete;
  // Enqueue a wait for the Vulkan signal / a signal for Vulkan to wait on, on `stream`.
  void wait(CudaStream stream = {});
  void signal(CudaStream stream = {});
  ~CudaVkSemaphore();

 private:
  struct Handles;  // the context's retain and the imported semaphore (vk_cuda.cpp)
  std::unique_ptr<Handles> handles_;
};

}  // namespace handoff
