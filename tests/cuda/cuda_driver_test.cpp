// The CUDA driver layer on a real driver (libcuda.so.1). Skipped, with the
// reason, where there is no NVIDIA driver or GPU. HANDOFF_CUDA_TEST_DRIVER
// points the same tests at another driver file (ctest runs them once more on
// the fake driver, label fakecuda, where the "parity" checks hold the fake to
// the real driver's answers).
#include <handoff/cuda.hpp>

#include <handoff/cuda_abi.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace handoff {
namespace abi = cuda::abi;
namespace {

using cuda::Status;

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
    const Status s = d.status();
    // Missing hardware (or driver) is a skip; a driver that is here but unusable is a failure.
    if (s == Status::NoDriverLibrary || s == Status::StubLibrary || s == Status::NoDevice)
      GTEST_SKIP() << "no CUDA driver: " << d.describe();
    ASSERT_TRUE(d.usable()) << d.describe();
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

TEST_F(RealCuda, ParityUnknownErrorCodeHasNoName) {
  const char* s = reinterpret_cast<const char*>(0x1);
  EXPECT_EQ(a->cuGetErrorName(static_cast<abi::CUresult>(123456), &s), abi::CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(s, nullptr);
  EXPECT_EQ(drv->error_name(123456), "CUDA_ERROR_123456");
}

}  // namespace
}  // namespace handoff
