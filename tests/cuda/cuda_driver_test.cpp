// The CUDA driver layer on a real driver (libcuda.so.1). Skipped, with the
// reason, where there is no NVIDIA driver or GPU. HANDOFF_CUDA_TEST_DRIVER
// points the same tests at another driver file (ctest runs them once more on
// the fake driver, label fakecuda, where the "parity" checks hold the fake to
// the real driver's answers).
#include <handoff/cuda.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>

#include <gtest/gtest.h>

#include "cuda_gpu.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace handoff {
namespace abi = cuda::abi;
namespace {

const cuda::Driver& test_driver() {
  static const std::unique_ptr<cuda::Driver> d = [] {
    const char* p = std::getenv("HANDOFF_CUDA_TEST_DRIVER");
    return cuda::Driver::load(p && *p ? p : "libcuda.so.1");
  }();
  return *d;
}

class RealCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    const cuda::Driver& d = test_driver();
    // Missing hardware (or driver) is a skip; a driver that is here but unusable is a failure.
    HANDOFF_REQUIRE_CUDA_GPU(d);
    drv = &d;
    a = &d.api();
  }
  const cuda::Driver* drv = nullptr;
  const abi::DriverApi* a = nullptr;
};

TEST_F(RealCuda, DriverIsNewEnoughAndResolvedThroughGetProcAddress) {
  EXPECT_GE(drv->driver_version(), cuda::kMinimumDriverVersion);
  EXPECT_GE(drv->device_count(), 1);
  EXPECT_TRUE(drv->via_get_proc_address()) << drv->describe();
  EXPECT_NE(drv->describe().find("device"), std::string::npos) << drv->describe();
  std::printf("%s\n", drv->describe().c_str());
}

TEST_F(RealCuda, DeviceInfo) {
  for (const cuda::DeviceInfo& info : drv->devices()) {
    EXPECT_FALSE(info.name.empty());
    EXPECT_GE(info.cc_major, 3);
    EXPECT_GT(info.total_memory, 0u);
    EXPECT_NE(info.uuid, Uuid{}) << "an all-zero UUID cannot identify the GPU";
    std::printf("device %d: %s, sm_%d%d, %zu MiB, GPU-%s\n", info.ordinal, info.name.c_str(), info.cc_major,
                info.cc_minor, info.total_memory >> 20, to_string(info.uuid).c_str());
  }
  EXPECT_THROW(drv->device(drv->device_count()), UsageError);
}

TEST_F(RealCuda, PrimaryContextIsSharedAndCurrentInScope) {
  cuda::PrimaryContext c1(*drv, 0);
  cuda::PrimaryContext c2(*drv, 0);
  EXPECT_EQ(c1.get(), c2.get()) << "the primary context is one per device";
  abi::CUcontext before = nullptr;
  ASSERT_EQ(a->cuCtxGetCurrent(&before), abi::CUDA_SUCCESS);
  {
    cuda::ScopedContext cur(c1);
    abi::CUcontext now = nullptr;
    ASSERT_EQ(a->cuCtxGetCurrent(&now), abi::CUDA_SUCCESS);
    EXPECT_EQ(now, c1.get());
  }
  abi::CUcontext after = nullptr;
  ASSERT_EQ(a->cuCtxGetCurrent(&after), abi::CUDA_SUCCESS);
  EXPECT_EQ(after, before);
}

TEST_F(RealCuda, MemoryRoundTrip) {
  cuda::PrimaryContext ctx(*drv, 0);
  cuda::ScopedContext cur(ctx);
  constexpr std::size_t n = 1 << 20;
  std::vector<unsigned char> in(n), out(n, 0);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  abi::CUdeviceptr p = 0;
  HANDOFF_CU_CHECK(drv->api().cuMemAlloc(&p, n));
  HANDOFF_CU_CHECK(drv->api().cuMemcpyHtoD(p, in.data(), n));
  HANDOFF_CU_CHECK(drv->api().cuMemsetD8(p + 100, 0xEE, 10));
  HANDOFF_CU_CHECK(drv->api().cuMemcpyDtoH(out.data(), p, n));
  EXPECT_EQ(out[99], in[99]);
  EXPECT_EQ(out[100], 0xEE);
  EXPECT_EQ(out[109], 0xEE);
  EXPECT_EQ(out[110], in[110]);
  EXPECT_EQ(out[n - 1], in[n - 1]);

  // A pitched 2D copy on a stream: 5 rows of 33 bytes.
  abi::CUdeviceptr q = 0;
  std::size_t pitch = 0;
  HANDOFF_CU_CHECK(drv->api().cuMemAllocPitch(&q, &pitch, 33, 5, 4));
  EXPECT_GE(pitch, 33u);
  abi::CUstream stream = nullptr;
  HANDOFF_CU_CHECK(drv->api().cuStreamCreate(&stream, abi::CU_STREAM_NON_BLOCKING));
  abi::CUDA_MEMCPY2D c{};
  c.srcMemoryType = abi::CU_MEMORYTYPE_HOST;
  c.srcHost = in.data();
  c.srcPitch = 40;
  c.dstMemoryType = abi::CU_MEMORYTYPE_DEVICE;
  c.dstDevice = q;
  c.dstPitch = pitch;
  c.WidthInBytes = 33;
  c.Height = 5;
  HANDOFF_CU_CHECK(drv->api().cuMemcpy2DAsync(&c, stream));
  HANDOFF_CU_CHECK(drv->api().cuStreamSynchronize(stream));
  std::vector<unsigned char> rows(pitch * 5);
  HANDOFF_CU_CHECK(drv->api().cuMemcpyDtoH(rows.data(), q, rows.size()));
  EXPECT_EQ(rows[pitch * 4 + 32], in[40 * 4 + 32]);
  EXPECT_EQ(rows[pitch * 2], in[80]);
  HANDOFF_CU_CHECK(drv->api().cuStreamDestroy(stream));
  HANDOFF_CU_CHECK(drv->api().cuMemFree(q));
  HANDOFF_CU_CHECK(drv->api().cuMemFree(p));
  HANDOFF_CU_CHECK(drv->api().cuCtxSynchronize());
}

TEST_F(RealCuda, DriverErrorsBecomeNamedErrors) {
  abi::CUdevice dev = 0;
  try {
    HANDOFF_CU_CHECK(drv->api().cuDeviceGet(&dev, 9999));
    FAIL() << "device 9999 cannot exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.call(), "cuDeviceGet");
    EXPECT_EQ(e.code(), abi::CUDA_ERROR_INVALID_DEVICE);
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_INVALID_DEVICE");
    EXPECT_NE(std::string(e.what()).find("cuDeviceGet"), std::string::npos) << e.what();
  }
}

// --- parity: what the fake driver's contract claims, asked of this driver ------

TEST_F(RealCuda, ParityMemoryNeedsACurrentContext) {
  // This test thread has never had a context made current.
  abi::CUcontext cur = nullptr;
  ASSERT_EQ(a->cuCtxGetCurrent(&cur), abi::CUDA_SUCCESS);
  if (cur) GTEST_SKIP() << "a context is current on this thread already";
  abi::CUdeviceptr p = 0;
  EXPECT_EQ(a->cuMemAlloc(&p, 64), abi::CUDA_ERROR_INVALID_CONTEXT);
}

TEST_F(RealCuda, ParityZeroByteAllocationIsInvalidValue) {
  cuda::PrimaryContext ctx(*drv, 0);
  cuda::ScopedContext cur(ctx);
  abi::CUdeviceptr p = 0;
  EXPECT_EQ(a->cuMemAlloc(&p, 0), abi::CUDA_ERROR_INVALID_VALUE);
}

TEST_F(RealCuda, ParityGraphicsCallWithoutGlContext) {
  cuda::PrimaryContext ctx(*drv, 0);
  cuda::ScopedContext cur(ctx);
  abi::CUgraphicsResource r = nullptr;
  const abi::CUresult got = a->cuGraphicsGLRegisterBuffer(&r, 1, 0);
  // The docs list no code for "no GL context" (cudaGL.h names INVALID_HANDLE,
  // ALREADY_MAPPED, INVALID_CONTEXT, OPERATING_SYSTEM); the fake answers
  // CUDA_ERROR_INVALID_GRAPHICS_CONTEXT. What must hold is the refusal; the
  // code is printed so the fake can be matched to the real driver.
  std::printf("cuGraphicsGLRegisterBuffer with no GL context: %s (the fake: CUDA_ERROR_INVALID_GRAPHICS_CONTEXT)\n",
              drv->error_name(got).c_str());
  RecordProperty("no_gl_context_result", drv->error_name(got));
  EXPECT_NE(got, abi::CUDA_SUCCESS) << "registering a GL buffer with no GL context current must fail";
  if (got == abi::CUDA_SUCCESS) a->cuGraphicsUnregisterResource(r);
}

TEST_F(RealCuda, ParityGetProcAddressIsVersioned) {
  ASSERT_NE(a->cuGetProcAddress, nullptr);
  void* v2000 = nullptr;
  void* v13000 = nullptr;
  abi::CUdriverProcAddressQueryResult q{};
  ASSERT_EQ(a->cuGetProcAddress("cuCtxSynchronize", &v2000, 2000, abi::CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q),
            abi::CUDA_SUCCESS);
  EXPECT_EQ(q, abi::CU_GET_PROC_ADDRESS_SUCCESS);
  if (drv->driver_version() >= 13000) {
    ASSERT_EQ(a->cuGetProcAddress("cuCtxSynchronize", &v13000, 13000, abi::CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q),
              abi::CUDA_SUCCESS);
    EXPECT_NE(v2000, v13000) << "CUDA 13 has a cuCtxSynchronize(CUcontext): asking for 13000 must give it";
  }
  // The docs: an unknown symbol is CUDA_SUCCESS with a null pointer and
  // SYMBOL_NOT_FOUND; a version newer than the driver is CUDA_ERROR_INVALID_VALUE.
  void* p = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(a->cuGetProcAddress("cuNoSuchEntryPoint", &p, drv->driver_version(), 0, &q), abi::CUDA_SUCCESS);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(q, abi::CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_EQ(a->cuGetProcAddress("cuMemAlloc", &p, drv->driver_version() + 10, 0, &q), abi::CUDA_ERROR_INVALID_VALUE);
}

// The rules the fake enforces where the driver API docs leave the answer (or
// its code) open: each test asserts the fake's choice, so on a GPU it shows
// the real driver's answer.

TEST_F(RealCuda, ParityTwoDCopyPitchRules) {
  int max_pitch = 0;
  ASSERT_EQ(a->cuDeviceGetAttribute(&max_pitch, abi::CU_DEVICE_ATTRIBUTE_MAX_PITCH, 0), abi::CUDA_SUCCESS);
  EXPECT_EQ(max_pitch, 2147483647) << "the fake reports 2^31 - 1 for CU_DEVICE_ATTRIBUTE_MAX_PITCH";
  cuda::PrimaryContext ctx(*drv, 0);
  cuda::ScopedContext cur(ctx);
  abi::CUdeviceptr p = 0;
  HANDOFF_CU_CHECK(a->cuMemAlloc(&p, 4096));
  std::vector<unsigned char> host(4096);
  abi::CUDA_MEMCPY2D c{};
  c.srcMemoryType = abi::CU_MEMORYTYPE_HOST;
  c.srcHost = host.data();
  c.srcPitch = 64;
  c.dstMemoryType = abi::CU_MEMORYTYPE_DEVICE;
  c.dstDevice = p;
  c.dstPitch = 63;  // below the row, for one row
  c.WidthInBytes = 64;
  c.Height = 1;
  const abi::CUresult below = a->cuMemcpy2D(&c);
  c.dstPitch = 64;
  c.srcPitch = std::size_t(max_pitch) + 1;
  const abi::CUresult above = a->cuMemcpy2D(&c);
  HANDOFF_CU_CHECK(a->cuMemFree(p));
  EXPECT_EQ(below, abi::CUDA_ERROR_INVALID_VALUE) << "one row, pitch below WidthInBytes: " << drv->error_name(below);
  EXPECT_EQ(above, abi::CUDA_ERROR_INVALID_VALUE) << "pitch above the maximum: " << drv->error_name(above);
}

// The driver's cuCtxCreate (not in handoff's ABI: handoff uses primary contexts only).
abi::CUcontext create_context(const cuda::Driver& d) {
  using Create = abi::CUresult (*)(abi::CUcontext*, unsigned, abi::CUdevice);
  void* lib = ::dlopen(d.path().c_str(), RTLD_NOW | RTLD_NOLOAD);
  const auto create = lib ? reinterpret_cast<Create>(::dlsym(lib, "cuCtxCreate_v2")) : nullptr;
  if (lib) ::dlclose(lib);
  abi::CUcontext c = nullptr;
  if (!create) throw std::runtime_error(d.path() + " exports no cuCtxCreate_v2");
  HANDOFF_CU_CHECK(create(&c, 0, 0));
  return c;
}

void destroy_context(const cuda::Driver& d, abi::CUcontext c) {
  using Destroy = abi::CUresult (*)(abi::CUcontext);
  void* lib = ::dlopen(d.path().c_str(), RTLD_NOW | RTLD_NOLOAD);
  const auto destroy = lib ? reinterpret_cast<Destroy>(::dlsym(lib, "cuCtxDestroy_v2")) : nullptr;
  if (lib) ::dlclose(lib);
  if (destroy) HANDOFF_CU_CHECK(destroy(c));
}

TEST_F(RealCuda, ParityStreamOfAnotherContext) {
  ASSERT_NE(a->cuEventCreate, nullptr);
  const abi::CUcontext own = create_context(*drv);  // current on this thread now
  abi::CUstream theirs = nullptr;
  HANDOFF_CU_CHECK(a->cuStreamCreate(&theirs, abi::CU_STREAM_NON_BLOCKING));
  abi::CUcontext popped = nullptr;
  HANDOFF_CU_CHECK(a->cuCtxPopCurrent(&popped));
  abi::CUresult copy = abi::CUDA_SUCCESS, record = abi::CUDA_SUCCESS, wait = abi::CUDA_ERROR_UNKNOWN,
                sync = abi::CUDA_ERROR_UNKNOWN;
  {
    cuda::PrimaryContext ctx(*drv, 0);
    cuda::ScopedContext cur(ctx);
    abi::CUdeviceptr p = 0;
    HANDOFF_CU_CHECK(a->cuMemAlloc(&p, 256));
    unsigned char host[16] = {};
    abi::CUDA_MEMCPY2D c{};
    c.srcMemoryType = abi::CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = 16;
    c.dstMemoryType = abi::CU_MEMORYTYPE_DEVICE;
    c.dstDevice = p;
    c.dstPitch = 16;
    c.WidthInBytes = 16;
    c.Height = 1;
    copy = a->cuMemcpy2DAsync(&c, theirs);
    abi::CUevent mine = nullptr;
    HANDOFF_CU_CHECK(a->cuEventCreate(&mine, abi::CU_EVENT_DISABLE_TIMING));
    record = a->cuEventRecord(mine, theirs);
    wait = a->cuStreamWaitEvent(theirs, mine, 0);
    sync = a->cuStreamSynchronize(theirs);
    HANDOFF_CU_CHECK(a->cuCtxSynchronize());
    HANDOFF_CU_CHECK(a->cuEventDestroy(mine));
    HANDOFF_CU_CHECK(a->cuMemFree(p));
  }
  HANDOFF_CU_CHECK(a->cuCtxPushCurrent(own));
  HANDOFF_CU_CHECK(a->cuStreamDestroy(theirs));
  destroy_context(*drv, own);
  EXPECT_EQ(copy, abi::CUDA_ERROR_INVALID_HANDLE)
      << "cuMemcpy2DAsync on a stream of another context (the fake's choice): " << drv->error_name(copy);
  EXPECT_EQ(record, abi::CUDA_ERROR_INVALID_HANDLE) << "cuEventRecord, event and stream of two contexts: "
                                                     << drv->error_name(record);
  EXPECT_EQ(wait, abi::CUDA_SUCCESS) << "cuStreamWaitEvent across contexts: " << drv->error_name(wait);
  EXPECT_EQ(sync, abi::CUDA_SUCCESS) << "cuStreamSynchronize from another context: " << drv->error_name(sync);
}

TEST_F(RealCuda, ParityImportRefusesWhatIsNotMemory) {
  cuda::PrimaryContext ctx(*drv, 0);
  cuda::ScopedContext cur(ctx);
  int fds[2] = {-1, -1};
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  abi::CUDA_EXTERNAL_MEMORY_HANDLE_DESC d{};
  d.type = abi::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = fds[0];
  d.size = 4096;
  abi::CUexternalMemory mem = nullptr;
  const abi::CUresult got = a->cuImportExternalMemory(&mem, &d);
  if (got == abi::CUDA_SUCCESS) a->cuDestroyExternalMemory(mem);
  else ::close(fds[0]);  // a failed import leaves the descriptor with the caller
  ::close(fds[1]);
  EXPECT_EQ(got, abi::CUDA_ERROR_INVALID_VALUE) << "a pipe imported as OPAQUE_FD memory: " << drv->error_name(got);
}

// A POSIX-fd export of a cuMemCreate allocation: the one external memory a
// CUDA test can make without another API. Empty where the device has no such export.
struct VmmExport {
  abi::CUmemGenericAllocationHandle handle = 0;
  std::size_t size = 0;
};

VmmExport vmm_allocation(const abi::DriverApi& a) {
  abi::CUmemAllocationProp prop{};
  prop.type = abi::CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = abi::CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes = abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  VmmExport v;
  HANDOFF_CU_CHECK(a.cuMemGetAllocationGranularity(&v.size, &prop, abi::CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  HANDOFF_CU_CHECK(a.cuMemCreate(&v.handle, v.size, &prop, 0));
  return v;
}

int export_fd(const abi::DriverApi& a, const VmmExport& v) {
  int fd = -1;
  HANDOFF_CU_CHECK(a.cuMemExportToShareableHandle(&fd, v.handle, abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  return fd;
}

class RealCudaVmm : public RealCuda {
 protected:
  void SetUp() override {
    RealCuda::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    int vmm = 0, posix = 0;
    a->cuDeviceGetAttribute(&vmm, abi::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0);
    a->cuDeviceGetAttribute(&posix, abi::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0);
    if (!vmm || !posix) GTEST_SKIP() << "device 0 cannot export memory as a POSIX file descriptor";
  }
};

TEST_F(RealCudaVmm, ParityDedicatedFlagOfAVmmAllocation) {
  cuda::PrimaryContext ctx(*drv, 0);
  cuda::ScopedContext cur(ctx);
  const VmmExport v = vmm_allocation(*a);
  abi::CUDA_EXTERNAL_MEMORY_HANDLE_DESC d{};
  d.type = abi::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = export_fd(*a, v);
  d.size = v.size;
  d.flags = abi::kCudaExternalMemoryDedicated;
  abi::CUexternalMemory mem = nullptr;
  const abi::CUresult dedicated = a->cuImportExternalMemory(&mem, &d);
  if (dedicated == abi::CUDA_SUCCESS) HANDOFF_CU_CHECK(a->cuDestroyExternalMemory(mem));
  else ::close(d.handle.fd);
  d.handle.fd = export_fd(*a, v);
  d.flags = 0;
  const abi::CUresult plain = a->cuImportExternalMemory(&mem, &d);
  if (plain == abi::CUDA_SUCCESS) HANDOFF_CU_CHECK(a->cuDestroyExternalMemory(mem));
  else ::close(d.handle.fd);
  HANDOFF_CU_CHECK(a->cuMemRelease(v.handle));
  EXPECT_EQ(dedicated, abi::CUDA_ERROR_INVALID_VALUE)
      << "a cuMemCreate allocation imported as DEDICATED (the fake refuses): " << drv->error_name(dedicated);
  EXPECT_EQ(plain, abi::CUDA_SUCCESS) << "the same allocation imported plainly: " << drv->error_name(plain);
}

TEST_F(RealCudaVmm, ParityMappedBufferAlignment) {
  cuda::PrimaryContext ctx(*drv, 0);
  cuda::ScopedContext cur(ctx);
  const VmmExport v = vmm_allocation(*a);
  abi::CUDA_EXTERNAL_MEMORY_HANDLE_DESC d{};
  d.type = abi::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = export_fd(*a, v);
  d.size = v.size;
  abi::CUexternalMemory mem = nullptr;
  const abi::CUresult imported = a->cuImportExternalMemory(&mem, &d);
  if (imported != abi::CUDA_SUCCESS) ::close(d.handle.fd);
  abi::CUresult odd_offset = abi::CUDA_SUCCESS, odd_size = abi::CUDA_ERROR_UNKNOWN;
  if (imported == abi::CUDA_SUCCESS) {
    abi::CUDA_EXTERNAL_MEMORY_BUFFER_DESC b{};
    b.offset = 100;
    b.size = 256;
    abi::CUdeviceptr p = 0;
    odd_offset = a->cuExternalMemoryGetMappedBuffer(&p, mem, &b);
    if (odd_offset == abi::CUDA_SUCCESS) HANDOFF_CU_CHECK(a->cuMemFree(p));
    b.offset = 256;
    b.size = 100;
    odd_size = a->cuExternalMemoryGetMappedBuffer(&p, mem, &b);
    if (odd_size == abi::CUDA_SUCCESS) HANDOFF_CU_CHECK(a->cuMemFree(p));
    HANDOFF_CU_CHECK(a->cuDestroyExternalMemory(mem));
  }
  HANDOFF_CU_CHECK(a->cuMemRelease(v.handle));
  ASSERT_EQ(imported, abi::CUDA_SUCCESS) << "a POSIX-fd export imported as OPAQUE_FD: " << drv->error_name(imported);
  EXPECT_EQ(odd_offset, abi::CUDA_ERROR_INVALID_VALUE)
      << "a buffer at offset 100 (the fake wants multiples of 256): " << drv->error_name(odd_offset);
  EXPECT_EQ(odd_size, abi::CUDA_SUCCESS) << "100 bytes at offset 256 (the fake takes any size): "
                                         << drv->error_name(odd_size);
}

TEST_F(RealCuda, ParityStaleIpcEventHandle) {
  int supported = 0;
  ASSERT_EQ(a->cuDeviceGetAttribute(&supported, abi::CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, 0), abi::CUDA_SUCCESS);
  if (!supported) GTEST_SKIP() << "device 0 has no interprocess events";
  ASSERT_NE(a->cuIpcOpenEventHandle, nullptr);
  // Another process exports an event, destroys it and exits.
  const std::string command = std::string(HANDOFF_CUDA_IPC_EVENT_EXPORTER) + " '" + drv->path() + "' 2>&1";
  FILE* out = ::popen(command.c_str(), "r");
  ASSERT_NE(out, nullptr) << command;
  char line[512] = {};
  const bool read = std::fgets(line, sizeof line, out) != nullptr;
  const int status = ::pclose(out);
  ASSERT_TRUE(read && status == 0) << command << ": " << line;
  abi::CUipcEventHandle h{};
  ASSERT_GE(std::strlen(line), 2 * sizeof h.reserved) << line;
  for (std::size_t i = 0; i < sizeof h.reserved; ++i)
    h.reserved[i] = static_cast<char>(std::stoi(std::string(line + 2 * i, 2), nullptr, 16));
  cuda::PrimaryContext ctx(*drv, 0);
  cuda::ScopedContext cur(ctx);
  abi::CUevent e = nullptr;
  const abi::CUresult got = a->cuIpcOpenEventHandle(&e, h);
  if (got == abi::CUDA_SUCCESS) HANDOFF_CU_CHECK(a->cuEventDestroy(e));
  EXPECT_EQ(got, abi::CUDA_ERROR_INVALID_VALUE)
      << "the handle of an event destroyed by a process that has exited: " << drv->error_name(got);
}

TEST_F(RealCuda, ParityUnknownErrorCodeHasNoName) {
  const char* s = reinterpret_cast<const char*>(0x1);
  EXPECT_EQ(a->cuGetErrorName(static_cast<abi::CUresult>(123456), &s), abi::CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(s, nullptr);
  EXPECT_EQ(drv->error_name(123456), "CUDA_ERROR_123456");
}

}  // namespace
}  // namespace handoff
