// Each reason CUDA cannot be used gives its own status and its own plainly
// worded message; the loader resolves the ABI versions handoff declares.
#include "fake_test_util.hpp"

#include <dlfcn.h>

#include <set>

namespace handoff::test {
namespace {

using cuda::Driver;
using cuda::Status;

TEST(DriverStatus, MissingLibraryIsNoDriverLibrary) {
  auto d = Driver::load("/nonexistent/handoff/libcuda.so.1");
  EXPECT_EQ(d->status(), Status::NoDriverLibrary);
  EXPECT_FALSE(d->usable());
  EXPECT_NE(d->describe().find("no CUDA driver library"), std::string::npos) << d->describe();
  EXPECT_NE(d->describe().find("/nonexistent/handoff/libcuda.so.1"), std::string::npos) << d->describe();
  EXPECT_NE(d->detail().find("No such file"), std::string::npos) << "dlerror text expected: " << d->detail();
  try {
    d->api();
    ADD_FAILURE() << "api() of an unusable driver must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.api(), Api::Cuda);
    EXPECT_NE(std::string(e.what()).find("no CUDA driver library"), std::string::npos) << e.what();
  }
  EXPECT_THROW(d->device(0), Error);
  EXPECT_THROW(cuda::PrimaryContext(*d, 0), Error);
}

TEST(DriverStatus, LibraryWithoutCudaIsMissingEntryPoint) {
  // A real shared library that is not a CUDA driver (libc has no cuInit).
  auto d = Driver::load("libc.so.6");
  EXPECT_EQ(d->status(), Status::MissingEntryPoint);
  EXPECT_NE(d->describe().find("cuInit"), std::string::npos) << d->describe();
}

#ifdef HANDOFF_CUDA_STUB_PATH
TEST(DriverStatus, ToolkitStubIsStubLibrary) {
  auto d = Driver::load(HANDOFF_CUDA_STUB_PATH);
  EXPECT_EQ(d->status(), Status::StubLibrary) << d->describe();
  EXPECT_NE(d->describe().find("stub"), std::string::npos) << d->describe();
  EXPECT_NE(d->describe().find("CUDA_ERROR_STUB_LIBRARY (34)"), std::string::npos) << d->describe();
}
#endif

TEST(DriverStatus, InitReturningStubLibraryIsStubLibrary) {
  ScopedEnv e("HANDOFF_FAKE_CUDA_INIT_ERROR", "34");
  auto d = Driver::load(fake_path());
  EXPECT_EQ(d->status(), Status::StubLibrary) << d->describe();
}

TEST(DriverStatus, ZeroDevicesIsNoDevice) {
  ScopedEnv e("HANDOFF_FAKE_CUDA_DEVICES", "0");
  auto d = Driver::load(fake_path());
  EXPECT_EQ(d->status(), Status::NoDevice) << d->describe();
  EXPECT_NE(d->describe().find("no CUDA device found"), std::string::npos) << d->describe();
  EXPECT_NE(d->describe().find("CUDA_ERROR_NO_DEVICE"), std::string::npos) << d->describe();
}

TEST(DriverStatus, OldDriverIsDriverTooOld) {
  ScopedEnv e("HANDOFF_FAKE_CUDA_DRIVER_VERSION", "11030");
  auto d = Driver::load(fake_path());
  EXPECT_EQ(d->status(), Status::DriverTooOld) << d->describe();
  EXPECT_EQ(d->driver_version(), 11030);
  EXPECT_NE(d->describe().find("too old"), std::string::npos) << d->describe();
  EXPECT_NE(d->describe().find("11.3"), std::string::npos) << d->describe();
  EXPECT_NE(d->describe().find("11.4"), std::string::npos) << d->describe();
}

TEST(DriverStatus, MinimumDriverVersionIsAccepted) {
  ScopedEnv e("HANDOFF_FAKE_CUDA_DRIVER_VERSION", "11040");
  auto d = Driver::load(fake_path());
  EXPECT_EQ(d->status(), Status::Usable) << d->describe();
  // 11.x has only the 4-argument cuGetProcAddress.
  EXPECT_TRUE(d->via_get_proc_address());
  EXPECT_NE(d->api().cuGetProcAddress_v1, nullptr);
  EXPECT_EQ(d->api().cuGetProcAddress, nullptr);
}

TEST(DriverStatus, InitErrorIsInitFailedNamingTheCode) {
  ScopedEnv e("HANDOFF_FAKE_CUDA_INIT_ERROR", "999");
  auto d = Driver::load(fake_path());
  EXPECT_EQ(d->status(), Status::InitFailed) << d->describe();
  EXPECT_NE(d->describe().find("CUDA_ERROR_UNKNOWN (999)"), std::string::npos) << d->describe();
}

TEST(DriverStatus, InjectedInitFailureIsInitFailed) {
  FakeCuda fake(fake_path());
  ASSERT_TRUE(fake.ok()) << fake.error();
  fake.reset();
  fake.fail("cuInit", abi::CUDA_ERROR_OPERATING_SYSTEM, 0);
  auto d = Driver::load(fake_path());
  fake.reset();
  EXPECT_EQ(d->status(), Status::InitFailed) << d->describe();
  EXPECT_NE(d->describe().find("CUDA_ERROR_OPERATING_SYSTEM (304)"), std::string::npos) << d->describe();
}

TEST(DriverStatus, MissingRequiredEntryPointIsNamed) {
  auto d = Driver::load(HANDOFF_FAKE_CUDA_NO_GL_PATH);
  EXPECT_EQ(d->status(), Status::MissingEntryPoint) << d->describe();
  EXPECT_EQ(d->detail(), "cuGraphicsGLRegisterBuffer");
  EXPECT_NE(d->describe().find("cuGraphicsGLRegisterBuffer"), std::string::npos) << d->describe();
}

TEST(DriverStatus, EveryReasonHasItsOwnMessage) {
  std::vector<std::unique_ptr<Driver>> drivers;
  drivers.push_back(Driver::load("/nonexistent/libcuda.so.1"));
  {
    ScopedEnv e("HANDOFF_FAKE_CUDA_INIT_ERROR", "34");
    drivers.push_back(Driver::load(fake_path()));
  }
  {
    ScopedEnv e("HANDOFF_FAKE_CUDA_DEVICES", "0");
    drivers.push_back(Driver::load(fake_path()));
  }
  {
    ScopedEnv e("HANDOFF_FAKE_CUDA_DRIVER_VERSION", "10020");
    drivers.push_back(Driver::load(fake_path()));
  }
  drivers.push_back(Driver::load(HANDOFF_FAKE_CUDA_NO_GL_PATH));
  {
    ScopedEnv e("HANDOFF_FAKE_CUDA_INIT_ERROR", "2");
    drivers.push_back(Driver::load(fake_path()));
  }
  drivers.push_back(Driver::load(fake_path()));
  std::set<Status> statuses;
  std::set<std::string> messages, openings;
  for (auto& d : drivers) {
    statuses.insert(d->status());
    messages.insert(d->describe());
    // The wording before the detail differs too, not only the detail.
    openings.insert(d->describe().substr(0, d->describe().find('(')));
    EXPECT_FALSE(cuda::status_name(d->status()).empty());
  }
  EXPECT_EQ(statuses.size(), drivers.size());
  EXPECT_EQ(messages.size(), drivers.size());
  EXPECT_EQ(openings.size(), drivers.size());
  EXPECT_TRUE(drivers.back()->usable()) << drivers.back()->describe();
}

TEST(DriverStatus, UsableFakeDescribesItself) {
  auto d = Driver::load(fake_path());
  ASSERT_TRUE(d->usable()) << d->describe();
  EXPECT_EQ(d->driver_version(), 13000);
  EXPECT_EQ(d->device_count(), 1);
  EXPECT_TRUE(d->via_get_proc_address());
  EXPECT_TRUE(d->detail().empty());
  EXPECT_NE(d->describe().find("CUDA 13.0"), std::string::npos) << d->describe();
  EXPECT_NE(d->describe().find("1 device"), std::string::npos) << d->describe();
}

TEST(DriverStatus, FallsBackToVersionedSymbolsWithoutGetProcAddress) {
  ScopedEnv e("HANDOFF_FAKE_CUDA_NO_PROC_ADDRESS", "1");
  auto d = Driver::load(fake_path());
  ASSERT_TRUE(d->usable()) << d->describe();
  EXPECT_FALSE(d->via_get_proc_address());
  EXPECT_NE(d->describe().find("dlsym"), std::string::npos) << d->describe();
}

// Every table entry is the variant whose ABI handoff declares: the versioned
// symbol named in HANDOFF_CUDA_ENTRY_POINTS, whether it came from
// cuGetProcAddress (asked for that ABI's version) or from dlsym. The fake, like
// the real driver, hands out CUDA 13's cuCtxSynchronize(CUcontext) to a caller
// that asks for version 13000, so asking with the driver's own version would
// fail this test.
void expect_declared_variants(const Driver& d) {
  void* lib = ::dlopen(fake_path(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  const abi::DriverApi& a = d.api();
#define HANDOFF_EXPECT_VARIANT_(fn, ver, versioned, required)                                \
  if (required || a.fn) {                                                                   \
    EXPECT_EQ(reinterpret_cast<void*>(a.fn), ::dlsym(lib, versioned)) << #fn << " -> " << versioned; \
  }
  HANDOFF_CUDA_ENTRY_POINTS(HANDOFF_EXPECT_VARIANT_)
#undef HANDOFF_EXPECT_VARIANT_
  ::dlclose(lib);
}

TEST(DriverStatus, ResolvesTheDeclaredAbiVariants) {
  auto d = Driver::load(fake_path());
  ASSERT_TRUE(d->usable()) << d->describe();
  expect_declared_variants(*d);
  // cuGetProcAddress itself was asked for the versions: check it was used.
  FakeCuda fake(fake_path());
  ASSERT_TRUE(fake.ok());
  fake.reset();
  auto d2 = Driver::load(fake_path());
  EXPECT_GE(fake.call_count("cuGetProcAddress"), 40);
}

TEST(DriverStatus, ResolvesTheDeclaredAbiVariantsThroughDlsym) {
  ScopedEnv e("HANDOFF_FAKE_CUDA_NO_PROC_ADDRESS", "1");
  auto d = Driver::load(fake_path());
  ASSERT_TRUE(d->usable()) << d->describe();
  expect_declared_variants(*d);
}

TEST(DriverStatus, ProcessWideDriverIsLoadedOnce) {
  std::vector<const Driver*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&seen, i] { seen[i] = &cuda::driver(); });
  for (auto& t : threads) t.join();
  for (auto* p : seen) EXPECT_EQ(p, &cuda::driver());
  // ctest gives this test HANDOFF_CUDA_DRIVER=<the fake>.
  ASSERT_NE(std::getenv("HANDOFF_CUDA_DRIVER"), nullptr);
  EXPECT_TRUE(cuda::driver().usable()) << cuda::driver().describe();
  EXPECT_EQ(cuda::driver().path(), std::string(std::getenv("HANDOFF_CUDA_DRIVER")));
}

}  // namespace
}  // namespace handoff::test
