#pragma once
// What one viewer session holds, whatever draws it: the source and its frame
// pipeline, the renderer, overlays and filters, colour overrides, playback and
// statistics. Render thread only (GL context current).
#include <array>
#include <chrono>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <handoff/gl_context.hpp>
#include <handoff/gl_worker.hpp>
#include <handoff/viewer/overlay.hpp>
#include <handoff/viewer/scene.hpp>

#ifdef HANDOFF_HAVE_VULKAN
#include <handoff/vk_gl.hpp>
#endif

#include "app.hpp"
#include "frame_pipeline.hpp"
#include "frame_renderer.hpp"
#include "overlay_draw.hpp"

namespace handoff::viewer {

// Rolling timings (ms) with percentiles; fixed storage.
class TimingWindow {
 public:
  void add(double ms);
  double percentile(double p) const;  // 0..100 over the last kSize samples
  double last() const { return count_ ? values_[(next_ + kSize - 1) % kSize] : 0.0; }
  double mean() const;
  std::size_t count() const { return count_; }

 private:
  static constexpr std::size_t kSize = 256;
  std::array<double, kSize> values_{};
  mutable std::array<double, kSize> sorted_{};
  std::size_t next_ = 0, count_ = 0;
};

struct Stats {
  TimingWindow frame_ms;    // between presented frames
  TimingWindow upload_ms;   // PBO -> textures (CPU time to submit)
  TimingWindow produce_ms;  // producer: map + write + unmap
  TimingWindow map_ms;      // of which map + unmap
  TimingWindow draw_ms;     // renderer + overlays (CPU time to submit)
  double fps = 0.0;
  std::int64_t frames = 0;
};

struct PixelProbe {
  bool valid = false;
  int x = 0, y = 0;        // frame coordinates
  int code_y = 0, code_cb = 0, code_cr = 0;
  std::array<std::uint8_t, 3> rgb{};
};

class ViewerState {
 public:
  // Opens the source and overlays, starts the GL worker on the context
  // `worker_context` makes (sharing objects with the current one). GL current.
  // `on_gl_message`: the worker context's KHR_debug messages (may be empty).
  // `on_vk_message`: --source vulkan, each Vulkan validation message (any thread).
  // --source vulkan: the frames come from a handoff::GlVkSource made on the
  // current context (no worker, no pipeline); Error naming what is missing where
  // Vulkan or GL_EXT_memory_object_fd is not there.
  ViewerState(const AppOptions& options, std::function<std::unique_ptr<GlContext>()> worker_context,
              std::function<void(const GlDebugMessage&)> on_gl_message = {},
              std::function<void(const std::string&)> on_vk_message = {});
  ~ViewerState();

  // Takes the next frame from the pipeline if one is due and uploads it.
  // Returns true when a new frame was uploaded.
  bool advance(bool wait);
  void step(int delta);  // single step (seekable sources), pauses
  void draw_frame(const ViewTransform& view, int fb_w, int fb_h);
  // Overlays of the current frame (file overlays first, else the source's ground truth).
  const OverlayFrame* current_overlays() const;
  void draw_overlays_into(ImDrawList& list, const ViewTransform& view, const RectF& view_rect);
  Colorimetry effective_colorimetry() const;
  PixelProbe probe(double frame_x, double frame_y) const;
  bool finished() const { return pipeline_ ? pipeline_->finished() : false; }

  const SourceInfo& info() const { return pipeline_ ? pipeline_->info() : vk_info_; }
  const AppOptions& options() const { return options_; }
  FrameRenderer& renderer() { return renderer_; }
  Stats& stats() { return stats_; }
  std::int64_t frame_index() const { return frame_index_; }
  bool seekable() const { return pipeline_ ? pipeline_->seekable() : true; }
  std::size_t ring_size() const { return pipeline_ ? pipeline_->ring_size() : 1; }
  const std::string& memory_description() const {
    return pipeline_ ? pipeline_->memory_description() : vk_memory_text_;
  }
  // "vulkan (zero-copy, sync: cpu-fence|semaphore)" for --source vulkan; else empty.
  const std::string& source_description() const { return vk_source_text_; }
  bool vulkan_source() const { return vk_active_; }

  // Live controls (the UI writes them).
  bool playing = true;
  double speed = 1.0;
  bool no_vsync = false;
  bool nearest_when_zoomed = true;
  bool show_overlays = true;
  std::optional<ColorMatrix> matrix_override;
  std::optional<ColorRange> range_override;
  std::optional<ChromaSiting> siting_override;
  OverlayFilter filter;
  OverlayStyle style;
  std::size_t overlay_diagnostics = 0;
  std::string overlay_file;

 private:
  AppOptions options_;
  std::unique_ptr<GlWorker> worker_;  // outlives the pipeline
  std::unique_ptr<FramePipeline> pipeline_;
  FrameRenderer renderer_;
  BoxRenderer box_renderer_;  // dense overlays (scratch_.box_renderer)
  // --source vulkan (instead of worker_ + pipeline_).
#ifdef HANDOFF_HAVE_VULKAN
  std::unique_ptr<GlVkSource> vk_;
#endif
  bool vk_active_ = false;
  SourceInfo vk_info_;
  std::string vk_memory_text_, vk_source_text_;
  std::int64_t vk_next_ = 0;  // the frame the next advance() produces
  bool advance_vulkan();
  OverlayStore store_;
  bool source_overlays_valid_ = false;
  OverlayFrame source_overlays_;
  OverlayFrame bench_overlays_;
  OverlayScratch scratch_;
  Stats stats_;
  std::int64_t frame_index_ = -1;
  std::chrono::steady_clock::time_point last_frame_{};
  std::chrono::steady_clock::time_point next_due_{};
  bool first_ = true;
};

// Opens what `options` names: a Y4M file, a raw file, or the scene.
std::unique_ptr<FrameSource> open_source(const AppOptions& options);
// The scene's options when `options` names no file.
std::optional<SceneOptions> scene_options(const AppOptions& options);

}  // namespace handoff::viewer
