// A usable driver (the fake): device info, UUIDs, primary contexts, the
// check helper, and driver failures reaching the caller as handoff::Error.
#include "log_capture.hpp"
#include "fake_test_util.hpp"

#include <handoff/log.hpp>
#include <handoff/cuda_check.hpp>

#include <mutex>
#include <vector>

namespace handoff::test {
namespace {

using cuda::Driver;

class DriverTest : public FakeCudaTest {
 protected:
  void SetUp() override {
    FakeCudaTest::SetUp();
    drv_ = Driver::load(fake_path());
    ASSERT_TRUE(drv_->usable()) << drv_->describe();
  }
  std::unique_ptr<Driver> drv_;
};

// Captures log messages for one scope.

TEST_F(DriverTest, DeviceInfo) {
  cuda::DeviceInfo info = drv_->device(0);
  EXPECT_EQ(info.ordinal, 0);
  EXPECT_EQ(info.name, "Handoff Fake CUDA Device 0");
  EXPECT_EQ(info.cc_major, 9);
  EXPECT_EQ(info.cc_minor, 0);
  EXPECT_EQ(info.total_memory, std::size_t{8} << 30);
  // The fake's default UUID is the ASCII of "HANDOFF-FAKE-GPU".
  const Uuid expected = {'H', 'A', 'N', 'D', 'O', 'F', 'F', '-', 'F', 'A', 'K', 'E', '-', 'G', 'P', 'U'};
  EXPECT_EQ(info.uuid, expected);
}

TEST(DriverConfig, UuidAndComputeCapabilityFromTheEnvironment) {
  ScopedEnv u("HANDOFF_FAKE_CUDA_UUID", "00112233-4455-6677-8899-AABBCCDDEEFF");
  ScopedEnv ma("HANDOFF_FAKE_CUDA_CC_MAJOR", "8");
  ScopedEnv mi("HANDOFF_FAKE_CUDA_CC_MINOR", "6");
  auto d = Driver::load(fake_path());
  ASSERT_TRUE(d->usable()) << d->describe();
  cuda::DeviceInfo info = d->device(0);
  const Uuid expected = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                         0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
  EXPECT_EQ(info.uuid, expected);
  EXPECT_EQ(info.cc_major, 8);
  EXPECT_EQ(info.cc_minor, 6);
}

// fake_cuda_set_uuid: at once (no new cuInit), kept by a new cuInit, refused
// (unchanged) for text that is not a UUID, undone by NULL and by reset.
TEST_F(DriverTest, SetUuidTakesEffectAtOnceUntilClearedOrReset) {
  const Uuid fake_default = {'H', 'A', 'N', 'D', 'O', 'F', 'F', '-', 'F', 'A', 'K', 'E', '-', 'G', 'P', 'U'};
  const Uuid set = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
  ASSERT_EQ(drv_->device(0).uuid, fake_default);
  EXPECT_EQ(fake_.set_uuid("00112233-4455-6677-8899-AABBCCDDEEFF"), 0);
  EXPECT_EQ(drv_->device(0).uuid, set);
  EXPECT_EQ(to_string(drv_->device(0).uuid), "00112233-4455-6677-8899-aabbccddeeff");
  EXPECT_EQ(fake_.set_uuid("00112233"), 1);  // too short
  EXPECT_EQ(fake_.set_uuid("00112233-4455-6677-8899-AABBCCDDEEFG"), 1);
  EXPECT_EQ(drv_->device(0).uuid, set) << "a refused UUID changes nothing";
  auto again = Driver::load(fake_path());  // cuInit again
  ASSERT_TRUE(again->usable()) << again->describe();
  EXPECT_EQ(again->device(0).uuid, set);
  EXPECT_EQ(fake_.set_uuid(nullptr), 0);
  EXPECT_EQ(drv_->device(0).uuid, fake_default);
  EXPECT_EQ(fake_.set_uuid("00112233445566778899aabbccddeeff"), 0);  // no dashes
  EXPECT_EQ(drv_->device(0).uuid, set);
  fake_.reset();
  EXPECT_EQ(drv_->device(0).uuid, fake_default);
}

TEST(DriverConfig, SeveralDevices) {
  ScopedEnv e("HANDOFF_FAKE_CUDA_DEVICES", "3");
  auto d = Driver::load(fake_path());
  ASSERT_TRUE(d->usable()) << d->describe();
  EXPECT_EQ(d->device_count(), 3);
  auto all = d->devices();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2].ordinal, 2);
  EXPECT_EQ(all[2].name, "Handoff Fake CUDA Device 2");
  EXPECT_NE(all[0].uuid, all[1].uuid);
  EXPECT_NE(all[1].uuid, all[2].uuid);
  EXPECT_THROW(d->device(3), UsageError);
  EXPECT_THROW(d->device(-1), UsageError);
  EXPECT_THROW(cuda::PrimaryContext(*d, 3), UsageError);
}

TEST_F(DriverTest, PrimaryContextRetainReleaseBalance) {
  const int base = fake_.primary_context_refs(0);
  {
    cuda::PrimaryContext a(*drv_, 0);
    EXPECT_TRUE(a);
    EXPECT_EQ(a.device(), 0);
    EXPECT_NE(a.get(), nullptr);
    EXPECT_EQ(fake_.primary_context_refs(0), base + 1);
    cuda::PrimaryContext b(*drv_, 0);
    EXPECT_EQ(b.get(), a.get()) << "one primary context per device";
    EXPECT_EQ(fake_.primary_context_refs(0), base + 2);
    cuda::PrimaryContext c(std::move(b));
    EXPECT_FALSE(b);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
    EXPECT_EQ(fake_.primary_context_refs(0), base + 2);
    c.reset();
    EXPECT_FALSE(c);
    EXPECT_EQ(fake_.primary_context_refs(0), base + 1);
    cuda::PrimaryContext d;
    d = std::move(a);
    EXPECT_EQ(fake_.primary_context_refs(0), base + 1);
    d = cuda::PrimaryContext(*drv_, 0);  // releases the old one, keeps the new one
    EXPECT_EQ(fake_.primary_context_refs(0), base + 1);
  }
  EXPECT_EQ(fake_.primary_context_refs(0), base);
  EXPECT_EQ(fake_.call_count("cuDevicePrimaryCtxRetain"), fake_.call_count("cuDevicePrimaryCtxRelease"));
}

// fake_cuda_host_copies counts copies with a host side, not device-to-device ones.
TEST_F(DriverTest, HostCopiesCountsCopiesFromOrToHostMemoryOnly) {
  cuda::PrimaryContext ctx(*drv_, 0);
  cuda::ScopedContext current(ctx);
  const abi::DriverApi& a = drv_->api();
  abi::CUdeviceptr d1 = 0, d2 = 0;
  ASSERT_EQ(a.cuMemAlloc(&d1, 256), abi::CUDA_SUCCESS);
  ASSERT_EQ(a.cuMemAlloc(&d2, 256), abi::CUDA_SUCCESS);
  std::vector<unsigned char> host(256, 7);
  fake_.reset();
  EXPECT_EQ(fake_.host_copies(), 0);
  ASSERT_EQ(a.cuMemcpyHtoD(d1, host.data(), 256), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.host_copies(), 1);
  abi::CUDA_MEMCPY2D m{};
  m.srcMemoryType = abi::CU_MEMORYTYPE_DEVICE;
  m.srcDevice = d1;
  m.srcPitch = 16;
  m.dstMemoryType = abi::CU_MEMORYTYPE_DEVICE;
  m.dstDevice = d2;
  m.dstPitch = 16;
  m.WidthInBytes = 16;
  m.Height = 16;
  ASSERT_EQ(a.cuMemcpy2D(&m), abi::CUDA_SUCCESS);
  ASSERT_EQ(a.cuMemcpy2DAsync(&m, nullptr), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.host_copies(), 1) << "device to device: not counted";
  m.dstMemoryType = abi::CU_MEMORYTYPE_HOST;
  m.dstHost = host.data();
  ASSERT_EQ(a.cuMemcpy2DAsync(&m, nullptr), abi::CUDA_SUCCESS);
  ASSERT_EQ(a.cuCtxSynchronize(), abi::CUDA_SUCCESS);
  ASSERT_EQ(a.cuMemcpyDtoH(host.data(), d2, 256), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.host_copies(), 3);
  fake_.reset();
  EXPECT_EQ(fake_.host_copies(), 0) << "reset clears it";
  a.cuMemFree(d1);
  a.cuMemFree(d2);
}

TEST_F(DriverTest, ScopedContextPushesAndPops) {
  cuda::PrimaryContext ctx(*drv_, 0);
  const abi::DriverApi& a = drv_->api();
  abi::CUcontext cur = reinterpret_cast<abi::CUcontext>(0x1);
  ASSERT_EQ(a.cuCtxGetCurrent(&cur), abi::CUDA_SUCCESS);
  EXPECT_EQ(cur, nullptr);
  {
    cuda::ScopedContext s1(ctx);
    ASSERT_EQ(a.cuCtxGetCurrent(&cur), abi::CUDA_SUCCESS);
    EXPECT_EQ(cur, ctx.get());
    {
      cuda::ScopedContext s2(*drv_, ctx.get());
      EXPECT_EQ(fake_.call_count("cuCtxPushCurrent"), 2);
    }
    ASSERT_EQ(a.cuCtxGetCurrent(&cur), abi::CUDA_SUCCESS);
    EXPECT_EQ(cur, ctx.get());
  }
  ASSERT_EQ(a.cuCtxGetCurrent(&cur), abi::CUDA_SUCCESS);
  EXPECT_EQ(cur, nullptr);
  EXPECT_EQ(fake_.call_count("cuCtxPopCurrent"), 2);
  EXPECT_THROW(cuda::ScopedContext{cuda::PrimaryContext{}}, UsageError);
}

TEST(DriverConfig, UnbalancedPushInsideAScopeIsLogged) {
  ScopedEnv e("HANDOFF_FAKE_CUDA_DEVICES", "2");
  auto d = Driver::load(fake_path());
  ASSERT_TRUE(d->usable()) << d->describe();
  cuda::PrimaryContext a(*d, 0), b(*d, 1);
  LogCapture log;
  {
    cuda::ScopedContext cur(a);
    cuda::ScopedContext inner(b);  // balanced: popped first
  }
  EXPECT_TRUE(log.texts().empty());
  {
    cuda::ScopedContext cur(a);
    ASSERT_EQ(d->api().cuCtxPushCurrent(b.get()), abi::CUDA_SUCCESS);  // pushed, never popped
  }
  auto lines = log.texts();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("did not push"), std::string::npos) << lines[0];
  abi::CUcontext c = nullptr;
  EXPECT_EQ(d->api().cuCtxPopCurrent(&c), abi::CUDA_SUCCESS);  // a, left by the unbalanced scope
  EXPECT_EQ(c, a.get());
  EXPECT_EQ(d->api().cuCtxPopCurrent(&c), abi::CUDA_ERROR_INVALID_CONTEXT);
}

TEST_F(DriverTest, CheckNamesTheCallAndTheCudaError) {
  EXPECT_NO_THROW(drv_->check(abi::CUDA_SUCCESS, "cuGraphicsMapResources"));
  try {
    drv_->check(abi::CUDA_ERROR_ALREADY_MAPPED, "cuGraphicsMapResources", "frame 7", HANDOFF_WHERE);
    FAIL() << "check must throw for an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.api(), Api::Cuda);
    EXPECT_EQ(e.call(), "cuGraphicsMapResources");
    EXPECT_EQ(e.code(), 208);
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_ALREADY_MAPPED");
    EXPECT_NE(what.find("cuGraphicsMapResources"), std::string::npos) << what;
    EXPECT_NE(what.find("CUDA_ERROR_ALREADY_MAPPED"), std::string::npos) << what;
    EXPECT_NE(what.find("frame 7"), std::string::npos) << what;
    EXPECT_NE(what.find("driver_test.cpp:"), std::string::npos) << what;
  }
  // The name came from the driver's cuGetErrorName.
  EXPECT_GE(fake_.call_count("cuGetErrorName"), 1);
  // A code nobody names still gets a readable name.
  try {
    drv_->check(static_cast<abi::CUresult>(12345), "cuSomething");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_12345");
  }
}

TEST_F(DriverTest, CheckMacroNamesTheEntryPoint) {
  cuda::PrimaryContext ctx(*drv_, 0);
  cuda::ScopedContext cur(ctx);
  const abi::DriverApi& api = drv_->api();
  abi::CUdeviceptr p = 0;
  int details = 0;
  auto detail = [&] {
    ++details;
    return std::string("the test's buffer");
  };
  try {
    HANDOFF_CU_CHECK(api.cuMemAlloc(&p, 0), detail());  // 0 bytes: CUDA_ERROR_INVALID_VALUE
    FAIL() << "cuMemAlloc(0) must fail";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.api(), Api::Cuda);
    EXPECT_EQ(e.call(), "cuMemAlloc");
    EXPECT_EQ(e.code(), abi::CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_INVALID_VALUE");
    EXPECT_NE(what.find("the test's buffer"), std::string::npos) << what;
    EXPECT_NE(what.find("driver_test.cpp:"), std::string::npos) << what;
  }
  EXPECT_EQ(details, 1);
  HANDOFF_CU_CHECK(api.cuMemAlloc(&p, 64), detail());
  EXPECT_EQ(details, 1) << "the detail is evaluated only when the call failed";
  EXPECT_NE(p, 0u);
  HANDOFF_CU_CHECK(drv_->api().cuMemFree(p));
  // However the table is reached, the error names the entry point.
  try {
    HANDOFF_CU_CHECK(drv_->api().cuMemFree(p), "freed twice");
    FAIL() << "a double free must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.call(), "cuMemFree");
  }
}

TEST(CheckMacro, TheEntryPointIsNamedHoweverTheTableIsReached) {
  // The CUDA spellings of handoff::detail::call_name's input (the shared helper of every check macro).
  using detail::call_name;
  EXPECT_EQ(call_name("api.cuMemAlloc(&p, n)"), "cuMemAlloc");
  EXPECT_EQ(call_name("a->cuInit(0)"), "cuInit");
  EXPECT_EQ(call_name("drv_->api().cuCtxPushCurrent(ctx.get())"), "cuCtxPushCurrent");
  EXPECT_EQ(call_name("cuda::driver().api().cuCtxSynchronize()"), "cuCtxSynchronize");
  EXPECT_EQ(call_name("ctx_->driver()->api().cuWaitExternalSemaphoresAsync(&sem, &p, 1, s)"),
            "cuWaitExternalSemaphoresAsync");
}

TEST_F(DriverTest, InjectedFailuresReachTheCallerAsError) {
  fake_.fail("cuDevicePrimaryCtxRetain", abi::CUDA_ERROR_OUT_OF_MEMORY, 0);
  try {
    cuda::PrimaryContext ctx(*drv_, 0);
    FAIL() << "retain was told to fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.call(), "cuDevicePrimaryCtxRetain");
    EXPECT_EQ(e.code(), abi::CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_OUT_OF_MEMORY");
  }
  EXPECT_EQ(fake_.primary_context_refs(0), base_contexts_) << "a failed retain retains nothing";
  fake_.fail("cuDevicePrimaryCtxRetain", 0, 0);  // cleared

  cuda::PrimaryContext ctx(*drv_, 0);
  cuda::ScopedContext cur(ctx);
  fake_.fail("cuMemAlloc", abi::CUDA_ERROR_OUT_OF_MEMORY, 1);  // the second call fails
  abi::CUdeviceptr a = 0, b = 0;
  EXPECT_NO_THROW(HANDOFF_CU_CHECK(drv_->api().cuMemAlloc(&a, 16)));
  EXPECT_THROW(HANDOFF_CU_CHECK(drv_->api().cuMemAlloc(&b, 16)), Error);
  EXPECT_THROW(HANDOFF_CU_CHECK(drv_->api().cuMemAlloc(&b, 16)), Error) << "the rule stays until cleared";
  EXPECT_EQ(b, 0u);
  EXPECT_EQ(fake_.live_allocations(), base_allocations_ + 1);
  HANDOFF_CU_CHECK(drv_->api().cuMemFree(a));

  fake_.fail("cuDeviceGetUuid", abi::CUDA_ERROR_INVALID_DEVICE, 0);
  try {
    drv_->device(0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.call(), "cuDeviceGetUuid");
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_INVALID_DEVICE");
  }
}

TEST_F(DriverTest, FailingReleaseAndPopAreLoggedNotThrown) {
  LogCapture log;
  {
    cuda::PrimaryContext ctx(*drv_, 0);
    {
      cuda::ScopedContext cur(ctx);
      fake_.fail("cuCtxPopCurrent", abi::CUDA_ERROR_INVALID_CONTEXT, 0);
    }  // must not throw
    fake_.fail("cuCtxPopCurrent", 0, 0);
    // The pop failed, so the context is still current: pop it for real.
    abi::CUcontext c = nullptr;
    EXPECT_EQ(drv_->api().cuCtxPopCurrent(&c), abi::CUDA_SUCCESS);
    fake_.fail("cuDevicePrimaryCtxRelease", abi::CUDA_ERROR_INVALID_CONTEXT, 0);
  }  // must not throw
  fake_.fail("cuDevicePrimaryCtxRelease", 0, 0);
  auto lines = log.texts();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("cuCtxPopCurrent"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("cuDevicePrimaryCtxRelease"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("CUDA_ERROR_INVALID_CONTEXT"), std::string::npos) << lines[1];
  // The release really failed: give the fake its retain back so the fixture's balance holds.
  EXPECT_EQ(drv_->api().cuDevicePrimaryCtxRelease(0), abi::CUDA_SUCCESS);
}

TEST_F(DriverTest, CheckMacroNamesErrorsThroughTheProcessDriver) {
  ASSERT_TRUE(cuda::driver().usable()) << cuda::driver().describe();
  fake_.reset();
  abi::CUdeviceptr p = 0;
  try {
    HANDOFF_CU_CHECK(cuda::driver().api().cuMemAlloc(&p, 16));  // no context current
    FAIL();
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_INVALID_CONTEXT");
    EXPECT_EQ(e.call(), "cuMemAlloc");
    EXPECT_NE(what.find("reported by the fake CUDA driver"), std::string::npos) << "cuGetErrorString's text: " << what;
  }
  EXPECT_GE(fake_.call_count("cuGetErrorName"), 1) << "the name came from the driver";
}

}  // namespace
}  // namespace handoff::test
