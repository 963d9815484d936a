#pragma once
// A Vulkan context with the validation layer on; any warning or error from the
// layer (or the messenger) fails the test, including the leak reports the
// layer makes when the device and instance are destroyed. Skips only where
// there is no Vulkan device at all. Also QueueHold (a queue that moves on only
// when the test says so) for the bounded waits (with ScopedWaitLimit,
// tests/support/wait_support.hpp).
#include <gtest/gtest.h>

#include <handoff/vk_handles.hpp>
#include <handoff/vk_context.hpp>
#include <handoff/wait.hpp>

#include <handoff/detail/vk_util.hpp>
#include <handoff/vk_check.hpp>

#include "debug_messages.hpp"
#include "wait_support.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace handoff::test {

// A context whose validation-layer messages go to `log`; the collector's sink
// outlives the context, so destruction-time messages (object leaks) are seen too.
inline std::unique_ptr<VkContext> make_validated_context(const DebugMessages& log, VkContextOptions options = {}) {
  options.validation = true;
  options.on_message = log.vk_sink();
  return std::make_unique<VkContext>(std::move(options));
}

// Keeps the Vulkan driver libraries (ICDs: libvulkan_<driver>.so) loaded for
// the rest of the process. The loader unloads them with the last instance, and
// lavapipe keeps a little memory per load that nothing frees at unload, which
// LeakSanitizer would otherwise report against every test.
inline void pin_vulkan_drivers() {
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void*) {
        const char* name = info->dlpi_name;
        if (name && std::strstr(name, "libvulkan_")) (void)dlopen(name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        return 0;
      },
      nullptr);
}

// True when a Vulkan device with external memory works here; `why` says why
// not. The first call makes a context once and pins the drivers.
inline bool have_vulkan_device(std::string* why) {
  static const std::string reason = [] {
    try {
      VkContextOptions o;
      o.validation = false;
      VkContext probe(o);
      pin_vulkan_drivers();
      return std::string();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  }();
  *why = reason;
  return reason.empty();
}

class VkFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!have_vulkan_device(&why)) GTEST_SKIP() << "no Vulkan device: " << why;
    vk = make_validated_context(log);
    ASSERT_TRUE(vk->validation_enabled()) << "the validation layer must be on in tests";
  }
  void TearDown() override {
    vk.reset();
    log.fail_on_any("Vulkan validation message during the test or at device/instance destruction");
  }
  DebugMessages log;
  std::unique_ptr<VkContext> vk;
};

// Holds a context's queue: a batch (one empty command buffer) that waits for a
// timeline semaphore only release() signals, from the host. The fence of
// anything submitted after it cannot signal before then (a fence's signal
// waits for every earlier command on the queue), so a bounded wait on it times
// out for certain, with no timing involved. Timeline semaphores may be waited
// for before they are signalled; binary ones may not. Check
// vk.info().timeline_semaphore first.
class QueueHold {
 public:
  explicit QueueHold(VkContext& vk) : vk_(vk) {
    const VkDevice dev = vk.device();
    signal_ = reinterpret_cast<PFN_vkSignalSemaphoreKHR>(vkGetDeviceProcAddr(dev, "vkSignalSemaphoreKHR"));
    if (!signal_) throw std::runtime_error("QueueHold: no vkSignalSemaphoreKHR (check info().timeline_semaphore)");
    auto type = vk::make<VkSemaphoreTypeCreateInfoKHR>(VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO_KHR);
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE_KHR;
    auto sci = vk::make<VkSemaphoreCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO);
    sci.pNext = &type;
    VkSemaphore sem = VK_NULL_HANDLE;
    HANDOFF_VK_CHECK(vkCreateSemaphore(dev, &sci, nullptr, &sem));
    semaphore_ = UniqueVkSemaphore(sem, {dev});
    auto pci = vk::make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pci.queueFamilyIndex = vk.queue_family();
    VkCommandPool pool = VK_NULL_HANDLE;
    HANDOFF_VK_CHECK(vkCreateCommandPool(dev, &pci, nullptr, &pool));
    pool_ = UniqueVkCommandPool(pool, {dev});
    auto ai = vk::make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    HANDOFF_VK_CHECK(vkAllocateCommandBuffers(dev, &ai, &cb_));
    auto bi = vk::make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    HANDOFF_VK_CHECK(vkBeginCommandBuffer(cb_, &bi));
    HANDOFF_VK_CHECK(vkEndCommandBuffer(cb_));

    const std::uint64_t one = 1;
    auto ti = vk::make<VkTimelineSemaphoreSubmitInfoKHR>(VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO_KHR);
    ti.waitSemaphoreValueCount = 1;
    ti.pWaitSemaphoreValues = &one;
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    auto si = vk::make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    si.pNext = &ti;
    si.waitSemaphoreCount = 1;
    si.pWaitSemaphores = &sem;
    si.pWaitDstStageMask = &stage;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb_;
    vk.queue_submit(si, VK_NULL_HANDLE);
  }
  // Lets the queue go on (the host signals the semaphore).
  void release() {
    if (released_) return;
    auto si = vk::make<VkSemaphoreSignalInfoKHR>(VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO_KHR);
    si.semaphore = semaphore_.get();
    si.value = 1;
    HANDOFF_VK_CHECK(signal_(vk_.device(), &si));
    released_ = true;
  }
  ~QueueHold() {
    try {
      release();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "QueueHold::release: " << e.what();
    }
    vk_.wait_idle();  // the batch is done before its semaphore and command buffer go
  }
  QueueHold(const QueueHold&) = delete;
  QueueHold& operator=(const QueueHold&) = delete;

 private:
  VkContext& vk_;
  PFN_vkSignalSemaphoreKHR signal_ = nullptr;
  UniqueVkSemaphore semaphore_;
  UniqueVkCommandPool pool_;  // frees cb_
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  bool released_ = false;
};

// Open descriptors of this process (entries of /proc/self/fd).
inline int open_fd_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n - 1;  // the DIR's own descriptor
}

}  // namespace handoff::test
