#include "display.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <thread>

#include <handoff/error.hpp>
#include <handoff/log.hpp>

namespace handoff::view {
namespace {

std::filesystem::path frame_png(const std::string& dir, std::int64_t n) {
  char name[32];
  std::snprintf(name, sizeof name, "frame_%06lld.png", static_cast<long long>(n));
  return std::filesystem::path(dir) / name;
}

media::Image8 to_image8(const RgbaImage& img) {
  media::Image8 out;
  out.width = img.width();
  out.height = img.height();
  out.channels = 4;
  out.pixels.assign(img.data(), img.data() + img.stride() * img.height());
  return out;
}

}  // namespace

Display::Display(DisplayOptions options, std::shared_ptr<DisplayLink> link, bool headless)
    : options_(std::move(options)), link_(std::move(link)), headless_(headless) {
  gl_sink_ = [link = link_](const GlDebugMessage& m) {
    if (m.is_error()) link->count_gl_error(m.describe());
  };
  if (!options_.record.path.empty()) recorder_ = std::make_unique<FrameRecorder>(options_.record);
}

void Display::start_worker(std::function<std::unique_ptr<GlContext>()> context_factory,
                           std::function<void()> after_shutdown) {
  GlWorkerOptions wo;
  wo.name = "handoff-view-gl";
  wo.context_factory = std::move(context_factory);
  if (options_.gl_debug) wo.on_debug_message = gl_sink_;
  auto worker = std::make_unique<GlWorker>(std::move(wo));
  // Once: producers refuse frames above it on their own thread (GlShare).
  const std::uint32_t max_texture = worker->run([] { return view::gl_max_texture_size(); });
  share_ = std::make_shared<GlShare>(std::move(worker), std::move(after_shutdown), max_texture);
  if (!options_.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options_.output_dir, ec);
    if (ec)
      throw Error(Api::System, "create_directories", ec.value(), ec.message(), "output_dir " + options_.output_dir,
                  HANDOFF_WHERE);
    // Fast settings on every core: writing frames should keep up with playback.
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    encoder_ = std::make_unique<media::PngEncoder>(2 * cores, cores, media::PngSpeed::Fast);
  }
}

// The new feed starts before the old one stops: if it cannot start (a file,
// no Vulkan), the display goes on with what it had.
void Display::use_feed(std::unique_ptr<Feed> feed, const PlayConfig& config,
                       std::vector<std::unique_ptr<Feed>> followers, std::size_t clock_tile) {
  auto context = std::make_unique<FeedContext>(FeedContext{share_->worker(), headless_, options_.gl_debug, nullptr});
  context->wake = [link = link_] { link->wake(); };
  context->bad_frame = [link = link_](const std::string& error) { link->add_frame_error(error); };
  context->input_warning = [link = link_](const std::string& what) { link->add_input_warning(what); };
  auto next = std::make_unique<view::ViewerState>(std::move(feed), *context, config.state);
  // The other tiles: their own overlays (the overlay file is the clock tile's).
  view::StateOptions tile_options = config.state;
  tile_options.overlay_file.clear();
  tile_options.bench_boxes = 0;
  std::vector<std::unique_ptr<view::ViewerState>> tiles;
  for (auto& f : followers) tiles.push_back(std::make_unique<view::ViewerState>(std::move(f), *context, tile_options));
  followers_.clear();
  fresh_tiles_.clear();
  clear_probe();
  state_ = std::move(next);  // stops the previous feed
  followers_ = std::move(tiles);
  clock_tile_ = std::min(clock_tile, followers_.size());
  followed_any_ = false;
  timeline_.clear();
  if (!followers_.empty()) {
    for (const view::ViewerState* t : this->tiles()) {
      const auto times = t->log_times();
      timeline_.insert(timeline_.end(), times.begin(), times.end());
    }
    std::sort(timeline_.begin(), timeline_.end());
    timeline_.erase(std::unique(timeline_.begin(), timeline_.end()), timeline_.end());
  }
  focus_ = -1;
  feed_context_ = std::move(context);
  play_ = config;
  state_->set_playing(!link_->paused.load());
  displayed_ = 0;
  link_->finished.store(false);
  publish_figures();
}

// Live tiles (pushed or attached frames) each show their newest frame; a
// recording's followers are added by use_feed.
void Display::add_tile(std::unique_ptr<Feed> feed, const PlayConfig& config) {
  if (!state_ || !feed_context_) throw UsageError(link_->name + ": a tile before the display has a feed");
  view::StateOptions tile_options = config.state;
  tile_options.overlay_file.clear();
  tile_options.bench_boxes = 0;
  auto tile = std::make_unique<view::ViewerState>(std::move(feed), *feed_context_, tile_options);
  tile->set_playing(state_->playing());
  followers_.push_back(std::move(tile));
  if (focus_ >= 0) focus_ = -1;
}

std::future<RgbaImage> Display::request_snapshot(SnapshotKind kind, std::vector<std::uint64_t> min_sequences) {
  auto promise = std::make_shared<std::promise<RgbaImage>>();
  std::future<RgbaImage> result = promise->get_future();
  link_->post([this, kind, mins = std::move(min_sequences), promise]() mutable {
    snapshots_.push_back(Snapshot{kind, std::move(mins), std::move(*promise)});
  });
  return result;
}

void Display::set_playing(bool playing) {
  if (state_) state_->set_playing(playing);
  link_->paused.store(!playing);
}

void Display::step(int delta) {
  link_->steps.fetch_add(1);
  if (state_ && !step_timeline(delta)) {
    const std::uint64_t before = state_->time_ns();
    if (state_->step(delta)) mark_fresh(state_.get());
    sync_followers();
    // Back onto the clock's previous frame: the grid's time is the last of
    // that frame's stretch of the timeline (one step back, not a stretch).
    if (delta < 0 && !timeline_.empty() && state_->has_frame() && state_->time_ns() != before) {
      const auto end = std::lower_bound(timeline_.begin(), timeline_.end(), clock_next_time());
      if (end != timeline_.begin() && *std::prev(end) > state_->time_ns()) follow_to(*std::prev(end));
    }
  }
  for (auto& tile : followers_)
    if (!tile->paced()) tile->step(delta);  // live tiles: their next frame each
  link_->paused.store(true);
}

// One step of a recorded grid's timeline that stays within the clock frame's
// stretch: the next time before the clock's next frame, or back to an earlier
// time not before the clock's frame. False: the clock steps.
bool Display::step_timeline(int delta) {
  if (timeline_.empty() || !state_->has_frame() || !followed_any_ || delta == 0) return false;
  std::optional<std::uint64_t> to;
  if (delta > 0) {
    to = pending_step();
  } else if (followed_time_ > state_->time_ns()) {
    const auto at = std::lower_bound(timeline_.begin(), timeline_.end(), followed_time_);
    if (at != timeline_.begin()) to = std::max(*std::prev(at), state_->time_ns());
  }
  if (!to) return false;
  state_->set_playing(false);
  follow_to(*to);
  return true;
}

// The grid's time is the clock's frame's: the other tiles show their newest
// frame logged at or before it.
void Display::sync_followers() {
  if (followers_.empty() || !state_ || !state_->has_frame()) return;
  follow_to(state_->time_ns());
}

void Display::follow_to(std::uint64_t t) {
  followed_at_ = std::chrono::steady_clock::now();
  if (followed_any_ && t == followed_time_) return;
  for (auto& tile : followers_)
    if (tile->paced() && tile->follow(t)) mark_fresh(tile.get());  // live tiles show their newest instead
  followed_time_ = t;
  followed_any_ = true;
}

std::uint64_t Display::clock_next_time() const {
  const auto times = state_->log_times();
  const std::int64_t i = state_->frame_index();
  if (i < 0 || std::size_t(i) + 1 >= times.size()) return std::numeric_limits<std::uint64_t>::max();
  return times[std::size_t(i) + 1];
}

std::optional<std::uint64_t> Display::pending_step() const {
  if (timeline_.empty() || !state_ || !state_->has_frame() || !followed_any_) return std::nullopt;
  const auto next = std::upper_bound(timeline_.begin(), timeline_.end(), followed_time_);
  if (next == timeline_.end() || *next >= clock_next_time()) return std::nullopt;
  return *next;
}

// Due as the clock's own frames are: after the recorded gap divided by the
// speed (a gap over ten seconds plays as a tenth of a second), or at once
// when the display takes frames as fast as they come.
bool Display::step_due(std::uint64_t t, bool wait) const {
  if (wait || state_->no_vsync) return true;
  const double gap_s = double(t - followed_time_) / 1e9;
  const double s = (gap_s > 10.0 ? 0.1 : gap_s) / std::max(state_->speed, 0.01);
  return std::chrono::steady_clock::now() - followed_at_ >= std::chrono::duration<double>(s);
}

std::vector<view::ViewerState*> Display::tiles() const {
  std::vector<view::ViewerState*> out;
  if (!state_) return out;
  for (const auto& t : followers_) out.push_back(t.get());
  out.insert(out.begin() + std::ptrdiff_t(std::min(clock_tile_, out.size())), state_.get());
  return out;
}

std::vector<view::ViewerState*> Display::view_tiles() const {
  std::vector<view::ViewerState*> all = tiles();
  if (focus_ >= 0 && std::size_t(focus_) < all.size()) return {all[std::size_t(focus_)]};
  return all;
}

void Display::cycle_focus() {
  if (!grid()) return;
  focus_ = focus_ + 1 >= int(followers_.size() + 1) ? -1 : focus_ + 1;
}

void Display::focus_at(double x, double y, int view_w, int view_h) {
  if (!grid()) return;
  if (focus_ >= 0) {
    focus_ = -1;
    return;
  }
  const std::vector<view::ViewerState*> all = tiles();
  focus_ = view::tile_at(view::composed_size(all, view_w, view_h).shape, all.size(), view_w, view_h, x, y);
}

void Display::clear_probe() {
  ui_.probe = view::PixelProbe{};
  ui_.probe_tile = nullptr;
  ui_.probe_tile_name.clear();
}

// The pixel inspector: one stream's frame placed by `view`, or the grid's
// tile under the point (the focused one alone fills the view) in its cell.
void Display::probe_at(double x, double y, int view_w, int view_h, const view::ViewTransform& view) {
  clear_probe();
  if (!state_) return;
  if (!grid()) {
    ui_.probe = state_->probe(view, x, y);
    return;
  }
  const std::vector<view::ViewerState*> shown = view_tiles();
  const view::GridShape shape = view::composed_size(shown, view_w, view_h).shape;
  const int i = view::tile_at(shape, shown.size(), view_w, view_h, x, y);
  if (i < 0) return;
  view::ViewerState* tile = shown[std::size_t(i)];
  const std::vector<view::ViewerState*> all = tiles();
  const std::size_t number = std::size_t(std::find(all.begin(), all.end(), tile) - all.begin()) + 1;
  const FeedInfo& info = tile->info();
  ui_.probe_tile = tile;
  ui_.probe_tile_name = std::to_string(number) + " " + (info.topic.empty() ? info.stream : info.topic);
  if (tile->has_frame() && !tile->absent())
    ui_.probe = tile->probe(view::tile_view(*tile, view::grid_cell(shape, std::size_t(i), view_w, view_h)), x, y);
}

void Display::draw_grid_view(int width, int height, GLuint dest) {
  const std::vector<view::ViewerState*> shown = view_tiles();
  grid_.draw(shown, view::composed_size(shown, width, height).shape, width, height, dest);
}

void Display::draw_grid_overlays(int width, int height, ImDrawList& list, double px_scale) {
  const std::vector<view::ViewerState*> shown = view_tiles();
  view::TileGrid::draw_overlays(shown, view::composed_size(shown, width, height).shape, width, height, list,
                                px_scale);
}

void Display::focus_tile(int tile) {
  const std::size_t n = state_ ? tiles().size() : 0;
  if (tile < -1 || tile >= int(n)) {
    throw UsageError(link_->name + ": focus_tile(" + std::to_string(tile) + "): not in -1.." +
                     std::to_string(int(n) - 1) + " (" + std::to_string(n) + " tiles)");
  }
  focus_ = grid() ? tile : -1;
}

// Each tile's name, frame, log time and offset from the clock tile's.
std::vector<Viewer::TileStatus> Display::tile_status() const {
  std::vector<Viewer::TileStatus> out;
  if (!state_) return out;
  for (const view::ViewerState* t : tiles()) {
    Viewer::TileStatus s;
    s.name = t->info().topic.empty() ? t->info().stream : t->info().topic;
    if (!t->absent() && t->has_frame()) {
      s.frame = t->frame_index();
      s.time_ns = t->time_ns();
      if (s.time_ns && state_->time_ns()) s.offset_ns = std::int64_t(s.time_ns - state_->time_ns());
    }
    s.clock = grid() && t == state_.get() && state_->paced();
    out.push_back(std::move(s));
  }
  return out;
}

// The panel's line per tile (tile_status()).
void Display::fill_tile_lines() {
  ui_.tiles.clear();
  if (!grid()) return;
  const std::vector<Viewer::TileStatus> all = tile_status();
  const double t0 = double(state_->time_ns()) / 1e9;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Viewer::TileStatus& t = all[i];
    char line[256];
    if (t.frame < 0) {
      std::snprintf(line, sizeof line, "%zu %s: no frame yet", i + 1, t.name.c_str());
    } else if (t.time_ns == 0 || state_->time_ns() == 0) {  // a live frame without a timestamp
      std::snprintf(line, sizeof line, "%zu %s: frame %lld  (no timestamp)", i + 1, t.name.c_str(),
                    static_cast<long long>(t.frame));
    } else {
      const double at = double(t.time_ns) / 1e9;
      std::snprintf(line, sizeof line, "%zu %s: frame %lld  %.6f s  %+.3f ms", i + 1, t.name.c_str(),
                    static_cast<long long>(t.frame), at, (at - t0) * 1e3);
    }
    ui_.tiles.emplace_back(line);
    if (t.clock) ui_.tiles.back() += "  (clock)";
  }
}

void Display::step_back() {
  if (!state_ || !state_->paced() || !state_->info().seekable)
    throw UsageError("step_back: " + (state_ ? state_->info().name : std::string("the viewer")) +
                     " is not a file or recording (no frame to go back to)");
  step(-1);
}

void Display::seek(std::int64_t index) {
  if (!state_) throw UsageError("seek: nothing is playing");
  if (state_->seek(index)) mark_fresh(state_.get());
  followed_any_ = false;  // playing, the frame sought comes with the next advance: no step of the old stretch before it
  sync_followers();
  link_->finished.store(false);
}

// A tile whose new frame the next displayed() presents: the clock tile first
// (displayed() counts its latency), each tile once.
void Display::mark_fresh(view::ViewerState* tile) {
  if (std::find(fresh_tiles_.begin(), fresh_tiles_.end(), tile) != fresh_tiles_.end()) return;
  if (tile == state_.get()) fresh_tiles_.insert(fresh_tiles_.begin(), tile);
  else fresh_tiles_.push_back(tile);
}

void Display::run_tasks() {
  for (auto& task : link_->take_tasks()) task();
}

bool Display::advance(bool wait) {
  if (recorder_) {
    recorder_->poll();
    // A recording that stopped (a full disk) says so now, not at close.
    if (state_ && recorder_->errors().size() != record_errors_published_) publish_figures();
  }
  if (!state_) return false;
  const std::uint64_t steps = link_->steps.load();
  if (steps != steps_seen_) {
    steps_seen_ = steps;
    if (!state_->paced()) step_pending_ = true;
  }
  if (link_->finished.load()) return !fresh_tiles_.empty();  // a step back from the end
  const bool playing = state_->playing();
  // Paused, a tile still takes its first frame (and a step, one more).
  const bool go = playing || step_pending_;
  bool fresh = false;
  if (go || !state_->has_frame()) {
    if (const std::optional<std::uint64_t> t = pending_step()) {
      // Another tile's frame comes before the clock's next: its turn first, the clock waits.
      if (step_due(*t, wait)) follow_to(*t);
    } else {
      fresh = state_->advance(wait || (state_->paced() && !state_->has_frame()));
      if (!fresh) check_end();
    }
  }
  if (fresh) {
    mark_fresh(state_.get());
    sync_followers();
  }
  // Live tiles (pushed streams, publishers) take their newest frame each.
  for (auto& tile : followers_)
    if (!tile->paced() && (go || !tile->has_frame()) && tile->advance(false)) mark_fresh(tile.get());
  // With the frames a step or seek took since the last displayed(): they are
  // displayed (recorded, written, counted) as played ones are.
  const bool any = !fresh_tiles_.empty();
  if (any && !playing) step_pending_ = false;
  return any;
}

void Display::displayed() {
  ++displayed_;
  view::Stats& s = state_->stats();
  // The latency figures are the first tile's: only when its frame is the new one.
  const bool first_fresh = !fresh_tiles_.empty() && fresh_tiles_.front() == state_.get();
  if (first_fresh && state_->submitted() != std::chrono::steady_clock::time_point{})
    s.latency_ms.add(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                                state_->submitted()).count());
  if (encoder_) output_frame();
  if (recorder_) record_frame();
  fresh_tiles_.clear();
  publish_figures();  // before a snapshot returns: its caller may read the stats next
  serve_snapshots(SnapshotKind::Frame, [&] { return frame_image(); });
  check_end();
}

void Display::check_end() {
  if (!state_ || link_->finished.load()) return;
  const bool limit = play_.frames >= 0 && displayed_ >= play_.frames;
  if (!limit && (!state_->finished() || pending_step())) return;  // the grid's steps after the clock's last frame too
  link_->finished.store(true);
  if (play_.close_at_end) link_->request_close();
}

void Display::publish_figures() {
  const view::Stats& s = state_->stats();
  ViewerStats v;
  v.shown = std::uint64_t(s.frames);
  v.last_index = state_->frame_index();
  v.display_fps = s.fps;
  v.latency_p50_ms = s.latency_ms.percentile(50);
  v.latency_p99_ms = s.latency_ms.percentile(99);
  v.frame_p50_ms = s.frame_ms.percentile(50);
  v.frame_p99_ms = s.frame_ms.percentile(99);
  v.copy_ms = s.produce_ms.mean();
  v.map_ms = s.map_ms.mean();
  v.upload_ms = s.upload_ms.mean();
  v.draw_ms = s.draw_ms.mean();
  if (recorder_) {
    const RecorderStats r = recorder_->stats();
    v.recorded = r.recorded;
    v.record_dropped = r.dropped;
    v.record_skipped = r.skipped;
    std::vector<std::string> errors = recorder_->errors();
    record_errors_published_ = errors.size();
    link_->set_record_errors(std::move(errors));
  }
  const FeedInfo& i = state_->info();
  StreamInfo si{i.name, i.source, i.memory, i.format, i.width, i.height, i.ring, state_->renderer().convert_text()};
  link_->publish(v, si);
  link_->paused.store(!state_->playing());
}

bool Display::render_frame_rgba(std::vector<std::uint8_t>& rgba, int& w, int& h) {
  if (!state_) return false;
  if (grid()) return render_grid_rgba(rgba, w, h);
  if (!state_->has_frame()) return false;
  const FeedInfo& info = state_->info();
  w = int(info.width);
  h = int(info.height);
  if (!painter_) painter_ = std::make_unique<view::ImGuiOffscreen>();
  if (!frame_target_) frame_target_ = std::make_unique<view::FrameTarget>();
  frame_target_->resize(w, h);
  frame_target_->bind();
  const view::ViewTransform view{};
  state_->draw_frame(view, w, h);
  const media::OverlayFrame* f = state_->show_overlays ? state_->current_overlays() : nullptr;
  if (f && !f->empty()) {
    painter_->begin(w, h);
    state_->draw_overlays_into(painter_->background(), view, media::RectF{0, 0, float(w), float(h)});
    painter_->end();
  }
  frame_target_->read_rgba(rgba);
  view::FrameTarget::unbind();
  return true;
}

// Every tile (focus or not) at its own size in its cell, with its overlays.
bool Display::render_grid_rgba(std::vector<std::uint8_t>& rgba, int& w, int& h) {
  const std::vector<view::ViewerState*> all = tiles();
  const view::ComposedSize c = view::composed_size(all, options_.width, options_.height);
  if (c.width == 0) return false;  // no tile has a frame yet
  w = c.width;
  h = c.height;
  if (!painter_) painter_ = std::make_unique<view::ImGuiOffscreen>();
  if (!frame_target_) frame_target_ = std::make_unique<view::FrameTarget>();
  frame_target_->resize(w, h);
  grid_.draw(all, c.shape, w, h, frame_target_->framebuffer());
  painter_->begin(w, h);
  view::TileGrid::draw_overlays(all, c.shape, w, h, painter_->background());
  painter_->end();
  frame_target_->read_rgba(rgba);
  view::FrameTarget::unbind();
  return true;
}

RgbaImage Display::frame_image() {
  std::vector<std::uint8_t> rgba;
  int w = 0, h = 0;
  if (!render_frame_rgba(rgba, w, h)) return RgbaImage();
  return RgbaImage(std::uint32_t(w), std::uint32_t(h), std::move(rgba));
}

// The frame on display, as its planes are now (after any upload), with the
// overlays it is shown with (recorded even while hidden: they are the frame's
// data), at the wall-clock time it was displayed.
// Each tile that took a new frame, on a topic of its own in a grid (or for a
// named stream): "<record topic>/<tile name>" (FrameRecorder::capture).
void Display::record_frame() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const auto time_ns = std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
  for (view::ViewerState* tile : fresh_tiles_) {
    view::FrameRenderer& r = tile->renderer();
    if (!r.has_frame()) continue;
    const FeedInfo& info = tile->info();
    const std::string& name = !info.stream.empty() ? info.stream : grid() ? info.topic : info.stream;
    recorder_->capture({r.texture(0), r.texture(1), r.texture(2)}, r.format(), r.width(), r.height(),
                       tile->effective_colorimetry(), tile->current_overlays(), time_ns, name);
  }
}

void Display::output_frame() {
  media::Image8 img;
  int w = 0, h = 0;
  if (!render_frame_rgba(img.pixels, w, h)) return;
  img.width = std::uint32_t(w);
  img.height = std::uint32_t(h);
  img.channels = 4;
  encoder_->submit(frame_png(options_.output_dir, displayed_ - 1), std::move(img));
}

// Ready when every tile shows the newest frame handed to it before the
// request (paused or played: what is there).
bool Display::snapshot_ready(const Snapshot& s) const {
  if (!state_ || !state_->playing() || state_->paced()) return true;
  const std::vector<view::ViewerState*> all = tiles();
  for (std::size_t i = 0; i < s.min_sequences.size() && i < all.size(); ++i)
    if (all[i]->sequence() < s.min_sequences[i]) return false;
  return true;
}

bool Display::snapshots_waiting(SnapshotKind kind) const {
  for (const Snapshot& s : snapshots_)
    if (s.kind == kind && snapshot_ready(s)) return true;
  return false;
}

void Display::serve_snapshots(SnapshotKind kind, const std::function<RgbaImage()>& image) {
  if (!snapshots_waiting(kind)) return;
  std::optional<RgbaImage> img;
  for (auto it = snapshots_.begin(); it != snapshots_.end();) {
    if (it->kind != kind || !snapshot_ready(*it)) {
      ++it;
      continue;
    }
    try {
      if (!img) img = image();
      it->result.set_value(*img);
    } catch (...) {
      it->result.set_exception(std::current_exception());
    }
    it = snapshots_.erase(it);
  }
}

void Display::write_png_now(const std::string& path, const RgbaImage& image) noexcept {
  try {
    media::write_png(path, to_image8(image));
  } catch (const std::exception& e) {
    link_->set_output(0, {path + ": " + e.what()});
  }
}

void Display::notice_gl_error(const GlDebugMessage& m) { gl_sink_(m); }

void Display::fail(std::exception_ptr error) noexcept {
  if (!error_) error_ = error;
  link_->request_close();
}

void Display::finish() noexcept {
  for (Snapshot& s : snapshots_) {
    try {
      const std::string why = DisplayLink::stop_reason(error_);  // the link has it only once marked closed
      s.result.set_exception(std::make_exception_ptr(
          ViewerClosed(link_->name + " closed before the snapshot" + (why.empty() ? "" : ": " + why))));
    } catch (...) {
    }
  }
  snapshots_.clear();
  if (recorder_) {  // its last readbacks, the summary and footer: the figures below then count them
    recorder_->finish();
    link_->set_record_errors(recorder_->errors());
  }
  try {
    if (state_) publish_figures();
  } catch (...) {
  }
  fresh_tiles_.clear();
  clear_probe();
  followers_.clear();
  grid_.release();
  state_.reset();  // stops the feed (Vulkan objects go while the context is current)
  feed_context_.reset();
  painter_.reset();
  frame_target_.reset();
  if (encoder_) {
    try {
      encoder_->flush();
      link_->set_output(encoder_->written(), encoder_->take_errors());
    } catch (const std::exception& e) {
      link_->set_output(0, {std::string("PNG output: ") + e.what()});
    }
    encoder_.reset();
  }
}

}  // namespace handoff::view
