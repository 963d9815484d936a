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

#include <handoff/vk_handles.hpp>
#include <handoff/error.hpp>
#include <handoff/uuid.hpp>

namespace handoff::detail {
class SpinPolicy;
}

namespace handoff {

// The symbolic name of a VkResult ("VK_ERROR_OUT_OF_DEVICE_MEMORY").
std::string_view vk_result_name(VkResult r) noexcept;

// Throws handoff::Error(Api::Vulkan, <function>, r, vk_result_name(r), detail,
// where) unless r is VK_SUCCESS. `call` is a function name or the call
// expression (its function is named); `where` is HANDOFF_WHERE.
void check_vk(VkResult r, std::string_view call, const char* where, std::string_view detail = {});


}  // namespace handoff


namespace handoff {

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
  // VK_KHR_timeline_semaphore is enabled: semaphores with a counter, which a
  // submission may wait on before anyone signalled them and the host may
  // signal (vkSignalSemaphoreKHR). The tests hold the queue with one.
  bool timeline_semaphore = false;
};

// One Vulkan instance + device + queue.
// Ownership: owns the instance, the debug messenger, the device and a command
// pool; objects created from the context must be destroyed before it.
// Thread safety: the accessors are safe from any thread; submit_and_wait(),
// queue_submit() and wait_idle() serialise queue access with an internal mutex
// (Vulkan requires external synchronisation of VkQueue); wait_fence() may be
// called from any thread.
class VkContext {
 public:
  explicit VkContext(VkContextOptions options = {});
  // Waits for the device to go idle (no bound: Vulkan has no timed device
  // wait; what was made from the context did its own bounded waits first).
  ~VkContext();
  VkContext(const VkContext&) = delete;
  VkContext& operator=(const VkContext&) = delete;

  VkInstance instance() const noexcept { return instance_.get(); }
  VkPhysicalDevice physical_device() const noexcept { return physical_; }
  VkDevice device() const noexcept { return device_.get(); }
  VkQueue queue() const noexcept { return queue_; }
  std::uint32_t queue_family() const noexcept { return queue_family_; }
  const VkDeviceInfo& info() const noexcept { return info_; }
  bool validation_enabled() const noexcept { return static_cast<bool>(messenger_); }

  // Warnings and errors the messenger has seen since creation (or the last
  // clear). Tests fail on any.
  std::vector<VkValidationMessage> validation_messages() const;
  std::size_t validation_message_count() const;
  void clear_validation_messages();

  // A memory type index with `required` properties among `type_bits`; throws
  // handoff::Error naming what was asked when there is none.
  std::uint32_t memory_type(std::uint32_t type_bits, VkMemoryPropertyFlags required) const;

  // Records commands with `record` into a one-time command buffer, submits it
  // and waits for it on the CPU (a fence, bounded by handoff::wait_limit()).
  // Throws on any Vulkan failure, WaitTimeout when the work did not finish in
  // time: its command buffer and fence are then freed once it has, and what
  // else it uses must be kept too (defer_destruction).
  void submit_and_wait(const std::function<void(VkCommandBuffer)>& record);
  // vkQueueSubmit under the queue mutex.
  void queue_submit(const VkSubmitInfo& submit, VkFence fence);
  // Waits until `fence` is signalled: polls vkGetFenceStatus for a budget
  // learned from earlier waits on this context (common/spin.hpp: a waiter
  // that is already running answers in a microsecond, one woken from sleep
  // ~20 us later on a VM whose idle vCPU halts), then blocks in
  // vkWaitForFences until handoff::wait_limit() has passed, and throws
  // WaitTimeout naming `what` ("Vulkan fence of VkFrameProducer (frame 3)").
  // Throws handoff::Error on a lost device.
  void wait_fence(VkFence fence, std::string_view what);
  // Destroys `objects` (the caller gives up its reference) once all work
  // submitted to the queue so far has completed, at the latest when the
  // context is destroyed: for what a submission whose wait timed out may still
  // use. Never throws (when it cannot track them, it waits for the queue).
  void defer_destruction(std::shared_ptr<const void> objects) noexcept;
  // Blocks until the queue is idle (vkQueueWaitIdle under the queue mutex),
  // with no bound. Never throws.
  void wait_idle() noexcept;

  // Device entry points of extensions (resolved once at creation; null when
  // the extension is absent).
  PFN_vkGetMemoryFdKHR get_memory_fd = nullptr;
  PFN_vkGetSemaphoreFdKHR get_semaphore_fd = nullptr;

 private:
  static VKAPI_ATTR VkBool32 VKAPI_CALL messenger_callback(
      VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
      const VkDebugUtilsMessengerCallbackDataEXT* data, void* self);
  void create_instance(bool validation);
  void choose_physical_device(const std::optional<Uuid>& uuid);
  void read_device_info();
  void create_device();
  // Objects kept until `fence` signals (defer_destruction).
  struct Deferred {
    UniqueVkFence fence;
    std::shared_ptr<const void> objects;
  };
  // Takes the entries whose fence has signalled out of deferred_ (queue mutex
  // held); the caller destroys them after unlocking.
  std::vector<Deferred> take_finished() noexcept;

  // Declared before the Vulkan objects: the messenger reports into them until
  // the instance is destroyed.
  std::function<void(const VkValidationMessage&)> on_message_;
  mutable std::mutex messages_mutex_;
  std::vector<VkValidationMessage> messages_;

  // Member order is destruction order (handoff/vk_handles.hpp).
  UniqueVkInstance instance_;
  UniqueVkDebugMessenger messenger_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;  // belongs to the instance
  UniqueVkDevice device_;
  VkQueue queue_ = VK_NULL_HANDLE;  // belongs to the device
  std::uint32_t queue_family_ = 0;
  std::mutex queue_mutex_;
  UniqueVkCommandPool pool_;  // guarded by queue_mutex_
  std::vector<Deferred> deferred_;  // guarded by queue_mutex_
  VkDeviceInfo info_;
  VkPhysicalDeviceMemoryProperties memory_props_{};
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
// Thread safety: any thread.
VkCapabilities vk_capabilities();
// Human-readable, multi-line (what handoff-info prints).
std::string to_string(const VkCapabilities& caps);

}  // namespace handoff
