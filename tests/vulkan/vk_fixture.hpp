#pragma once
// A Vulkan context with the validation layer on; any warning or error from the
// layer (or the messenger) fails the test, including the leak reports the
// layer makes when the device and instance are destroyed. Skips only where
// there is no Vulkan device at all.
#include <gtest/gtest.h>

#include <handoff/vk_context.hpp>

#include <dirent.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace handoff::test {

// Collects messenger output; outlives the context so destruction-time
// messages (object leaks) are seen too.
struct MessageLog {
  std::mutex mutex;
  std::vector<VkValidationMessage> messages;
  std::size_t count() {
    std::lock_guard lock(mutex);
    return messages.size();
  }
  void expect_none(const char* when) {
    std::lock_guard lock(mutex);
    for (const auto& m : messages)
      ADD_FAILURE() << "Vulkan validation message (" << when << ") " << m.id << ": " << m.message;
    messages.clear();
  }
};

inline std::unique_ptr<VkContext> make_validated_context(std::shared_ptr<MessageLog> log,
                                                         VkContextOptions options = {}) {
  options.validation = true;
  options.on_message = [log](const VkValidationMessage& m) {
    std::lock_guard lock(log->mutex);
    log->messages.push_back(m);
  };
  return std::make_unique<VkContext>(std::move(options));
}

inline bool have_vulkan_device(std::string* why) {
  auto caps = vk_capabilities();
  if (caps.loader && !caps.devices.empty()) return true;
  *why = caps.error.empty() ? "no Vulkan device enumerated" : caps.error;
  return false;
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
    log->expect_none("during the test or at device/instance destruction");
  }
  std::shared_ptr<MessageLog> log = std::make_shared<MessageLog>();
  std::unique_ptr<VkContext> vk;
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
