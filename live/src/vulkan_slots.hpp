#pragma once
// Vulkan for handoff::live: the publisher's Vulkan slot route (slot_storage.hpp).
#include <handoff/vk_memory.hpp>

namespace handoff::live::detail {

// Copies `src` into `dst` on the GPU (same format and size), with barriers
// that make the writes available to any later reader, and waits for it.
// Throws UsageError for different layouts, handoff::Error on Vulkan failure.
void vulkan_copy_frame(const VkFrameBuffer& src, VkFrameBuffer& dst);

}  // namespace handoff::live::detail
