#pragma once
// Vulkan memory in OpenGL, zero copy: GL_EXT_memory_object_fd imports an
// exported OPAQUE_FD allocation as a GL buffer or texture that aliases the
// Vulkan object's bytes. Synchronisation: exported semaphores
// (GL_EXT_semaphore_fd) where both sides have them, otherwise CPU-side fences
// (the Vulkan side waits for its fence before GL touches the memory, GL
// finishes before Vulkan does); gl_vk_sync() says which one is in use.
//
// Naming: what this header declares involves both APIs and is named GL first,
// then Vulkan: `GlVk<What>` is GL's side of something Vulkan made (GlVkBuffer:
// a GL buffer whose storage is Vulkan memory), as vk_cuda.hpp names CUDA's
// side `CudaVk<What>`. Vulkan-only objects are `Vk<What>` (vk_memory.hpp).
//
// Two ways in:
//  - current-context objects (GlVkBuffer, GlVkTexture, GlVkSemaphore, GlVkSource):
//    made, used and destroyed on a thread where a GL context with
//    GL_EXT_memory_object_fd is current (the viewer's render thread, or inside
//    GlWorker::run);
//  - GlVkFrame: the same imports made on a GlWorker; its GL objects are deleted
//    on the worker (queued from any thread) and at worker shutdown.
//
// Descriptor ownership: an import takes the ExportedMemory's fd only when GL
// accepted it (fd.release() after glImportMemoryFdEXT raised no error); on any
// failure the fd stays with the ExportedMemory, which closes it.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string_view>

#include <handoff/gl_handles.hpp>
#include <handoff/frame.hpp>
#include <handoff/gl_context.hpp>
#include <handoff/gl_worker.hpp>
#include <handoff/vk_context.hpp>
#include <handoff/vk_memory.hpp>
#include <handoff/vk_producer.hpp>

namespace handoff {

enum class GlVkSync : std::uint8_t {
  ExternalSemaphore,  // VkSemaphore exported as OPAQUE_FD, waited on by glWaitSemaphoreEXT
  CpuFence,           // vkWaitForFences before GL reads; glFinish before Vulkan reads
};
std::string_view to_string(GlVkSync);

// The sync a GL context and Vulkan device will use together.
GlVkSync gl_vk_sync(const GlInfo& gl, const VkDeviceInfo& vk) noexcept;

// Throws handoff::Error when GL lacks GL_EXT_memory_object_fd, or when the GL
// context's GL_DEVICE_UUID_EXT differs from the Vulkan device's (interop across
// GPUs is refused, naming both UUIDs).
void check_gl_vk_device(const GlInfo& gl, const VkDeviceInfo& vk);

// --- current-context objects -------------------------------------------------
// Ownership: each owns its GL object(s); a buffer or texture also owns the GL
// memory object it is made from. Thread safety: construct, use and destroy on
// a thread where a context of the share group is current.

// A GL memory object holding an imported allocation (glImportMemoryFdEXT).
// Consumes `memory.fd` on success only.
class GlVkMemory {
 public:
  explicit GlVkMemory(ExportedMemory& memory);
  GlVkMemory(const GlVkMemory&) = delete;
  GlVkMemory& operator=(const GlVkMemory&) = delete;
  unsigned name() const noexcept { return memory_.get(); }

 private:
  UniqueGlMemoryObject memory_;
};

// A GL buffer whose storage is a VkExportableBuffer's memory (glNamedBufferStorageMemEXT).
class GlVkBuffer {
 public:
  explicit GlVkBuffer(const VkExportableBuffer& buffer);
  // From any exported descriptor (another process's, say): `size` bytes at
  // memory.offset. Takes memory.fd when GL imported it (see above).
  GlVkBuffer(ExportedMemory& memory, std::size_t size);
  GlVkBuffer(const GlVkBuffer&) = delete;
  GlVkBuffer& operator=(const GlVkBuffer&) = delete;
  unsigned name() const noexcept { return buffer_.get(); }
  std::size_t size() const noexcept { return size_; }

 private:
  GlVkMemory memory_;  // member order is destruction order: the buffer goes first
  UniqueGlBuffer buffer_;
  std::size_t size_ = 0;
};

// A GL_TEXTURE_2D whose storage is a VkExportableImage's memory
// (glTextureStorageMem2DEXT, optimal tiling; R8/RG8/RGBA8/R16/RG16 map to the
// same GL sized formats).
class GlVkTexture {
 public:
  explicit GlVkTexture(const VkExportableImage& image);
  // From any exported descriptor of an optimal-tiling 2D image of that format and size.
  GlVkTexture(ExportedMemory& memory, std::uint32_t width, std::uint32_t height, VkFormat format);
  GlVkTexture(const GlVkTexture&) = delete;
  GlVkTexture& operator=(const GlVkTexture&) = delete;
  unsigned name() const noexcept { return texture_.get(); }
  std::uint32_t width() const noexcept { return width_; }
  std::uint32_t height() const noexcept { return height_; }

 private:
  GlVkMemory memory_;  // member order is destruction order: the texture goes first
  UniqueGlTexture texture_;
  std::uint32_t width_ = 0, height_ = 0;
};

// A Vulkan semaphore imported into GL (GL_EXT_semaphore_fd), for the
// ExternalSemaphore sync. wait() makes GL's queue wait for the Vulkan signal
// before it uses `textures` / `buffers` (images in VK_IMAGE_LAYOUT_GENERAL).
// Error where GL lacks GL_EXT_semaphore_fd.
class GlVkSemaphore {
 public:
  explicit GlVkSemaphore(const VkExportableSemaphore& semaphore);
  GlVkSemaphore(const GlVkSemaphore&) = delete;
  GlVkSemaphore& operator=(const GlVkSemaphore&) = delete;
  void wait(std::initializer_list<unsigned> textures, std::initializer_list<unsigned> buffers);
  void signal(std::initializer_list<unsigned> textures, std::initializer_list<unsigned> buffers);
  unsigned name() const noexcept { return semaphore_.get(); }

 private:
  UniqueGlSemaphore semaphore_;
};

// Blocks until every GL command issued so far on the current context has
// completed (a fence and a client wait), for at most handoff::wait_limit(),
// then throws WaitTimeout: the GL -> Vulkan half of CpuFence.
// Thread safety: a thread with the GL context current.
void gl_finish_for_vulkan();

// What `handoff-view --source vulkan` uses: a Vulkan context on the same GPU as
// the current GL context, a VkFrameProducer writing the scene into two plane
// images, and those images imported as GL textures (no copy).
//   GlVkSource src(PixelFormat::NV12, 1920, 1080);   // GL context current
//   src.produce(n);                                  // then sample the textures
//   glBindTextureUnit(0, src.luma_texture()); glBindTextureUnit(1, src.chroma_texture());
// The textures are R8/RG8 (NV12) or R16/RG16 (P010, codes in the top 10 bits),
// sampled as normalised floats like uploaded plane textures.
// Ownership: owns its Vulkan context, producer and GL textures.
// Thread safety: construct, use and destroy on the thread with the GL context
// current.
class GlVkSource {
 public:
  GlVkSource(PixelFormat format, std::uint32_t width, std::uint32_t height, Colorimetry colorimetry = {},
             VkContextOptions vk_options = {});
  ~GlVkSource();
  GlVkSource(const GlVkSource&) = delete;
  GlVkSource& operator=(const GlVkSource&) = delete;

  // Vulkan writes frame `index`; when this returns, GL commands issued after it
  // see the finished frame (CpuFence: Vulkan's fence was waited for;
  // ExternalSemaphore: GL's queue waits on the semaphore). Call only after GL
  // finished reading the previous frame, or call gl_finish_for_vulkan() first
  // (the viewer's fence after drawing does this).
  void produce(std::int64_t index);
  unsigned luma_texture() const noexcept;
  unsigned chroma_texture() const noexcept;
  // The last frame: its format, size, colorimetry and index (MemoryKind::Vulkan).
  Frame frame() const;
  GlVkSync sync() const noexcept { return sync_; }
  VkContext& vulkan() noexcept { return *vk_; }

 private:
  // Member order is destruction order: GL objects (which read the Vulkan
  // allocations) first, then the producer, then the Vulkan context.
  std::unique_ptr<VkContext> vk_;
  std::unique_ptr<VkFrameProducer> producer_;
  std::unique_ptr<VkExportableSemaphore> semaphore_;
  std::unique_ptr<GlVkTexture> luma_, chroma_;
  std::unique_ptr<GlVkSemaphore> gl_semaphore_;
  GlVkSync sync_ = GlVkSync::CpuFence;
};

// --- worker objects --------------------------------------------------------------

namespace detail {
struct GlVkFrameState;
}

// A Vulkan frame (plane images or one buffer) imported into a GlWorker's
// context. The GL names are valid in the worker's share group.
// Ownership: copies share the import; GL objects are deleted on the worker when
// the last copy (and every Frame holding keep_alive()) is gone, or at worker
// shutdown. The Vulkan objects must outlive it (their memory is what GL uses;
// GL keeps the allocation alive through its own reference, but the contents
// are only meaningful while Vulkan writes them).
// Thread safety: any thread.
class GlVkFrame {
 public:
  GlVkFrame() = default;
  GlVkFrame(GlWorker& worker, const VkFrameImages& images);
  GlVkFrame(GlWorker& worker, const VkFrameBuffer& buffer);

  unsigned luma_texture() const noexcept;   // images form; else 0
  unsigned chroma_texture() const noexcept;
  unsigned buffer() const noexcept;          // buffer form; else 0
  // Buffer form: a MemoryKind::GlBuffer frame (planes at offsets), owner = this import.
  Frame frame() const;
  std::shared_ptr<const void> keep_alive() const noexcept;
  explicit operator bool() const noexcept { return state_ != nullptr; }
  void reset() noexcept { state_.reset(); }

 private:
  std::shared_ptr<detail::GlVkFrameState> state_;
};

}  // namespace handoff
