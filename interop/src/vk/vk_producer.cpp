#include <handoff/shaders.hpp>
#include <handoff/vk_producer.hpp>

#include <array>

#include "vk/vk_util.hpp"

namespace handoff {

LumaCoefficients luma_coefficients(ColorMatrix m) noexcept {
  switch (m) {
    case ColorMatrix::BT601: return {0.299f, 0.114f};
    case ColorMatrix::BT709: return {0.2126f, 0.0722f};
    case ColorMatrix::BT2020: return {0.2627f, 0.0593f};
  }
  return {0.2126f, 0.0722f};
}

// --- VkExportableSemaphore -----------------------------------------------------

VkExportableSemaphore::VkExportableSemaphore(VkContext& ctx) : ctx_(&ctx) {
  if (!ctx.info().opaque_fd_semaphore || !ctx.get_semaphore_fd)
    throw Error(Api::Vulkan, "vkCreateSemaphore", VK_ERROR_FEATURE_NOT_PRESENT, "VK_ERROR_FEATURE_NOT_PRESENT",
                "device " + ctx.info().name + " cannot export semaphores as OPAQUE_FD (use CPU fences)",
                HANDOFF_WHERE);
  auto es = vk::make<VkExportSemaphoreCreateInfo>(VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO);
  es.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  auto ci = vk::make<VkSemaphoreCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO);
  ci.pNext = &es;
  HANDOFF_VK_CHECK(vkCreateSemaphore(ctx.device(), &ci, nullptr, &semaphore_));
}

VkExportableSemaphore::~VkExportableSemaphore() { vkDestroySemaphore(ctx_->device(), semaphore_, nullptr); }

UniqueFd VkExportableSemaphore::export_fd() const {
  auto gi = vk::make<VkSemaphoreGetFdInfoKHR>(VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR);
  gi.semaphore = semaphore_;
  gi.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  int fd = -1;
  HANDOFF_VK_CHECK(ctx_->get_semaphore_fd(ctx_->device(), &gi, &fd));
  return UniqueFd(fd);
}

// --- VkFrameProducer -------------------------------------------------------------

namespace {
struct PushConstants {
  std::uint32_t width, height, pitch, chroma_offset, frame, p010, full_range;
  float kr, kb;
};
}  // namespace

VkFrameProducer::VkFrameProducer(VkContext& ctx, PixelFormat format, std::uint32_t width,
                                 std::uint32_t height, Target target, Colorimetry colorimetry,
                                 VkHandleType handle_type)
    : ctx_(&ctx), format_(format), width_(width), height_(height), target_(target), colorimetry_(colorimetry) {
  VkDevice dev = ctx.device();
  if (target == Target::Images && !ctx.info().storage_image_r8_rg8)
    throw Error(Api::Vulkan, "VkFrameProducer", VK_ERROR_FORMAT_NOT_SUPPORTED, "VK_ERROR_FORMAT_NOT_SUPPORTED",
                "device " + ctx.info().name +
                    " cannot write R8/RG8/R16/RG16 storage images; use Target::Buffer",
                HANDOFF_WHERE);
  try {
    if (target == Target::Buffer)
      buffer_.emplace(ctx, format, width, height, handle_type);
    else
      images_.emplace(ctx, format, width, height, handle_type);

    std::array<VkDescriptorSetLayoutBinding, 2> bindings{};
    std::uint32_t nb = 0;
    if (target == Target::Buffer) {
      bindings[nb++] = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    } else {
      bindings[nb++] = {1, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
      bindings[nb++] = {2, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    }
    auto sli = vk::make<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    sli.bindingCount = nb;
    sli.pBindings = bindings.data();
    HANDOFF_VK_CHECK(vkCreateDescriptorSetLayout(dev, &sli, nullptr, &set_layout_));

    VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants)};
    auto pli = vk::make<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &set_layout_;
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &pcr;
    HANDOFF_VK_CHECK(vkCreatePipelineLayout(dev, &pli, nullptr, &pipeline_layout_));

    auto code = shaders::spirv(target == Target::Buffer ? "scene_buffer" : "scene_images");
    auto smi = vk::make<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    smi.codeSize = code.size() * 4;
    smi.pCode = code.data();
    HANDOFF_VK_CHECK(vkCreateShaderModule(dev, &smi, nullptr, &shader_));

    auto cpi = vk::make<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    cpi.stage = vk::make<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
    cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpi.stage.module = shader_;
    cpi.stage.pName = "main";
    cpi.layout = pipeline_layout_;
    HANDOFF_VK_CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpi, nullptr, &pipeline_));

    VkDescriptorPoolSize ps{target == Target::Buffer ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                                     : VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
                            nb};
    auto dpi = vk::make<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
    dpi.maxSets = 1;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &ps;
    HANDOFF_VK_CHECK(vkCreateDescriptorPool(dev, &dpi, nullptr, &descriptor_pool_));
    auto dsa = vk::make<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
    dsa.descriptorPool = descriptor_pool_;
    dsa.descriptorSetCount = 1;
    dsa.pSetLayouts = &set_layout_;
    HANDOFF_VK_CHECK(vkAllocateDescriptorSets(dev, &dsa, &set_));

    std::array<VkWriteDescriptorSet, 2> writes{};
    VkDescriptorBufferInfo bi{};
    std::array<VkDescriptorImageInfo, 2> ii{};
    if (target == Target::Buffer) {
      bi = {buffer_->buffer().buffer(), 0, VK_WHOLE_SIZE};
      writes[0] = vk::make<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
      writes[0].dstSet = set_;
      writes[0].dstBinding = 0;
      writes[0].descriptorCount = 1;
      writes[0].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[0].pBufferInfo = &bi;
    } else {
      ii[0] = {VK_NULL_HANDLE, images_->luma().view(), VK_IMAGE_LAYOUT_GENERAL};
      ii[1] = {VK_NULL_HANDLE, images_->chroma().view(), VK_IMAGE_LAYOUT_GENERAL};
      for (std::uint32_t i = 0; i < 2; ++i) {
        writes[i] = vk::make<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
        writes[i].dstSet = set_;
        writes[i].dstBinding = 1 + i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
        writes[i].pImageInfo = &ii[i];
      }
    }
    vkUpdateDescriptorSets(dev, nb, writes.data(), 0, nullptr);

    auto cpci = vk::make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    cpci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpci.queueFamilyIndex = ctx.queue_family();
    HANDOFF_VK_CHECK(vkCreateCommandPool(dev, &cpci, nullptr, &command_pool_));
    auto cbi = vk::make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    cbi.commandPool = command_pool_;
    cbi.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cbi.commandBufferCount = 1;
    HANDOFF_VK_CHECK(vkAllocateCommandBuffers(dev, &cbi, &cb_));
    auto fci = vk::make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    HANDOFF_VK_CHECK(vkCreateFence(dev, &fci, nullptr, &fence_));
  } catch (...) {
    release();
    throw;
  }
}

VkFrameProducer::~VkFrameProducer() {
  try {
    if (in_flight_) wait();
  } catch (const std::exception&) {
    // The device is lost or similar; release what we own regardless.
  }
  release();
}

void VkFrameProducer::release() noexcept {
  VkDevice dev = ctx_->device();
  if (in_flight_) vkQueueWaitIdle(ctx_->queue());  // last resort; normally waited above
  if (fence_) vkDestroyFence(dev, fence_, nullptr);
  if (command_pool_) vkDestroyCommandPool(dev, command_pool_, nullptr);  // frees cb_
  if (descriptor_pool_) vkDestroyDescriptorPool(dev, descriptor_pool_, nullptr);  // frees set_
  if (pipeline_) vkDestroyPipeline(dev, pipeline_, nullptr);
  if (shader_) vkDestroyShaderModule(dev, shader_, nullptr);
  if (pipeline_layout_) vkDestroyPipelineLayout(dev, pipeline_layout_, nullptr);
  if (set_layout_) vkDestroyDescriptorSetLayout(dev, set_layout_, nullptr);
  fence_ = VK_NULL_HANDLE;
  command_pool_ = VK_NULL_HANDLE;
  descriptor_pool_ = VK_NULL_HANDLE;
  pipeline_ = VK_NULL_HANDLE;
  shader_ = VK_NULL_HANDLE;
  pipeline_layout_ = VK_NULL_HANDLE;
  set_layout_ = VK_NULL_HANDLE;
  buffer_.reset();
  images_.reset();
}

void VkFrameProducer::submit(std::int64_t index, VkSemaphore signal) {
  if (in_flight_) wait();
  VkDevice dev = ctx_->device();
  HANDOFF_VK_CHECK(vkResetFences(dev, 1, &fence_));
  HANDOFF_VK_CHECK(vkResetCommandBuffer(cb_, 0));
  auto begin = vk::make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  HANDOFF_VK_CHECK(vkBeginCommandBuffer(cb_, &begin));

  // Earlier reads and writes of the target (transfers, a previous frame) come first.
  auto before = vk::make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  before.srcAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  before.dstAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                       &before, 0, nullptr, 0, nullptr);

  vkCmdBindPipeline(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
  vkCmdBindDescriptorSets(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_layout_, 0, 1, &set_, 0, nullptr);
  auto k = luma_coefficients(colorimetry_.matrix);
  PushConstants pc{width_,
                   height_,
                   buffer_ ? std::uint32_t(buffer_->layout().pitch) : 0u,
                   buffer_ ? std::uint32_t(buffer_->layout().chroma_offset) : 0u,
                   std::uint32_t(std::uint64_t(index)),
                   format_ == PixelFormat::P010 ? 1u : 0u,
                   colorimetry_.range == ColorRange::Full ? 1u : 0u,
                   k.kr,
                   k.kb};
  vkCmdPushConstants(cb_, pipeline_layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
  if (buffer_) {
    std::uint32_t words = std::uint32_t(buffer_->layout().pitch / 4);
    std::uint32_t rows = height_ + chroma_height(height_);
    vkCmdDispatch(cb_, (words + 63) / 64, rows, 1);
  } else {
    vkCmdDispatch(cb_, (width_ + 7) / 8, (height_ + 7) / 8, 1);
  }
  // Shader writes are made available to everything after, host reads included.
  auto after = vk::make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  after.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  after.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0,
                       nullptr, 0, nullptr);
  HANDOFF_VK_CHECK(vkEndCommandBuffer(cb_));

  auto si = vk::make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb_;
  if (signal) {
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &signal;
  }
  ctx_->queue_submit(si, fence_);
  in_flight_ = true;
  last_index_ = index;
}

void VkFrameProducer::wait() {
  if (!in_flight_) return;
  ctx_->wait_fence(fence_);
  in_flight_ = false;
}

void VkFrameProducer::produce(std::int64_t index) {
  submit(index);
  wait();
}

Frame VkFrameProducer::frame() const {
  Frame f;
  if (buffer_) {
    f = buffer_->frame();
  } else {
    f = VkFrameLayout::make(format_, width_, height_).describe(MemoryKind::Vulkan);
    std::size_t bps = bytes_per_sample(format_);
    f.planes[0].offset = 0;
    f.planes[0].pitch = std::size_t(width_) * bps;
    f.planes[1].offset = 0;
    f.planes[1].pitch = std::size_t(chroma_width(width_)) * 2 * bps;
  }
  f.colorimetry = colorimetry_;
  f.index = last_index_;
  return f;
}

}  // namespace handoff
