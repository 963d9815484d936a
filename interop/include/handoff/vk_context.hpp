#pragma once
// Vulkan context for handoff: one instance, one physical device chosen to be the
// same GPU as the GL context (and CUDA) by device UUID, one logical device with
// one compute-capable queue, and, where asked, the Khronos validation layer with
// a debug messenger chained at instance creation (so instance creation and
// destruction are validated too).
//
// Core: VkContext, VkContextOptions, check_vk.
// Optional: vk_capabilities() / to_string() for handoff-info.
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <handoff/error.hpp>
#include <handoff/uuid.hpp>

namespace handoff::detail {
class SpinPolicy;
}

namespace handoff {

// The symbolic name of a VkResult ("VK_ERROR_OUT_OF_DEVICE_MEMORY").
std::string_view vk_result_name(VkResult r) noexcept;

// Throws handoff::Error(Api::Vulkan, call, r, vk_result_name(r), ...) unless r is
// VK_SUCCESS. `where` is HANDOFF_WHERE.
void check_vk(VkResult r, const char* call, const char* where);
#define HANDOFF_VK_CHECK(call) ::handoff::check_vk((call), #call, HANDOFF_WHERE)

// A message from the validation layer (or any VK_EXT_debug_utils source).
struct VkValidationMessage {
  VkDebugUtilsMessageSeverityFlagBitsEXT severity;
  VkDebugUtilsMessageTypeFlagsEXT type;
  std::string id;       // pMessageIdName ("VUID-vkCreateBuffer-...")
  std::string message;
};

struct VkContextOptions {
  // The device to use: the GL context's GL_DEVICE_UUID_EXT or CUDA's
  // cuDeviceGetUuid. A mismatch (no such Vulkan device) is a handoff::Error.
  // Empty: the first device with external-memory fd support, discrete first.
  std::optional<Uuid> device_uuid;
  // Load VK_LAYER_KHRONOS_validation and install a debug messenger. Default:
  // on in debug builds and when HANDOFF_VK_VALIDATION=1, off otherwise.
  // Asking for it where the layer is not installed is a handoff::Error.
  std::optional<bool> validation;
  // Receives every warning and error from the messenger (any thread, possibly
  // inside a Vulkan call). Default: handoff::log at Warning / Error.
  std::function<void(const VkValidationMessage&)> on_message;
};

// What the chosen device offers for interop. Filled at context creation.
struct VkDeviceInfo {
  std::string name;
  Uuid device_uuid{};
  Uuid driver_uuid{};
  std::uint32_t api_version = 0;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  bool opaque_fd_memory = false;      // buffers exportable as OPAQUE_FD
  bool dma_buf_memory = false;        // VK_EXT_external_memory_dma_buf + exportable buffers
  bool opaque_fd_semaphore = false;   // binary semaphores exportable as OPAQUE_FD
  bool sync_fd_semaphore = false;     // ... as SYNC_FD
  bool storage_image_r8_rg8 = false;  // R8/RG8/R16/RG16 storage images (compute writes planes)
};

// One Vulkan instance + device + queue.
// @thread_safety: the accessors are safe from any thread; submit_and_wait()
// and queue_submit() serialise queue access with an internal mutex (Vulkan
// requires external synchronisation of VkQueue). Objects created from the
// context must be destroyed before it.
class VkContext {
 public:
  explicit VkContext(VkContextOptions options = {});
  ~VkContext();
  VkContext(const VkContext&) = delete;
  VkContext& operator=(const VkContext&) = delete;

  VkInstance instance() const noexcept { return instance_; }
  VkPhysicalDevice physical_device() const noexcept { return physical_; }
  VkDevice device() const noexcept { return device_; }
  VkQueue queue() const noexcept { return queue_; }
  std::uint32_t queue_family() const noexcept { return queue_family_; }
  const VkDeviceInfo& info() const noexcept { return info_; }
  bool validation_enabled() const noexcept { return messenger_ != VK_NULL_HANDLE; }

  // Warnings and errors the messenger has seen since creation (or the last
  // clear). Tests fail on any.
  std::vector<VkValidationMessage> validation_messages() const;
  std::size_t validation_message_count() const;
  void clear_validation_messages();

  // A memory type index with `required` properties among `type_bits`; throws
  // handoff::Error naming what was asked when there is none.
  std::uint32_t memory_type(std::uint32_t type_bits, VkMemoryPropertyFlags required) const;

  // Records commands with `record` into a one-time command buffer, submits it
  // and waits for it on the CPU (a fence). Throws on any Vulkan failure.
  void submit_and_wait(const std::function<void(VkCommandBuffer)>& record);
  // vkQueueSubmit under the queue mutex.
  void queue_submit(const VkSubmitInfo& submit, VkFence fence);
  // Waits until `fence` is signalled: polls vkGetFenceStatus for a budget
  // learned from earlier waits on this context (common/spin.hpp: a waiter
  // that is already running answers in a microsecond, one woken from sleep
  // ~20 us later on a VM whose idle vCPU halts), then blocks in
  // vkWaitForFences. Any thread; throws on a lost device.
  void wait_fence(VkFence fence);

  // Device entry points of extensions (resolved once at creation; null when
  // the extension is absent).
  PFN_vkGetMemoryFdKHR get_memory_fd = nullptr;
  PFN_vkGetSemaphoreFdKHR get_semaphore_fd = nullptr;

 private:
  static VKAPI_ATTR VkBool32 VKAPI_CALL messenger_callback(
      VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
      const VkDebugUtilsMessengerCallbackDataEXT* data, void* self);
  void destroy() noexcept;

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::uint32_t queue_family_ = 0;
  VkCommandPool pool_ = VK_NULL_HANDLE;  // guarded by queue_mutex_
  VkDeviceInfo info_;
  VkPhysicalDeviceMemoryProperties memory_props_{};
  std::function<void(const VkValidationMessage&)> on_message_;

  mutable std::mutex messages_mutex_;
  std::vector<VkValidationMessage> messages_;
  std::mutex queue_mutex_;
  std::unique_ptr<detail::SpinPolicy> fence_spin_;
};

// --- capabilities (handoff-info) ---------------------------------------------

struct VkDeviceCapabilities {
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  std::uint32_t api_version = 0;
  std::string driver;  // driverName + driverInfo
  Uuid device_uuid{};
  Uuid driver_uuid{};
  bool external_memory_fd = false;  // VK_KHR_external_memory_fd
  bool opaque_fd_memory = false;    // a storage buffer exportable as OPAQUE_FD
  bool dma_buf_memory = false;      // ... as DMA_BUF
  bool opaque_fd_semaphore = false;
  bool sync_fd_semaphore = false;
};

struct VkCapabilities {
  bool loader = false;            // a Vulkan instance could be created
  std::string error;              // why not, when !loader
  bool validation_layer = false;  // VK_LAYER_KHRONOS_validation is installed
  std::uint32_t instance_version = 0;
  std::vector<VkDeviceCapabilities> devices;
};

// Enumerates every Vulkan device with its UUIDs and external memory /
// semaphore handle types. Never throws for a missing driver: the answer says so.
// @thread_safety: any thread.
VkCapabilities vk_capabilities();
// Human-readable, multi-line (what handoff-info prints).
std::string to_string(const VkCapabilities& caps);

}  // namespace handoff
