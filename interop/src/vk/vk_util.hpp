#pragma once
// Small helpers shared by the Vulkan sources (private).
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

}  // namespace handoff::vk
