#pragma once
// A Vulkan frame producer: a compute shader (shaders/vk/scene_*.comp, SPIR-V
// embedded at build time) writes frame N of the built-in scene (colour bars, a
// grey ramp, a moving square and disc) as NV12 / P010 straight into exported
// memory, which GL (vk_gl.hpp) or CUDA (vk_cuda.hpp) then reads with no copy.
//
//   VkContext vk;
//   VkFrameProducer producer(vk, PixelFormat::NV12, 1920, 1080, VkFrameProducer::Target::Images);
//   producer.produce(n);   // written and complete when it returns (CPU fence)
//   // GL: GlVkFrame gl(worker, *producer.images()) -> luma_texture(), chroma_texture()
#include <cstdint>
#include <memory>

#include <handoff/frame.hpp>
#include <handoff/vk_context.hpp>
#include <handoff/vk_memory.hpp>

namespace handoff {

// An exportable binary semaphore (OPAQUE_FD), for GL_EXT_semaphore_fd or CUDA
// external semaphores where the drivers offer them (not on lavapipe).
// Ownership and thread safety: as VkExportableBuffer.
class VkExportableSemaphore {
 public:
  explicit VkExportableSemaphore(VkContext& ctx);  // Error where the device cannot export them
  VkExportableSemaphore(const VkExportableSemaphore&) = delete;
  VkExportableSemaphore& operator=(const VkExportableSemaphore&) = delete;
  VkSemaphore semaphore() const noexcept { return semaphore_.get(); }
  // A new descriptor; the caller owns it until an importer succeeds.
  UniqueFd export_fd() const;

 private:
  VkContext* ctx_;
  UniqueVkSemaphore semaphore_;
};

// Ownership: owns its target (buffer or images), pipeline, command buffer and
// fence; destroy before the VkContext. The destructor waits (bounded) for a
// frame still in flight; when that fails it logs, and the context frees the
// producer's objects once the GPU is done with them (defer_destruction).
// Thread safety: one thread at a time per producer (its command buffer and
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
  // once; wait() blocks until it completed, for at most handoff::wait_limit(),
  // then throws WaitTimeout ("Vulkan fence of VkFrameProducer"; the frame
  // stays in flight: wait again). A submit() waits for the previous
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
  VkFrameBuffer* buffer() noexcept;
  VkFrameImages* images() noexcept;
  // The last frame as a MemoryKind::Vulkan description (Buffer target: plane
  // offsets; Images target: planes at offset 0 of their own images).
  Frame frame() const;

 private:
  struct Gpu;  // the Vulkan objects (vk_producer.cpp)

  VkContext* ctx_;
  PixelFormat format_;
  std::uint32_t width_, height_;
  Target target_;
  Colorimetry colorimetry_;
  std::int64_t last_index_ = -1;
  std::unique_ptr<Gpu> gpu_;
  bool in_flight_ = false;
};

// Luma coefficients (Kr, Kb) of a matrix.
struct LumaCoefficients {
  float kr, kb;
};
LumaCoefficients luma_coefficients(ColorMatrix m) noexcept;

}  // namespace handoff
