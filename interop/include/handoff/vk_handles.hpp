#pragma once
// Owners of Vulkan objects (handoff/unique_handle.hpp): one UniqueHandle alias
// per object type, each deleter carrying what its vkDestroy* / vkFree* call
// needs (the VkDevice, the VkInstance, the command pool). Public classes hold
// them as members (VkContext, VkExportableBuffer, VkFrameProducer, ...), and an
// application may use them for its own objects the same way:
//   handoff::UniqueVkBuffer b(buffer, {device});  // vkDestroyBuffer(device, buffer) when b goes
//
// Member order is destruction order: declare an object after what it is made
// from (the device after the instance, a view after its image and the image
// after its memory), so the compiler destroys it first.
#include <vulkan/vulkan.h>

#include <handoff/unique_handle.hpp>

namespace handoff {

struct VkInstanceDeleter {
  void operator()(VkInstance instance) const noexcept { vkDestroyInstance(instance, nullptr); }
};
struct VkDeviceDeleter {
  void operator()(VkDevice device) const noexcept { vkDestroyDevice(device, nullptr); }
};
// The destroy entry point is an extension's, looked up on the instance.
struct VkDebugMessengerDeleter {
  VkInstance instance = VK_NULL_HANDLE;
  PFN_vkDestroyDebugUtilsMessengerEXT destroy = nullptr;
  void operator()(VkDebugUtilsMessengerEXT messenger) const noexcept {
    if (destroy) destroy(instance, messenger, nullptr);
  }
};
// An object of a VkDevice released by `Release(device, object, nullptr)`
// (vkDestroyBuffer, vkFreeMemory, ...).
template <typename T, auto Release>
struct VkDeviceObjectDeleter {
  VkDevice device = VK_NULL_HANDLE;
  void operator()(T object) const noexcept { Release(device, object, nullptr); }
};
// A command buffer goes back to its pool.
struct VkCommandBufferDeleter {
  VkDevice device = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  void operator()(VkCommandBuffer cb) const noexcept { vkFreeCommandBuffers(device, pool, 1, &cb); }
};

using UniqueVkInstance = UniqueHandle<VkInstance, VkInstanceDeleter>;
using UniqueVkDevice = UniqueHandle<VkDevice, VkDeviceDeleter>;
using UniqueVkDebugMessenger = UniqueHandle<VkDebugUtilsMessengerEXT, VkDebugMessengerDeleter>;
using UniqueVkCommandBuffer = UniqueHandle<VkCommandBuffer, VkCommandBufferDeleter>;

template <typename T, auto Release>
using UniqueVkDeviceObject = UniqueHandle<T, VkDeviceObjectDeleter<T, Release>>;
using UniqueVkBuffer = UniqueVkDeviceObject<VkBuffer, &vkDestroyBuffer>;
using UniqueVkImage = UniqueVkDeviceObject<VkImage, &vkDestroyImage>;
using UniqueVkImageView = UniqueVkDeviceObject<VkImageView, &vkDestroyImageView>;
using UniqueVkDeviceMemory = UniqueVkDeviceObject<VkDeviceMemory, &vkFreeMemory>;  // unmaps too
using UniqueVkSemaphore = UniqueVkDeviceObject<VkSemaphore, &vkDestroySemaphore>;
using UniqueVkFence = UniqueVkDeviceObject<VkFence, &vkDestroyFence>;
using UniqueVkEvent = UniqueVkDeviceObject<VkEvent, &vkDestroyEvent>;
using UniqueVkCommandPool = UniqueVkDeviceObject<VkCommandPool, &vkDestroyCommandPool>;  // frees its buffers
using UniqueVkDescriptorPool = UniqueVkDeviceObject<VkDescriptorPool, &vkDestroyDescriptorPool>;  // and sets
using UniqueVkDescriptorSetLayout = UniqueVkDeviceObject<VkDescriptorSetLayout, &vkDestroyDescriptorSetLayout>;
using UniqueVkPipelineLayout = UniqueVkDeviceObject<VkPipelineLayout, &vkDestroyPipelineLayout>;
using UniqueVkShaderModule = UniqueVkDeviceObject<VkShaderModule, &vkDestroyShaderModule>;
using UniqueVkPipeline = UniqueVkDeviceObject<VkPipeline, &vkDestroyPipeline>;

}  // namespace handoff
