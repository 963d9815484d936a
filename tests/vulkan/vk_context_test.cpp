#include <gtest/gtest.h>

#include <handoff/vk_context.hpp>

#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include <handoff/detail/vk_util.hpp>
#include <handoff/vk_check.hpp>
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
  EXPECT_NE(text.find(to_string(vk->info().device_uuid)), std::string::npos) << text;
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
  Uuid bogus{};
  bogus.bytes.fill(0xab);
  try {
    VkContextOptions o;
    o.device_uuid = bogus;
    make_validated_context(log, o);
    FAIL() << "a context was made for a device that does not exist";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_EQ(e.api(), Api::Vulkan);
    EXPECT_NE(what.find(to_string(bogus)), std::string::npos) << what;
    EXPECT_NE(what.find(vk->info().name), std::string::npos) << "lists the devices seen: " << what;
  }
}

TEST_F(VkContextTest, ValidationLayerReportsMisuse) {
  // A zero-sized buffer breaks VUID-VkBufferCreateInfo-size-00912: the
  // messenger must see it, or no test could fail on validation.
  DebugMessages misuse_log;
  auto ctx = make_validated_context(misuse_log);
  auto bi = vk::make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  bi.size = 0;
  bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  VkBuffer b = VK_NULL_HANDLE;
  VkResult r = vkCreateBuffer(ctx->device(), &bi, nullptr, &b);
  if (r == VK_SUCCESS && b) vkDestroyBuffer(ctx->device(), b, nullptr);
  EXPECT_GE(misuse_log.count(), 1u);
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

TEST(CheckMacros, NameTheFunctionTheCallExpressionCalls) {
  using detail::call_name;
  static_assert(call_name("glFlush()") == "glFlush");
  EXPECT_EQ(call_name("glNamedBufferStorage(name, size, nullptr, flags)"), "glNamedBufferStorage");
  EXPECT_EQ(call_name("ctx.get_memory_fd(ctx.device(), &gi, &fd)"), "get_memory_fd");
  EXPECT_EQ(call_name("ctx_->get_semaphore_fd(ctx_->device(), &gi, &fd)"), "get_semaphore_fd");
  EXPECT_EQ(call_name("drv.api().cuMemAlloc(&p, n)"), "cuMemAlloc");
  EXPECT_EQ(call_name(" vkQueueSubmit(queue_, 1, &si, f(a, (b))) "), "vkQueueSubmit");
  EXPECT_EQ(call_name("vkAllocateMemory"), "vkAllocateMemory") << "a plain name stays";
  EXPECT_EQ(call_name("(*table[2])(x)"), "(*table[2])(x)") << "text with no name before its arguments comes back";
  EXPECT_EQ(call_name(""), "");
}

VkResult fails_with(VkResult r, int) { return r; }

TEST(VkCheck, MacroWrapsTheCallAndNamesItsFunctionAndDetail) {
  try {
    HANDOFF_VK_CHECK(fails_with(VK_ERROR_DEVICE_LOST, 3), "frame " + std::to_string(3));
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.api(), Api::Vulkan);
    EXPECT_EQ(e.call(), "fails_with");
    EXPECT_EQ(e.code(), VK_ERROR_DEVICE_LOST);
    EXPECT_EQ(e.code_name(), "VK_ERROR_DEVICE_LOST");
    const std::string what = e.what();
    EXPECT_NE(what.find("frame 3"), std::string::npos) << what;
    EXPECT_NE(what.find("vk_context_test.cpp"), std::string::npos) << what;
  }
  int details = 0;
  auto detail = [&] {
    ++details;
    return std::string("costly");
  };
  HANDOFF_VK_CHECK(fails_with(VK_SUCCESS, 0), detail());
  HANDOFF_VK_CHECK(fails_with(VK_SUCCESS, 0));
  EXPECT_EQ(details, 0) << "the detail is built only when the call failed";
  EXPECT_THROW(HANDOFF_VK_CHECK(fails_with(VK_TIMEOUT, 0)), Error) << "only VK_SUCCESS passes";
}

}  // namespace
}  // namespace handoff::test

namespace handoff::test {
namespace {

// Host allocations made through these callbacks are all freed by the arena, so
// an object deliberately left alive does not leak host memory (ASan).
struct Arena {
  std::mutex mutex;
  std::map<void*, std::size_t> blocks;
  ~Arena() {
    for (auto& [p, n] : blocks) std::free(p);
  }
  static void* VKAPI_CALL alloc(void* self, std::size_t size, std::size_t align, VkSystemAllocationScope) {
    auto* a = static_cast<Arena*>(self);
    void* p = std::aligned_alloc(align, (size + align - 1) / align * align);
    std::lock_guard lock(a->mutex);
    if (p) a->blocks[p] = size;
    return p;
  }
  static void* VKAPI_CALL realloc(void* self, void* old, std::size_t size, std::size_t align,
                                  VkSystemAllocationScope scope) {
    auto* a = static_cast<Arena*>(self);
    void* p = alloc(self, size, align, scope);
    if (p && old) {
      std::lock_guard lock(a->mutex);
      std::memcpy(p, old, std::min(size, a->blocks[old]));  // `old` stays in the arena
    }
    return p;
  }
  static void VKAPI_CALL free(void*, void*) {}  // the arena frees everything at its end
};

TEST(VkValidation, ReportsObjectsLeftAtDeviceDestruction) {
  std::string why;
  if (!have_vulkan_device(&why)) GTEST_SKIP() << "no Vulkan device: " << why;
  Arena arena;
  VkAllocationCallbacks cb{&arena, &Arena::alloc, &Arena::realloc, &Arena::free, nullptr, nullptr};
  DebugMessages log;
  {
    auto ctx = make_validated_context(log);
    auto fi = vk::make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    VkFence leaked = VK_NULL_HANDLE;
    ASSERT_EQ(vkCreateFence(ctx->device(), &fi, &cb, &leaked), VK_SUCCESS);
    EXPECT_EQ(log.count(), 0u);
  }  // vkDestroyDevice with the fence alive: the object tracker must say so
  const std::vector<std::string> seen = log.messages();
  ASSERT_GE(seen.size(), 1u) << "a leaked Vulkan object went unreported: the 1,000-cycle test relies on this";
  bool mentions_fence = false;
  for (const auto& m : seen)
    if (m.find("VkFence") != std::string::npos || m.find("FENCE") != std::string::npos) mentions_fence = true;
  EXPECT_TRUE(mentions_fence) << seen[0];
}

}  // namespace
}  // namespace handoff::test
