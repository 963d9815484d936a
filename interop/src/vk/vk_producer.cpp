#include <handoff/shaders.hpp>
#include <handoff/vk_producer.hpp>

#include <handoff/frame_validate.hpp>
#include <handoff/log.hpp>

#include <array>
#include <memory>
#include <string>

#include <handoff/detail/vk_util.hpp>
#include <handoff/vk_check.hpp>

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
  VkSemaphore semaphore = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateSemaphore(ctx.device(), &ci, nullptr, &semaphore));
  semaphore_ = UniqueVkSemaphore(semaphore, {ctx.device()});
}

UniqueFd VkExportableSemaphore::export_fd() const {
  auto gi = vk::make<VkSemaphoreGetFdInfoKHR>(VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR);
  gi.semaphore = semaphore_.get();
  gi.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  int fd = -1;
  HANDOFF_VK_CHECK(ctx_->get_semaphore_fd(ctx_->device(), &gi, &fd), "vkGetSemaphoreFdKHR, OPAQUE_FD");
  return UniqueFd(fd);
}

// --- VkFrameProducer -------------------------------------------------------------

// Member order is destruction order: the descriptor set goes with its pool, the
// command buffer with its.
struct VkFrameProducer::Gpu {
  std::unique_ptr<VkFrameBuffer> buffer;  // the target: one of the two
  std::unique_ptr<VkFrameImages> images;
  UniqueVkDescriptorSetLayout set_layout;
  UniqueVkPipelineLayout pipeline_layout;
  UniqueVkShaderModule shader;
  UniqueVkPipeline pipeline;
  UniqueVkDescriptorPool descriptor_pool;
  VkDescriptorSet set = VK_NULL_HANDLE;  // belongs to descriptor_pool
  UniqueVkCommandPool command_pool;
  VkCommandBuffer cb = VK_NULL_HANDLE;  // belongs to command_pool
  UniqueVkFence fence;
};

namespace {

struct PushConstants {
  std::uint32_t width, height, pitch, chroma_offset, frame, p010, full_range;
  float kr, kb;
};

using Target = VkFrameProducer::Target;

// The set layout, pipeline layout, shader and compute pipeline of `target`.
template <typename Gpu>
void create_pipeline(VkDevice dev, Target target, Gpu& g) {
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
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateDescriptorSetLayout(dev, &sli, nullptr, &set_layout));
  g.set_layout = UniqueVkDescriptorSetLayout(set_layout, {dev});

  VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants)};
  auto pli = vk::make<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &set_layout;
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &pcr;
  VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreatePipelineLayout(dev, &pli, nullptr, &pipeline_layout));
  g.pipeline_layout = UniqueVkPipelineLayout(pipeline_layout, {dev});

  auto code = shaders::spirv(target == Target::Buffer ? "scene_buffer" : "scene_images");
  auto smi = vk::make<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  smi.codeSize = code.size() * 4;
  smi.pCode = code.data();
  VkShaderModule shader = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateShaderModule(dev, &smi, nullptr, &shader));
  g.shader = UniqueVkShaderModule(shader, {dev});

  auto cpi = vk::make<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  cpi.stage = vk::make<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
  cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpi.stage.module = shader;
  cpi.stage.pName = "main";
  cpi.layout = pipeline_layout;
  VkPipeline pipeline = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpi, nullptr, &pipeline));
  g.pipeline = UniqueVkPipeline(pipeline, {dev});
}

// The descriptor pool and the one set binding the target.
template <typename Gpu>
void create_descriptors(VkDevice dev, Target target, Gpu& g) {
  const std::uint32_t nb = target == Target::Buffer ? 1 : 2;
  VkDescriptorPoolSize ps{target == Target::Buffer ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                                   : VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
                          nb};
  auto dpi = vk::make<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
  dpi.maxSets = 1;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &ps;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateDescriptorPool(dev, &dpi, nullptr, &pool));
  g.descriptor_pool = UniqueVkDescriptorPool(pool, {dev});
  auto dsa = vk::make<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
  dsa.descriptorPool = pool;
  dsa.descriptorSetCount = 1;
  VkDescriptorSetLayout layout = g.set_layout.get();
  dsa.pSetLayouts = &layout;
  HANDOFF_VK_CHECK(vkAllocateDescriptorSets(dev, &dsa, &g.set));

  std::array<VkWriteDescriptorSet, 2> writes{};
  VkDescriptorBufferInfo bi{};
  std::array<VkDescriptorImageInfo, 2> ii{};
  if (target == Target::Buffer) {
    bi = {g.buffer->buffer().buffer(), 0, VK_WHOLE_SIZE};
    writes[0] = vk::make<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
    writes[0].dstSet = g.set;
    writes[0].dstBinding = 0;
    writes[0].descriptorCount = 1;
    writes[0].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[0].pBufferInfo = &bi;
  } else {
    ii[0] = {VK_NULL_HANDLE, g.images->luma().view(), VK_IMAGE_LAYOUT_GENERAL};
    ii[1] = {VK_NULL_HANDLE, g.images->chroma().view(), VK_IMAGE_LAYOUT_GENERAL};
    for (std::uint32_t i = 0; i < 2; ++i) {
      writes[i] = vk::make<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
      writes[i].dstSet = g.set;
      writes[i].dstBinding = 1 + i;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
      writes[i].pImageInfo = &ii[i];
    }
  }
  vkUpdateDescriptorSets(dev, nb, writes.data(), 0, nullptr);
}

// The command pool, the one command buffer re-recorded per frame, and its fence.
template <typename Gpu>
void create_commands(VkDevice dev, std::uint32_t queue_family, Gpu& g) {
  auto cpci = vk::make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  cpci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cpci.queueFamilyIndex = queue_family;
  VkCommandPool pool = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateCommandPool(dev, &cpci, nullptr, &pool));
  g.command_pool = UniqueVkCommandPool(pool, {dev});
  auto cbi = vk::make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  cbi.commandPool = pool;
  cbi.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbi.commandBufferCount = 1;
  HANDOFF_VK_CHECK(vkAllocateCommandBuffers(dev, &cbi, &g.cb));
  auto fci = vk::make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  VkFence fence = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateFence(dev, &fci, nullptr, &fence));
  g.fence = UniqueVkFence(fence, {dev});
}

}  // namespace

VkFrameProducer::VkFrameProducer(VkContext& ctx, PixelFormat format, std::uint32_t width,
                                 std::uint32_t height, Target target, Colorimetry colorimetry,
                                 VkHandleType handle_type)
    : ctx_(&ctx),
      format_(format),
      width_(width),
      height_(height),
      target_(target),
      colorimetry_(colorimetry),
      gpu_(std::make_unique<Gpu>()) {
  require_format(format, {PixelFormat::NV12, PixelFormat::P010}, "the Vulkan frame producer");
  if (target == Target::Images && !ctx.info().storage_image_r8_rg8)
    throw Error(Api::Vulkan, "VkFrameProducer", VK_ERROR_FORMAT_NOT_SUPPORTED, "VK_ERROR_FORMAT_NOT_SUPPORTED",
                "device " + ctx.info().name +
                    " cannot write R8/RG8/R16/RG16 storage images; use Target::Buffer",
                HANDOFF_WHERE);
  // Each step leaves what it made in gpu_: a later step that throws destroys it again.
  if (target == Target::Buffer)
    gpu_->buffer = std::make_unique<VkFrameBuffer>(ctx, format, width, height, handle_type);
  else
    gpu_->images = std::make_unique<VkFrameImages>(ctx, format, width, height, handle_type);
  create_pipeline(ctx.device(), target, *gpu_);
  create_descriptors(ctx.device(), target, *gpu_);
  create_commands(ctx.device(), ctx.queue_family(), *gpu_);
}

VkFrameProducer::~VkFrameProducer() {
  if (!in_flight_) return;
  try {
    wait();
    return;
  } catch (const std::exception& e) {
    log(LogLevel::Error, std::string("VkFrameProducer: ") + e.what() +
                             "; its Vulkan objects are freed once the GPU is done with them");
  }
  ctx_->defer_destruction(std::shared_ptr<Gpu>(std::move(gpu_)));
}

VkFrameBuffer* VkFrameProducer::buffer() noexcept { return gpu_->buffer.get(); }
VkFrameImages* VkFrameProducer::images() noexcept { return gpu_->images.get(); }

void VkFrameProducer::submit(std::int64_t index, VkSemaphore signal) {
  if (in_flight_) wait();
  Gpu& g = *gpu_;
  VkCommandBuffer cb = g.cb;
  VkFence fence = g.fence.get();
  HANDOFF_VK_CHECK(vkResetFences(ctx_->device(), 1, &fence));
  HANDOFF_VK_CHECK(vkResetCommandBuffer(cb, 0));
  auto begin = vk::make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  HANDOFF_VK_CHECK(vkBeginCommandBuffer(cb, &begin));

  // Earlier reads and writes of the target (transfers, a previous frame) come first.
  auto before = vk::make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  before.srcAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  before.dstAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                       &before, 0, nullptr, 0, nullptr);

  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, g.pipeline.get());
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, g.pipeline_layout.get(), 0, 1, &g.set, 0, nullptr);
  auto k = luma_coefficients(colorimetry_.matrix);
  PushConstants pc{width_,
                   height_,
                   g.buffer ? std::uint32_t(g.buffer->layout().planes[0].pitch) : 0u,
                   g.buffer ? std::uint32_t(g.buffer->layout().planes[1].offset) : 0u,
                   std::uint32_t(std::uint64_t(index)),
                   format_ == PixelFormat::P010 ? 1u : 0u,
                   colorimetry_.range == ColorRange::Full ? 1u : 0u,
                   k.kr,
                   k.kb};
  vkCmdPushConstants(cb, g.pipeline_layout.get(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
  if (g.buffer) {
    std::uint32_t words = std::uint32_t(g.buffer->layout().planes[0].pitch / 4);
    std::uint32_t rows = height_ + chroma_height(height_);
    vkCmdDispatch(cb, (words + 63) / 64, rows, 1);
  } else {
    vkCmdDispatch(cb, (width_ + 7) / 8, (height_ + 7) / 8, 1);
  }
  // Shader writes are made available to everything after, host reads included.
  auto after = vk::make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  after.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  after.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0,
                       nullptr, 0, nullptr);
  HANDOFF_VK_CHECK(vkEndCommandBuffer(cb));

  auto si = vk::make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  if (signal) {
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &signal;
  }
  ctx_->queue_submit(si, fence);
  in_flight_ = true;
  last_index_ = index;
}

void VkFrameProducer::wait() {
  if (!in_flight_) return;
  ctx_->wait_fence(gpu_->fence.get(), "Vulkan fence of VkFrameProducer");
  in_flight_ = false;
}

void VkFrameProducer::produce(std::int64_t index) {
  submit(index);
  wait();
}

Frame VkFrameProducer::frame() const {
  Frame f;
  if (gpu_->buffer) {
    f = gpu_->buffer->frame();
  } else {
    f = FrameLayout::packed(format_, width_, height_).describe(MemoryKind::Vulkan);  // one image per plane
  }
  f.colorimetry = colorimetry_;
  f.index = last_index_;
  return f;
}

}  // namespace handoff
