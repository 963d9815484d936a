// CUDA slots against the fake driver: frames in exported virtual-memory
// allocations imported by a subscriber (in this process and in another), the
// interprocess event, the fallbacks with their reasons, injected faults, and
// nothing left allocated, mapped or reserved afterwards.
#include "live_fixture.hpp"
#include "live_support.hpp"
#include "device_layers.hpp"
#include "layer_samples.hpp"
#include "peer_process.hpp"

#include <handoff/cuda.hpp>
#include <handoff/media/recording.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>
#include "fake_cuda_control.hpp"

#include <gmock/gmock.h>

namespace handoff::live::test {
namespace {

using ::testing::HasSubstr;

constexpr std::uint32_t kW = 64, kH = 48;

// A CUDA copy of a host frame (one cuMemAlloc), freed with the object.
class DeviceFrame {
 public:
  explicit DeviceFrame(const Frame& host) : ctx_(0) {
    const auto& d = cuda::driver();
    cuda::ScopedContext cur(ctx_);
    // allocate_host_frame's planes lie one after the other in one allocation.
    const auto at = [&](int p) {
      return static_cast<const std::byte*>(host.planes[p].data) - static_cast<const std::byte*>(host.planes[0].data);
    };
    const int last = plane_count(host.format) - 1;
    bytes_ = std::size_t(at(last)) + host.planes[last].pitch * host.planes[last].height;
    HANDOFF_CU_CHECK(d.api().cuMemAlloc(&ptr_, bytes_));
    HANDOFF_CU_CHECK(d.api().cuMemcpyHtoD(ptr_, host.planes[0].data, bytes_));
    frame = host;
    frame.memory = MemoryKind::Cuda;
    frame.device = 0;
    frame.cuda_context = ctx_.handle();
    for (int p = 0; p <= last; ++p) frame.planes[p].data = reinterpret_cast<void*>(ptr_ + at(p));
  }
  ~DeviceFrame() {
    cuda::ScopedContext cur(ctx_);
    cuda::driver().api().cuMemFree(ptr_);
  }
  Frame frame;

 private:
  cuda::PrimaryContext ctx_;
  cuda::abi::CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

// A received CUDA frame's bytes, copied to the host.
Frame to_host(const Frame& f) {
  Frame dst = allocate_host_frame(f.format, f.width, f.height);
  dst.index = f.index;
  const auto& d = cuda::driver();
  cuda::ScopedContext cur(d, static_cast<cuda::abi::CUcontext>(f.cuda_context));
  for (int p = 0; p < plane_count(f.format); ++p) {
    const PlaneLayout l = plane_layout(f.format, f.width, f.height, p);
    cuda::abi::CUDA_MEMCPY2D c{};
    c.srcMemoryType = cuda::abi::CU_MEMORYTYPE_DEVICE;
    c.srcDevice = reinterpret_cast<cuda::abi::CUdeviceptr>(f.planes[p].data);
    c.srcPitch = f.planes[p].pitch;
    c.dstMemoryType = cuda::abi::CU_MEMORYTYPE_HOST;
    c.dstHost = dst.planes[p].data;
    c.dstPitch = dst.planes[p].pitch;
    c.WidthInBytes = l.row_bytes;
    c.Height = l.height;
    HANDOFF_CU_CHECK(d.api().cuMemcpy2D(&c));
  }
  return dst;
}

class CudaLive : public LiveTest {
 protected:
  void SetUp() override {
    LiveTest::SetUp();
    ASSERT_TRUE(fake.ok()) << fake.error();
    fake.reset();
    ASSERT_TRUE(cuda::driver().usable()) << cuda::driver().describe();
  }
  void TearDown() override {
    fake.reset();
    EXPECT_EQ(fake.live_vmm_allocations(), 0);
    EXPECT_EQ(fake.live_vmm_mappings(), 0);
    EXPECT_EQ(fake.live_vmm_reservations(), 0);
    EXPECT_EQ(fake.live_events(), 0);
    EXPECT_EQ(fake.live_allocations(), 0);
    EXPECT_EQ(fake.live_contexts(), 0);
    LiveTest::TearDown();
  }
  static PublisherOptions cuda_options(CudaExport how = CudaExport::Auto) {
    PublisherOptions o;
    o.memory = SlotMemory::Cuda;
    o.cuda_export = how;
    return o;
  }
  handoff::test::FakeCuda fake;
};

TEST_F(CudaLive, HostAndCudaFramesArriveInImportedDeviceMemory) {
  Publisher pub(name(), cuda_options());
  EXPECT_THAT(pub.stats().route, HasSubstr("CUDA VMM fd (cuMemCreate, device 0), interprocess events"));
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
  EXPECT_EQ(sub.status().memory, SlotMemory::Cuda);
  EXPECT_EQ(sub.status().cuda_sync, CudaSync::IpcEvent);
  for (std::int64_t i = 0; i < 6; ++i) {
    const Frame host = pattern_frame(i % 2 ? PixelFormat::P010 : PixelFormat::NV12, kW, kH, i);
    settle(pub);
    if (i < 3) {
      ASSERT_TRUE(pub.publish(host));  // host -> device
    } else {
      DeviceFrame dev(host);
      ASSERT_TRUE(pub.publish(dev.frame));  // device -> device
    }
    const LiveFrame f = sub.next(10s);
    ASSERT_TRUE(f) << sub.status().message;
    EXPECT_EQ(f.frame.memory, MemoryKind::Cuda);
    EXPECT_EQ(f.frame.device, 0);
    EXPECT_NE(f.frame.cuda_context, nullptr);
    EXPECT_NE(f.cuda_event, nullptr);
    EXPECT_EQ(f.slot.kind, SlotKind::CudaVmmFd);
    EXPECT_EQ(f.slot.allocation_size % (std::uint64_t{2} << 20), 0u);
    EXPECT_TRUE(f.duplicate_descriptor());
    EXPECT_EQ(check_pattern(to_host(f.frame)), "") << "frame " << i;
  }
  EXPECT_GT(fake.call_count("cuEventRecord"), 0);
  EXPECT_GT(fake.call_count("cuEventQuery"), 0);  // the subscriber waited for the event
}

// Issue 23: every pixel format through CUDA slots, from host and from device
// memory (a size change per format reallocates the slots).
TEST_F(CudaLive, EveryFormatArrivesFromHostAndDeviceMemory) {
  Publisher pub(name(), cuda_options());
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
  std::int64_t i = 0;
  for (PixelFormat format : kPixelFormats) {
    for (bool from_device : {false, true}) {
      const Frame host = pattern_frame(format, kW + 3, kH + 1, i);  // odd sizes: odd chroma and 4:2:2 pairs
      settle(pub);
      if (from_device) {
        DeviceFrame dev(host);
        ASSERT_TRUE(pub.publish(dev.frame)) << to_string(format);
      } else {
        ASSERT_TRUE(pub.publish(host)) << to_string(format);
      }
      const LiveFrame f = sub.next(10s);
      ASSERT_TRUE(f) << to_string(format) << ": " << sub.status().message;
      EXPECT_EQ(f.frame.memory, MemoryKind::Cuda);
      EXPECT_EQ(f.frame.format, format);
      EXPECT_NO_THROW(validate(f.frame)) << to_string(format);
      EXPECT_EQ(check_pattern(to_host(f.frame)), "") << to_string(format) << (from_device ? " from device" : " from host");
      ++i;
    }
  }
}

TEST_F(CudaLive, ASubscriberProcessImportsTheSlotsAndReleasesEverything) {
  Publisher pub(name(), cuda_options());
  PeerProcess peer({"subscribe", name(), "--cuda-counters"});
  ASSERT_THAT(peer.expect("STATUS connected"), HasSubstr("CUDA VMM fd"));
  for (std::int64_t i = 0; i < 8; ++i) {
    settle(pub);
    DeviceFrame dev(pattern_frame(PixelFormat::NV12, kW, kH, i));
    ASSERT_TRUE(pub.publish(dev.frame));
    EXPECT_EQ(peer.expect("FRAME"), "FRAME " + std::to_string(i + 1) + " " + std::to_string(i) + " ok");
  }
  peer.send("quit");
  EXPECT_EQ(peer.expect("FAKE"), "FAKE vmm_allocations=0 vmm_mappings=0 reservations=0 events=0");
  EXPECT_EQ(peer.wait_exit(), 0);
}

TEST_F(CudaLive, APublisherProcessSharesCudaFrames) {
  PeerProcess peer({"publish", name(), "--memory", "cuda", "--cuda-source"});
  ASSERT_THAT(peer.expect("READY"), HasSubstr("route=CUDA VMM fd"));
  {
    Subscriber sub(name());
    ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
    for (int i = 0; i < 4; ++i) {
      peer.send("publish 1");
      const LiveFrame f = sub.next(10s);
      ASSERT_TRUE(f) << sub.status().message;
      EXPECT_EQ(f.frame.memory, MemoryKind::Cuda);
      EXPECT_EQ(check_pattern(to_host(f.frame)), "");
    }
  }
  peer.send("quit");
  EXPECT_EQ(peer.wait_exit(), 0);
}

TEST_F(CudaLive, WithoutVirtualMemoryExportFramesGoThroughHostMemoryAndSaySo) {
  fake.set_vmm_supported(0);
  Publisher pub(name(), cuda_options());
  const std::string route = pub.stats().route;
  EXPECT_THAT(route, HasSubstr("host memfd (CUDA frames copied to host; CUDA VMM fd export unavailable: "
                               "device 0 has no virtual memory management"));
  EXPECT_THAT(route, HasSubstr("legacy CUDA IPC unavailable"));
  EXPECT_THAT(route, HasSubstr("cuIpcGetMemHandle"));
  EXPECT_EQ(pub.memory(), SlotMemory::Host);
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  DeviceFrame dev(pattern_frame(PixelFormat::P010, kW, kH, 3));
  ASSERT_TRUE(pub.publish(dev.frame));
  const LiveFrame f = sub.next(10s);
  ASSERT_TRUE(f);
  EXPECT_EQ(f.frame.memory, MemoryKind::Host);
  EXPECT_EQ(check_pattern(f.frame), "");
}

TEST_F(CudaLive, WithoutInterprocessEventsTheStreamIsSynchronisedFirst) {
  fake.set_ipc_events_supported(0);
  Publisher pub(name(), cuda_options());
  EXPECT_THAT(pub.stats().route, HasSubstr("stream synchronised before each frame (no interprocess events"));
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  EXPECT_EQ(sub.status().cuda_sync, CudaSync::StreamSynchronized);
  const int syncs = fake.call_count("cuStreamSynchronize");
  ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 1)));
  EXPECT_EQ(fake.call_count("cuStreamSynchronize"), syncs + 1);
  const LiveFrame f = sub.next(10s);
  ASSERT_TRUE(f);
  EXPECT_EQ(f.cuda_event, nullptr);
  EXPECT_EQ(check_pattern(to_host(f.frame)), "");
}

TEST_F(CudaLive, ASubscriberWithoutCudaFailsOnceSayingWhy) {
  Publisher pub(name(), cuda_options());
  PeerProcess peer({"subscribe", name()}, {"HANDOFF_CUDA_DRIVER=/nonexistent/libcuda.so.1"});
  const std::string status = peer.expect("STATUS failed");
  EXPECT_THAT(status, HasSubstr("shares CUDA memory, which this process cannot import: CUDA unavailable"));
  peer.send("quit");
  EXPECT_EQ(peer.wait_exit(), 0);
}

TEST_F(CudaLive, ForcedExportsFailWithTheirReason) {
  fake.set_vmm_supported(0);
  try {
    Publisher pub(name(), cuda_options(CudaExport::VirtualMemory));
    FAIL() << "no virtual memory, yet the publisher started";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("virtual memory management"));
  }
  try {
    Publisher pub(name(), cuda_options(CudaExport::LegacyIpc));
    FAIL() << "no legacy IPC in the fake, yet the publisher started";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cuIpcGetMemHandle"));
    EXPECT_THAT(e.what(), HasSubstr("CUDA_ERROR_NOT_SUPPORTED"));
  }
  Publisher host(name(), cuda_options(CudaExport::Host));
  EXPECT_THAT(host.stats().route, HasSubstr("host memfd (CUDA frames copied to host: asked for)"));
}

TEST_F(CudaLive, AFailingDriverCallIsNamedAndLeavesNothingBehind) {
  Publisher pub(name(), cuda_options());
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  fake.fail("cuMemMap", cuda::abi::CUDA_ERROR_OUT_OF_MEMORY, 0);
  try {
    pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 0));
    FAIL() << "the slot was made without cuMemMap";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cuMemMap"));
    EXPECT_THAT(e.what(), HasSubstr("CUDA_ERROR_OUT_OF_MEMORY"));
  }
  EXPECT_EQ(fake.live_vmm_allocations(), 0);
  EXPECT_EQ(fake.live_vmm_reservations(), 0);
  fake.fail("cuMemMap", 0, 0);
  // publish() returns with the copy out of `host` queued: it lives until the
  // subscriber has the frame (it waited for the slot's event).
  const Frame host = pattern_frame(PixelFormat::NV12, kW, kH, 1);
  ASSERT_TRUE(pub.publish(host));
  const LiveFrame f = sub.next(10s);
  ASSERT_TRUE(f) << sub.status().message;
  EXPECT_EQ(check_pattern(to_host(f.frame)), "");
}

TEST_F(CudaLive, AnImportTheSubscriberCannotMakeEndsTheSessionWithTheReason) {
  Publisher pub(name(), cuda_options());
  SubscriberOptions o;
  o.retry_interval = 1s;  // long enough to see the session end before the next one starts
  Subscriber sub(name(), o);
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  fake.fail("cuMemImportFromShareableHandle", cuda::abi::CUDA_ERROR_INVALID_VALUE, 0);
  const Frame first = pattern_frame(PixelFormat::NV12, kW, kH, 0);  // kept until the copy out of it ran
  ASSERT_TRUE(pub.publish(first));
  ASSERT_TRUE(sub.wait_for(LinkState::PublisherGone, 10s));
  EXPECT_THAT(sub.status().message, HasSubstr("cuMemImportFromShareableHandle"));
  fake.fail("cuMemImportFromShareableHandle", 0, 0);
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;  // it came back
  ASSERT_TRUE(eventually([&] { return pub.stats().subscribers == 1 && pub.stats().held_frames == 0; }));
  const Frame host = pattern_frame(PixelFormat::NV12, kW, kH, 1);  // kept until the copy out of it ran
  ASSERT_TRUE(pub.publish(host));
  const LiveFrame f = sub.next(10s);
  ASSERT_TRUE(f) << sub.status().message;
  EXPECT_EQ(check_pattern(to_host(f.frame)), "");
}

// PublisherOptions::record with CUDA slots: a host frame is recorded as
// published; a CUDA frame copied device to device is only in CUDA memory, so
// it is counted as not recorded. With host slots (CudaExport::Host) a CUDA
// frame lands in host memory and is recorded from there.
// Host frames and CUDA frames (copied to host memory for the recording, on
// the producer's stream) are both recorded, into CUDA slots and into host slots.
// A subscriber in another process cannot read the publisher's device memory:
// CUDA layers travel as host copies, made only when someone receives them.
TEST_F(CudaLive, CudaLayersArriveAsHostCopiesOfTheirSamples) {
  const media::OverlayFrame host_layers = handoff::test::layered_overlays();
  DeviceLayers device(host_layers);
  for (const bool cuda_slots : {false, true}) {
    SCOPED_TRACE(cuda_slots ? "CUDA slots" : "host slots");
    Publisher pub(name(cuda_slots ? "c" : "h"), cuda_slots ? cuda_options() : PublisherOptions{});
    const int before = fake.call_count("cuMemcpy2DAsync");
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 0), device.overlays));
    EXPECT_EQ(fake.call_count("cuMemcpy2DAsync"), before) << "copied for nobody";
    Subscriber sub(name(cuda_slots ? "c" : "h"));
    ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
    const DeviceFrame frame(pattern_frame(PixelFormat::NV12, kW, kH, 1));
    ASSERT_TRUE(pub.publish(frame.frame, device.overlays));
    // One 2-D copy per layer image (a class map, a scalar map, two masks) and
    // per plane of the frame.
    EXPECT_EQ(fake.call_count("cuMemcpy2DAsync") - before, 4 + 2);
    const LiveFrame f = sub.next(10s);
    ASSERT_TRUE(f) << sub.status().message;
    ASSERT_TRUE(f.overlays);
    EXPECT_EQ(handoff::test::layer_difference(*f.overlays, host_layers), "");
    EXPECT_EQ(f.overlays->objects.size(), 2u);
  }
}

TEST_F(CudaLive, ACudaLayerThatCannotBeCopiedIsNamedAndTakesNoSlot) {
  const media::OverlayFrame host_layers = handoff::test::layered_overlays();
  DeviceLayers device(host_layers);
  PublisherOptions o;
  o.slots = 2;
  Publisher pub(name(), o);
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  fake.fail("cuMemcpy2DAsync", cuda::abi::CUDA_ERROR_ILLEGAL_ADDRESS, 1);  // the scalar map's copy
  for (int i = 0; i < 3; ++i) {  // more tries than slots: none is lost
    try {
      pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i), device.overlays);
      FAIL() << "published a layer that was never copied";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("layers[1]"));
      EXPECT_THAT(e.what(), HasSubstr("CUDA_ERROR_ILLEGAL_ADDRESS"));
    }
    fake.fail("cuMemcpy2DAsync", cuda::abi::CUDA_ERROR_ILLEGAL_ADDRESS, 1);
  }
  fake.fail("cuMemcpy2DAsync", 0, 0);
  EXPECT_FALSE(sub.next(50ms));
  ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 9), device.overlays));
  const LiveFrame f = sub.next(10s);
  ASSERT_TRUE(f) << sub.status().message;
  EXPECT_EQ(f.frame.index, 9);
  EXPECT_EQ(handoff::test::layer_difference(*f.overlays, host_layers), "");

  // Layers on two devices are refused before anything is copied.
  media::OverlayFrame two = device.overlays;
  media::layer_array(two.layers[1]).device = 1;
  try {
    pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 10), two);
    FAIL() << "published CUDA layers of two devices";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "layers[1].values.device");
  }
}

TEST_F(CudaLive, RecordingKeepsHostAndCudaFrames) {
  const auto file = runtime() / "cuda.mcap";
  {
    PublisherOptions o = cuda_options();
    o.record.path = file.string();
    Publisher pub(name(), o);
    Subscriber sub(name());
    ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
    const Frame host = pattern_frame(PixelFormat::NV12, kW, kH, 1);
    settle(pub);
    ASSERT_TRUE(pub.publish(host));
    ASSERT_TRUE(sub.next(10s));
    DeviceFrame dev(pattern_frame(PixelFormat::NV12, kW, kH, 2));
    settle(pub);
    ASSERT_TRUE(pub.publish(dev.frame));
    ASSERT_TRUE(sub.next(10s));
    const PublisherStats st = pub.stats();
    EXPECT_EQ(st.recorded, 2u) << "dropped " << st.record_dropped << ", error " << st.record_error;
    EXPECT_EQ(st.record_skipped, 0u);
  }
  auto rec = media::open_recording(file);
  ASSERT_EQ(rec->info().frame_count, 2);
  for (std::int64_t i = 0; i < 2; ++i) {
    media::HostFrame got(PixelFormat::NV12, kW, kH);
    ASSERT_TRUE(rec->read_into(got.target()));
    Frame f = got.frame();
    f.index = i + 1;
    EXPECT_EQ(check_pattern(f), "") << "recorded frame " << i << (i == 1 ? " (the CUDA one)" : "");
  }
  const auto host_slots = runtime() / "host.mcap";
  {
    PublisherOptions o = cuda_options(CudaExport::Host);
    o.record.path = host_slots.string();
    Publisher pub(name("-host"), o);
    Subscriber sub(name("-host"));
    ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
    DeviceFrame dev(pattern_frame(PixelFormat::NV12, kW, kH, 3));
    settle(pub);
    ASSERT_TRUE(pub.publish(dev.frame));
    ASSERT_TRUE(sub.next(10s));
    EXPECT_EQ(pub.stats().record_skipped, 0u);
    EXPECT_EQ(pub.stats().recorded + pub.stats().record_dropped, 1u);
  }
  auto src = media::open_recording(host_slots);
  ASSERT_EQ(src->info().frame_count, 1);
  media::HostFrame got(PixelFormat::NV12, kW, kH);
  ASSERT_TRUE(src->read_into(got.target()));
  Frame f = got.frame();
  f.index = 3;
  EXPECT_EQ(check_pattern(f), "");
}

}  // namespace
}  // namespace handoff::live::test
