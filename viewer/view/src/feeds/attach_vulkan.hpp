#pragma once
// A publisher's Vulkan slots in the display's GL context: each slot's exported
// OPAQUE_FD memory imported once (GL_EXT_memory_object_fd) as a GL buffer
// holding both planes, so a frame in it is a MemoryKind::GlBuffer frame the
// renderer uploads GPU-side (GL_PIXEL_UNPACK_BUFFER), with no copy through the
// host. The slots are linear buffers (VkFrameBuffer's layout, one pitch), which
// GL cannot sample as 2D textures in place, hence the GPU-side upload.
//
// Thread safety: the display thread, its GL context current. Ownership: owns
// the imports (and holds the subscriber's slot imports they came from).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>

#include <handoff/frame.hpp>
#include <handoff/subscriber.hpp>
#include <handoff/uuid.hpp>

namespace handoff::view {

class GlVulkanSlots {
 public:
  GlVulkanSlots();
  ~GlVulkanSlots();
  GlVulkanSlots(const GlVulkanSlots&) = delete;
  GlVulkanSlots& operator=(const GlVulkanSlots&) = delete;

  // `f` (a frame in a Vulkan slot) as a GlBuffer frame of the current context,
  // importing its slot the first time (or when the publisher re-allocated it).
  // The frame's owner holds `f`'s slot. Throws handoff::Error when GL cannot
  // import it (no GL_EXT_memory_object_fd, another GPU than the publisher's,
  // a build without Vulkan).
  Frame import(const LiveFrame& f);
  // Frees every import (GL must be done with them: gl_finish_for_vulkan first).
  void clear() noexcept;

 private:
  struct Import;
  void check_device(const LiveFrame& f);
  std::map<std::uint16_t, std::unique_ptr<Import>> imports_;
  bool checked_ = false;
};

}  // namespace handoff::view
