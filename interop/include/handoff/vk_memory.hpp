#pragma once
// Vulkan memory allocated exportable (OPAQUE_FD, or DMA_BUF where the driver
// offers it) and the descriptor exported from it.
//
// Ownership rule for an exported descriptor (ExportedMemory::fd): the fd is
// the caller's until an importer succeeds. An importer (GL glImportMemoryFdEXT,
// CUDA cuImportExternalMemory) takes it on success only; on failure it is
// still the caller's and ExportedMemory closes it. Every export makes a new
// descriptor referencing the same allocation.
//
// Core: VkExportableBuffer, VkExportableImage, ExportedMemory.
// Frames: vk_frame_layout, VkFrameBuffer (both planes in one buffer),
//         VkFrameImages (luma R8/R16 + chroma RG8/RG16 images).
#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <handoff/vk_handles.hpp>
#include <handoff/frame.hpp>
#include <handoff/unique_handle.hpp>
#include <handoff/vk_context.hpp>

namespace handoff {

enum class VkHandleType : std::uint8_t { OpaqueFd, DmaBuf };
std::string_view to_string(VkHandleType);
VkExternalMemoryHandleTypeFlagBits to_vk(VkHandleType) noexcept;

// Bytes every exportable allocation carries past the object it backs: llvmpipe
// refuses a GL import unless the allocation is larger than the GL object.
inline constexpr VkDeviceSize kExportPadding = 256;

// An exported descriptor and what an importer needs to know about it.
struct ExportedMemory {
  UniqueFd fd;                          // owned until an importer succeeds
  VkHandleType type = VkHandleType::OpaqueFd;
  VkDeviceSize allocation_size = 0;     // the size to pass to the importer
  VkDeviceSize offset = 0;              // where the object starts in the allocation
  VkDeviceSize size = 0;                // the object's own size (bytes it uses)
  bool dedicated = false;               // a dedicated allocation (importers must say so)
};

// A VkBuffer bound to its own exportable allocation, usable as a storage
// buffer and for transfers.
// Ownership: owns the buffer and its memory; destroy before the VkContext.
// Thread safety: immutable after construction; export_memory() may be called
// from any thread; upload() / download() from one thread at a time.
class VkExportableBuffer {
 public:
  VkExportableBuffer(VkContext& ctx, VkDeviceSize size, VkHandleType type = VkHandleType::OpaqueFd);
  VkExportableBuffer(const VkExportableBuffer&) = delete;
  VkExportableBuffer& operator=(const VkExportableBuffer&) = delete;

  VkBuffer buffer() const noexcept { return buffer_.get(); }
  VkDeviceMemory memory() const noexcept { return memory_.get(); }
  VkDeviceSize size() const noexcept { return size_; }
  VkDeviceSize allocation_size() const noexcept { return allocation_size_; }
  VkHandleType handle_type() const noexcept { return type_; }
  VkContext& context() const noexcept { return *ctx_; }

  // A new descriptor for the allocation; the caller owns it (see the rule above).
  ExportedMemory export_memory() const;

  // Staged copies through host memory (a transfer on the context's queue,
  // waited for on the CPU). Offsets/sizes are checked against size().
  void upload(std::span<const std::byte> bytes, VkDeviceSize offset = 0);
  std::vector<std::byte> download(VkDeviceSize offset = 0, VkDeviceSize size = VK_WHOLE_SIZE) const;

 private:
  VkContext* ctx_;
  VkHandleType type_;
  VkDeviceSize size_;
  VkDeviceSize allocation_size_ = 0;
  bool dedicated_ = false;
  UniqueVkDeviceMemory memory_;  // member order is destruction order
  UniqueVkBuffer buffer_;
};

// A 2D image (optimal tiling, one mip, one layer) bound to its own exportable
// allocation; usable as a storage image and for transfers. Kept in
// VK_IMAGE_LAYOUT_GENERAL after construction.
// Formats: R8, RG8, RGBA8, R16, RG16 (UNORM). Sizes: 1..kMaxFrameDimension
// (UsageError beyond), and within the device's image limits (Error beyond).
// Ownership and thread safety: as VkExportableBuffer.
class VkExportableImage {
 public:
  VkExportableImage(VkContext& ctx, std::uint32_t width, std::uint32_t height, VkFormat format,
                    VkHandleType type = VkHandleType::OpaqueFd);
  VkExportableImage(const VkExportableImage&) = delete;
  VkExportableImage& operator=(const VkExportableImage&) = delete;

  VkImage image() const noexcept { return image_.get(); }
  VkImageView view() const noexcept { return view_.get(); }
  VkDeviceMemory memory() const noexcept { return memory_.get(); }
  VkFormat format() const noexcept { return format_; }
  std::uint32_t width() const noexcept { return width_; }
  std::uint32_t height() const noexcept { return height_; }
  std::size_t texel_size() const noexcept;
  VkDeviceSize allocation_size() const noexcept { return allocation_size_; }
  VkContext& context() const noexcept { return *ctx_; }

  ExportedMemory export_memory() const;

  // Tightly packed texels (width * texel_size per row), through a staging buffer.
  void upload(std::span<const std::byte> texels);
  std::vector<std::byte> download() const;

 private:
  void to_general_layout(VkContext& ctx);

  VkContext* ctx_;
  VkHandleType type_;
  std::uint32_t width_, height_;
  VkFormat format_;
  VkDeviceSize allocation_size_ = 0;
  VkDeviceSize required_size_ = 0;
  bool dedicated_ = false;
  UniqueVkDeviceMemory memory_;  // member order is destruction order
  UniqueVkImage image_;
  UniqueVkImageView view_;
};

// The layout of a VkFrameBuffer (frame.hpp's FrameLayout) for any format:
// each plane's rows after the previous plane's, every plane with the same
// pitch (a multiple of 256 bytes, so it is a whole number of samples and a
// whole number of 32-bit words); NV12 / P010 chroma at pitch * height;
// everything in buffer 0. Throws InvalidFrame (a UsageError)
// naming the dimension for a width or height of 0 or above kMaxFrameDimension.
FrameLayout vk_frame_layout(PixelFormat format, std::uint32_t width, std::uint32_t height);

// A frame of any format in one exportable buffer (every plane; the layout CUDA
// maps as one range, and live Vulkan slots share). Ownership and thread safety: as VkExportableBuffer.
class VkFrameBuffer {
 public:
  VkFrameBuffer(VkContext& ctx, PixelFormat format, std::uint32_t width, std::uint32_t height,
                VkHandleType type = VkHandleType::OpaqueFd);
  const FrameLayout& layout() const noexcept { return layout_; }
  VkExportableBuffer& buffer() noexcept { return buffer_; }
  const VkExportableBuffer& buffer() const noexcept { return buffer_; }
  // MemoryKind::Vulkan description (plane offsets inside the buffer).
  Frame frame() const;

 private:
  FrameLayout layout_;
  VkExportableBuffer buffer_;
};

// An NV12 / P010 frame as two images: luma R8 (NV12) / R16 (P010) of
// width x height, chroma RG8 / RG16 of ceil(width/2) x ceil(height/2). The
// form a renderer samples directly. Ownership and thread safety: as
// VkExportableImage.
class VkFrameImages {
 public:
  VkFrameImages(VkContext& ctx, PixelFormat format, std::uint32_t width, std::uint32_t height,
                VkHandleType type = VkHandleType::OpaqueFd);
  PixelFormat format() const noexcept { return format_; }
  std::uint32_t width() const noexcept { return luma_.width(); }
  std::uint32_t height() const noexcept { return luma_.height(); }
  VkExportableImage& luma() noexcept { return luma_; }
  VkExportableImage& chroma() noexcept { return chroma_; }
  const VkExportableImage& luma() const noexcept { return luma_; }
  const VkExportableImage& chroma() const noexcept { return chroma_; }

 private:
  PixelFormat format_;
  VkExportableImage luma_;
  VkExportableImage chroma_;
};

// Plane formats of an NV12 / P010 frame's images: {luma, chroma}. Throws
// InvalidFrame for other formats (frame images are NV12 / P010 only).
VkFormat luma_format(PixelFormat f);
VkFormat chroma_format(PixelFormat f);

}  // namespace handoff
