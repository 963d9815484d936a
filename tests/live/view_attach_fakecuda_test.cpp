// An attached viewer's CUDA route against the fake CUDA driver: the publisher
// (handoff_live_peer, another process) shares CUDA slots; the viewer imports
// them (virtual memory exported as file descriptors) and copies each displayed
// frame once, device to device, into a buffer of its ring registered with CUDA
// (no host round trip); pixels equal a viewer shown the frame directly;
// nothing stays imported, mapped or registered once the viewer is gone.
#include "interop_testing.hpp"
#include "live_fixture.hpp"
#include "live_support.hpp"
#include "peer_process.hpp"

#include <handoff/cuda.hpp>
#include <handoff/viewer.hpp>

#include "fake_cuda_control.hpp"

#include <gmock/gmock.h>

#include <cstdlib>
#include <cstring>

namespace handoff::live::test {
namespace {

using ::testing::HasSubstr;

ViewerOptions headless(ViewerMemory memory) {
  ViewerOptions o;
  o.width = 160;
  o.height = 120;
  o.display = ViewerDisplay::Headless;
  o.memory = memory;
  o.gl_debug = true;
  o.on_notice = [](std::string_view) {};
  return o;
}

class ViewAttachFakeCuda : public LiveTest {
 protected:
  void SetUp() override {
    LiveTest::SetUp();
    ASSERT_TRUE(fake.ok()) << fake.error();
    fake.reset();
    ASSERT_TRUE(cuda::driver().usable()) << cuda::driver().describe();
    const std::optional<std::string> gl = handoff::testing::gl_device_uuid();
    ASSERT_TRUE(gl) << "GL reports no GL_DEVICE_UUID_EXT";
    ASSERT_EQ(fake.set_uuid(gl->c_str()), 0);  // the fake is the GL device: the same-GPU check runs and passes
    // The publisher processes this test starts load their own fake: the same device through the environment.
    ::setenv("HANDOFF_FAKE_CUDA_UUID", gl->c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("HANDOFF_FAKE_CUDA_UUID");
    fake.set_uuid(nullptr);
    LiveTest::TearDown();
  }
  handoff::test::FakeCuda fake;
};

TEST_F(ViewAttachFakeCuda, CudaSlotsAreCopiedOnceDeviceToDeviceIntoTheRing) {
  RgbaImage want;
  {
    Viewer ref(headless(ViewerMemory::Host));
    ref.show(pattern_frame(PixelFormat::P010, 64, 48, 2));
    want = ref.snapshot();
  }
  {
    Viewer v(headless(ViewerMemory::Cuda));
    v.attach(name());
    PeerProcess pub({"publish", name(), "--memory", "cuda", "--format", "p010", "--size", "64x48", "--interval-ms", "10"});
    ASSERT_THAT(pub.expect("READY"), HasSubstr("route="));
    ASSERT_TRUE(eventually([&] { return v.attach_status()->state == "live"; })) << v.attach_status()->message;
    const int async = fake.call_count("cuMemcpy2DAsync"), to_host = fake.call_count("cuMemcpyDtoH");
    const int sync = fake.call_count("cuMemcpy2D");
    pub.send("publish 3");
    ASSERT_TRUE(eventually([&] { return v.stats().last_index == 2; })) << v.stats().last_index;
    const std::uint64_t shown = v.stats().shown;
    EXPECT_EQ(fake.call_count("cuMemcpy2DAsync") - async, int(2 * shown)) << "one copy per plane per displayed frame";
    EXPECT_EQ(fake.call_count("cuMemcpyDtoH"), to_host) << "no host round trip";
    EXPECT_EQ(fake.call_count("cuMemcpy2D"), sync) << "no synchronous copy";
    EXPECT_GE(fake.call_count("cuMemImportFromShareableHandle"), 1) << "the slots are imported, not copied";
    const RgbaImage got = v.snapshot();
    ASSERT_EQ(got.width(), want.width());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.stride() * got.height()), 0) << "pixels differ";
    EXPECT_THAT(v.stream().memory, HasSubstr("CUDA slots imported, copied into CUDA-mapped"));
    EXPECT_EQ(v.diagnostics().gl_errors, 0u) << v.diagnostics().first_gl_error;
  }
  EXPECT_EQ(fake.live_vmm_mappings(), 0);
  EXPECT_EQ(fake.live_vmm_reservations(), 0);
  EXPECT_EQ(fake.live_mappings(), 0);
  EXPECT_EQ(fake.live_registrations(), 0);
}

}  // namespace
}  // namespace handoff::live::test
