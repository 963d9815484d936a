#pragma once
// RAII owners of CUDA driver handles: one UniqueHandle alias per handle type.
// Under detail/ because public classes (CudaVkMemory, CudaVkSemaphore,
// CudaEglImage) hold them as members; the library and handoff::live's CUDA
// slots use them, applications need not (they use those classes).
//
// Every deleter holds the *retained* primary context the handle was made in
// (RetainedContext): a primary context whose last retain is released is reset,
// which destroys every handle made in it and leaves their pointers dangling, so
// a handle keeps its context retained for as long as it lives, and is released
// with that context current. Releases never throw; a failure is logged.
//
// Thread safety: a handle may be released on any thread (the context is pushed
// for the call); one owner at a time, like any UniqueHandle.
#include <handoff/cuda.hpp>
#include <handoff/cuda_abi.hpp>
#include <handoff/unique_handle.hpp>

#include <cstddef>
#include <memory>

namespace handoff::cuda::detail {

// A primary context kept retained by everything that holds a copy.
using RetainedContext = std::shared_ptr<const PrimaryContext>;

// A new retain of `ctx`'s primary context (cuDevicePrimaryCtxRetain), shared by
// the handles made in it. Throws UsageError naming `who` when `ctx` is empty,
// handoff::Error when the driver refuses.
RetainedContext retain(const PrimaryContext& ctx, const char* who);

// A deleter: `Release(*ctx, handle)` with the handle's context current.
template <typename T, void (*Release)(const PrimaryContext&, T) noexcept>
struct ReleaseInContext {
  RetainedContext ctx;
  void operator()(T handle) const noexcept {
    if (ctx) Release(*ctx, handle);
  }
};

// The same for a release that needs the size the handle was made with.
template <typename T, void (*Release)(const PrimaryContext&, T, std::size_t) noexcept>
struct ReleaseSizedInContext {
  RetainedContext ctx;
  std::size_t size = 0;
  void operator()(T handle) const noexcept {
    if (ctx) Release(*ctx, handle, size);
  }
};

void destroy_external_memory(const PrimaryContext& ctx, abi::CUexternalMemory memory) noexcept;
void free_device_memory(const PrimaryContext& ctx, abi::CUdeviceptr pointer) noexcept;
void destroy_external_semaphore(const PrimaryContext& ctx, abi::CUexternalSemaphore semaphore) noexcept;
void unregister_resource(const PrimaryContext& ctx, abi::CUgraphicsResource resource) noexcept;
void unmap_resource(const PrimaryContext& ctx, abi::CUgraphicsResource resource) noexcept;
void destroy_event(const PrimaryContext& ctx, abi::CUevent event) noexcept;
void release_allocation(const PrimaryContext& ctx, abi::CUmemGenericAllocationHandle handle) noexcept;
void free_address_range(const PrimaryContext& ctx, abi::CUdeviceptr start, std::size_t size) noexcept;
void unmap_memory(const PrimaryContext& ctx, abi::CUdeviceptr start, std::size_t size) noexcept;
void close_ipc_memory(const PrimaryContext& ctx, abi::CUdeviceptr pointer) noexcept;

// cuImportExternalMemory; cuDestroyExternalMemory on release.
using UniqueExternalMemory =
    UniqueHandle<abi::CUexternalMemory, ReleaseInContext<abi::CUexternalMemory, &destroy_external_memory>>;
// Device memory released with cuMemFree: cuMemAlloc'd memory, or a buffer
// mapped from external memory (which must be freed before the external memory
// is destroyed: hold it after the UniqueExternalMemory, so it goes first).
using UniqueDevicePointer = UniqueHandle<abi::CUdeviceptr, ReleaseInContext<abi::CUdeviceptr, &free_device_memory>>;
// cuImportExternalSemaphore; cuDestroyExternalSemaphore on release.
using UniqueExternalSemaphore =
    UniqueHandle<abi::CUexternalSemaphore, ReleaseInContext<abi::CUexternalSemaphore, &destroy_external_semaphore>>;
// A graphics registration that needs no GL context to undo (an EGL image);
// cuGraphicsUnregisterResource on release. GL buffers' registrations are
// released on their GL worker instead (CudaGlBuffer).
using UniqueGraphicsResource =
    UniqueHandle<abi::CUgraphicsResource, ReleaseInContext<abi::CUgraphicsResource, &unregister_resource>>;
// That registration mapped on the default stream; cuGraphicsUnmapResources on
// release. Hold it after its UniqueGraphicsResource, so it is unmapped first.
using UniqueGraphicsMapping =
    UniqueHandle<abi::CUgraphicsResource, ReleaseInContext<abi::CUgraphicsResource, &unmap_resource>>;
// cuEventCreate / cuIpcOpenEventHandle; cuEventDestroy on release.
using UniqueEvent = UniqueHandle<abi::CUevent, ReleaseInContext<abi::CUevent, &destroy_event>>;

// The virtual-memory API, in the order of its documented teardown (hold them
// in this order, so member order gives it): a range reserved with
// cuMemAddressReserve (cuMemAddressFree), the physical allocation of
// cuMemCreate / cuMemImportFromShareableHandle (cuMemRelease), and its
// mapping into the range with cuMemMap (cuMemUnmap: unmapped first).
using UniqueAddressRange =
    UniqueHandle<abi::CUdeviceptr, ReleaseSizedInContext<abi::CUdeviceptr, &free_address_range>>;
using UniqueAllocation = UniqueHandle<abi::CUmemGenericAllocationHandle,
                                      ReleaseInContext<abi::CUmemGenericAllocationHandle, &release_allocation>>;
using UniqueMemoryMapping = UniqueHandle<abi::CUdeviceptr, ReleaseSizedInContext<abi::CUdeviceptr, &unmap_memory>>;
// Another process's memory opened with cuIpcOpenMemHandle; cuIpcCloseMemHandle on release.
using UniqueIpcMemory = UniqueHandle<abi::CUdeviceptr, ReleaseInContext<abi::CUdeviceptr, &close_ipc_memory>>;

}  // namespace handoff::cuda::detail
