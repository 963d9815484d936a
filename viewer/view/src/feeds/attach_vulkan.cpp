#include "feeds/attach_vulkan.hpp"

#include <handoff/error.hpp>
#include <handoff/gl_context.hpp>
#include <handoff/log.hpp>

#if HANDOFF_HAVE_VULKAN
#include <handoff/vk_gl.hpp>
#endif

namespace handoff::view {

#if HANDOFF_HAVE_VULKAN
struct GlVulkanSlots::Import {
  std::shared_ptr<const live::detail::SlotImport> slot;  // which publisher slot (and generation) this is
  std::unique_ptr<GlVkBuffer> buffer;
};
#else
struct GlVulkanSlots::Import {};
#endif

GlVulkanSlots::GlVulkanSlots() = default;
GlVulkanSlots::~GlVulkanSlots() { clear(); }

void GlVulkanSlots::clear() noexcept { imports_.clear(); }

// The same GPU, or GL would read some other device's memory.
void GlVulkanSlots::check_device(const LiveFrame& f) {
  if (checked_) return;
  const GlInfo gl = query_gl_info("viewer display");
  if (!gl.memory_object_fd)
    throw Error("attach: the publisher shares Vulkan memory and this GL context (" + gl.renderer +
                ") has no GL_EXT_memory_object_fd to import it");
  if (gl.device_uuid && *gl.device_uuid != f.slot.device_uuid)
    throw Error("attach: the publisher's Vulkan memory is on device " + to_string(f.slot.device_uuid) +
                ", this viewer's GL (" + gl.renderer + ") on device " + to_string(*gl.device_uuid) +
                "; interop across GPUs is refused");
  checked_ = true;
}

#if HANDOFF_HAVE_VULKAN
Frame GlVulkanSlots::import(const LiveFrame& f) {
  check_device(f);
  std::unique_ptr<Import>& imp = imports_[f.slot.index];
  if (!imp || imp->slot != f.import_) {
    auto fresh = std::make_unique<Import>();
    ExportedMemory memory = f.vulkan_memory();  // a descriptor of our own; GL takes it on success
    fresh->buffer = std::make_unique<GlVkBuffer>(memory, static_cast<std::size_t>(f.slot.size));
    fresh->slot = f.import_;
    imp = std::move(fresh);
  }
  Frame out = f.frame;  // planes at offsets in the slot's buffer
  out.memory = MemoryKind::GlBuffer;
  out.gl_buffer = imp->buffer->name();
  return out;
}
#else
Frame GlVulkanSlots::import(const LiveFrame&) {
  throw Error("attach: the publisher shares Vulkan memory, and this build of handoff has no Vulkan");
}
#endif

}  // namespace handoff::view
