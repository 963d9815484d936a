// Per-frame cost of handing an NV12 frame from Vulkan to GL, against copying
// the same frame through host memory, measured in the same run.
//
//   handoff: the frame's plane images are imported into GL once
//            (GL_EXT_memory_object_fd) and reused; each frame Vulkan submits
//            its end-of-frame barrier with a fence, and the GL worker waits for
//            that fence (VkContext::wait_fence; the CpuFence sync: no external
//            semaphores on lavapipe/llvmpipe), then binds the textures and
//            flushes: one hop, the worker's wake-up overlapping Vulkan's work.
//   copy:    each frame Vulkan copies both plane images into a host-visible
//            staging buffer, and the GL worker waits for that fence and uploads
//            them from host memory into ordinary GL textures (glTextureSubImage2D).
// Frame production (the compute shader) is outside both: the frame is written once.
//
// Two ways of running both paths:
//   latency (BM_VkToGl_Handoff / _HostCopy): one frame at a time, the caller
//            waiting for GL to have the frame before the next one starts;
//   stream  (BM_VkToGl_Stream_*): up to 3 frames in flight (a ring of fences,
//            command buffers and, for the copy, staging buffers), the caller
//            reusing a slot once GL is done with the frame that used it; the
//            time per frame is the pipeline's throughput.
//
//   build/<dir>/bench/bench_vk_gl --benchmark_counters_tabular=true
// Counters: frame_us (mean per frame); the copy rows add handoff_us and
// ratio = handoff / copy for the same size and way.
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
#include <atomic>
#include <memory>
#include <vector>

#include <handoff/detail/vk_util.hpp>
#include <handoff/vk_check.hpp>

namespace {

using namespace handoff;
using Clock = std::chrono::steady_clock;

// A command buffer + fence, re-recorded for every frame that uses it.
struct Submitter {
  VkContext& vk;
  UniqueVkCommandPool pool;  // frees cb
  VkCommandBuffer cb = VK_NULL_HANDLE;
  UniqueVkFence fence_handle;
  VkFence fence = VK_NULL_HANDLE;
  explicit Submitter(VkContext& v) : vk(v) {
    auto pci = vk::make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = vk.queue_family();
    VkCommandPool p = VK_NULL_HANDLE;
    HANDOFF_VK_CHECK(vkCreateCommandPool(vk.device(), &pci, nullptr, &p));
    pool = UniqueVkCommandPool(p, {vk.device()});
    auto ai = vk::make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    ai.commandPool = p;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    HANDOFF_VK_CHECK(vkAllocateCommandBuffers(vk.device(), &ai, &cb));
    auto fci = vk::make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    HANDOFF_VK_CHECK(vkCreateFence(vk.device(), &fci, nullptr, &fence));
    fence_handle = UniqueVkFence(fence, {vk.device()});
  }
  // Records and submits; the fence signals when Vulkan is done.
  template <typename Record>
  void submit(Record record) {
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
  }
  void wait() { vk.wait_fence(fence, "bench frame fence"); }
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
  UniqueVkDeviceMemory memory;  // member order is destruction order
  UniqueVkBuffer buffer_handle;
  VkBuffer buffer = VK_NULL_HANDLE;
  void* data = nullptr;
  Staging(VkContext& vk, VkDeviceSize size) {
    auto bi = vk::make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
    bi.size = size;
    bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    HANDOFF_VK_CHECK(vkCreateBuffer(vk.device(), &bi, nullptr, &buffer));
    buffer_handle = UniqueVkBuffer(buffer, {vk.device()});
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(vk.device(), buffer, &req);
    auto ai = vk::make<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = vk.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                                VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    VkDeviceMemory m = VK_NULL_HANDLE;
    HANDOFF_VK_CHECK(vkAllocateMemory(vk.device(), &ai, nullptr, &m));
    memory = UniqueVkDeviceMemory(m, {vk.device()});
    HANDOFF_VK_CHECK(vkBindBufferMemory(vk.device(), buffer, m, 0));
    HANDOFF_VK_CHECK(vkMapMemory(vk.device(), m, 0, VK_WHOLE_SIZE, 0, &data));
  }
};

struct Setup {
  std::unique_ptr<GlWorker> gl;
  std::unique_ptr<VkContext> vk;
  std::unique_ptr<VkFrameProducer> producer;
  GlVkFrame imported;
  GLuint plain[2] = {0, 0};  // ordinary GL textures for the copy path
};

enum class Mode { Handoff, Copy, VkFenceOnly, GlHopOnly };
constexpr int kSlots = 3;  // frames in flight when streaming

// Mean seconds per handoff frame, by (streaming, frame width), for the copy row's ratio.
std::map<std::pair<bool, std::int64_t>, double> g_handoff_s;

void run(benchmark::State& state, Mode mode, bool stream) {
  const auto w = std::uint32_t(state.range(0)), h = std::uint32_t(state.range(1));
  Setup s;
  try {
    s.gl = std::make_unique<GlWorker>();
    VkContextOptions o;
    o.validation = false;
    o.device_uuid = s.gl->info().device_uuid;
    s.vk = std::make_unique<VkContext>(o);
    check_gl_vk_device(s.gl->info(), s.vk->info());
    s.producer = std::make_unique<VkFrameProducer>(*s.vk, PixelFormat::NV12, w, h, VkFrameProducer::Target::Images);
    s.producer->produce(1);
    s.imported = GlVkFrame(*s.gl, *s.producer->images());  // import once
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  VkFrameImages& img = *s.producer->images();
  const std::uint32_t cw = chroma_width(w), ch = chroma_height(h);
  const std::size_t luma_bytes = std::size_t(w) * h, chroma_bytes = std::size_t(cw) * ch * 2;
  s.gl->run([&] {
    HANDOFF_GL_CHECK(glCreateTextures(GL_TEXTURE_2D, 2, s.plain));
    HANDOFF_GL_CHECK(glTextureStorage2D(s.plain[0], 1, GL_R8, GLsizei(w), GLsizei(h)));
    HANDOFF_GL_CHECK(glTextureStorage2D(s.plain[1], 1, GL_RG8, GLsizei(cw), GLsizei(ch)));
  });
  std::vector<std::unique_ptr<Submitter>> subs;
  std::vector<std::unique_ptr<Staging>> staging;
  for (int i = 0; i < kSlots; ++i) {
    subs.push_back(std::make_unique<Submitter>(*s.vk));
    staging.push_back(std::make_unique<Staging>(*s.vk, luma_bytes + chroma_bytes));
  }
  const GLuint luma_tex = s.imported.luma_texture(), chroma_tex = s.imported.chroma_texture();
  VkContext& vk = *s.vk;

  // Vulkan's half of a frame in slot i: a submission whose fence says the frame is done.
  auto submit_handoff = [&](int i) { subs[i]->submit([&](VkCommandBuffer cb) { barrier(cb); }); };
  auto submit_copy = [&](int i) {
    const VkBuffer buffer = staging[i]->buffer;
    subs[i]->submit([&](VkCommandBuffer cb) {
      VkBufferImageCopy r[2]{};
      r[0].imageSubresource = r[1].imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
      r[0].imageExtent = {w, h, 1};
      r[1].bufferOffset = luma_bytes;
      r[1].imageExtent = {cw, ch, 1};
      vk::transition_color_image(cb, img.luma().image(), VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
      vk::transition_color_image(cb, img.chroma().image(), VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
      vkCmdCopyImageToBuffer(cb, img.luma().image(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buffer, 1, &r[0]);
      vkCmdCopyImageToBuffer(cb, img.chroma().image(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buffer, 1, &r[1]);
      vk::transition_color_image(cb, img.luma().image(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL);
      vk::transition_color_image(cb, img.chroma().image(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL);
      barrier(cb);
    });
  };
  // GL's half, on the worker: wait for the slot's fence, then use the frame.
  auto gl_handoff = [&](int i) {
    vk.wait_fence(subs[i]->fence, "bench frame fence");
    glBindTextureUnit(0, luma_tex);
    glBindTextureUnit(1, chroma_tex);
    glFlush();
  };
  auto gl_copy = [&](int i) {
    vk.wait_fence(subs[i]->fence, "bench frame fence");
    const auto* bytes = static_cast<const unsigned char*>(staging[i]->data);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTextureSubImage2D(s.plain[0], 0, 0, 0, GLsizei(w), GLsizei(h), GL_RED, GL_UNSIGNED_BYTE, bytes);
    glTextureSubImage2D(s.plain[1], 0, 0, 0, GLsizei(cw), GLsizei(ch), GL_RG, GL_UNSIGNED_BYTE, bytes + luma_bytes);
    glBindTextureUnit(0, s.plain[0]);
    glBindTextureUnit(1, s.plain[1]);
    glFlush();
  };
  const bool copy = mode == Mode::Copy;
  auto one_frame = [&](int i) {
    copy ? submit_copy(i) : submit_handoff(i);
    s.gl->run([&] { copy ? gl_copy(i) : gl_handoff(i); });
  };

  // Streaming: frame n uses slot n % kSlots once GL has finished frame n - kSlots.
  std::atomic<std::uint64_t> gl_done{0};
  std::uint64_t issued = 0;
  auto stream_frame = [&] {
    const int i = int(issued % kSlots);
    for (std::uint64_t d; issued >= kSlots && (d = gl_done.load(std::memory_order_acquire)) < issued - kSlots + 1;)
      gl_done.wait(d, std::memory_order_acquire);
    copy ? submit_copy(i) : submit_handoff(i);
    s.gl->post([&, i] {
      copy ? gl_copy(i) : gl_handoff(i);
      gl_done.fetch_add(1, std::memory_order_release);
      gl_done.notify_one();
    });
    ++issued;
  };
  auto drain = [&] {
    for (std::uint64_t d; (d = gl_done.load(std::memory_order_acquire)) < issued;) gl_done.wait(d);
  };

  // Warm both paths, then time one of them (not interleaved, so neither pays
  // for work the other left queued in the drivers).
  submit_handoff(0);
  s.gl->run([&] { gl_handoff(0); });
  submit_copy(0);
  s.gl->run([&] { gl_copy(0); glFinish(); });
  double total_s = 0;
  const auto t_start = Clock::now();
  for (auto _ : state) {
    switch (mode) {
      case Mode::Handoff:
      case Mode::Copy:
        if (stream) stream_frame();
        else one_frame(0);
        break;
      case Mode::VkFenceOnly:
        submit_handoff(0);
        vk.wait_fence(subs[0]->fence, "bench frame fence");
        break;
      case Mode::GlHopOnly:
        s.gl->run([&] {
          glBindTextureUnit(0, luma_tex);
          glBindTextureUnit(1, chroma_tex);
          glFlush();
        });
        break;
    }
  }
  drain();
  total_s = std::chrono::duration<double>(Clock::now() - t_start).count();
  s.gl->run([&] {
    glFinish();
    HANDOFF_GL_CHECK(glDeleteTextures(2, s.plain));
  });
  s.imported.reset();
  s.producer.reset();
  const double per_frame_s = total_s / double(std::max<std::int64_t>(1, state.iterations()));
  state.counters["frame_us"] = 1e6 * per_frame_s;
  const auto key = std::make_pair(stream, std::int64_t(state.range(0)));
  if (mode == Mode::Handoff) {
    g_handoff_s[key] = per_frame_s;
  } else if (auto it = g_handoff_s.find(key); mode == Mode::Copy && it != g_handoff_s.end()) {
    state.counters["handoff_us"] = 1e6 * it->second;
    state.counters["ratio"] = it->second / per_frame_s;  // handoff / copy: the goal is <= 0.1
  }
  state.SetLabel(std::string(s.vk->info().name) + ", sync: " +
                 (gl_vk_sync(s.gl->info(), s.vk->info()) == GlVkSync::CpuFence ? "CPU fence" : "semaphores"));
}

void BM_VkToGl_Handoff(benchmark::State& state) { run(state, Mode::Handoff, false); }
void BM_VkToGl_HostCopy(benchmark::State& state) { run(state, Mode::Copy, false); }
void BM_VkToGl_Stream_Handoff(benchmark::State& state) { run(state, Mode::Handoff, true); }
void BM_VkToGl_Stream_HostCopy(benchmark::State& state) { run(state, Mode::Copy, true); }
// The latency handoff's two halves alone: Vulkan's submit + fence round trip
// on the caller, the GL worker hop.
void BM_VkToGl_Part_VkFence(benchmark::State& state) { run(state, Mode::VkFenceOnly, false); }
void BM_VkToGl_Part_GlHop(benchmark::State& state) { run(state, Mode::GlHopOnly, false); }

// Handoff before copy for each size and way: the copy's row reports the ratio.
#define HANDOFF_VK_GL_PAIR(handoff, copy, W, H)                                                             \
  BENCHMARK(handoff)->Args({W, H})->Unit(benchmark::kMicrosecond)->MinTime(1.0)->MinWarmUpTime(0.3); \
  BENCHMARK(copy)->Args({W, H})->Unit(benchmark::kMicrosecond)->MinTime(1.0)->MinWarmUpTime(0.3)
HANDOFF_VK_GL_PAIR(BM_VkToGl_Handoff, BM_VkToGl_HostCopy, 1920, 1080);
HANDOFF_VK_GL_PAIR(BM_VkToGl_Handoff, BM_VkToGl_HostCopy, 3840, 2160);
HANDOFF_VK_GL_PAIR(BM_VkToGl_Stream_Handoff, BM_VkToGl_Stream_HostCopy, 1920, 1080);
HANDOFF_VK_GL_PAIR(BM_VkToGl_Stream_Handoff, BM_VkToGl_Stream_HostCopy, 3840, 2160);
BENCHMARK(BM_VkToGl_Part_VkFence)->Args({1920, 1080})->Unit(benchmark::kMicrosecond)->MinTime(0.5)->MinWarmUpTime(0.3);
BENCHMARK(BM_VkToGl_Part_GlHop)->Args({1920, 1080})->Unit(benchmark::kMicrosecond)->MinTime(0.5)->MinWarmUpTime(0.3);

}  // namespace

BENCHMARK_MAIN();
