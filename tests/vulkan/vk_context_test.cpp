#include <gtest/gtest.h>

#include <handoff/vk_context.hpp>

#include "vk/vk_util.hpp"
#include "vk_fixture.hpp"

namespace handoff::test {
namespace {

using VkContextTest = VkFixture;

TEST_F(VkContextTest, CapabilitiesListTheChosenDevice) {
  auto caps = vk_capabilities();
  ASSERT_TRUE(caps.loader) << caps.error;
  bool found = false;
  for (const auto& d : caps.devices) {
    if (d.device_uuid == vk->info().device_uuid) {
      found = true;
      EXPECT_EQ(d.opaque_fd_memory, vk->info().opaque_fd_memory);
      EXPECT_EQ(d.dma_buf_memory, vk->info().dma_buf_memory);
      EXPECT_EQ(d.opaque_fd_semaphore, vk->info().opaque_fd_semaphore);
    }
  }
  EXPECT_TRUE(found) << "the context's device is missing from vk_capabilities()";
  EXPECT_TRUE(vk->info().opaque_fd_memory) << "every supported device exports OPAQUE_FD";
  std::string text = to_string(caps);
  EXPECT_NE(text.find(uuid_to_string(vk->info().device_uuid)), std::string::npos) << text;
  EXPECT_NE(text.find("OPAQUE_FD"), std::string::npos) << text;
  EXPECT_NE(text.find("DMA_BUF"), std::string::npos) << text;
  EXPECT_NE(text.find("sync"), std::string::npos) << text;
}

TEST_F(VkContextTest, ChoosesTheDeviceByUuid) {
  VkContextOptions o;
  o.device_uuid = vk->info().device_uuid;
  auto again = make_validated_context(log, o);
  EXPECT_EQ(again->info().device_uuid, vk->info().device_uuid);
  EXPECT_EQ(again->info().name, vk->info().name);
}

TEST_F(VkContextTest, RefusesAnUnknownUuidNamingIt) {
  DeviceUuid bogus{};
  bogus.fill(0xab);
  try {
    VkContextOptions o;
    o.device_uuid = bogus;
    make_validated_context(log, o);
    FAIL() << "a context was made for a device that does not exist";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_EQ(e.api(), Api::Vulkan);
    EXPECT_NE(what.find(uuid_to_string(bogus)), std::string::npos) << what;
    EXPECT_NE(what.find(vk->info().name), std::string::npos) << "lists the devices seen: " << what;
  }
}

TEST_F(VkContextTest, ValidationLayerReportsMisuse) {
  // A zero-sized buffer breaks VUID-VkBufferCreateInfo-size-00912: the
  // messenger must see it, or no test could fail on validation.
  auto misuse_log = std::make_shared<MessageLog>();
  auto ctx = make_validated_context(misuse_log);
  auto bi = vk::make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  bi.size = 0;
  bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  VkBuffer b = VK_NULL_HANDLE;
  VkResult r = vkCreateBuffer(ctx->device(), &bi, nullptr, &b);
  if (r == VK_SUCCESS && b) vkDestroyBuffer(ctx->device(), b, nullptr);
  EXPECT_GE(misuse_log->count(), 1u);
  EXPECT_GE(ctx->validation_message_count(), 1u);
  ctx->clear_validation_messages();
  EXPECT_EQ(ctx->validation_message_count(), 0u);
}

TEST(VkCheck, ThrowsWithTheResultName) {
  try {
    check_vk(VK_ERROR_OUT_OF_DEVICE_MEMORY, "vkAllocateMemory", HANDOFF_WHERE);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.api(), Api::Vulkan);
    EXPECT_EQ(e.call(), "vkAllocateMemory");
    EXPECT_EQ(e.code(), VK_ERROR_OUT_OF_DEVICE_MEMORY);
    EXPECT_EQ(e.code_name(), "VK_ERROR_OUT_OF_DEVICE_MEMORY");
    EXPECT_NE(std::string(e.what()).find("vk_context_test.cpp"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(check_vk(VK_SUCCESS, "vkCreateBuffer", HANDOFF_WHERE));
}

TEST(VkUuid, PrintsLikeVulkaninfo) {
  DeviceUuid u{0x6d, 0x65, 0x73, 0x61, 0x32, 0x32, 0x2e, 0x33, 0x2e, 0x36, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(uuid_to_string(u), "6d657361-3232-2e33-2e36-000000000000");
}

}  // namespace
}  // namespace handoff::test
