// Vulkan slots on lavapipe: exportable OPAQUE_FD memory written by the
// publisher (host upload, a GPU copy of a VkFrameBuffer, or the producer's own
// writes announced after its fence), imported into GL in another process
// (GL_EXT_memory_object_fd, as the viewer does) and checked byte for byte.
// The validation layer is on; any message fails the test.
#include "live_fixture.hpp"
#include "live_support.hpp"
#include "peer_process.hpp"
#include "vk_fixture.hpp"

#include <handoff/vk_memory.hpp>
#include <handoff/wait.hpp>

#include <gmock/gmock.h>

#include <cstring>

namespace handoff::live::test {
namespace {

using ::testing::HasSubstr;

constexpr std::uint32_t kW = 64, kH = 48;

class VulkanLive : public LiveTest {
 protected:
  void SetUp() override {
    LiveTest::SetUp();
    std::string why;
    if (!handoff::test::have_vulkan_device(&why)) GTEST_SKIP() << "no Vulkan device: " << why;
    vk = handoff::test::make_validated_context(log);
  }
  void TearDown() override {
    vk.reset();
    log.fail_on_any("Vulkan validation message during the test or at device destruction");
    LiveTest::TearDown();
  }
  PublisherOptions options() {
    PublisherOptions o;
    o.memory = SlotMemory::Vulkan;
    o.vulkan = vk.get();
    return o;
  }
  // The pattern of frame `index` in a Vulkan frame layout (both planes, one pitch).
  static std::vector<std::byte> packed(const FrameLayout& l, std::int64_t index) {
    const Frame f = pattern_frame(l.format, l.width, l.height, index);
    std::vector<std::byte> out(l.buffer_bytes());
    for (int p = 0; p < 2; ++p) {
      const PlaneLayout pl = plane_layout(l.format, l.width, l.height, p);
      for (std::uint32_t y = 0; y < pl.height; ++y)
        std::memcpy(out.data() + l.planes[p].offset + y * l.planes[p].pitch,
                    static_cast<const char*>(f.planes[p].data) + y * f.planes[p].pitch, pl.row_bytes);
    }
    return out;
  }

  handoff::test::DebugMessages log;
  std::unique_ptr<VkContext> vk;
};

TEST_F(VulkanLive, HostFramesInVulkanSlotsReachAGlImportInAnotherProcess) {
  Publisher pub(name(), options());
  EXPECT_THAT(pub.stats().route, HasSubstr("Vulkan OPAQUE_FD"));
  PeerProcess peer({"subscribe", name(), "--gl", "--boxes", "2"});
  ASSERT_THAT(peer.expect("STATUS connected"), HasSubstr("Vulkan OPAQUE_FD"));
  for (std::int64_t i = 0; i < 4; ++i) {
    settle(pub);
    const media::OverlayFrame ov = overlays_for(i, 2);
    ASSERT_TRUE(pub.publish(pattern_frame(i % 2 ? PixelFormat::P010 : PixelFormat::NV12, kW, kH, i), ov));
    EXPECT_EQ(peer.expect("FRAME"), "FRAME " + std::to_string(i + 1) + " " + std::to_string(i) + " ok");
  }
  peer.send("quit");
  EXPECT_EQ(peer.wait_exit(), 0);
}

TEST_F(VulkanLive, AVkFrameBufferIsCopiedOnTheGpuAndPublished) {
  Publisher pub(name(), options());
  PeerProcess peer({"subscribe", name(), "--gl"});
  ASSERT_THAT(peer.expect("STATUS connected"), HasSubstr("connected"));
  VkFrameBuffer src(*vk, PixelFormat::NV12, kW, kH);
  for (std::int64_t i = 5; i < 8; ++i) {
    src.buffer().upload(packed(src.layout(), i));
    settle(pub);
    ASSERT_TRUE(pub.publish(src, i, double(i) / 30.0));
    EXPECT_EQ(peer.expect("FRAME"), "FRAME " + std::to_string(i - 4) + " " + std::to_string(i) + " ok");
  }
  // Another layout gets a slot of its own.
  VkFrameBuffer other(*vk, PixelFormat::NV12, kW + 2, kH);
  other.buffer().upload(packed(other.layout(), 9));
  settle(pub);
  ASSERT_TRUE(pub.publish(other, 9, 0.0));
  EXPECT_EQ(peer.expect("FRAME"), "FRAME 4 9 ok");
  // The read-back does see wrong bytes: frame 1's pattern announced as frame 2.
  src.buffer().upload(packed(src.layout(), 1));
  settle(pub);
  ASSERT_TRUE(pub.publish(src, 2, 0.0));
  const auto l = peer.line(10s);
  ASSERT_TRUE(l);
  EXPECT_THAT(*l, HasSubstr("FAIL frame 5: plane 0 row 0 differs"));
  peer.send("quit");
  EXPECT_EQ(peer.wait_exit(), 0);
}

TEST_F(VulkanLive, TheSubscriberHandsOutTheSlotsMemory) {
  Publisher pub(name(), options());
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  EXPECT_EQ(sub.status().memory, SlotMemory::Vulkan);
  ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 1)));
  const LiveFrame f = sub.next(10s);
  ASSERT_TRUE(f);
  EXPECT_EQ(f.frame.memory, MemoryKind::Vulkan);
  EXPECT_EQ(f.slot.kind, SlotKind::VulkanOpaqueFd);
  EXPECT_EQ(f.slot.device_uuid, vk->info().device_uuid);
  EXPECT_EQ(f.slot.driver_uuid, vk->info().driver_uuid);
  EXPECT_EQ(f.frame.planes[1].offset, f.frame.planes[0].pitch * kH);
  EXPECT_GE(f.slot.allocation_size, f.slot.offset + f.slot.size);
  ExportedMemory m = f.vulkan_memory();
  EXPECT_TRUE(m.fd);
  EXPECT_EQ(m.allocation_size, f.slot.allocation_size);
  EXPECT_EQ(m.size, f.slot.size);
  EXPECT_NE(m.fd.get(), f.vulkan_memory().fd.get());  // a new descriptor each call
}

TEST_F(VulkanLive, PresentWaitsForTheProducersFence) {
  PublisherOptions o = options();
  o.slots = 2;
  Publisher pub(name(), o);
  PeerProcess peer({"subscribe", name(), "--gl"});
  ASSERT_THAT(peer.expect("STATUS connected"), HasSubstr("connected"));
  VkFenceCreateInfo fi{};
  fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  fi.flags = VK_FENCE_CREATE_SIGNALED_BIT;
  VkFence done = VK_NULL_HANDLE, never = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateFence(vk->device(), &fi, nullptr, &done), VK_SUCCESS);
  fi.flags = 0;
  ASSERT_EQ(vkCreateFence(vk->device(), &fi, nullptr, &never), VK_SUCCESS);

  PublishSlot s = pub.acquire(PixelFormat::NV12, kW, kH);
  ASSERT_TRUE(s);
  ASSERT_NE(s.vulkan_buffer(), nullptr);
  s.vulkan_buffer()->buffer().upload(packed(s.vulkan_buffer()->layout(), 3));
  s.frame().index = 3;
  PresentSync sync;
  sync.vulkan_fence = done;
  pub.present(std::move(s), {}, sync);
  EXPECT_EQ(peer.expect("FRAME"), "FRAME 1 3 ok");
  settle(pub);

  {
    handoff::test::ScopedWaitLimit limit(50ms);
    PublishSlot t = pub.acquire(PixelFormat::NV12, kW, kH);
    ASSERT_TRUE(t);
    sync.vulkan_fence = never;
    EXPECT_THROW(pub.present(std::move(t), {}, sync), WaitTimeout);
  }
  // The slot came back: both can be acquired.
  PublishSlot a = pub.acquire(PixelFormat::NV12, kW, kH), b = pub.acquire(PixelFormat::NV12, kW, kH);
  EXPECT_TRUE(a && b);
  a = PublishSlot{};
  b = PublishSlot{};
  vkDestroyFence(vk->device(), done, nullptr);
  vkDestroyFence(vk->device(), never, nullptr);
  peer.send("quit");
  EXPECT_EQ(peer.wait_exit(), 0);
}

}  // namespace
}  // namespace handoff::live::test
