#pragma once
// A Vulkan frame producer: a compute shader (shaders/vk/scene_*.comp, SPIR-V
// embedded at build time) writes frame N of the built-in scene (colour bars, a
// grey ramp, a moving square and disc) as NV12 / P010 straight into exported
// memory, which GL (vk_gl.hpp) or CUDA (vk_cuda.hpp) then reads with no copy.
//
//   VkContext vk;
//   VkFrameProducer producer(vk, PixelFormat::NV12, 1920, 1080, VkFrameProducer::Target::Images);
//   producer.produce(n);   // written and complete when it returns (CPU fence)
//   // GL: VkGlFrameImages gl(producer.images()) -> luma_texture(), chroma_texture()
#include <cstdint>
#include <optional>

#include <handoff/frame.hpp>
#include <handoff/vk_context.hpp>
#include <handoff/vk_memory.hpp>

namespace handoff {

// An exportable binary semaphore (OPAQUE_FD), for GL_EXT_semaphore_fd or CUDA
// external semaphores where the drivers offer them (not on lavapipe).
// @thread_safety: as VkExportableBuffer.
class VkExportableSemaphore {
 public:
  explicit VkExportableSemaphore(VkContext& ctx);  // Error where the device cannot export them
  ~VkExportableSemaphore();
  VkExportableSemaphore(const VkExportableSemaphore&) = delete;
  VkExportableSemaphore& operator=(const VkExportableSemaphore&) = delete;
  VkSemaphore semaphore() const noexcept { return semaphore_; }
  // A new descriptor; the caller owns it until an importer succeeds.
  UniqueFd export_fd() const;

 private:
  VkContext* ctx_;
  VkSemaphore semaphore_ = VK_NULL_HANDLE;
};

// @thread_safety: one thread at a time per producer (its command buffer and
// fence are its own); different producers may run concurrently on one context.
class VkFrameProducer {
 public:
  enum class Target : std::uint8_t {
    Buffer,  // both planes in one VkFrameBuffer (the layout CUDA maps)
    Images,  // luma + chroma images (what a renderer samples)
  };

  VkFrameProducer(VkContext& ctx, PixelFormat format, std::uint32_t width, std::uint32_t height,
                  Target target = Target::Images, Colorimetry colorimetry = {},
                  VkHandleType handle_type = VkHandleType::OpaqueFd);
  ~VkFrameProducer();
  VkFrameProducer(const VkFrameProducer&) = delete;
  VkFrameProducer& operator=(const VkFrameProducer&) = delete;

  // Writes frame `index` and waits for it on the CPU: when this returns the
  // bytes are in memory, visible to any importer (the CPU-fence sync mode).
  void produce(std::int64_t index);
  // The same in two halves: submit() records and submits the dispatch
  // (signalling `signal` too, when given, for semaphore sync) and returns at
  // once; wait() blocks until it completed. A submit() waits for the previous
  // submission first.
  void submit(std::int64_t index, VkSemaphore signal = VK_NULL_HANDLE);
  void wait();

  PixelFormat format() const noexcept { return format_; }
  std::uint32_t width() const noexcept { return width_; }
  std::uint32_t height() const noexcept { return height_; }
  Target target() const noexcept { return target_; }
  const Colorimetry& colorimetry() const noexcept { return colorimetry_; }
  std::int64_t last_index() const noexcept { return last_index_; }
  // The target (the other accessor returns null).
  VkFrameBuffer* buffer() noexcept { return buffer_ ? &*buffer_ : nullptr; }
  VkFrameImages* images() noexcept { return images_ ? &*images_ : nullptr; }
  // The last frame as a MemoryKind::Vulkan description (Buffer target: plane
  // offsets; Images target: planes at offset 0 of their own images).
  Frame frame() const;

 private:
  void release() noexcept;

  VkContext* ctx_;
  PixelFormat format_;
  std::uint32_t width_, height_;
  Target target_;
  Colorimetry colorimetry_;
  std::int64_t last_index_ = -1;
  std::optional<VkFrameBuffer> buffer_;
  std::optional<VkFrameImages> images_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
  VkShaderModule shader_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool in_flight_ = false;
};

// Luma coefficients (Kr, Kb) of a matrix.
struct LumaCoefficients {
  float kr, kb;
};
LumaCoefficients luma_coefficients(ColorMatrix m) noexcept;

}  // namespace handoff
