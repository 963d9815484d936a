#pragma once
// Small Vulkan helpers shared by the library, its tests and benchmarks
// (machinery, not API: applications have no reason to include it).
#include <vulkan/vulkan.h>

namespace handoff::vk {

// A zeroed Vulkan info struct with its sType set (brace-init with only sType
// trips -Wmissing-field-initializers).
template <typename T>
constexpr T make(VkStructureType s) noexcept {
  T t{};
  t.sType = s;
  return t;
}

constexpr VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) noexcept { return (v + a - 1) / a * a; }

// Records a barrier moving a single-level colour image between two layouts,
// ordering all earlier and later accesses around it.
inline void transition_color_image(VkCommandBuffer cb, VkImage image, VkImageLayout from, VkImageLayout to) {
  auto b = make<VkImageMemoryBarrier>(VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER);
  b.srcAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  b.oldLayout = from;
  b.newLayout = to;
  b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = image;
  b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr,
                       0, nullptr, 1, &b);
}

}  // namespace handoff::vk
