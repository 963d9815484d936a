#pragma once
// A Vulkan context with the validation layer on; any warning or error from the
// layer (or the messenger) fails the test, including the leak reports the
// layer makes when the device and instance are destroyed. Skips only where
// there is no Vulkan device at all.
#include <gtest/gtest.h>

#include <handoff/vk_context.hpp>

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>

#include <cstring>

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
