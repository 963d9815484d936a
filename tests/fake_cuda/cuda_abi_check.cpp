// handoff's own CUDA declarations (handoff/cuda_abi.hpp, namespace handoff::cuda::abi) against the
// toolkit's cuda.h. Everything is checked at compile time; the one runtime
// test exists so the check shows up in ctest (label unit).
#include <cuda.h>
#include <cudaEGL.h>

#include <handoff/cuda_abi.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>

namespace {
namespace h = handoff::cuda::abi;

// --- values ------------------------------------------------------------------
#define SAME_VALUE(name) static_assert(static_cast<long long>(h::name) == static_cast<long long>(::name), #name)
SAME_VALUE(CUDA_SUCCESS);
SAME_VALUE(CUDA_ERROR_INVALID_VALUE);
SAME_VALUE(CUDA_ERROR_OUT_OF_MEMORY);
SAME_VALUE(CUDA_ERROR_NOT_INITIALIZED);
SAME_VALUE(CUDA_ERROR_DEINITIALIZED);
SAME_VALUE(CUDA_ERROR_STUB_LIBRARY);
SAME_VALUE(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER);
SAME_VALUE(CUDA_ERROR_DEVICE_UNAVAILABLE);
SAME_VALUE(CUDA_ERROR_NO_DEVICE);
SAME_VALUE(CUDA_ERROR_INVALID_DEVICE);
SAME_VALUE(CUDA_ERROR_DEVICE_NOT_LICENSED);
SAME_VALUE(CUDA_ERROR_INVALID_IMAGE);
SAME_VALUE(CUDA_ERROR_INVALID_CONTEXT);
SAME_VALUE(CUDA_ERROR_CONTEXT_ALREADY_CURRENT);
SAME_VALUE(CUDA_ERROR_MAP_FAILED);
SAME_VALUE(CUDA_ERROR_UNMAP_FAILED);
SAME_VALUE(CUDA_ERROR_ARRAY_IS_MAPPED);
SAME_VALUE(CUDA_ERROR_ALREADY_MAPPED);
SAME_VALUE(CUDA_ERROR_NO_BINARY_FOR_GPU);
SAME_VALUE(CUDA_ERROR_ALREADY_ACQUIRED);
SAME_VALUE(CUDA_ERROR_NOT_MAPPED);
SAME_VALUE(CUDA_ERROR_NOT_MAPPED_AS_ARRAY);
SAME_VALUE(CUDA_ERROR_NOT_MAPPED_AS_POINTER);
SAME_VALUE(CUDA_ERROR_INVALID_PTX);
SAME_VALUE(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT);
SAME_VALUE(CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
SAME_VALUE(CUDA_ERROR_INVALID_SOURCE);
SAME_VALUE(CUDA_ERROR_FILE_NOT_FOUND);
SAME_VALUE(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND);
SAME_VALUE(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED);
SAME_VALUE(CUDA_ERROR_OPERATING_SYSTEM);
SAME_VALUE(CUDA_ERROR_INVALID_HANDLE);
SAME_VALUE(CUDA_ERROR_ILLEGAL_STATE);
SAME_VALUE(CUDA_ERROR_NOT_FOUND);
SAME_VALUE(CUDA_ERROR_NOT_READY);
SAME_VALUE(CUDA_ERROR_ILLEGAL_ADDRESS);
SAME_VALUE(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
SAME_VALUE(CUDA_ERROR_LAUNCH_TIMEOUT);
SAME_VALUE(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE);
SAME_VALUE(CUDA_ERROR_CONTEXT_IS_DESTROYED);
SAME_VALUE(CUDA_ERROR_LAUNCH_FAILED);
SAME_VALUE(CUDA_ERROR_NOT_PERMITTED);
SAME_VALUE(CUDA_ERROR_NOT_SUPPORTED);
SAME_VALUE(CUDA_ERROR_SYSTEM_NOT_READY);
SAME_VALUE(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
SAME_VALUE(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE);
SAME_VALUE(CUDA_ERROR_TIMEOUT);
SAME_VALUE(CUDA_ERROR_UNKNOWN);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_PITCH);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_INTEGRATED);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
SAME_VALUE(CU_GRAPHICS_REGISTER_FLAGS_NONE);
SAME_VALUE(CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY);
SAME_VALUE(CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD);
SAME_VALUE(CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST);
SAME_VALUE(CU_GRAPHICS_REGISTER_FLAGS_TEXTURE_GATHER);
SAME_VALUE(CU_GRAPHICS_MAP_RESOURCE_FLAGS_NONE);
SAME_VALUE(CU_GRAPHICS_MAP_RESOURCE_FLAGS_READ_ONLY);
SAME_VALUE(CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD);
SAME_VALUE(CU_STREAM_DEFAULT);
SAME_VALUE(CU_STREAM_NON_BLOCKING);
SAME_VALUE(CU_MEMORYTYPE_HOST);
SAME_VALUE(CU_MEMORYTYPE_DEVICE);
SAME_VALUE(CU_MEMORYTYPE_ARRAY);
SAME_VALUE(CU_MEMORYTYPE_UNIFIED);
SAME_VALUE(CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD);
SAME_VALUE(CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32);
SAME_VALUE(CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32_KMT);
SAME_VALUE(CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_HEAP);
SAME_VALUE(CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_RESOURCE);
SAME_VALUE(CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE);
SAME_VALUE(CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE_KMT);
SAME_VALUE(CU_EXTERNAL_MEMORY_HANDLE_TYPE_NVSCIBUF);
SAME_VALUE(CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD);
static_assert(h::kCudaExternalMemoryDedicated == CUDA_EXTERNAL_MEMORY_DEDICATED);
SAME_VALUE(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD);
SAME_VALUE(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32);
SAME_VALUE(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32_KMT);
SAME_VALUE(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D12_FENCE);
SAME_VALUE(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_FENCE);
SAME_VALUE(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_NVSCISYNC);
SAME_VALUE(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_KEYED_MUTEX);
SAME_VALUE(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_KEYED_MUTEX_KMT);
SAME_VALUE(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD);
SAME_VALUE(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_WIN32);
SAME_VALUE(CU_GET_PROC_ADDRESS_DEFAULT);
SAME_VALUE(CU_GET_PROC_ADDRESS_LEGACY_STREAM);
SAME_VALUE(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
SAME_VALUE(CU_GET_PROC_ADDRESS_SUCCESS);
SAME_VALUE(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
SAME_VALUE(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
#undef SAME_VALUE

// --- sizes and layouts ---------------------------------------------------------
#define SAME_SIZE(ours, theirs) \
  static_assert(sizeof(h::ours) == sizeof(::theirs) && alignof(h::ours) == alignof(::theirs), #ours)
#define SAME_FIELD(ours, theirs, field)                                                                  \
  static_assert(offsetof(h::ours, field) == offsetof(::theirs, field) &&                                \
                    sizeof(h::ours::field) == sizeof(::theirs::field),                                   \
                #ours "::" #field)

SAME_SIZE(CUresult, CUresult);
SAME_SIZE(CUdevice, CUdevice);
SAME_SIZE(CUdeviceptr, CUdeviceptr);
SAME_SIZE(CUcontext, CUcontext);
SAME_SIZE(CUstream, CUstream);
SAME_SIZE(CUgraphicsResource, CUgraphicsResource);
SAME_SIZE(CUexternalMemory, CUexternalMemory);
SAME_SIZE(CUexternalSemaphore, CUexternalSemaphore);
SAME_SIZE(CUdevice_attribute, CUdevice_attribute);
SAME_SIZE(CUmemorytype, CUmemorytype);
SAME_SIZE(CUexternalMemoryHandleType, CUexternalMemoryHandleType);
SAME_SIZE(CUexternalSemaphoreHandleType, CUexternalSemaphoreHandleType);
SAME_SIZE(CUdriverProcAddressQueryResult, CUdriverProcAddressQueryResult);
static_assert(std::is_same_v<h::CUdeviceptr, ::CUdeviceptr>);
static_assert(std::is_same_v<h::CUdevice, ::CUdevice>);
static_assert(std::is_same_v<h::cuuint64_t, ::cuuint64_t>);

SAME_SIZE(CUuuid, CUuuid);
SAME_FIELD(CUuuid, CUuuid, bytes);

SAME_SIZE(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, CUDA_EXTERNAL_MEMORY_HANDLE_DESC);
SAME_FIELD(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, CUDA_EXTERNAL_MEMORY_HANDLE_DESC, type);
SAME_FIELD(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, CUDA_EXTERNAL_MEMORY_HANDLE_DESC, handle);
SAME_FIELD(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, CUDA_EXTERNAL_MEMORY_HANDLE_DESC, handle.fd);
SAME_FIELD(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, CUDA_EXTERNAL_MEMORY_HANDLE_DESC, handle.win32.handle);
SAME_FIELD(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, CUDA_EXTERNAL_MEMORY_HANDLE_DESC, handle.win32.name);
SAME_FIELD(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, CUDA_EXTERNAL_MEMORY_HANDLE_DESC, handle.nvSciBufObject);
SAME_FIELD(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, CUDA_EXTERNAL_MEMORY_HANDLE_DESC, size);
SAME_FIELD(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, CUDA_EXTERNAL_MEMORY_HANDLE_DESC, flags);
SAME_FIELD(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, CUDA_EXTERNAL_MEMORY_HANDLE_DESC, reserved);

SAME_SIZE(CUDA_EXTERNAL_MEMORY_BUFFER_DESC, CUDA_EXTERNAL_MEMORY_BUFFER_DESC);
SAME_FIELD(CUDA_EXTERNAL_MEMORY_BUFFER_DESC, CUDA_EXTERNAL_MEMORY_BUFFER_DESC, offset);
SAME_FIELD(CUDA_EXTERNAL_MEMORY_BUFFER_DESC, CUDA_EXTERNAL_MEMORY_BUFFER_DESC, size);
SAME_FIELD(CUDA_EXTERNAL_MEMORY_BUFFER_DESC, CUDA_EXTERNAL_MEMORY_BUFFER_DESC, flags);
SAME_FIELD(CUDA_EXTERNAL_MEMORY_BUFFER_DESC, CUDA_EXTERNAL_MEMORY_BUFFER_DESC, reserved);

SAME_SIZE(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, type);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, handle.fd);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, handle.win32.name);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, handle.nvSciSyncObj);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, flags);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, reserved);

SAME_SIZE(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, params.fence.value);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, params.nvSciSync.fence);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, params.keyedMutex.key);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, params.reserved);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, flags);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, reserved);

SAME_SIZE(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, params.fence.value);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, params.nvSciSync.fence);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, params.keyedMutex.key);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, params.keyedMutex.timeoutMs);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, params.reserved);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, flags);
SAME_FIELD(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, reserved);

SAME_SIZE(CUDA_MEMCPY2D, CUDA_MEMCPY2D);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcXInBytes);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcY);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcMemoryType);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcHost);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcDevice);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcArray);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcPitch);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstXInBytes);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstY);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstMemoryType);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstHost);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstDevice);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstArray);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstPitch);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, WidthInBytes);
SAME_FIELD(CUDA_MEMCPY2D, CUDA_MEMCPY2D, Height);
SAME_SIZE(CUeglFrame, CUeglFrame);
SAME_FIELD(CUeglFrame, CUeglFrame, frame.pArray);
SAME_FIELD(CUeglFrame, CUeglFrame, frame.pPitch);
SAME_FIELD(CUeglFrame, CUeglFrame, width);
SAME_FIELD(CUeglFrame, CUeglFrame, height);
SAME_FIELD(CUeglFrame, CUeglFrame, depth);
SAME_FIELD(CUeglFrame, CUeglFrame, pitch);
SAME_FIELD(CUeglFrame, CUeglFrame, planeCount);
SAME_FIELD(CUeglFrame, CUeglFrame, numChannels);
SAME_FIELD(CUeglFrame, CUeglFrame, frameType);
SAME_FIELD(CUeglFrame, CUeglFrame, eglColorFormat);
SAME_FIELD(CUeglFrame, CUeglFrame, cuFormat);
static_assert(h::kCudaEglMaxPlanes == MAX_PLANES);
static_assert(int(h::CU_EGL_FRAME_TYPE_ARRAY) == int(::CU_EGL_FRAME_TYPE_ARRAY));
static_assert(int(h::CU_EGL_FRAME_TYPE_PITCH) == int(::CU_EGL_FRAME_TYPE_PITCH));
#undef SAME_SIZE
#undef SAME_FIELD

// --- function types --------------------------------------------------------------
// Maps a type built from handoff's declarations to the type cuda.h spells, so
// a whole function-pointer type can be compared with decltype(&::cuXxx_v2):
// same arity, same position of every parameter, and each scalar identical.
template <typename T> struct Theirs { using type = T; };
template <typename T> using theirs_t = typename Theirs<T>::type;
template <typename T> struct Theirs<T*> { using type = theirs_t<T>*; };
template <typename T> struct Theirs<const T> { using type = const theirs_t<T>; };
template <typename R, typename... A> struct Theirs<R (*)(A...)> { using type = theirs_t<R> (*)(theirs_t<A>...); };
#define MAPS_TO(ours, theirs) template <> struct Theirs<h::ours> { using type = ::theirs; }
MAPS_TO(CUresult, CUresult);
MAPS_TO(CUctx_st, CUctx_st);
MAPS_TO(CUmod_st, CUmod_st);
MAPS_TO(CUfunc_st, CUfunc_st);
MAPS_TO(CUstream_st, CUstream_st);
MAPS_TO(CUgraphicsResource_st, CUgraphicsResource_st);
MAPS_TO(CUextMemory_st, CUextMemory_st);
MAPS_TO(CUextSemaphore_st, CUextSemaphore_st);
MAPS_TO(CUarray_st, CUarray_st);
MAPS_TO(CUuuid, CUuuid);
MAPS_TO(CUdevice_attribute, CUdevice_attribute);
MAPS_TO(CUDA_MEMCPY2D, CUDA_MEMCPY2D);
MAPS_TO(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, CUDA_EXTERNAL_MEMORY_HANDLE_DESC);
MAPS_TO(CUDA_EXTERNAL_MEMORY_BUFFER_DESC, CUDA_EXTERNAL_MEMORY_BUFFER_DESC);
MAPS_TO(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC);
MAPS_TO(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS);
MAPS_TO(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS);
MAPS_TO(CUdriverProcAddressQueryResult, CUdriverProcAddressQueryResult);
MAPS_TO(CUeglFrame, CUeglFrame);
#undef MAPS_TO

// The mapping itself must not be too lenient: a wrong type is caught.
static_assert(!std::is_same_v<theirs_t<h::PFN_cuMemAlloc>, decltype(&::cuMemFree_v2)>);
static_assert(!std::is_same_v<theirs_t<h::CUresult (*)(int)>, CUresult (*)(unsigned)>);

#define SAME_FN(ours, symbol) \
  static_assert(std::is_same_v<theirs_t<h::PFN_##ours>, decltype(&::symbol)>, #ours " vs " #symbol)
SAME_FN(cuInit, cuInit);
SAME_FN(cuDriverGetVersion, cuDriverGetVersion);
SAME_FN(cuDeviceGetCount, cuDeviceGetCount);
SAME_FN(cuDeviceGet, cuDeviceGet);
SAME_FN(cuDeviceGetName, cuDeviceGetName);
SAME_FN(cuDeviceGetUuid, cuDeviceGetUuid_v2);
SAME_FN(cuDeviceGetAttribute, cuDeviceGetAttribute);
SAME_FN(cuDeviceTotalMem, cuDeviceTotalMem_v2);
SAME_FN(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain);
SAME_FN(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2);
SAME_FN(cuCtxPushCurrent, cuCtxPushCurrent_v2);
SAME_FN(cuCtxPopCurrent, cuCtxPopCurrent_v2);
SAME_FN(cuCtxSetCurrent, cuCtxSetCurrent);
SAME_FN(cuCtxGetCurrent, cuCtxGetCurrent);
SAME_FN(cuCtxSynchronize, cuCtxSynchronize);
SAME_FN(cuGetErrorName, cuGetErrorName);
SAME_FN(cuGetErrorString, cuGetErrorString);
SAME_FN(cuMemAlloc, cuMemAlloc_v2);
SAME_FN(cuMemAllocPitch, cuMemAllocPitch_v2);
SAME_FN(cuMemFree, cuMemFree_v2);
SAME_FN(cuMemcpyHtoD, cuMemcpyHtoD_v2);
SAME_FN(cuMemcpyDtoH, cuMemcpyDtoH_v2);
SAME_FN(cuMemcpy2D, cuMemcpy2D_v2);
SAME_FN(cuMemcpy2DAsync, cuMemcpy2DAsync_v2);
SAME_FN(cuMemsetD8, cuMemsetD8_v2);
SAME_FN(cuStreamCreate, cuStreamCreate);
SAME_FN(cuStreamDestroy, cuStreamDestroy_v2);
SAME_FN(cuStreamSynchronize, cuStreamSynchronize);
SAME_FN(cuStreamQuery, cuStreamQuery);
SAME_FN(cuModuleLoadData, cuModuleLoadData);
SAME_FN(cuModuleUnload, cuModuleUnload);
SAME_FN(cuModuleGetFunction, cuModuleGetFunction);
SAME_FN(cuLaunchKernel, cuLaunchKernel);
SAME_FN(cuGraphicsUnregisterResource, cuGraphicsUnregisterResource);
SAME_FN(cuGraphicsResourceSetMapFlags, cuGraphicsResourceSetMapFlags_v2);
SAME_FN(cuGraphicsMapResources, cuGraphicsMapResources);
SAME_FN(cuGraphicsUnmapResources, cuGraphicsUnmapResources);
SAME_FN(cuGraphicsResourceGetMappedPointer, cuGraphicsResourceGetMappedPointer_v2);
SAME_FN(cuImportExternalMemory, cuImportExternalMemory);
SAME_FN(cuExternalMemoryGetMappedBuffer, cuExternalMemoryGetMappedBuffer);
SAME_FN(cuDestroyExternalMemory, cuDestroyExternalMemory);
SAME_FN(cuImportExternalSemaphore, cuImportExternalSemaphore);
SAME_FN(cuSignalExternalSemaphoresAsync, cuSignalExternalSemaphoresAsync);
SAME_FN(cuWaitExternalSemaphoresAsync, cuWaitExternalSemaphoresAsync);
SAME_FN(cuDestroyExternalSemaphore, cuDestroyExternalSemaphore);
SAME_FN(cuGraphicsEGLRegisterImage, cuGraphicsEGLRegisterImage);
SAME_FN(cuGraphicsResourceGetMappedEglFrame, cuGraphicsResourceGetMappedEglFrame);
SAME_FN(cuGetProcAddress, cuGetProcAddress_v2);
#undef SAME_FN

// The 11.3 cuGetProcAddress is exported under the plain name but cuda.h only
// declares the v2 one; compare with the toolkit's own typedef.
#if __has_include(<cudaTypedefs.h>)
}  // namespace
#include <cudaTypedefs.h>
namespace {
static_assert(std::is_same_v<theirs_t<h::PFN_cuGetProcAddress_v1>, PFN_cuGetProcAddress_v11030>);
static_assert(std::is_same_v<theirs_t<h::PFN_cuCtxSynchronize>, PFN_cuCtxSynchronize_v2000>);
static_assert(!std::is_same_v<theirs_t<h::PFN_cuCtxSynchronize>, PFN_cuCtxSynchronize_v13000>);
#endif

// GL and EGL interop types as cudaGL.h / cudaEGL.h spell them (GLuint, EGLImageKHR).
static_assert(std::is_same_v<h::GLuint, unsigned int>);
static_assert(std::is_same_v<h::EGLImageKHR, void*>);

}  // namespace

// --- the interprocess sharing block (handoff::live) ------------------------------------
// Values, layouts and entry points of the block at the end of cuda_api.hpp,
// against cuda.h (and cudaTypedefs.h for the per-version entry-point types).
namespace {
#define LIVE_SAME_VALUE(name) static_assert(static_cast<long long>(h::name) == static_cast<long long>(::name), #name)
LIVE_SAME_VALUE(CU_MEM_HANDLE_TYPE_NONE);
LIVE_SAME_VALUE(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
LIVE_SAME_VALUE(CU_MEM_HANDLE_TYPE_WIN32);
LIVE_SAME_VALUE(CU_MEM_HANDLE_TYPE_WIN32_KMT);
LIVE_SAME_VALUE(CU_MEM_HANDLE_TYPE_FABRIC);
LIVE_SAME_VALUE(CU_MEM_HANDLE_TYPE_MAX);
LIVE_SAME_VALUE(CU_MEM_ACCESS_FLAGS_PROT_NONE);
LIVE_SAME_VALUE(CU_MEM_ACCESS_FLAGS_PROT_READ);
LIVE_SAME_VALUE(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
LIVE_SAME_VALUE(CU_MEM_ACCESS_FLAGS_PROT_MAX);
LIVE_SAME_VALUE(CU_MEM_LOCATION_TYPE_INVALID);
LIVE_SAME_VALUE(CU_MEM_LOCATION_TYPE_DEVICE);
LIVE_SAME_VALUE(CU_MEM_LOCATION_TYPE_HOST);
LIVE_SAME_VALUE(CU_MEM_LOCATION_TYPE_HOST_NUMA);
LIVE_SAME_VALUE(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT);
LIVE_SAME_VALUE(CU_MEM_LOCATION_TYPE_MAX);
LIVE_SAME_VALUE(CU_MEM_ALLOCATION_TYPE_INVALID);
LIVE_SAME_VALUE(CU_MEM_ALLOCATION_TYPE_PINNED);
LIVE_SAME_VALUE(CU_MEM_ALLOCATION_TYPE_MANAGED);
LIVE_SAME_VALUE(CU_MEM_ALLOCATION_TYPE_MAX);
LIVE_SAME_VALUE(CU_MEM_ALLOC_GRANULARITY_MINIMUM);
LIVE_SAME_VALUE(CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
LIVE_SAME_VALUE(CU_EVENT_DEFAULT);
LIVE_SAME_VALUE(CU_EVENT_BLOCKING_SYNC);
LIVE_SAME_VALUE(CU_EVENT_DISABLE_TIMING);
LIVE_SAME_VALUE(CU_EVENT_INTERPROCESS);
LIVE_SAME_VALUE(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
LIVE_SAME_VALUE(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED);
LIVE_SAME_VALUE(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED);
LIVE_SAME_VALUE(CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED);
static_assert(h::kCudaIpcHandleSize == CU_IPC_HANDLE_SIZE);
#undef LIVE_SAME_VALUE

#define LIVE_SAME_SIZE(ours, theirs) \
  static_assert(sizeof(h::ours) == sizeof(::theirs) && alignof(h::ours) == alignof(::theirs), #ours)
#define LIVE_SAME_FIELD(ours, theirs, field)                                                             \
  static_assert(offsetof(h::ours, field) == offsetof(::theirs, field) &&                                \
                    sizeof(h::ours::field) == sizeof(::theirs::field),                                   \
                #ours "::" #field)
static_assert(std::is_same_v<h::CUmemGenericAllocationHandle, ::CUmemGenericAllocationHandle>);
LIVE_SAME_SIZE(CUevent, CUevent);
LIVE_SAME_SIZE(CUmemAllocationHandleType, CUmemAllocationHandleType);
LIVE_SAME_SIZE(CUmemAccess_flags, CUmemAccess_flags);
LIVE_SAME_SIZE(CUmemLocationType, CUmemLocationType);
LIVE_SAME_SIZE(CUmemAllocationType, CUmemAllocationType);
LIVE_SAME_SIZE(CUmemAllocationGranularity_flags, CUmemAllocationGranularity_flags);
LIVE_SAME_SIZE(CUmemLocation, CUmemLocation);
LIVE_SAME_FIELD(CUmemLocation, CUmemLocation, type);
LIVE_SAME_FIELD(CUmemLocation, CUmemLocation, id);
LIVE_SAME_SIZE(CUmemAllocationProp, CUmemAllocationProp);
LIVE_SAME_FIELD(CUmemAllocationProp, CUmemAllocationProp, type);
LIVE_SAME_FIELD(CUmemAllocationProp, CUmemAllocationProp, requestedHandleTypes);
LIVE_SAME_FIELD(CUmemAllocationProp, CUmemAllocationProp, location);
LIVE_SAME_FIELD(CUmemAllocationProp, CUmemAllocationProp, win32HandleMetaData);
LIVE_SAME_FIELD(CUmemAllocationProp, CUmemAllocationProp, allocFlags);
LIVE_SAME_FIELD(CUmemAllocationProp, CUmemAllocationProp, allocFlags.compressionType);
LIVE_SAME_FIELD(CUmemAllocationProp, CUmemAllocationProp, allocFlags.gpuDirectRDMACapable);
LIVE_SAME_FIELD(CUmemAllocationProp, CUmemAllocationProp, allocFlags.usage);
LIVE_SAME_FIELD(CUmemAllocationProp, CUmemAllocationProp, allocFlags.reserved);
LIVE_SAME_SIZE(CUmemAccessDesc, CUmemAccessDesc);
LIVE_SAME_FIELD(CUmemAccessDesc, CUmemAccessDesc, location);
LIVE_SAME_FIELD(CUmemAccessDesc, CUmemAccessDesc, flags);
LIVE_SAME_SIZE(CUipcEventHandle, CUipcEventHandle);
LIVE_SAME_FIELD(CUipcEventHandle, CUipcEventHandle, reserved);
LIVE_SAME_SIZE(CUipcMemHandle, CUipcMemHandle);
LIVE_SAME_FIELD(CUipcMemHandle, CUipcMemHandle, reserved);
#undef LIVE_SAME_SIZE
#undef LIVE_SAME_FIELD

template <> struct Theirs<h::CUevent_st> { using type = ::CUevent_st; };
template <> struct Theirs<h::CUmemAllocationProp> { using type = ::CUmemAllocationProp; };
template <> struct Theirs<h::CUmemAccessDesc> { using type = ::CUmemAccessDesc; };
template <> struct Theirs<h::CUipcEventHandle> { using type = ::CUipcEventHandle; };
template <> struct Theirs<h::CUipcMemHandle> { using type = ::CUipcMemHandle; };
template <> struct Theirs<h::CUmemAllocationHandleType> { using type = ::CUmemAllocationHandleType; };
template <> struct Theirs<h::CUmemAllocationGranularity_flags> { using type = ::CUmemAllocationGranularity_flags; };

#define LIVE_SAME_FN(ours, symbol) \
  static_assert(std::is_same_v<theirs_t<h::PFN_##ours>, decltype(&::symbol)>, #ours " vs " #symbol)
LIVE_SAME_FN(cuMemGetAllocationGranularity, cuMemGetAllocationGranularity);
LIVE_SAME_FN(cuMemCreate, cuMemCreate);
LIVE_SAME_FN(cuMemRelease, cuMemRelease);
LIVE_SAME_FN(cuMemExportToShareableHandle, cuMemExportToShareableHandle);
LIVE_SAME_FN(cuMemImportFromShareableHandle, cuMemImportFromShareableHandle);
LIVE_SAME_FN(cuMemAddressReserve, cuMemAddressReserve);
LIVE_SAME_FN(cuMemAddressFree, cuMemAddressFree);
LIVE_SAME_FN(cuMemMap, cuMemMap);
LIVE_SAME_FN(cuMemUnmap, cuMemUnmap);
LIVE_SAME_FN(cuMemSetAccess, cuMemSetAccess);
LIVE_SAME_FN(cuEventCreate, cuEventCreate);
LIVE_SAME_FN(cuEventDestroy, cuEventDestroy_v2);
LIVE_SAME_FN(cuEventRecord, cuEventRecord);
LIVE_SAME_FN(cuEventQuery, cuEventQuery);
LIVE_SAME_FN(cuEventSynchronize, cuEventSynchronize);
LIVE_SAME_FN(cuStreamWaitEvent, cuStreamWaitEvent);
LIVE_SAME_FN(cuIpcGetEventHandle, cuIpcGetEventHandle);
LIVE_SAME_FN(cuIpcOpenEventHandle, cuIpcOpenEventHandle);
LIVE_SAME_FN(cuIpcGetMemHandle, cuIpcGetMemHandle);
LIVE_SAME_FN(cuIpcOpenMemHandle, cuIpcOpenMemHandle_v2);
LIVE_SAME_FN(cuIpcCloseMemHandle, cuIpcCloseMemHandle);
#undef LIVE_SAME_FN
#if __has_include(<cudaTypedefs.h>)
// The ABI versions named in the X-list (the toolkit's PFN_<name>_v<version>).
static_assert(std::is_same_v<theirs_t<h::PFN_cuMemCreate>, PFN_cuMemCreate_v10020>);
static_assert(std::is_same_v<theirs_t<h::PFN_cuMemMap>, PFN_cuMemMap_v10020>);
static_assert(std::is_same_v<theirs_t<h::PFN_cuMemSetAccess>, PFN_cuMemSetAccess_v10020>);
static_assert(std::is_same_v<theirs_t<h::PFN_cuMemExportToShareableHandle>, PFN_cuMemExportToShareableHandle_v10020>);
static_assert(std::is_same_v<theirs_t<h::PFN_cuMemImportFromShareableHandle>,
                             PFN_cuMemImportFromShareableHandle_v10020>);
static_assert(std::is_same_v<theirs_t<h::PFN_cuEventDestroy>, PFN_cuEventDestroy_v4000>);
static_assert(std::is_same_v<theirs_t<h::PFN_cuEventRecord>, PFN_cuEventRecord_v2000>);
static_assert(std::is_same_v<theirs_t<h::PFN_cuStreamWaitEvent>, PFN_cuStreamWaitEvent_v3020>);
static_assert(std::is_same_v<theirs_t<h::PFN_cuIpcOpenEventHandle>, PFN_cuIpcOpenEventHandle_v4010>);
static_assert(std::is_same_v<theirs_t<h::PFN_cuIpcOpenMemHandle>, PFN_cuIpcOpenMemHandle_v11000>);
#endif
}  // namespace

TEST(CudaAbi, DeclarationsMatchTheToolkit) {
  // Everything above is a static_assert; reaching this line means it held.
  EXPECT_EQ(CUDA_VERSION >= 12000, true) << "the ABI check expects a CUDA 12+ toolkit header";
  EXPECT_STREQ(h::result_name(h::CUDA_ERROR_ALREADY_MAPPED), "CUDA_ERROR_ALREADY_MAPPED");
  EXPECT_EQ(h::result_name(123456), nullptr);
}
