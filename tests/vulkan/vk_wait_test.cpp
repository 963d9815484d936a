// Every Vulkan wait is bounded by handoff::wait_limit(): a fence that does not
// signal gives WaitTimeout naming what did not finish, instead of a hang; and
// what the GPU may still use after such a timeout is freed only once it is
// done with it (no validation message, no leak: ASan and the layer's
// object tracker at vkDestroyDevice both check).
#include <handoff/log.hpp>
#include <handoff/vk_memory.hpp>
#include <handoff/vk_producer.hpp>
#include <handoff/wait.hpp>
#include <handoff/vk_check.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "vk_fixture.hpp"

namespace handoff::test {
namespace {

using namespace std::chrono_literals;

class VkWaitTest : public VkFixture {
 protected:
  void SetUp() override {
    VkFixture::SetUp();
    if (IsSkipped()) return;
    if (!vk->info().timeline_semaphore)
      GTEST_SKIP() << vk->info().name << " lacks VK_KHR_timeline_semaphore (the tests hold the queue with one)";
  }
  ScopedWaitLimit limit{100ms};
};

void expect_timeout(const WaitTimeout& e, const std::string& what) {
  EXPECT_EQ(e.waited_for(), what);
  const std::string message = e.what();
  EXPECT_NE(message.find(what), std::string::npos) << message;
  EXPECT_NE(message.find("did not finish within 100 ms"), std::string::npos) << message;
}

TEST_F(VkWaitTest, AFenceNeverSubmittedTimesOutNamingIt) {
  auto fci = vk::make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  VkFence raw = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateFence(vk->device(), &fci, nullptr, &raw));
  UniqueVkFence fence(raw, {vk->device()});
  try {
    vk->wait_fence(fence.get(), "the test's unsubmitted fence");
    FAIL() << "a fence nobody submitted was waited for";
  } catch (const WaitTimeout& e) {
    expect_timeout(e, "the test's unsubmitted fence");
  }
}

TEST_F(VkWaitTest, SubmitAndWaitTimesOutThenTheContextWorksOn) {
  QueueHold hold(*vk);
  try {
    vk->submit_and_wait([](VkCommandBuffer) {});
    FAIL() << "work behind a held queue finished";
  } catch (const WaitTimeout& e) {
    expect_timeout(e, "Vulkan fence of VkContext::submit_and_wait");
  }
  hold.release();
  set_wait_limit(kDefaultWaitLimit);  // what follows must finish, however loaded the machine
  // The timed-out submission's command buffer and fence are freed once it
  // finished; a leak or an early free would be a validation message.
  vk->submit_and_wait([](VkCommandBuffer) {});
  vk->submit_and_wait([](VkCommandBuffer) {});
}

TEST_F(VkWaitTest, ProducerWaitTimesOutAndTheFrameStaysInFlight) {
  VkFrameProducer producer(*vk, PixelFormat::NV12, 64, 32, VkFrameProducer::Target::Buffer);
  QueueHold hold(*vk);
  producer.submit(7);
  try {
    producer.wait();
    FAIL() << "a frame behind a held queue finished";
  } catch (const WaitTimeout& e) {
    expect_timeout(e, "Vulkan fence of VkFrameProducer");
  }
  EXPECT_THROW(producer.produce(8), WaitTimeout) << "submit() waits for the frame still in flight first";
  hold.release();
  set_wait_limit(kDefaultWaitLimit);  // what follows must finish, however loaded the machine
  producer.wait();
  producer.produce(9);
  EXPECT_EQ(producer.last_index(), 9);
}

TEST_F(VkWaitTest, ProducerDestroyedWithAFrameStuckInFlightFreesItOnceTheGpuIsDone) {
  QueueHold hold(*vk);
  {
    VkFrameProducer producer(*vk, PixelFormat::NV12, 64, 32, VkFrameProducer::Target::Buffer);
    producer.submit(1);
  }  // waits 100 ms, logs, hands its objects to the context: no hang, nothing freed under the GPU
  hold.release();
  set_wait_limit(kDefaultWaitLimit);  // what follows must finish, however loaded the machine
  vk->submit_and_wait([](VkCommandBuffer) {});  // frees what finished
}

TEST_F(VkWaitTest, ImageConstructorFailingHalfWayLeavesNothing) {
  // The image, its memory and its view exist when the layout transition's
  // wait times out; the transition still uses them.
  QueueHold hold(*vk);
  EXPECT_THROW(VkExportableImage(*vk, 64, 32, VK_FORMAT_R8_UNORM), WaitTimeout);
  EXPECT_THROW(VkFrameImages(*vk, PixelFormat::NV12, 64, 32), WaitTimeout);
  hold.release();
  set_wait_limit(kDefaultWaitLimit);  // what follows must finish, however loaded the machine
  vk->submit_and_wait([](VkCommandBuffer) {});
  VkExportableImage ok(*vk, 64, 32, VK_FORMAT_R8_UNORM);  // and the context works on
}

TEST_F(VkWaitTest, UploadThatTimedOutStillLandsAndItsStagingIsFreedAfter) {
  VkExportableBuffer buf(*vk, 4096);
  std::vector<std::byte> bytes(4096);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = std::byte(i * 7 + 3);
  QueueHold hold(*vk);
  EXPECT_THROW(buf.upload(bytes), WaitTimeout);
  hold.release();
  set_wait_limit(kDefaultWaitLimit);  // what follows must finish, however loaded the machine
  EXPECT_EQ(buf.download(), bytes) << "the copy was queued before the download";
}

}  // namespace
}  // namespace handoff::test
