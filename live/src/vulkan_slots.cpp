// Vulkan slots: one exportable buffer (every plane, the VkFrameBuffer layout)
// per slot, exported once as an OPAQUE_FD descriptor that every subscriber is
// sent. A frame is announced only after the producer's fence (or the copy's)
// has signalled.
#include <handoff/frame_copy.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/vk_context.hpp>

#include "slot_storage.hpp"
#include "vulkan_slots.hpp"

#include <optional>
#include <vector>

namespace handoff::live::detail {

namespace {

// The writes before it reach every later access, the host's and other APIs' included.
void make_available(VkCommandBuffer cb, VkAccessFlags src, VkPipelineStageFlags stage) {
  VkMemoryBarrier b{};
  b.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  b.srcAccessMask = src;
  b.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, stage, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &b, 0,
                       nullptr, 0, nullptr);
}

class VulkanStorage final : public SlotStorage {
 public:
  VulkanStorage(VkContext& ctx, const FrameLayout& l)
      : ctx_(ctx), buffer_(ctx, l.format, l.width, l.height), layout_(l), exported_(buffer_.buffer().export_memory()) {}

  SlotKind kind() const override { return SlotKind::VulkanOpaqueFd; }
  std::uint64_t capacity() const override { return buffer_.layout().buffer_bytes(); }
  bool fits(const FrameLayout& l) const override {
    return l.format == layout_.format && l.width == layout_.width && l.height == layout_.height;
  }
  Frame describe(const FrameLayout& l) const override {
    Frame f = buffer_.frame();
    f.colorimetry = l.colorimetry;
    return f;
  }
  void write(const Frame& src, const FrameLayout& l, CudaStream) override;
  void finish(const PresentSync& sync) override;
  void announce(SlotAnnounce& out) const override {
    out.kind = SlotKind::VulkanOpaqueFd;
    out.size = exported_.size;
    out.allocation_size = exported_.allocation_size;
    out.offset = exported_.offset;
    out.dedicated = exported_.dedicated;
    out.device_uuid = ctx_.info().device_uuid;
    out.driver_uuid = ctx_.info().driver_uuid;
  }
  int descriptor() const override { return exported_.fd.get(); }
  VkFrameBuffer* vulkan_buffer() override { return &buffer_; }

 private:
  VkContext& ctx_;
  VkFrameBuffer buffer_;
  FrameLayout layout_;
  ExportedMemory exported_;  // kept: SCM_RIGHTS gives each subscriber its own copy
  std::vector<std::byte> staging_;
};

// Host frames go through the buffer's staged upload (waited for): every plane
// of the format (one to three) into its place in the slot's layout.
void VulkanStorage::write(const Frame& src, const FrameLayout& l, CudaStream) {
  if (src.memory != MemoryKind::Host)
    throw UsageError("live publish: Vulkan slots take host frames (or publish(VkFrameBuffer) / acquire())");
  staging_.assign(l.buffer_bytes(), std::byte{0});
  // The slot's layout over the staging bytes, in host memory.
  const Frame slot = describe(l);
  Frame staged;
  staged.format = slot.format;
  staged.width = slot.width;
  staged.height = slot.height;
  staged.colorimetry = l.colorimetry;
  for (std::size_t p = 0; p < std::size_t(plane_count(slot.format)); ++p) {
    staged.planes[p] = slot.planes[p];
    staged.planes[p].data = staging_.data() + slot.planes[p].offset;
    staged.planes[p].offset = 0;
  }
  copy_frame(src, staged);
  buffer_.buffer().upload(staging_);
}

void VulkanStorage::finish(const PresentSync& sync) {
  // Bounded by handoff::wait_limit(): WaitTimeout, and the slot goes back unannounced.
  if (sync.vulkan_fence != VK_NULL_HANDLE)
    ctx_.wait_fence(sync.vulkan_fence, "the producer's Vulkan fence before announcing a live frame");
}

class VulkanRoute final : public SlotRoute {
 public:
  explicit VulkanRoute(VkContext& ctx) : ctx_(ctx) {
    if (!ctx.info().opaque_fd_memory)
      throw Error("live publisher: the Vulkan device '" + ctx.info().name +
                  "' cannot export OPAQUE_FD memory, so it cannot share slots");
    description_ = "Vulkan OPAQUE_FD (" + ctx.info().name + ")";
  }
  SlotMemory memory() const override { return SlotMemory::Vulkan; }
  const std::string& description() const override { return description_; }
  std::unique_ptr<SlotStorage> allocate(const FrameLayout& l, unsigned) override {
    return std::make_unique<VulkanStorage>(ctx_, l);
  }

 private:
  VkContext& ctx_;
  std::string description_;
};

}  // namespace

std::unique_ptr<SlotRoute> make_vulkan_route(const std::string&, VkContext& ctx) {
  return std::make_unique<VulkanRoute>(ctx);
}

void vulkan_copy_frame(const VkFrameBuffer& src, VkFrameBuffer& dst) {
  const FrameLayout& a = src.layout();
  const FrameLayout& b = dst.layout();
  if (a.format != b.format || a.width != b.width || a.height != b.height)
    throw UsageError("live publish(VkFrameBuffer): the source is " + std::string(to_string(a.format)) + " " +
                     std::to_string(a.width) + "x" + std::to_string(a.height) + ", the slot " +
                     std::string(to_string(b.format)) + " " + std::to_string(b.width) + "x" +
                     std::to_string(b.height));
  VkContext& ctx = dst.buffer().context();
  ctx.submit_and_wait([&](VkCommandBuffer cb) {
    VkMemoryBarrier before{};
    before.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    before.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    before.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0,
                         nullptr, 0, nullptr);
    VkBufferCopy region{0, 0, a.buffer_bytes()};
    vkCmdCopyBuffer(cb, src.buffer().buffer(), dst.buffer().buffer(), 1, &region);
    make_available(cb, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
  });
}

}  // namespace handoff::live::detail
