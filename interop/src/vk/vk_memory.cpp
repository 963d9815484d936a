#include <handoff/frame_validate.hpp>
#include <handoff/vk_memory.hpp>

#include <handoff/wait.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>

#include <handoff/detail/vk_util.hpp>
#include <handoff/vk_check.hpp>

namespace handoff {

std::string_view to_string(VkHandleType t) {
  return t == VkHandleType::OpaqueFd ? "OPAQUE_FD" : "DMA_BUF";
}

VkExternalMemoryHandleTypeFlagBits to_vk(VkHandleType t) noexcept {
  return t == VkHandleType::OpaqueFd ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT
                                     : VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT;
}

VkFormat luma_format(PixelFormat f) {
  require_format(f, {PixelFormat::NV12, PixelFormat::P010}, "Vulkan frame images (VkFrameImages)");
  return f == PixelFormat::NV12 ? VK_FORMAT_R8_UNORM : VK_FORMAT_R16_UNORM;
}
VkFormat chroma_format(PixelFormat f) {
  require_format(f, {PixelFormat::NV12, PixelFormat::P010}, "Vulkan frame images (VkFrameImages)");
  return f == PixelFormat::NV12 ? VK_FORMAT_R8G8_UNORM : VK_FORMAT_R16G16_UNORM;
}

namespace {

void require_handle_type(VkContext& ctx, VkHandleType type, const char* what) {
  bool ok = type == VkHandleType::OpaqueFd ? ctx.info().opaque_fd_memory : ctx.info().dma_buf_memory;
  if (!ok)
    throw Error(Api::Vulkan, what, VK_ERROR_FEATURE_NOT_PRESENT, "VK_ERROR_FEATURE_NOT_PRESENT",
                "device " + ctx.info().name + " cannot export memory as " + std::string(to_string(type)),
                HANDOFF_WHERE);
}

// Picks a device-local type when there is one among `bits`, else any allowed type.
std::uint32_t pick_type(VkContext& ctx, std::uint32_t bits) {
  try {
    return ctx.memory_type(bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  } catch (const Error&) {
    return ctx.memory_type(bits, 0);
  }
}

UniqueVkDeviceMemory allocate_exportable(VkContext& ctx, const VkMemoryRequirements& req, bool dedicated,
                                                 VkBuffer buffer, VkImage image, VkHandleType type,
                                                 VkDeviceSize& allocation_size) {
  auto export_info = vk::make<VkExportMemoryAllocateInfo>(VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO);
  export_info.handleTypes = to_vk(type);
  auto dedicated_info =
      vk::make<VkMemoryDedicatedAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO);
  dedicated_info.buffer = buffer;
  dedicated_info.image = image;
  if (dedicated) export_info.pNext = &dedicated_info;
  auto ai = vk::make<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  ai.pNext = &export_info;
  // A dedicated allocation must be exactly the object's size; any other is
  // padded past it for llvmpipe's GL import (see kExportPadding).
  ai.allocationSize = dedicated ? req.size : vk::align_up(req.size + kExportPadding, req.alignment);
  ai.memoryTypeIndex = pick_type(ctx, req.memoryTypeBits);
  VkDeviceMemory memory = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkAllocateMemory(ctx.device(), &ai, nullptr, &memory),
                   std::to_string(ai.allocationSize) + " exportable bytes");
  allocation_size = ai.allocationSize;
  return UniqueVkDeviceMemory(memory, {ctx.device()});
}

ExportedMemory export_fd(VkContext& ctx, VkDeviceMemory memory, VkHandleType type, VkDeviceSize allocation,
                         VkDeviceSize size, bool dedicated) {
  auto gi = vk::make<VkMemoryGetFdInfoKHR>(VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR);
  gi.memory = memory;
  gi.handleType = to_vk(type);
  int fd = -1;
  HANDOFF_VK_CHECK(ctx.get_memory_fd(ctx.device(), &gi, &fd), "vkGetMemoryFdKHR, " + std::string(to_string(type)));
  ExportedMemory e;
  e.fd.reset(fd);
  e.type = type;
  e.allocation_size = allocation;
  e.offset = 0;
  e.size = size;
  e.dedicated = dedicated;
  return e;
}

// A host-visible, coherent transfer buffer, mapped for its whole life.
class Staging {
 public:
  Staging(VkContext& ctx, VkDeviceSize size) {
    const VkDevice dev = ctx.device();
    auto bi = vk::make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
    bi.size = std::max<VkDeviceSize>(size, 4);
    bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkBuffer buffer = VK_NULL_HANDLE;
    HANDOFF_VK_CHECK(vkCreateBuffer(dev, &bi, nullptr, &buffer), "staging buffer");
    buffer_ = UniqueVkBuffer(buffer, {dev});
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, buffer, &req);
    auto ai = vk::make<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = ctx.memory_type(
        req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    VkDeviceMemory memory = VK_NULL_HANDLE;
    HANDOFF_VK_CHECK(vkAllocateMemory(dev, &ai, nullptr, &memory), "staging memory");
    memory_ = UniqueVkDeviceMemory(memory, {dev});
    HANDOFF_VK_CHECK(vkBindBufferMemory(dev, buffer, memory, 0));
    HANDOFF_VK_CHECK(vkMapMemory(dev, memory, 0, VK_WHOLE_SIZE, 0, &data_));  // vkFreeMemory unmaps
  }
  VkBuffer buffer() const { return buffer_.get(); }
  std::byte* data() const { return static_cast<std::byte*>(data_); }

 private:
  UniqueVkDeviceMemory memory_;  // member order is destruction order
  UniqueVkBuffer buffer_;
  void* data_ = nullptr;
};

// Makes transfers and shader writes visible to everything after (the GPU side;
// a CPU-side fence still orders against GL/CUDA).
void full_barrier(VkCommandBuffer cb) {
  auto mb = vk::make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb,
                       0, nullptr, 0, nullptr);
}


// submit_and_wait for commands that use `staging`: when the wait times out,
// the context frees the staging buffer once the GPU is past the commands.
void submit_with_staging(VkContext& ctx, std::shared_ptr<Staging>& staging,
                         const std::function<void(VkCommandBuffer)>& record) {
  try {
    ctx.submit_and_wait(record);
  } catch (const WaitTimeout&) {
    ctx.defer_destruction(std::move(staging));
    throw;
  }
}

// Transfers and sampling, plus storage where the format supports it.
VkImageUsageFlags exportable_image_usage(VkPhysicalDevice pd, VkFormat format) {
  VkFormatProperties fp{};
  vkGetPhysicalDeviceFormatProperties(pd, format, &fp);
  VkImageUsageFlags usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                            VK_IMAGE_USAGE_SAMPLED_BIT;
  if (fp.optimalTilingFeatures & VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT) usage |= VK_IMAGE_USAGE_STORAGE_BIT;
  return usage;
}

// Throws Error when `format` images with `usage` cannot be exported as `type`,
// or not at width x height on this device. True when their memory must be a
// dedicated allocation.
bool check_image_export(VkContext& ctx, std::uint32_t width, std::uint32_t height, VkFormat format,
                        VkImageUsageFlags usage, VkHandleType type) {
  auto ext_fmt = vk::make<VkPhysicalDeviceExternalImageFormatInfo>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO);
  ext_fmt.handleType = to_vk(type);
  auto fi = vk::make<VkPhysicalDeviceImageFormatInfo2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2);
  fi.pNext = &ext_fmt;
  fi.format = format;
  fi.type = VK_IMAGE_TYPE_2D;
  fi.tiling = VK_IMAGE_TILING_OPTIMAL;
  fi.usage = usage;
  auto ext_props = vk::make<VkExternalImageFormatProperties>(VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES);
  auto props = vk::make<VkImageFormatProperties2>(VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2);
  props.pNext = &ext_props;
  VkResult r = vkGetPhysicalDeviceImageFormatProperties2(ctx.physical_device(), &fi, &props);
  const VkExternalMemoryFeatureFlags features = ext_props.externalMemoryProperties.externalMemoryFeatures;
  if (r != VK_SUCCESS || !(features & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT))
    throw Error(Api::Vulkan, "vkGetPhysicalDeviceImageFormatProperties2", r, std::string(vk_result_name(r)),
                "format " + std::to_string(int(format)) + " images cannot be exported as " +
                    std::string(to_string(type)),
                HANDOFF_WHERE);
  const VkExtent3D max = props.imageFormatProperties.maxExtent;
  if (width > max.width || height > max.height)
    throw Error(Api::Vulkan, "vkGetPhysicalDeviceImageFormatProperties2", 0, {},
                "a " + std::to_string(width) + "x" + std::to_string(height) + " image of format " +
                    std::to_string(int(format)) + " exceeds what device " + ctx.info().name + " makes (" +
                    std::to_string(max.width) + "x" + std::to_string(max.height) + ")",
                HANDOFF_WHERE);
  return features & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT;
}

UniqueVkImage create_exportable_image(VkDevice dev, std::uint32_t width, std::uint32_t height,
                                              VkFormat format, VkImageUsageFlags usage, VkHandleType type) {
  auto ext = vk::make<VkExternalMemoryImageCreateInfo>(VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO);
  ext.handleTypes = to_vk(type);
  auto ii = vk::make<VkImageCreateInfo>(VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO);
  ii.pNext = &ext;
  ii.imageType = VK_IMAGE_TYPE_2D;
  ii.format = format;
  ii.extent = {width, height, 1};
  ii.mipLevels = 1;
  ii.arrayLayers = 1;
  ii.samples = VK_SAMPLE_COUNT_1_BIT;
  ii.tiling = VK_IMAGE_TILING_OPTIMAL;
  ii.usage = usage;
  ii.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ii.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  VkImage image = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateImage(dev, &ii, nullptr, &image),
                   std::to_string(width) + "x" + std::to_string(height) + ", format " + std::to_string(int(format)));
  return UniqueVkImage(image, {dev});
}

std::size_t format_texel_size(VkFormat f) {
  switch (f) {
    case VK_FORMAT_R8_UNORM: return 1;
    case VK_FORMAT_R8G8_UNORM: return 2;
    case VK_FORMAT_R16_UNORM: return 2;
    case VK_FORMAT_R8G8B8A8_UNORM: return 4;
    case VK_FORMAT_R16G16_UNORM: return 4;
    default: return 0;
  }
}

}  // namespace

// --- VkExportableBuffer ------------------------------------------------------

VkExportableBuffer::VkExportableBuffer(VkContext& ctx, VkDeviceSize size, VkHandleType type)
    : ctx_(&ctx), type_(type), size_(size) {
  if (size == 0) throw UsageError("VkExportableBuffer: size is 0");
  require_handle_type(ctx, type, "VkExportableBuffer");
  auto ext = vk::make<VkExternalMemoryBufferCreateInfo>(VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO);
  ext.handleTypes = to_vk(type);
  auto bi = vk::make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  bi.pNext = &ext;
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
             VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateBuffer(ctx.device(), &bi, nullptr, &buffer), std::to_string(size) + " bytes");
  buffer_ = UniqueVkBuffer(buffer, {ctx.device()});
  auto ri = vk::make<VkBufferMemoryRequirementsInfo2>(VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2);
  ri.buffer = buffer;
  auto dr = vk::make<VkMemoryDedicatedRequirements>(VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS);
  auto r2 = vk::make<VkMemoryRequirements2>(VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2);
  r2.pNext = &dr;
  vkGetBufferMemoryRequirements2(ctx.device(), &ri, &r2);
  dedicated_ = dr.requiresDedicatedAllocation;
  memory_ = allocate_exportable(ctx, r2.memoryRequirements, dedicated_, buffer, VK_NULL_HANDLE, type,
                                allocation_size_);
  HANDOFF_VK_CHECK(vkBindBufferMemory(ctx.device(), buffer, memory_.get(), 0));
}

ExportedMemory VkExportableBuffer::export_memory() const {
  return export_fd(*ctx_, memory_.get(), type_, allocation_size_, size_, dedicated_);
}

void VkExportableBuffer::upload(std::span<const std::byte> bytes, VkDeviceSize offset) {
  if (offset > size_ || bytes.size() > size_ - offset)
    throw UsageError("VkExportableBuffer::upload: " + std::to_string(bytes.size()) + " bytes at offset " +
                     std::to_string(offset) + " exceed the buffer's " + std::to_string(size_));
  if (bytes.empty()) return;
  auto staging = std::make_shared<Staging>(*ctx_, bytes.size());
  std::memcpy(staging->data(), bytes.data(), bytes.size());
  submit_with_staging(*ctx_, staging, [&](VkCommandBuffer cb) {
    VkBufferCopy region{0, offset, bytes.size()};
    vkCmdCopyBuffer(cb, staging->buffer(), buffer_.get(), 1, &region);
    full_barrier(cb);
  });
}

std::vector<std::byte> VkExportableBuffer::download(VkDeviceSize offset, VkDeviceSize size) const {
  if (offset > size_) throw UsageError("VkExportableBuffer::download: offset past the end");
  if (size == VK_WHOLE_SIZE) size = size_ - offset;
  if (size > size_ - offset) throw UsageError("VkExportableBuffer::download: range past the end");
  std::vector<std::byte> out(size);
  if (size == 0) return out;
  auto staging = std::make_shared<Staging>(*ctx_, size);
  submit_with_staging(*ctx_, staging, [&](VkCommandBuffer cb) {
    full_barrier(cb);
    VkBufferCopy region{offset, 0, size};
    vkCmdCopyBuffer(cb, buffer_.get(), staging->buffer(), 1, &region);
    full_barrier(cb);
  });
  std::memcpy(out.data(), staging->data(), size);
  return out;
}

// --- VkExportableImage -------------------------------------------------------

std::size_t VkExportableImage::texel_size() const noexcept { return format_texel_size(format_); }

VkExportableImage::VkExportableImage(VkContext& ctx, std::uint32_t width, std::uint32_t height,
                                     VkFormat format, VkHandleType type)
    : ctx_(&ctx), type_(type), width_(width), height_(height), format_(format) {
  validate_dimensions(width, height);  // InvalidFrame, as for every frame
  if (format_texel_size(format) == 0)
    throw UsageError("VkExportableImage: format " + std::to_string(int(format)) +
                     " is not one of R8, RG8, RGBA8, R16, RG16 (UNORM)");
  require_handle_type(ctx, type, "VkExportableImage");
  const VkDevice dev = ctx.device();
  const VkImageUsageFlags usage = exportable_image_usage(ctx.physical_device(), format);
  const bool must_dedicate = check_image_export(ctx, width, height, format, usage, type);
  image_ = create_exportable_image(dev, width, height, format, usage, type);

  auto ri = vk::make<VkImageMemoryRequirementsInfo2>(VK_STRUCTURE_TYPE_IMAGE_MEMORY_REQUIREMENTS_INFO_2);
  ri.image = image_.get();
  auto dr = vk::make<VkMemoryDedicatedRequirements>(VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS);
  auto r2 = vk::make<VkMemoryRequirements2>(VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2);
  r2.pNext = &dr;
  vkGetImageMemoryRequirements2(dev, &ri, &r2);
  dedicated_ = dr.requiresDedicatedAllocation || must_dedicate;
  required_size_ = r2.memoryRequirements.size;
  memory_ = allocate_exportable(ctx, r2.memoryRequirements, dedicated_, VK_NULL_HANDLE, image_.get(), type,
                                allocation_size_);
  HANDOFF_VK_CHECK(vkBindImageMemory(dev, image_.get(), memory_.get(), 0));

  auto vi = vk::make<VkImageViewCreateInfo>(VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO);
  vi.image = image_.get();
  vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vi.format = format;
  vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  VkImageView view = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateImageView(dev, &vi, nullptr, &view));
  view_ = UniqueVkImageView(view, {dev});
  to_general_layout(ctx);
}

// One layout for the image's whole life: GENERAL serves storage writes,
// transfers and the GL import alike.
void VkExportableImage::to_general_layout(VkContext& ctx) {
  try {
    ctx.submit_and_wait([&](VkCommandBuffer cb) {
      auto b = vk::make<VkImageMemoryBarrier>(VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER);
      b.srcAccessMask = 0;
      b.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
      b.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
      b.newLayout = VK_IMAGE_LAYOUT_GENERAL;
      b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
      b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
      b.image = image_.get();
      b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0,
                           nullptr, 0, nullptr, 1, &b);
    });
  } catch (const WaitTimeout&) {
    // The transition still uses the image: it goes once the queue is past it.
    struct Parts {
      UniqueVkDeviceMemory memory;
      UniqueVkImage image;
      UniqueVkImageView view;
    };
    ctx.defer_destruction(std::make_shared<Parts>(Parts{std::move(memory_), std::move(image_), std::move(view_)}));
    throw;
  }
}

ExportedMemory VkExportableImage::export_memory() const {
  return export_fd(*ctx_, memory_.get(), type_, allocation_size_, required_size_, dedicated_);
}

void VkExportableImage::upload(std::span<const std::byte> texels) {
  std::size_t expect = std::size_t(width_) * height_ * texel_size();
  if (texels.size() != expect)
    throw UsageError("VkExportableImage::upload: " + std::to_string(texels.size()) + " bytes given, " +
                     std::to_string(width_) + "x" + std::to_string(height_) + " needs " + std::to_string(expect));
  auto staging = std::make_shared<Staging>(*ctx_, expect);
  std::memcpy(staging->data(), texels.data(), expect);
  submit_with_staging(*ctx_, staging, [&](VkCommandBuffer cb) {
    vk::transition_color_image(cb, image_.get(), VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {width_, height_, 1};
    vkCmdCopyBufferToImage(cb, staging->buffer(), image_.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
    vk::transition_color_image(cb, image_.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL);
  });
}

std::vector<std::byte> VkExportableImage::download() const {
  std::size_t n = std::size_t(width_) * height_ * texel_size();
  auto staging = std::make_shared<Staging>(*ctx_, n);
  submit_with_staging(*ctx_, staging, [&](VkCommandBuffer cb) {
    vk::transition_color_image(cb, image_.get(), VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {width_, height_, 1};
    vkCmdCopyImageToBuffer(cb, image_.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, staging->buffer(), 1, &region);
    vk::transition_color_image(cb, image_.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL);
    full_barrier(cb);
  });
  std::vector<std::byte> out(n);
  std::memcpy(out.data(), staging->data(), n);
  return out;
}

// --- frames ----------------------------------------------------------------------

FrameLayout vk_frame_layout(PixelFormat format, std::uint32_t width, std::uint32_t height) {
  return FrameLayout::contiguous(format, width, height, 256, /*shared_pitch=*/true);
}

Frame VkFrameBuffer::frame() const { return layout_.describe(MemoryKind::Vulkan); }

VkFrameBuffer::VkFrameBuffer(VkContext& ctx, PixelFormat format, std::uint32_t width, std::uint32_t height,
                             VkHandleType type)
    : layout_(vk_frame_layout(format, width, height)), buffer_(ctx, layout_.buffer_bytes(), type) {}

VkFrameImages::VkFrameImages(VkContext& ctx, PixelFormat format, std::uint32_t width, std::uint32_t height,
                             VkHandleType type)
    : format_(format),
      luma_(ctx, width, height, luma_format(format), type),
      chroma_(ctx, chroma_width(width), chroma_height(height), chroma_format(format), type) {}

}  // namespace handoff
