#pragma once
// What one viewer session holds on its display thread, whatever draws it (a
// window or the headless view): the frame feed, the renderer, overlays and
// filters, colour overrides, playback and statistics. Which feed it draws is
// a type (view::Feed), chosen once.
//
// Thread safety: the display thread only, its GL context current.
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>

#include <handoff/view/feed.hpp>
#include <handoff/media/overlay.hpp>

#include "box_renderer.hpp"
#include "frame_renderer.hpp"
#include "layer_renderer.hpp"
#include "overlay_draw.hpp"
#include "pixel_probe.hpp"

namespace handoff::view {

// Rolling timings (ms) with percentiles; fixed storage.
template <std::size_t N>
class TimingWindow {
 public:
  void add(double ms);
  double percentile(double p) const;  // 0..100 over the last N samples
  double mean() const;
  std::size_t count() const { return count_; }

 private:
  std::array<double, N> values_{};
  mutable std::array<double, N> sorted_{};
  std::size_t next_ = 0, count_ = 0;
};

struct Stats {
  TimingWindow<256> frame_ms;    // between displayed frames
  TimingWindow<256> upload_ms;   // buffer -> textures (CPU time to submit)
  TimingWindow<256> produce_ms;  // producer: map + write + unmap
  TimingWindow<256> map_ms;      // of which map + unmap
  TimingWindow<256> draw_ms;     // renderer + overlays (CPU time to submit)
  TimingWindow<1024> latency_ms; // handed in -> displayed (pushed frames)
  double fps = 0.0;
  std::int64_t frames = 0;       // displayed
};

struct StateOptions {
  std::string overlay_file;  // JSON Lines overlays by frame index; empty: the feed's own
  std::uint32_t bench_boxes = 0;
  double speed = 1.0;
  bool no_vsync = false;      // paced feeds: as fast as possible
  bool show_overlays = true;
  std::optional<ColorMatrix> matrix;  // overrides of the stream's colorimetry
  std::optional<ColorRange> range;
  std::optional<ValueRange> value_range;  // gray16 / gray32f (ViewerOptions::value_range)
  ViewerConvert convert = ViewerConvert::Auto;  // the renderer's colour path
  // An attached viewer's link to its publisher, for the panel (empty otherwise). Any thread.
  std::function<std::optional<AttachStatus>()> attach_status;
};

class ViewerState {
 public:
  // Starts `feed` (it may throw: a file that will not open, no Vulkan) and
  // loads the overlay file (a ParseError names it).
  ViewerState(std::unique_ptr<view::Feed> feed, view::FeedContext& context, const StateOptions& options);
  ~ViewerState();  // stops the feed
  ViewerState(const ViewerState&) = delete;
  ViewerState& operator=(const ViewerState&) = delete;

  // Takes the next frame when one is due (paced feeds, at the source's rate
  // times the speed; `wait` ignores the clock and waits for it) or waiting
  // (pushed frames), and uploads it. True when a new frame is in the textures.
  bool advance(bool wait);
  // One frame forward or back (seekable feeds; pushed frames: the next one),
  // and pauses. True when the frame is in the textures now (a paced feed's;
  // a pushed one comes with a later advance()).
  bool step(int delta);
  // Shows frame `index` next (seekable feeds; UsageError otherwise or outside
  // 0 .. frame_count - 1); while paused it is taken at once (true).
  bool seek(std::int64_t index);
  bool playing() const { return playing_; }
  void set_playing(bool playing);
  // A tile of a grid following another's clock: shows this feed's newest
  // frame logged at or before `time_ns` (a recording's; Feed::index_at),
  // waiting for it; none there: the tile shows nothing (absent() true). True
  // when a new frame is in the textures.
  // A frame of the recording that will not decode is skipped: the tile keeps
  // the newest good frame at or before `time_ns`, and never seeks the bad one
  // again (it is reported once).
  bool follow(std::uint64_t time_ns);
  bool absent() const { return absent_; }
  // Recordings: every frame's log time (Feed::log_times).
  std::span<const std::uint64_t> log_times() const { return feed_->log_times(); }
  // The log time of the frame on display (recordings; 0 otherwise).
  std::uint64_t time_ns() const { return time_ns_; }

  // The frame, then its dense layers (with the overlays shown).
  void draw_frame(const ViewTransform& view, int fb_w, int fb_h);
  // Overlays of the current frame (the overlay file first, else the feed's own).
  const media::OverlayFrame* current_overlays() const;
  void draw_overlays_into(ImDrawList& list, const ViewTransform& view, const media::RectF& view_rect);
  Colorimetry effective_colorimetry() const;
  // The frame pixel drawn at view point (x, y) (probe_view_pixel).
  PixelProbe probe(const ViewTransform& view, double x, double y) const;
  bool finished() const { return feed_->finished(); }
  // The link of a feed attached to another process's publisher (else nullopt).
  std::optional<AttachStatus> attach_status() const {
    return attach_status_ ? attach_status_() : std::nullopt;
  }
  bool has_frame() const { return renderer_.has_frame(); }

  // The stream as of the last frame taken (format and size of that frame).
  const view::FeedInfo& info() const { return info_; }
  bool paced() const { return paced_; }
  FrameRenderer& renderer() { return renderer_; }
  LayerRenderer& layers() { return layers_; }
  Stats& stats() { return stats_; }
  std::int64_t frame_index() const { return frame_index_; }
  // Of the frame on display: when it was handed in (epoch: a played source)
  // and its hand-in order (0: a played source).
  std::chrono::steady_clock::time_point submitted() const { return submitted_; }
  std::uint64_t sequence() const { return sequence_; }

  // Live controls (the UI writes them).
  double speed = 1.0;
  bool no_vsync = false;
  bool nearest_when_zoomed = true;
  bool show_overlays = true;
  std::optional<ColorMatrix> matrix_override;
  std::optional<ColorRange> range_override;
  std::optional<ChromaSiting> siting_override;
  std::optional<ValueRange> value_range;  // gray16 / gray32f; none: full / automatic
  media::OverlayFilter filter;
  OverlayStyle style;
  std::size_t overlay_diagnostics = 0;
  std::string overlay_file;

 private:
  bool take_next(bool wait);
  bool next_that_fits(view::FeedFrame& f, bool wait);
  void advance_clock(std::chrono::steady_clock::time_point now);

  std::unique_ptr<view::Feed> feed_;
  std::function<std::optional<AttachStatus>()> attach_status_;
  view::FeedInfo info_;
  bool paced_ = true;
  bool playing_ = true;
  FrameRenderer renderer_;
  RefusedFrames refused_;  // frames larger than renderer_'s GL_MAX_TEXTURE_SIZE
  BoxRenderer box_renderer_;  // dense overlays (scratch_.box_renderer)
  LayerRenderer layers_;      // the feed's overlays' dense layers
  media::OverlayStore store_;
  bool feed_overlays_valid_ = false;
  media::OverlayFrame feed_overlays_;
  media::OverlayFrame bench_overlays_;
  std::uint32_t bench_boxes_ = 0;
  OverlayScratch scratch_;
  Stats stats_;
  std::int64_t frame_index_ = -1;
  std::chrono::steady_clock::time_point submitted_{};
  std::uint64_t sequence_ = 0;
  std::chrono::steady_clock::time_point last_frame_{};
  std::chrono::steady_clock::time_point next_due_{};
  std::uint64_t time_ns_ = 0;
  bool absent_ = false;
  std::set<std::int64_t> bad_frames_;  // following: frames of the recording that would not decode  // a following tile with no frame at or before its time
  double display_ms_ = 0;  // the current frame's own time on display (FeedFrame::display_ms)
  bool first_ = true;
};

}  // namespace handoff::view
