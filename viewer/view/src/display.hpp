#pragma once
// A viewer's display: the thread that owns its GL context and draws (a window
// on the process's GLFW thread, or a headless view on a thread of its own).
// This base holds what both do on that thread: the feed and its ViewerState,
// playback (pause, step, end), the PNG output, snapshots and the figures it
// publishes through the DisplayLink. Subclasses make the surface and present.
//
// Thread safety: the protected methods on the display thread with its
// context current; share(), link() and close() from any thread.
#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include <handoff/view/feed.hpp>
#include <handoff/viewer.hpp>
#include <handoff/media/png.hpp>

#include "display_link.hpp"
#include "frame_recorder.hpp"
#include "frame_target.hpp"
#include "gl_share.hpp"
#include "imgui_offscreen.hpp"
#include "tile_grid.hpp"
#include "ui.hpp"
#include "viewer_state.hpp"

namespace handoff::view {

// What a display needs from ViewerOptions.
struct DisplayOptions {
  std::string title = "handoff";
  int width = 1280, height = 720;
  bool vsync = true;
  bool show_ui = true;
  bool show_overlays = true;
  std::string output_dir;  // every displayed frame as PNG
  std::string screenshot;  // the view (UI included) as PNG at close
  bool gl_debug = false;
  media::RecordTarget record;  // what the display shows, into an MCAP file (path empty: no)
};

// What a played source (or the application's frames) asks of the display.
struct PlayConfig {
  view::StateOptions state;
  std::int64_t frames = -1;  // playback ends after this many displayed frames (-1: the feed's end)
  bool close_at_end = true;
};

class Display {
 public:
  virtual ~Display() = default;
  Display(const Display&) = delete;
  Display& operator=(const Display&) = delete;

  // The worker sharing objects with this display's context (valid once started).
  const std::shared_ptr<GlShare>& share() const { return share_; }
  DisplayLink& link() const { return *link_; }
  // Stops the display (its last frame, screenshot, teardown) and waits for it,
  // bounded. Any thread but the display's. Never throws.
  virtual void close() noexcept = 0;

  // Display thread (through DisplayLink::call): draws `feed` from now on;
  // with `followers`, as the clock of a grid whose other tiles show their
  // feeds' frames at its log time (recordings); `clock_tile`: its place
  // among the tiles (the followers keep their order around it).
  void use_feed(std::unique_ptr<Feed> feed, const PlayConfig& config,
                std::vector<std::unique_ptr<Feed>> followers = {}, std::size_t clock_tile = 0);
  // Display thread: one more tile, showing `feed`'s newest frames (pushed
  // frames of a named stream, another publisher) beside the others.
  void add_tile(std::unique_ptr<Feed> feed, const PlayConfig& config);
  // Any thread: a picture once every tile i shows a frame handed in at
  // `min_sequences[i]` or later (empty, or 0: the current one).
  std::future<RgbaImage> request_snapshot(SnapshotKind kind, std::vector<std::uint64_t> min_sequences);
  // Display thread (UI, keys, DisplayLink::call): pause / resume, and one step
  // (counted in DisplayLink::steps).
  void set_playing(bool playing);
  void step(int delta);
  // Display thread: one frame back / frame `index` next (UsageError when the
  // stream is not seekable, or `index` is outside it).
  void step_back();
  void seek(std::int64_t index);
  bool headless() const noexcept { return headless_; }
  // Display thread: no screenshot at close (it was named over an input).
  void forget_screenshot() { options_.screenshot.clear(); }
  // Grid: the tile drawn alone over the whole view (-1: all of them).
  // cycle_focus() goes to the next one and back to all (the G key);
  // focus_at() toggles the tile under a view point (a double click).
  void cycle_focus();
  void focus_at(double x, double y, int view_w, int view_h);
  // The pixel inspector (UiState::probe, probe_tile) at view point (x, y):
  // one stream's frame drawn with `view`, or the grid's tile there.
  void probe_at(double x, double y, int view_w, int view_h, const view::ViewTransform& view);
  void clear_probe();  // no cursor over the view
  // Viewer::focus_tile / focused_tile / tiles.
  void focus_tile(int tile);
  int focused_tile() const { return grid() ? focus_ : -1; }
  std::vector<Viewer::TileStatus> tile_status() const;

 protected:
  Display(DisplayOptions options, std::shared_ptr<DisplayLink> link, bool headless);

  // The worker's context factory and debug sink go here; call once GL is up.
  void start_worker(std::function<std::unique_ptr<GlContext>()> context_factory,
                    std::function<void()> after_shutdown);
  // Runs the tasks other threads posted; applies pause / step requests.
  void run_tasks();
  // Takes the next frame when one is due (see ViewerState::advance); false
  // while paused, before a feed, or when none is there. `wait`: paced feeds
  // wait for their next frame (headless playback draws every frame).
  bool advance(bool wait);
  // After a frame was presented (window: swapped; headless: drawn).
  void displayed();
  void mark_fresh(view::ViewerState* tile);
  // The frame with its overlays at its own size, read back (what --output
  // writes and Snapshot::Frame returns). Empty before the first frame.
  RgbaImage frame_image();
  // The same into `rgba` (rows top-down); false before the first frame.
  bool render_frame_rgba(std::vector<std::uint8_t>& rgba, int& width, int& height);
  bool render_grid_rgba(std::vector<std::uint8_t>& rgba, int& width, int& height);
  // Snapshots of `kind` whose frame is on display now (the window serves View
  // ones itself, from its back buffer, with view_image).
  void serve_snapshots(SnapshotKind kind, const std::function<RgbaImage()>& image);
  bool snapshots_waiting(SnapshotKind kind) const;
  // Display thread, as it stops (context current): the feed, GL objects,
  // pending output. Never throws.
  void finish() noexcept;
  // `what` went wrong on the display thread: remembered, and the display closes.
  void fail(std::exception_ptr error) noexcept;
  void write_png_now(const std::string& path, const RgbaImage& image) noexcept;
  void notice_gl_error(const GlDebugMessage& m);
  // Grid: more than one tile. tiles(): the clock (state_) at clock_tile_ among the followers.
  bool grid() const { return !followers_.empty(); }
  std::vector<view::ViewerState*> tiles() const;
  // What the view shows of the grid: every tile, or the focused one alone.
  std::vector<view::ViewerState*> view_tiles() const;
  // The view's tiles into framebuffer `dest` of `width` x `height`, and their
  // overlays into `list` (units of px_scale framebuffer pixels); the panel's tile lines.
  void draw_grid_view(int width, int height, GLuint dest);
  void draw_grid_overlays(int width, int height, ImDrawList& list, double px_scale);
  void fill_tile_lines();

  DisplayOptions options_;
  std::shared_ptr<DisplayLink> link_;
  std::shared_ptr<GlShare> share_;
  std::unique_ptr<view::ViewerState> state_;
  view::UiState ui_;
  std::exception_ptr error_;
  std::function<void(const GlDebugMessage&)> gl_sink_;  // outlives the contexts' debug output

 private:
  struct Snapshot {
    SnapshotKind kind;
    std::vector<std::uint64_t> min_sequences;  // by tile
    std::promise<RgbaImage> result;
  };
  bool snapshot_ready(const Snapshot& s) const;
  void output_frame();
  void record_frame();
  void check_end();
  void publish_figures();
  // A grid of recorded topics runs on one timeline: every tile's log times.
  // The clock's frame starts each stretch of it; the other tiles' frames
  // logged before the clock's next one are the grid's own steps in between.
  void sync_followers();  // the clock took a frame: the grid's time is its time
  void follow_to(std::uint64_t time_ns);  // every recorded tile but the clock to its frame at `time_ns`
  std::uint64_t clock_next_time() const;   // the clock's next frame's log time (none: the maximum)
  std::optional<std::uint64_t> pending_step() const;  // the timeline's next time before the clock's next frame
  bool step_due(std::uint64_t time_ns, bool wait) const;
  bool step_timeline(int delta);  // a step within the clock frame's stretch; false: the clock steps

  bool headless_;
  PlayConfig play_;
  std::unique_ptr<FeedContext> feed_context_;
  std::unique_ptr<view::FrameTarget> frame_target_;  // GL: made and freed on the display thread
  std::unique_ptr<view::ImGuiOffscreen> painter_;
  std::unique_ptr<media::PngEncoder> encoder_;
  std::unique_ptr<FrameRecorder> recorder_;  // made with the display (the file opens there); GL parts on its thread
  std::vector<std::unique_ptr<view::ViewerState>> followers_;  // grid tiles besides the clock's
  std::size_t clock_tile_ = 0;                                 // state_'s place among the tiles
  std::vector<std::uint64_t> timeline_;  // recorded grids: every tile's log times, sorted, each once
  std::uint64_t followed_time_ = 0;       // the grid's time (the timeline's, or the clock's)
  bool followed_any_ = false;
  std::chrono::steady_clock::time_point followed_at_{};  // when the grid's time became followed_time_
  int focus_ = -1;
  view::TileGrid grid_;
  std::vector<Snapshot> snapshots_;
  std::int64_t displayed_ = 0;
  bool step_pending_ = false;  // pushed frames: show the next one that comes, then stay paused
  // The tiles with a new frame since the last displayed() (advance(), a step or seek; state_ first).
  std::vector<view::ViewerState*> fresh_tiles_;
  std::uint64_t steps_seen_ = 0;
  std::size_t record_errors_published_ = 0;  // recorder_->errors() in the link's diagnostics
};

}  // namespace handoff::view
