#pragma once
// The Vulkan scene: a Vulkan compute shader writes the scene into two plane
// images whose memory the display's GL context imports (handoff::GlVkSource,
// GL_EXT_memory_object_fd); the renderer samples them in place, no upload, no
// copy. Its ground-truth overlays are boxes round the square and the disc.
// Paced and seekable (a pure function of the frame index).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <handoff/view/feed.hpp>
#include <handoff/media/overlay.hpp>
#include <handoff/media/scene.hpp>

namespace handoff::view {

struct VulkanSceneOptions {
  media::SceneOptions scene{};
  bool validation = false;  // the validation layer on (an error where it is missing)
  // Each validation message (any thread, possibly inside a Vulkan call).
  std::function<void(const std::string&)> on_message;
};

// Made where the build has Vulkan; elsewhere make_vulkan_scene_feed throws
// UsageError saying so.
std::unique_ptr<Feed> make_vulkan_scene_feed(VulkanSceneOptions options);

// The ground truth of the Vulkan scene (shaders/vk/scene.glsl; its CPU
// reference is tests/vulkan/scene_reference.hpp): the sliding white square and
// the orange disc, as boxes in frame pixels. Keep in step with scene.glsl.
void vulkan_scene_overlays(media::OverlayFrame& out, std::int64_t index, std::uint32_t width, std::uint32_t height);

}  // namespace handoff::view
