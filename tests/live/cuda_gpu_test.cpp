// CUDA slots on a real GPU (label cuda; skipped, saying why, without one) and
// the same tests against the fake driver (label fakecuda, test names
// "on_fake_driver."): a 1080p frame in device memory shared with a subscriber
// process by each route the device offers, checked byte for byte there.
#include "live_fixture.hpp"
#include "live_support.hpp"
#include "device_layers.hpp"
#include "layer_samples.hpp"
#include "peer_process.hpp"

#include "cuda_gpu.hpp"

#include <handoff/cuda.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>

#include <gmock/gmock.h>

namespace handoff::live::test {
namespace {

using ::testing::HasSubstr;

constexpr std::uint32_t kW = 1920, kH = 1080;

int attribute(cuda::abi::CUdevice_attribute a) {
  int v = 0;
  cuda::driver().api().cuDeviceGetAttribute(&v, a, 0);
  return v;
}

class CudaGpuLive : public LiveTest {
 protected:
  void SetUp() override {
    LiveTest::SetUp();
    HANDOFF_REQUIRE_CUDA_GPU(cuda::driver());
  }
  // Publishes `frames` device-memory frames to a subscriber process, which checks each.
  void share(CudaExport how, const std::string& route, int frames) {
    PublisherOptions o;
    o.memory = SlotMemory::Cuda;
    o.cuda_export = how;
    Publisher pub(name(), o);
    EXPECT_THAT(pub.stats().route, HasSubstr(route));
    PeerProcess peer({"subscribe", name()});
    ASSERT_THAT(peer.expect("STATUS connected"), HasSubstr(route));
    cuda::PrimaryContext ctx(0);
    for (std::int64_t i = 0; i < frames; ++i) {
      const Frame host = pattern_frame(PixelFormat::NV12, kW, kH, i);
      const auto& d = cuda::driver();
      cuda::ScopedContext cur(ctx);
      const std::size_t bytes = host.planes[0].pitch * (kH + kH / 2);
      cuda::abi::CUdeviceptr p = 0;
      HANDOFF_CU_CHECK(d.api().cuMemAlloc(&p, bytes));
      HANDOFF_CU_CHECK(d.api().cuMemcpyHtoD(p, host.planes[0].data, bytes));
      Frame dev = host;
      dev.memory = MemoryKind::Cuda;
      dev.device = 0;
      dev.cuda_context = ctx.handle();
      dev.planes[0].data = reinterpret_cast<void*>(p);
      dev.planes[1].data = reinterpret_cast<void*>(p + host.planes[0].pitch * kH);
      settle(pub);
      const bool ok = pub.publish(dev);
      HANDOFF_CU_CHECK(d.api().cuStreamSynchronize(nullptr));  // the copy (queued on the legacy stream) is done
      d.api().cuMemFree(p);
      ASSERT_TRUE(ok);
      EXPECT_EQ(peer.expect("FRAME", 60s), "FRAME " + std::to_string(i + 1) + " " + std::to_string(i) + " ok");
    }
    peer.send("quit");
    EXPECT_EQ(peer.wait_exit(), 0);
  }
};

// A model's output tensors as layers of a published frame: copied to the
// host by the publisher, every sample as it was on the device.
TEST_F(CudaGpuLive, CudaLayersArriveAsHostCopies) {
  const media::OverlayFrame host_layers = handoff::test::layered_overlays();
  DeviceLayers device(host_layers);
  Publisher pub(name());
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
  ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, 64, 48, 0), device.overlays));
  const LiveFrame f = sub.next(10s);
  ASSERT_TRUE(f) << sub.status().message;
  ASSERT_TRUE(f.overlays);
  EXPECT_EQ(handoff::test::layer_difference(*f.overlays, host_layers), "");
}

TEST_F(CudaGpuLive, VirtualMemoryFdsCrossProcesses) {
  if (!attribute(cuda::abi::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED))
    GTEST_SKIP() << "device 0 cannot export memory as a POSIX file descriptor";
  share(CudaExport::VirtualMemory, "CUDA VMM fd", 5);
}

TEST_F(CudaGpuLive, TheRouteSaysHowFramesAreOrdered) {
  PublisherOptions o;
  o.memory = SlotMemory::Cuda;
  Publisher pub(name(), o);
  const bool events = attribute(cuda::abi::CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED) != 0;
  EXPECT_THAT(pub.stats().route, HasSubstr(events ? "interprocess events" : "stream synchronised"));
}

// Not run on the fake driver (tests/live/CMakeLists.txt filters it out): the
// fake has no legacy IPC memory, as on Jetson (its README).
TEST_F(CudaGpuLive, LegacyIpcHandlesCrossProcesses) { share(CudaExport::LegacyIpc, "CUDA legacy IPC handles", 3); }

}  // namespace
}  // namespace handoff::live::test
