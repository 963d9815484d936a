// The Vulkan scene in a build without Vulkan (HANDOFF_WITH_VULKAN=OFF).
#include "feeds/vulkan_scene_feed.hpp"

#include <handoff/error.hpp>

namespace handoff::view {

std::unique_ptr<Feed> make_vulkan_scene_feed(VulkanSceneOptions) {
  throw UsageError("the Vulkan scene: this handoff was built without Vulkan (HANDOFF_WITH_VULKAN=OFF)");
}

}  // namespace handoff::view
