// Per-frame cost of handing an NV12 frame from Vulkan to GL, against copying
// the same frame through host memory, measured in the same run.
//
//   handoff: the frame's plane images are imported into GL once
//            (GL_EXT_memory_object_fd) and reused; each frame Vulkan submits
//            its end-of-frame barrier with a fence, the CPU waits for the fence
//            (the CpuFence sync; no external semaphores on lavapipe/llvmpipe),
//            and the GL worker binds the textures and flushes (one hop).
//   copy:    each frame Vulkan copies both plane images into a host-visible
//            staging buffer (fence-waited), and the GL worker uploads them from
//            that host memory into ordinary GL textures (glTextureSubImage2D).
// Frame production (the compute shader) is outside both: the frame is written once.
//
//   build/<dir>/bench/bench_vk_gl --benchmark_counters_tabular=true
// Counters: frame_us (mean per frame); the HostCopy rows add handoff_us and
// ratio = handoff / copy for the same size.
#include <benchmark/benchmark.h>
#include <glad/gl.h>

#include <handoff/gl_check.hpp>
#include <handoff/gl_worker.hpp>
#include <handoff/vk_gl.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <algorithm>
#include <memory>

#include "vk/vk_util.hpp"

namespace {

using namespace handoff;
using Clock = std::chrono::steady_clock;

// A one-time command buffer + fence reused every frame.
struct Submitter {
  VkContext& vk;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  explicit Submitter(VkContext& v) : vk(v) {
    auto pci = vk::make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = vk.queue_family();
    HANDOFF_VK_CHECK(vkCreateCommandPool(vk.device(), &pci, nullptr, &pool));
    auto ai = vk::make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    HANDOFF_VK_CHECK(vkAllocateCommandBuffers(vk.device(), &ai, &cb));
    auto fci = vk::make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    HANDOFF_VK_CHECK(vkCreateFence(vk.device(), &fci, nullptr, &fence));
  }
  ~Submitter() {
    vkDestroyFence(vk.device(), fence, nullptr);
    vkDestroyCommandPool(vk.device(), pool, nullptr);
  }
  template <typename Record>
  void run(Record record) {
    HANDOFF_VK_CHECK(vkResetFences(vk.device(), 1, &fence));
    HANDOFF_VK_CHECK(vkResetCommandBuffer(cb, 0));
    auto bi = vk::make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    HANDOFF_VK_CHECK(vkBeginCommandBuffer(cb, &bi));
    record(cb);
    HANDOFF_VK_CHECK(vkEndCommandBuffer(cb));
    auto si = vk::make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    vk.queue_submit(si, fence);
    HANDOFF_VK_CHECK(vkWaitForFences(vk.device(), 1, &fence, VK_TRUE, UINT64_MAX));
  }
};

void barrier(VkCommandBuffer cb) {
  auto mb = vk::make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                       nullptr);
}


// Host-visible staging buffer for the copy path.
struct Staging {
  VkContext& vk;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* data = nullptr;
  Staging(VkContext& v, VkDeviceSize size) : vk(v) {
    auto bi = vk::make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
    bi.size = size;
    bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    HANDOFF_VK_CHECK(vkCreateBuffer(vk.device(), &bi, nullptr, &buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(vk.device(), buffer, &req);
    auto ai = vk::make<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = vk.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                                VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    HANDOFF_VK_CHECK(vkAllocateMemory(vk.device(), &ai, nullptr, &memory));
    HANDOFF_VK_CHECK(vkBindBufferMemory(vk.device(), buffer, memory, 0));
    HANDOFF_VK_CHECK(vkMapMemory(vk.device(), memory, 0, VK_WHOLE_SIZE, 0, &data));
  }
  ~Staging() {
    vkFreeMemory(vk.device(), memory, nullptr);
    vkDestroyBuffer(vk.device(), buffer, nullptr);
  }
};

struct Setup {
  std::unique_ptr<GlWorker> gl;
  std::unique_ptr<VkContext> vk;
  std::unique_ptr<VkFrameProducer> producer;
  VkGlFrame imported;
  GLuint plain[2] = {0, 0};  // ordinary GL textures for the copy path
};

enum class Mode { Handoff, Copy, VkFenceOnly, GlHopOnly };

// Mean seconds per handoff frame, by frame width, for the copy run's ratio.
std::map<std::int64_t, double> g_handoff_s;

void run(benchmark::State& state, Mode mode) {
  const auto w = std::uint32_t(state.range(0)), h = std::uint32_t(state.range(1));
  Setup s;
  try {
    s.gl = std::make_unique<GlWorker>();
    VkContextOptions o;
    o.validation = false;
    o.device_uuid = s.gl->info().device_uuid;
    s.vk = std::make_unique<VkContext>(o);
    check_vk_gl_device(s.vk->info(), s.gl->info());
    s.producer = std::make_unique<VkFrameProducer>(*s.vk, PixelFormat::NV12, w, h, VkFrameProducer::Target::Images);
    s.producer->produce(1);
    s.imported = VkGlFrame(*s.gl, *s.producer->images());  // import once
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  VkFrameImages& img = *s.producer->images();
  const std::uint32_t cw = chroma_width(w), ch = chroma_height(h);
  const std::size_t luma_bytes = std::size_t(w) * h, chroma_bytes = std::size_t(cw) * ch * 2;
  s.gl->run([&] {
    glCreateTextures(GL_TEXTURE_2D, 2, s.plain);
    glTextureStorage2D(s.plain[0], 1, GL_R8, GLsizei(w), GLsizei(h));
    glTextureStorage2D(s.plain[1], 1, GL_RG8, GLsizei(cw), GLsizei(ch));
    HANDOFF_GL_CHECK("glTextureStorage2D");
  });
  Submitter sub(*s.vk);
  Staging staging(*s.vk, luma_bytes + chroma_bytes);
  const GLuint luma_tex = s.imported.luma_texture(), chroma_tex = s.imported.chroma_texture();

  auto handoff_frame = [&] {
    sub.run([&](VkCommandBuffer cb) { barrier(cb); });  // end of frame; CPU waits its fence
    s.gl->run([&] {
      glBindTextureUnit(0, luma_tex);
      glBindTextureUnit(1, chroma_tex);
      glFlush();
    });
  };
  auto copy_frame = [&] {
    sub.run([&](VkCommandBuffer cb) {
      VkBufferImageCopy r[2]{};
      r[0].imageSubresource = r[1].imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
      r[0].imageExtent = {w, h, 1};
      r[1].bufferOffset = luma_bytes;
      r[1].imageExtent = {cw, ch, 1};
      vk::transition_color_image(cb, img.luma().image(), VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
      vk::transition_color_image(cb, img.chroma().image(), VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
      vkCmdCopyImageToBuffer(cb, img.luma().image(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, staging.buffer, 1, &r[0]);
      vkCmdCopyImageToBuffer(cb, img.chroma().image(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, staging.buffer, 1,
                             &r[1]);
      vk::transition_color_image(cb, img.luma().image(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL);
      vk::transition_color_image(cb, img.chroma().image(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL);
      barrier(cb);
    });
    s.gl->run([&] {
      const auto* bytes = static_cast<const unsigned char*>(staging.data);
      glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
      glTextureSubImage2D(s.plain[0], 0, 0, 0, GLsizei(w), GLsizei(h), GL_RED, GL_UNSIGNED_BYTE, bytes);
      glTextureSubImage2D(s.plain[1], 0, 0, 0, GLsizei(cw), GLsizei(ch), GL_RG, GL_UNSIGNED_BYTE,
                          bytes + luma_bytes);
      glBindTextureUnit(0, s.plain[0]);
      glBindTextureUnit(1, s.plain[1]);
      glFlush();
    });
  };

  // Warm both paths, then time one of them (not interleaved, so neither pays
  // for work the other left queued in the drivers).
  handoff_frame();
  copy_frame();
  s.gl->run([] { glFinish(); });
  double total_s = 0;
  for (auto _ : state) {
    auto t0 = Clock::now();
    switch (mode) {
      case Mode::Handoff: handoff_frame(); break;
      case Mode::Copy: copy_frame(); break;
      case Mode::VkFenceOnly: sub.run([&](VkCommandBuffer cb) { barrier(cb); }); break;
      case Mode::GlHopOnly: s.gl->run([&] { glBindTextureUnit(0, luma_tex); glBindTextureUnit(1, chroma_tex); glFlush(); }); break;
    }
    total_s += std::chrono::duration<double>(Clock::now() - t0).count();
  }
  s.gl->run([&] {
    glFinish();
    glDeleteTextures(2, s.plain);
    HANDOFF_GL_CHECK("glDeleteTextures");
  });
  s.imported.reset();
  s.producer.reset();
  const double per_frame_s = total_s / double(std::max<std::int64_t>(1, state.iterations()));
  state.counters["frame_us"] = 1e6 * per_frame_s;
  if (mode == Mode::Handoff) {
    g_handoff_s[state.range(0)] = per_frame_s;
  } else if (auto it = g_handoff_s.find(state.range(0)); mode == Mode::Copy && it != g_handoff_s.end()) {
    state.counters["handoff_us"] = 1e6 * it->second;
    state.counters["ratio"] = it->second / per_frame_s;  // handoff / copy: the goal is <= 0.1
  }
  state.SetLabel(std::string(s.vk->info().name) + ", sync: " +
                 (vk_gl_sync(s.vk->info(), s.gl->info()) == VkGlSync::CpuFence ? "CPU fence" : "semaphores"));
}

void BM_VkToGl_Handoff(benchmark::State& state) { run(state, Mode::Handoff); }
void BM_VkToGl_HostCopy(benchmark::State& state) { run(state, Mode::Copy); }
// The handoff's two halves alone: Vulkan's submit + fence round trip, the GL worker hop.
void BM_VkToGl_Part_VkFence(benchmark::State& state) { run(state, Mode::VkFenceOnly); }
void BM_VkToGl_Part_GlHop(benchmark::State& state) { run(state, Mode::GlHopOnly); }

// Handoff before copy for each size: the copy's row reports the ratio.
BENCHMARK(BM_VkToGl_Handoff)->Args({1920, 1080})->Unit(benchmark::kMicrosecond)->MinTime(1.0)->MinWarmUpTime(0.3);
BENCHMARK(BM_VkToGl_HostCopy)->Args({1920, 1080})->Unit(benchmark::kMicrosecond)->MinTime(1.0)->MinWarmUpTime(0.3);
BENCHMARK(BM_VkToGl_Handoff)->Args({3840, 2160})->Unit(benchmark::kMicrosecond)->MinTime(1.0)->MinWarmUpTime(0.3);
BENCHMARK(BM_VkToGl_HostCopy)->Args({3840, 2160})->Unit(benchmark::kMicrosecond)->MinTime(1.0)->MinWarmUpTime(0.3);
BENCHMARK(BM_VkToGl_Part_VkFence)->Args({1920, 1080})->Unit(benchmark::kMicrosecond)->MinTime(0.5)->MinWarmUpTime(0.3);
BENCHMARK(BM_VkToGl_Part_GlHop)->Args({1920, 1080})->Unit(benchmark::kMicrosecond)->MinTime(0.5)->MinWarmUpTime(0.3);

}  // namespace

BENCHMARK_MAIN();
