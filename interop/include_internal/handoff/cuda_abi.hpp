#pragma once
// The CUDA driver ABI as handoff declares it: the subset of the driver API the
// library uses (types, result codes, structs, entry-point signatures), in CUDA's
// own spelling, so code reads like CUDA code (`abi::CUDA_ERROR_ALREADY_MAPPED`,
// `abi::CUdeviceptr`). cuda.h is never included: the driver is loaded at run
// time (dlopen), so the toolkit is optional at build time. Where the toolkit is
// present, tests/fake_cuda/cuda_abi_check.cpp checks every type, value, size,
// offset and function-pointer type below against the toolkit's cuda.h.
//
// Namespace handoff::cuda::abi sits next to handoff::cuda (cuda.hpp: the driver
// loader, PrimaryContext, ScopedContext, HANDOFF_CU_CHECK). Entry points are
// reached through the table `handoff::cuda::abi::DriverApi`:
//
//   const handoff::cuda::abi::DriverApi& api = handoff::cuda::driver().api();
//   HANDOFF_CU_CHECK(api.cuGraphicsMapResources(1, &resource, stream), "luma buffer");
//
// A table field is named after CUDA's *base* name (cuMemAlloc, not
// cuMemAlloc_v2); the comment beside each PFN type says which ABI version it is
// (the version passed to cuGetProcAddress, and the versioned symbol used with
// dlsym). Who uses it: the library, and code that calls the driver itself
// through handoff's loader (the viewer's CUDA producer, the tests, the fake
// driver in tests/fake_cuda). Thread safety: declarations only.
#include <cstddef>
#include <cstdint>
#include <handoff/cuda_check.hpp>

namespace handoff::cuda::abi {

// --- scalar and handle types -------------------------------------------------
using cuuint32_t = std::uint32_t;
using cuuint64_t = std::uint64_t;
using CUdevice = int;                       // CUdevice_v1
using CUdeviceptr = unsigned long long;     // CUdeviceptr_v2: 64-bit on every 64-bit host

struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUgraphicsResource_st;
struct CUextMemory_st;
struct CUextSemaphore_st;
struct CUeglStreamConnection_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUgraphicsResource = CUgraphicsResource_st*;
using CUexternalMemory = CUextMemory_st*;
using CUexternalSemaphore = CUextSemaphore_st*;

struct CUuuid {
  char bytes[16];
};

// GL / EGL object types as the CUDA GL and EGL interop headers spell them.
using GLuint = unsigned int;
using GLenum = unsigned int;
using EGLImageKHR = void*;

// --- result codes ------------------------------------------------------------
// Fixed underlying type so it can be forward-declared (handoff/cuda.hpp).
enum CUresult : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  // (35 is the runtime API's cudaErrorInsufficientDriver; the driver API has no code 35.)
  CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36,
  CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_DEVICE_NOT_LICENSED = 102,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_CONTEXT_ALREADY_CURRENT = 202,
  CUDA_ERROR_MAP_FAILED = 205,
  CUDA_ERROR_UNMAP_FAILED = 206,
  CUDA_ERROR_ARRAY_IS_MAPPED = 207,
  CUDA_ERROR_ALREADY_MAPPED = 208,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_ALREADY_ACQUIRED = 210,
  CUDA_ERROR_NOT_MAPPED = 211,
  CUDA_ERROR_NOT_MAPPED_AS_ARRAY = 212,
  CUDA_ERROR_NOT_MAPPED_AS_POINTER = 213,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_INVALID_GRAPHICS_CONTEXT = 219,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_INVALID_SOURCE = 300,
  CUDA_ERROR_FILE_NOT_FOUND = 301,
  CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND = 302,
  CUDA_ERROR_SHARED_OBJECT_INIT_FAILED = 303,
  CUDA_ERROR_OPERATING_SYSTEM = 304,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_ILLEGAL_STATE = 401,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_TIMEOUT = 702,
  CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE = 708,
  CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_PERMITTED = 800,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_SYSTEM_NOT_READY = 802,
  CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
  CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
  CUDA_ERROR_TIMEOUT = 909,
  CUDA_ERROR_UNKNOWN = 999,
};

// The symbolic name of a code declared above ("CUDA_ERROR_ALREADY_MAPPED"), or
// nullptr for a code this header does not name. Used where the driver's own
// cuGetErrorName is not available (and by the fake driver).
const char* result_name(int code) noexcept;

// --- enums and flags ---------------------------------------------------------
enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_MAX_PITCH = 11,  // the largest pitch cuMemcpy2D accepts
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

enum CUgraphicsRegisterFlags : int {
  CU_GRAPHICS_REGISTER_FLAGS_NONE = 0x00,
  CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY = 0x01,
  CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD = 0x02,
  CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST = 0x04,
  CU_GRAPHICS_REGISTER_FLAGS_TEXTURE_GATHER = 0x08,
};

enum CUgraphicsMapResourceFlags : int {
  CU_GRAPHICS_MAP_RESOURCE_FLAGS_NONE = 0x00,
  CU_GRAPHICS_MAP_RESOURCE_FLAGS_READ_ONLY = 0x01,
  CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD = 0x02,
};

enum CUstream_flags : int {
  CU_STREAM_DEFAULT = 0x0,
  CU_STREAM_NON_BLOCKING = 0x1,
};

enum CUmemorytype : int {
  CU_MEMORYTYPE_HOST = 0x01,
  CU_MEMORYTYPE_DEVICE = 0x02,
  CU_MEMORYTYPE_ARRAY = 0x03,
  CU_MEMORYTYPE_UNIFIED = 0x04,
};

enum CUexternalMemoryHandleType : int {
  CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD = 1,
  CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32 = 2,
  CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32_KMT = 3,
  CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_HEAP = 4,
  CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_RESOURCE = 5,
  CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE = 6,
  CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE_KMT = 7,
  CU_EXTERNAL_MEMORY_HANDLE_TYPE_NVSCIBUF = 8,
  CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD = 9,
};
// cuda.h's CUDA_EXTERNAL_MEMORY_DEDICATED is a macro: a different name here, so both can be included.
inline constexpr unsigned int kCudaExternalMemoryDedicated = 0x1;

enum CUexternalSemaphoreHandleType : int {
  CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD = 1,
  CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32 = 2,
  CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32_KMT = 3,
  CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D12_FENCE = 4,
  CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_FENCE = 5,
  CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_NVSCISYNC = 6,
  CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_KEYED_MUTEX = 7,
  CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_KEYED_MUTEX_KMT = 8,
  CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD = 9,
  CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_WIN32 = 10,
};

// cuGetProcAddress flags and (v2) symbol status.
inline constexpr cuuint64_t CU_GET_PROC_ADDRESS_DEFAULT = 0;
inline constexpr cuuint64_t CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1 << 0;
inline constexpr cuuint64_t CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 1 << 1;
enum CUdriverProcAddressQueryResult : int {
  CU_GET_PROC_ADDRESS_SUCCESS = 0,
  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
};

// --- structs (layouts checked against cuda.h) -------------------------------
struct CUDA_EXTERNAL_MEMORY_HANDLE_DESC {
  CUexternalMemoryHandleType type;
  union {
    int fd;
    struct {
      void* handle;
      const void* name;
    } win32;
    const void* nvSciBufObject;
  } handle;
  unsigned long long size;
  unsigned int flags;
  unsigned int reserved[16];
};

struct CUDA_EXTERNAL_MEMORY_BUFFER_DESC {
  unsigned long long offset;
  unsigned long long size;
  unsigned int flags;
  unsigned int reserved[16];
};

struct CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC {
  CUexternalSemaphoreHandleType type;
  union {
    int fd;
    struct {
      void* handle;
      const void* name;
    } win32;
    const void* nvSciSyncObj;
  } handle;
  unsigned int flags;
  unsigned int reserved[16];
};

struct CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS {
  struct {
    struct {
      unsigned long long value;
    } fence;
    union {
      void* fence;
      unsigned long long reserved;
    } nvSciSync;
    struct {
      unsigned long long key;
    } keyedMutex;
    unsigned int reserved[12];
  } params;
  unsigned int flags;
  unsigned int reserved[16];
};

struct CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS {
  struct {
    struct {
      unsigned long long value;
    } fence;
    union {
      void* fence;
      unsigned long long reserved;
    } nvSciSync;
    struct {
      unsigned long long key;
      unsigned int timeoutMs;
    } keyedMutex;
    unsigned int reserved[10];
  } params;
  unsigned int flags;
  unsigned int reserved[16];
};

struct CUarray_st;
using CUarray = CUarray_st*;

// What cuGraphicsResourceGetMappedEglFrame describes (the toolkit's CUeglFrame_v1).
enum CUeglFrameType : int {
  CU_EGL_FRAME_TYPE_ARRAY = 0,
  CU_EGL_FRAME_TYPE_PITCH = 1,
};
inline constexpr unsigned kCudaEglMaxPlanes = 3;  // MAX_PLANES
struct CUeglFrame {
  union {
    CUarray pArray[kCudaEglMaxPlanes];
    void* pPitch[kCudaEglMaxPlanes];
  } frame;
  unsigned int width;   // of the first plane
  unsigned int height;
  unsigned int depth;
  unsigned int pitch;   // of the first plane, bytes (pitch frames)
  unsigned int planeCount;
  unsigned int numChannels;
  CUeglFrameType frameType;
  int eglColorFormat;  // CUeglColorFormat
  int cuFormat;        // CUarray_format
};

struct CUDA_MEMCPY2D {  // CUDA_MEMCPY2D_v2
  std::size_t srcXInBytes;
  std::size_t srcY;
  CUmemorytype srcMemoryType;
  const void* srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  std::size_t srcPitch;
  std::size_t dstXInBytes;
  std::size_t dstY;
  CUmemorytype dstMemoryType;
  void* dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  std::size_t dstPitch;
  std::size_t WidthInBytes;
  std::size_t Height;
};

// --- entry points --------------------------------------------------------------
// One function-pointer type per entry point. The suffix of the comment is the
// CUDA version whose ABI the type mirrors (the toolkit's PFN_<name>_v<ver>);
// that version is requested from cuGetProcAddress, and the symbol in brackets
// is the one looked up with dlsym when cuGetProcAddress is not available.
using PFN_cuInit = CUresult (*)(unsigned int flags);                                     // 2000
using PFN_cuDriverGetVersion = CUresult (*)(int* version);                               // 2020
using PFN_cuDeviceGetCount = CUresult (*)(int* count);                                   // 2000
using PFN_cuDeviceGet = CUresult (*)(CUdevice* device, int ordinal);                     // 2000
using PFN_cuDeviceGetName = CUresult (*)(char* name, int len, CUdevice dev);             // 2000
using PFN_cuDeviceGetUuid = CUresult (*)(CUuuid* uuid, CUdevice dev);                    // 11040 [cuDeviceGetUuid_v2]
using PFN_cuDeviceGetAttribute = CUresult (*)(int* pi, CUdevice_attribute attrib, CUdevice dev);  // 2000
using PFN_cuDeviceTotalMem = CUresult (*)(std::size_t* bytes, CUdevice dev);             // 3020 [cuDeviceTotalMem_v2]
using PFN_cuDevicePrimaryCtxRetain = CUresult (*)(CUcontext* pctx, CUdevice dev);        // 7000
using PFN_cuDevicePrimaryCtxRelease = CUresult (*)(CUdevice dev);                        // 11000 [cuDevicePrimaryCtxRelease_v2]
using PFN_cuCtxPushCurrent = CUresult (*)(CUcontext ctx);                                // 4000 [cuCtxPushCurrent_v2]
using PFN_cuCtxPopCurrent = CUresult (*)(CUcontext* pctx);                               // 4000 [cuCtxPopCurrent_v2]
using PFN_cuCtxSetCurrent = CUresult (*)(CUcontext ctx);                                 // 4000
using PFN_cuCtxGetCurrent = CUresult (*)(CUcontext* pctx);                               // 4000
using PFN_cuCtxSynchronize = CUresult (*)();                                             // 2000 (not the 13000 one, which takes a CUcontext)
using PFN_cuGetErrorName = CUresult (*)(CUresult error, const char** pStr);              // 6000
using PFN_cuGetErrorString = CUresult (*)(CUresult error, const char** pStr);            // 6000
using PFN_cuMemAlloc = CUresult (*)(CUdeviceptr* dptr, std::size_t bytesize);            // 3020 [cuMemAlloc_v2]
using PFN_cuMemAllocPitch = CUresult (*)(CUdeviceptr* dptr, std::size_t* pPitch, std::size_t WidthInBytes,
                                         std::size_t Height, unsigned int ElementSizeBytes);  // 3020 [cuMemAllocPitch_v2]
using PFN_cuMemFree = CUresult (*)(CUdeviceptr dptr);                                    // 3020 [cuMemFree_v2]
using PFN_cuMemcpyHtoD = CUresult (*)(CUdeviceptr dst, const void* src, std::size_t bytes);  // 3020 [cuMemcpyHtoD_v2]
using PFN_cuMemcpyDtoH = CUresult (*)(void* dst, CUdeviceptr src, std::size_t bytes);    // 3020 [cuMemcpyDtoH_v2]
using PFN_cuMemcpy2D = CUresult (*)(const CUDA_MEMCPY2D* pCopy);                         // 3020 [cuMemcpy2D_v2]
using PFN_cuMemcpy2DAsync = CUresult (*)(const CUDA_MEMCPY2D* pCopy, CUstream hStream);  // 3020 [cuMemcpy2DAsync_v2]
using PFN_cuMemsetD8 = CUresult (*)(CUdeviceptr dst, unsigned char uc, std::size_t N);   // 3020 [cuMemsetD8_v2]
using PFN_cuStreamCreate = CUresult (*)(CUstream* phStream, unsigned int Flags);         // 2000
using PFN_cuStreamDestroy = CUresult (*)(CUstream hStream);                              // 4000 [cuStreamDestroy_v2]
using PFN_cuStreamSynchronize = CUresult (*)(CUstream hStream);                          // 2000
using PFN_cuStreamQuery = CUresult (*)(CUstream hStream);                                // 2000 (SUCCESS or NOT_READY)
using PFN_cuModuleLoadData = CUresult (*)(CUmodule* module, const void* image);          // 2000
using PFN_cuModuleUnload = CUresult (*)(CUmodule hmod);                                  // 2000
using PFN_cuModuleGetFunction = CUresult (*)(CUfunction* hfunc, CUmodule hmod, const char* name);  // 2000
using PFN_cuLaunchKernel = CUresult (*)(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                        void** kernelParams, void** extra);  // 4000
using PFN_cuGraphicsGLRegisterBuffer = CUresult (*)(CUgraphicsResource* pCudaResource, GLuint buffer,
                                                    unsigned int Flags);  // 3000
using PFN_cuGraphicsUnregisterResource = CUresult (*)(CUgraphicsResource resource);    // 3000
using PFN_cuGraphicsResourceSetMapFlags = CUresult (*)(CUgraphicsResource resource, unsigned int flags);  // 6050 [cuGraphicsResourceSetMapFlags_v2]
using PFN_cuGraphicsMapResources = CUresult (*)(unsigned int count, CUgraphicsResource* resources,
                                                CUstream hStream);  // 3000
using PFN_cuGraphicsUnmapResources = CUresult (*)(unsigned int count, CUgraphicsResource* resources,
                                                  CUstream hStream);  // 3000
using PFN_cuGraphicsResourceGetMappedPointer = CUresult (*)(CUdeviceptr* pDevPtr, std::size_t* pSize,
                                                            CUgraphicsResource resource);  // 3020 [cuGraphicsResourceGetMappedPointer_v2]
using PFN_cuImportExternalMemory = CUresult (*)(CUexternalMemory* extMem_out,
                                                const CUDA_EXTERNAL_MEMORY_HANDLE_DESC* memHandleDesc);  // 10000
using PFN_cuExternalMemoryGetMappedBuffer = CUresult (*)(CUdeviceptr* devPtr, CUexternalMemory extMem,
                                                         const CUDA_EXTERNAL_MEMORY_BUFFER_DESC* bufferDesc);  // 10000
using PFN_cuDestroyExternalMemory = CUresult (*)(CUexternalMemory extMem);              // 10000
using PFN_cuImportExternalSemaphore = CUresult (*)(CUexternalSemaphore* extSem_out,
                                                   const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC* semHandleDesc);  // 10000
using PFN_cuSignalExternalSemaphoresAsync = CUresult (*)(const CUexternalSemaphore* extSemArray,
                                                         const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS* paramsArray,
                                                         unsigned int numExtSems, CUstream stream);  // 10000
using PFN_cuWaitExternalSemaphoresAsync = CUresult (*)(const CUexternalSemaphore* extSemArray,
                                                       const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS* paramsArray,
                                                       unsigned int numExtSems, CUstream stream);  // 10000
using PFN_cuDestroyExternalSemaphore = CUresult (*)(CUexternalSemaphore extSem);        // 10000
using PFN_cuGetProcAddress_v1 = CUresult (*)(const char* symbol, void** pfn, int cudaVersion,
                                             cuuint64_t flags);  // 11030 [cuGetProcAddress]
using PFN_cuGetProcAddress = CUresult (*)(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                                          CUdriverProcAddressQueryResult* symbolStatus);  // 12000 [cuGetProcAddress_v2]
using PFN_cuGraphicsEGLRegisterImage = CUresult (*)(CUgraphicsResource* pCudaResource, EGLImageKHR image,
                                                    unsigned int flags);  // 7000, optional
using PFN_cuGraphicsResourceGetMappedEglFrame = CUresult (*)(CUeglFrame* eglFrame, CUgraphicsResource resource,
                                                             unsigned int index, unsigned int mipLevel);  // 7000

// ============================================================================
// Interprocess sharing (handoff::live, live): virtual-memory
// allocations exported as POSIX file descriptors, interprocess events, and
// legacy IPC memory handles. One self-contained block: types, entry points
// and their X-list (HANDOFF_CUDA_LIVE_ENTRY_POINTS, part of
// HANDOFF_CUDA_ENTRY_POINTS). Every entry here is optional: a driver without
// them is still usable, and handoff::live reports the route it fell back to.
// ============================================================================
using CUmemGenericAllocationHandle = unsigned long long;  // CUmemGenericAllocationHandle_v1
struct CUevent_st;
using CUevent = CUevent_st*;

enum CUmemAllocationHandleType : int {
  CU_MEM_HANDLE_TYPE_NONE = 0x0,
  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1,
  CU_MEM_HANDLE_TYPE_WIN32 = 0x2,
  CU_MEM_HANDLE_TYPE_WIN32_KMT = 0x4,
  CU_MEM_HANDLE_TYPE_FABRIC = 0x8,
  CU_MEM_HANDLE_TYPE_MAX = 0x7FFFFFFF,
};

enum CUmemAccess_flags : int {
  CU_MEM_ACCESS_FLAGS_PROT_NONE = 0x0,
  CU_MEM_ACCESS_FLAGS_PROT_READ = 0x1,
  CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3,
  CU_MEM_ACCESS_FLAGS_PROT_MAX = 0x7FFFFFFF,
};

enum CUmemLocationType : int {
  CU_MEM_LOCATION_TYPE_INVALID = 0x0,
  CU_MEM_LOCATION_TYPE_DEVICE = 0x1,
  CU_MEM_LOCATION_TYPE_HOST = 0x2,
  CU_MEM_LOCATION_TYPE_HOST_NUMA = 0x3,
  CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT = 0x4,
  CU_MEM_LOCATION_TYPE_MAX = 0x7FFFFFFF,
};

enum CUmemAllocationType : int {
  CU_MEM_ALLOCATION_TYPE_INVALID = 0x0,
  CU_MEM_ALLOCATION_TYPE_PINNED = 0x1,
  CU_MEM_ALLOCATION_TYPE_MANAGED = 0x2,
  CU_MEM_ALLOCATION_TYPE_MAX = 0x7FFFFFFF,
};

enum CUmemAllocationGranularity_flags : int {
  CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0x0,
  CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 0x1,
};

struct CUmemLocation {  // CUmemLocation_v1
  CUmemLocationType type;
  int id;
};

struct CUmemAllocationProp {  // CUmemAllocationProp_v1
  CUmemAllocationType type;
  CUmemAllocationHandleType requestedHandleTypes;
  CUmemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
};

struct CUmemAccessDesc {  // CUmemAccessDesc_v1
  CUmemLocation location;
  CUmemAccess_flags flags;
};

enum CUevent_flags : int {
  CU_EVENT_DEFAULT = 0x0,
  CU_EVENT_BLOCKING_SYNC = 0x1,
  CU_EVENT_DISABLE_TIMING = 0x2,
  CU_EVENT_INTERPROCESS = 0x4,
};

enum CUipcMem_flags : int {
  CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x1,
};

// cuda.h's CU_IPC_HANDLE_SIZE is a macro: a different name here, so both can be included.
inline constexpr unsigned int kCudaIpcHandleSize = 64;
struct CUipcEventHandle {  // CUipcEventHandle_v1
  char reserved[kCudaIpcHandleSize];
};
struct CUipcMemHandle {  // CUipcMemHandle_v1
  char reserved[kCudaIpcHandleSize];
};

// Device attributes the sharing routes ask about (values of CUdevice_attribute).
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = CUdevice_attribute(102);
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED =
    CUdevice_attribute(103);
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED = CUdevice_attribute(125);

using PFN_cuMemGetAllocationGranularity = CUresult (*)(std::size_t* granularity, const CUmemAllocationProp* prop,
                                                       CUmemAllocationGranularity_flags option);  // 10020
using PFN_cuMemCreate = CUresult (*)(CUmemGenericAllocationHandle* handle, std::size_t size,
                                     const CUmemAllocationProp* prop, unsigned long long flags);  // 10020
using PFN_cuMemRelease = CUresult (*)(CUmemGenericAllocationHandle handle);                     // 10020
using PFN_cuMemExportToShareableHandle = CUresult (*)(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                                      CUmemAllocationHandleType handleType,
                                                      unsigned long long flags);  // 10020
using PFN_cuMemImportFromShareableHandle = CUresult (*)(CUmemGenericAllocationHandle* handle, void* osHandle,
                                                        CUmemAllocationHandleType shHandleType);  // 10020
using PFN_cuMemAddressReserve = CUresult (*)(CUdeviceptr* ptr, std::size_t size, std::size_t alignment,
                                             CUdeviceptr addr, unsigned long long flags);  // 10020
using PFN_cuMemAddressFree = CUresult (*)(CUdeviceptr ptr, std::size_t size);              // 10020
using PFN_cuMemMap = CUresult (*)(CUdeviceptr ptr, std::size_t size, std::size_t offset,
                                  CUmemGenericAllocationHandle handle, unsigned long long flags);  // 10020
using PFN_cuMemUnmap = CUresult (*)(CUdeviceptr ptr, std::size_t size);                          // 10020
using PFN_cuMemSetAccess = CUresult (*)(CUdeviceptr ptr, std::size_t size, const CUmemAccessDesc* desc,
                                        std::size_t count);  // 10020
using PFN_cuEventCreate = CUresult (*)(CUevent* phEvent, unsigned int Flags);                    // 2000
using PFN_cuEventDestroy = CUresult (*)(CUevent hEvent);                                         // 4000 [cuEventDestroy_v2]
using PFN_cuEventRecord = CUresult (*)(CUevent hEvent, CUstream hStream);                        // 2000
using PFN_cuEventQuery = CUresult (*)(CUevent hEvent);                                           // 2000
using PFN_cuEventSynchronize = CUresult (*)(CUevent hEvent);                                     // 2000
using PFN_cuStreamWaitEvent = CUresult (*)(CUstream hStream, CUevent hEvent, unsigned int Flags);  // 3020
using PFN_cuIpcGetEventHandle = CUresult (*)(CUipcEventHandle* pHandle, CUevent event);           // 4010
using PFN_cuIpcOpenEventHandle = CUresult (*)(CUevent* phEvent, CUipcEventHandle handle);         // 4010
using PFN_cuIpcGetMemHandle = CUresult (*)(CUipcMemHandle* pHandle, CUdeviceptr dptr);            // 4010
using PFN_cuIpcOpenMemHandle = CUresult (*)(CUdeviceptr* pdptr, CUipcMemHandle handle,
                                            unsigned int Flags);  // 11000 [cuIpcOpenMemHandle_v2]
using PFN_cuIpcCloseMemHandle = CUresult (*)(CUdeviceptr dptr);  // 4010

#define HANDOFF_CUDA_LIVE_ENTRY_POINTS(X)                                                 \
  X(cuMemGetAllocationGranularity, 10020, "cuMemGetAllocationGranularity", false)          \
  X(cuMemCreate, 10020, "cuMemCreate", false)                                             \
  X(cuMemRelease, 10020, "cuMemRelease", false)                                           \
  X(cuMemExportToShareableHandle, 10020, "cuMemExportToShareableHandle", false)           \
  X(cuMemImportFromShareableHandle, 10020, "cuMemImportFromShareableHandle", false)       \
  X(cuMemAddressReserve, 10020, "cuMemAddressReserve", false)                             \
  X(cuMemAddressFree, 10020, "cuMemAddressFree", false)                                   \
  X(cuMemMap, 10020, "cuMemMap", false)                                                   \
  X(cuMemUnmap, 10020, "cuMemUnmap", false)                                               \
  X(cuMemSetAccess, 10020, "cuMemSetAccess", false)                                       \
  X(cuEventCreate, 2000, "cuEventCreate", false)                                          \
  X(cuEventDestroy, 4000, "cuEventDestroy_v2", false)                                     \
  X(cuEventRecord, 2000, "cuEventRecord", false)                                          \
  X(cuEventQuery, 2000, "cuEventQuery", false)                                            \
  X(cuEventSynchronize, 2000, "cuEventSynchronize", false)                                \
  X(cuStreamWaitEvent, 3020, "cuStreamWaitEvent", false)                                  \
  X(cuIpcGetEventHandle, 4010, "cuIpcGetEventHandle", false)                              \
  X(cuIpcOpenEventHandle, 4010, "cuIpcOpenEventHandle", false)                            \
  X(cuIpcGetMemHandle, 4010, "cuIpcGetMemHandle", false)                                  \
  X(cuIpcOpenMemHandle, 11000, "cuIpcOpenMemHandle_v2", false)                            \
  X(cuIpcCloseMemHandle, 4010, "cuIpcCloseMemHandle", false)
// ============================================================================
// End of the interprocess sharing block.
// ============================================================================

// The X-macro list of every entry point in DriverApi:
//   X(field name = CUDA base name, CUDA version of the ABI, versioned symbol for dlsym, required)
// cuInit, cuDriverGetVersion and cuGetProcAddress are resolved first, by dlsym,
// and are not in this list (they are fields of DriverApi all the same).
#define HANDOFF_CUDA_ENTRY_POINTS(X)                                                      \
  X(cuDeviceGetCount, 2000, "cuDeviceGetCount", true)                                     \
  X(cuDeviceGet, 2000, "cuDeviceGet", true)                                               \
  X(cuDeviceGetName, 2000, "cuDeviceGetName", true)                                       \
  X(cuDeviceGetUuid, 11040, "cuDeviceGetUuid_v2", true)                                   \
  X(cuDeviceGetAttribute, 2000, "cuDeviceGetAttribute", true)                             \
  X(cuDeviceTotalMem, 3020, "cuDeviceTotalMem_v2", true)                                  \
  X(cuDevicePrimaryCtxRetain, 7000, "cuDevicePrimaryCtxRetain", true)                     \
  X(cuDevicePrimaryCtxRelease, 11000, "cuDevicePrimaryCtxRelease_v2", true)               \
  X(cuCtxPushCurrent, 4000, "cuCtxPushCurrent_v2", true)                                  \
  X(cuCtxPopCurrent, 4000, "cuCtxPopCurrent_v2", true)                                    \
  X(cuCtxSetCurrent, 4000, "cuCtxSetCurrent", true)                                       \
  X(cuCtxGetCurrent, 4000, "cuCtxGetCurrent", true)                                       \
  X(cuCtxSynchronize, 2000, "cuCtxSynchronize", true)                                     \
  X(cuGetErrorName, 6000, "cuGetErrorName", true)                                         \
  X(cuGetErrorString, 6000, "cuGetErrorString", true)                                     \
  X(cuMemAlloc, 3020, "cuMemAlloc_v2", true)                                              \
  X(cuMemAllocPitch, 3020, "cuMemAllocPitch_v2", true)                                    \
  X(cuMemFree, 3020, "cuMemFree_v2", true)                                                \
  X(cuMemcpyHtoD, 3020, "cuMemcpyHtoD_v2", true)                                          \
  X(cuMemcpyDtoH, 3020, "cuMemcpyDtoH_v2", true)                                          \
  X(cuMemcpy2D, 3020, "cuMemcpy2D_v2", true)                                              \
  X(cuMemcpy2DAsync, 3020, "cuMemcpy2DAsync_v2", true)                                    \
  X(cuMemsetD8, 3020, "cuMemsetD8_v2", true)                                              \
  X(cuStreamCreate, 2000, "cuStreamCreate", true)                                         \
  X(cuStreamDestroy, 4000, "cuStreamDestroy_v2", true)                                    \
  X(cuStreamSynchronize, 2000, "cuStreamSynchronize", true)                               \
  X(cuStreamQuery, 2000, "cuStreamQuery", true)                                           \
  X(cuModuleLoadData, 2000, "cuModuleLoadData", true)                                     \
  X(cuModuleUnload, 2000, "cuModuleUnload", true)                                         \
  X(cuModuleGetFunction, 2000, "cuModuleGetFunction", true)                               \
  X(cuLaunchKernel, 4000, "cuLaunchKernel", true)                                         \
  X(cuGraphicsGLRegisterBuffer, 3000, "cuGraphicsGLRegisterBuffer", true)                 \
  X(cuGraphicsUnregisterResource, 3000, "cuGraphicsUnregisterResource", true)             \
  X(cuGraphicsResourceSetMapFlags, 6050, "cuGraphicsResourceSetMapFlags_v2", true)        \
  X(cuGraphicsMapResources, 3000, "cuGraphicsMapResources", true)                         \
  X(cuGraphicsUnmapResources, 3000, "cuGraphicsUnmapResources", true)                     \
  X(cuGraphicsResourceGetMappedPointer, 3020, "cuGraphicsResourceGetMappedPointer_v2", true) \
  X(cuImportExternalMemory, 10000, "cuImportExternalMemory", true)                        \
  X(cuExternalMemoryGetMappedBuffer, 10000, "cuExternalMemoryGetMappedBuffer", true)      \
  X(cuDestroyExternalMemory, 10000, "cuDestroyExternalMemory", true)                      \
  X(cuImportExternalSemaphore, 10000, "cuImportExternalSemaphore", true)                  \
  X(cuSignalExternalSemaphoresAsync, 10000, "cuSignalExternalSemaphoresAsync", true)      \
  X(cuWaitExternalSemaphoresAsync, 10000, "cuWaitExternalSemaphoresAsync", true)          \
  X(cuDestroyExternalSemaphore, 10000, "cuDestroyExternalSemaphore", true)                \
  X(cuGraphicsEGLRegisterImage, 7000, "cuGraphicsEGLRegisterImage", false)                \
  X(cuGraphicsResourceGetMappedEglFrame, 7000, "cuGraphicsResourceGetMappedEglFrame", false) \
  HANDOFF_CUDA_LIVE_ENTRY_POINTS(X)

// The function table of one loaded driver. Every required field is non-null
// once the driver is usable (handoff::cuda::Driver::usable()); optional ones
// (cuGraphicsEGLRegisterImage, cuGraphicsResourceGetMappedEglFrame, the
// interprocess block) may be null. cuGetProcAddress_v1 is set on 11.x
// drivers, cuGetProcAddress on 12.0+; either may be null.
// Thread safety: the table is immutable after load; CUDA's entry points are
// themselves thread-safe (graphics calls need the GL context current).
struct DriverApi {
  PFN_cuInit cuInit = nullptr;
  PFN_cuDriverGetVersion cuDriverGetVersion = nullptr;
  PFN_cuGetProcAddress cuGetProcAddress = nullptr;
  PFN_cuGetProcAddress_v1 cuGetProcAddress_v1 = nullptr;
#define HANDOFF_CUDA_API_FIELD_(name, ver, sym, req) PFN_##name name = nullptr;
  HANDOFF_CUDA_ENTRY_POINTS(HANDOFF_CUDA_API_FIELD_)
#undef HANDOFF_CUDA_API_FIELD_
};

}  // namespace handoff::cuda::abi
