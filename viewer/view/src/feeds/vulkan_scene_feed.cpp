// The Vulkan scene feed (built with HANDOFF_WITH_VULKAN; vulkan_scene_none.cpp otherwise).
#include "feeds/vulkan_scene_feed.hpp"

#include <algorithm>

#include <handoff/error.hpp>
#include <handoff/log.hpp>
#include <handoff/vk_gl.hpp>

namespace handoff::view {
namespace {

class VulkanSceneFeed final : public Feed {
 public:
  explicit VulkanSceneFeed(VulkanSceneOptions o) : options_(std::move(o)) {
    media::scene_state(options_.scene, 0);  // a bad size fails here
  }

  // GL context current: the Vulkan context is made on the same GPU.
  void start(FeedContext&) override {
    const media::SceneOptions& so = options_.scene;
    VkContextOptions vo;
    if (options_.validation) vo.validation = true;
    if (options_.on_message)
      vo.on_message = [sink = options_.on_message](const VkValidationMessage& m) {
        sink((m.id.empty() ? std::string() : m.id + ": ") + m.message);
      };
    try {
      source_ = std::make_unique<GlVkSource>(so.format, so.width, so.height, so.colorimetry, std::move(vo));
    } catch (const Error& e) {
      throw Error(std::string("the Vulkan scene is not available here: ") + e.what() +
                  " (it needs a Vulkan device with exportable OPAQUE_FD memory and a GL context with "
                  "GL_EXT_memory_object_fd on the same GPU)");
    }
    const bool semaphores = source_->sync() == GlVkSync::ExternalSemaphore;
    source_text_ = std::string("vulkan (zero-copy, sync: ") + (semaphores ? "semaphore" : "cpu-fence") + ")";
    memory_text_ = "Vulkan " + source_->vulkan().info().name + ", imported by GL (GL_EXT_memory_object_fd)";
  }

  FeedInfo info() const override {
    const media::SceneOptions& so = options_.scene;
    FeedInfo i;
    i.name = "scene (Vulkan compute)";
    i.source = source_text_;
    i.memory = memory_text_;
    i.format = so.format;
    i.width = so.width;
    i.height = so.height;
    i.colorimetry = so.colorimetry;
    i.rate = so.rate.value();
    i.seekable = true;
    i.ring = 1;
    i.uploads = false;
    return i;
  }
  bool paced() const override { return true; }

  // GL finishes what it issued (the last draws and pixel reads of the
  // textures), then Vulkan writes frame next_ into the imported memory.
  bool next(FeedFrame& out, bool) override {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    if (produced_) gl_finish_for_vulkan();
    source_->produce(next_);
    produced_ = true;
    out = FeedFrame{};
    out.frame = source_->frame();
    out.frame.index = next_;
    out.luma_texture = source_->luma_texture();
    out.chroma_texture = source_->chroma_texture();
    const media::SceneOptions& so = options_.scene;
    vulkan_scene_overlays(overlays_, next_, so.width, so.height);
    out.overlays = &overlays_;
    out.produce_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    ++next_;
    return true;
  }
  void release(FeedFrame&) override {}
  void seek(std::int64_t index) override { next_ = std::max<std::int64_t>(index, 0); }

  // GL may still read the imported textures: finish before Vulkan frees them.
  void stop() noexcept override {
    if (!source_) return;
    try {
      gl_finish_for_vulkan();
    } catch (const std::exception& e) {
      log(LogLevel::Error, std::string("Vulkan scene: ") + e.what());
    }
    source_.reset();
  }

 private:
  VulkanSceneOptions options_;
  std::unique_ptr<GlVkSource> source_;
  std::string source_text_, memory_text_;
  media::OverlayFrame overlays_;
  std::int64_t next_ = 0;
  bool produced_ = false;
};

}  // namespace

std::unique_ptr<Feed> make_vulkan_scene_feed(VulkanSceneOptions options) {
  return std::make_unique<VulkanSceneFeed>(std::move(options));
}

}  // namespace handoff::view
