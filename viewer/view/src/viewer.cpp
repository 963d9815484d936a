// handoff::Viewer: opens a display (a window on the process's GLFW thread, or
// a headless EGL view on a thread of its own), and hands frames to it through
// the push ring, or plays a built-in source through a feed.
#include <handoff/viewer.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include <handoff/log.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/scene.hpp>

#include "display.hpp"
#include "feeds/attach_feed.hpp"
#include "feeds/pipeline_feed.hpp"
#include "feeds/push_feed.hpp"
#include "feeds/recording_feed.hpp"
#include "feeds/vulkan_scene_feed.hpp"
#include "headless_display.hpp"
#include "layer_copy.hpp"
#include "value_range.hpp"
#include "push_ring.hpp"
#include "window_display.hpp"

namespace handoff {
namespace view {

class ViewerImpl {
 public:
  explicit ViewerImpl(ViewerOptions options);
  ~ViewerImpl() { close(); }

  // What Viewer's methods do (viewer.hpp says what each means).
  void show(const Frame& frame, const media::OverlayFrame& overlays, std::string_view name, CudaStream stream) {
    PushRing& r = ring(name);
    if (overlays.layers.empty()) return r.show(frame, overlays, stream);
    // The layers are copied (and converted) before the frame: the caller's arrays are free on return.
    r.show(frame, copy_layers(overlays, options_.cuda_device), stream);
  }
  std::unique_ptr<AcquiredSlot> acquire(PixelFormat format, std::uint32_t width, std::uint32_t height,
                                        Colorimetry colorimetry, std::string_view name) {
    return ring(name).acquire(format, width, height, colorimetry);
  }
  void present(std::unique_ptr<AcquiredSlot> slot, const media::OverlayFrame& overlays);
  std::shared_ptr<GlWorker> gl_worker() const;
  void close() noexcept;
  void play(const Viewer::PlayOptions& o);
  void attach(std::string_view name_or_path, const AttachOptions& o);
  std::vector<AttachStatus> attach_statuses() const;
  RgbaImage snapshot(SnapshotKind kind);
  ViewerStats stats() const;
  DisplayLink& link() const { return *link_; }
  bool windowed() const noexcept { return windowed_; }
  void set_paused(bool paused);
  bool wait_show_unblocked_for(std::string_view name, std::chrono::milliseconds timeout) const {
    const auto all = rings();  // no tile is made for a stream here
    for (const auto& r : all)
      if (name.empty() ? r == all.front() : r->stream() == name) return r->wait_unblocked_for(timeout);
    return true;
  }
  // Runs `what` on the display thread, waiting for it (DisplayLink::call).
  void on_display(std::function<void(Display&)> what, const std::string& doing);

 private:
  void notice(const std::string& text) const {
    if (options_.on_notice) options_.on_notice(text);
    else log(LogLevel::Warning, link_->name + ": " + text);
  }
  // The ring of stream `name` (empty: the first tile's), made with its tile on first use.
  PushRing& ring(std::string_view name);
  std::vector<std::shared_ptr<PushRing>> rings() const {
    std::lock_guard lock(streams_mutex_);
    return rings_;
  }

  ViewerOptions options_;
  std::shared_ptr<DisplayLink> link_ = std::make_shared<DisplayLink>();
  std::unique_ptr<Display> display_;
  bool windowed_ = false;           // display_ is a window (not headless)
  std::shared_ptr<PushRing> ring_;  // the first tile's (rings_[0])
  mutable std::mutex streams_mutex_;
  std::mutex add_stream_mutex_;  // held while a stream's tile is added
  std::vector<std::shared_ptr<PushRing>> rings_;  // streams_mutex_: one per tile, in tile order
  std::atomic<bool> pushed_{false}, played_{false};
  std::mutex close_mutex_;
  mutable std::mutex attach_mutex_;
  std::vector<std::shared_ptr<AttachLink>> attached_;  // attach_mutex_: one per tile
};

namespace {

bool display_available() {
  const char* d = std::getenv("DISPLAY");
  const char* w = std::getenv("WAYLAND_DISPLAY");
  return (d && *d) || (w && *w);
}

DisplayOptions display_options(const ViewerOptions& o) {
  DisplayOptions d;
  d.title = o.title;
  d.width = o.width;
  d.height = o.height;
  d.vsync = o.vsync;
  d.show_ui = o.show_ui;
  d.show_overlays = o.show_overlays;
  d.output_dir = o.output_dir;
  d.screenshot = o.screenshot;
  d.gl_debug = o.gl_debug;
  d.record = o.record;
  return d;
}

// A control character in a name shown on screen (0x00..0x1f, 0x7f), as "0x0a", or nothing.
std::optional<std::string> first_control_character(std::string_view text) {
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      return std::string(hex);
    }
  }
  return std::nullopt;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const auto ca = std::filesystem::weakly_canonical(a, ea), cb = std::filesystem::weakly_canonical(b, eb);
  return ea || eb ? a == b : ca == cb;
}

// The refusal of an output over an input (output_over_input). The screenshot
// is then dropped (ViewerImpl::play); the recording was created with the
// viewer, over the input already (viewer.hpp says so).
void check_outputs(const ViewerOptions& v, const Viewer::PlayOptions& p, const std::string& viewer) {
  const auto clash = output_over_input(v, p);
  if (!clash) return;
  using In = OutputOverInput::Input;
  const bool record = clash->output == OutputOverInput::Output::Record;
  const bool bag = clash->input == In::File && std::filesystem::is_directory(p.file);
  const char* input = clash->input == In::File       ? (bag ? "in the bag folder PlayOptions::file, named as its "
                                                                  "files are (metadata.yaml, .mcap, .db3, .zstd)"
                                                            : "PlayOptions::file")
                      : clash->input == In::Overlays ? "PlayOptions::overlays"
                                                     : "ViewerOptions::record.path";
  throw UsageError(viewer + ": " + (record ? "ViewerOptions::record.path" : "ViewerOptions::screenshot") + " '" +
                   clash->path + "' is " + input + "; " +
                   (record ? (bag ? "the recording, made with the viewer, may have replaced one of them"
                                  : "the recording, made with the viewer, replaced it")
                           : "it would be overwritten"));
}

void check_options(const ViewerOptions& o) {
  if (const auto c = first_control_character(o.title))
    throw UsageError("ViewerOptions::title has a control character (" + *c + ")");
  // The GL limit (GL_MAX_TEXTURE_SIZE) is checked where the display's framebuffer is made.
  if (o.width < 64 || o.height < 64 || o.width > int(kMaxFrameDimension) || o.height > int(kMaxFrameDimension))
    throw UsageError("ViewerOptions: width x height " + std::to_string(o.width) + "x" + std::to_string(o.height) +
                     " outside 64.." + std::to_string(kMaxFrameDimension));
  if (o.ring < 3 || o.ring > 64)
    throw UsageError("ViewerOptions::ring: " + std::to_string(o.ring) + " buffers; 3..64 are allowed");
  if (o.cuda_device < 0) throw UsageError("ViewerOptions::cuda_device: " + std::to_string(o.cuda_device));
  if (o.value_range) check_value_range(*o.value_range, "ViewerOptions::value_range");
}

CudaGlOptions interop_options(const ViewerOptions& o) {
  CudaGlOptions co;
  co.access = CudaGlAccess::WriteDiscard;
  co.backend = o.memory == ViewerMemory::Cuda ? MapBackend::Cuda
               : o.memory == ViewerMemory::Host ? MapBackend::Host
                                                : MapBackend::Auto;
  co.cuda_device = o.cuda_device;
  return co;
}

// What every feed's playback takes from the viewer's options.
PlayConfig play_config(const ViewerOptions& o) {
  PlayConfig cfg;
  cfg.state.show_overlays = o.show_overlays;
  cfg.state.convert = o.convert;
  cfg.state.value_range = o.value_range;
  cfg.state.no_vsync = !o.vsync;
  return cfg;
}

}  // namespace

// Window where one works (Auto), else headless with a notice.
ViewerImpl::ViewerImpl(ViewerOptions options) : options_(std::move(options)) {
  check_options(options_);
  link_->name = "viewer '" + options_.title + "'";
  const DisplayOptions d = display_options(options_);
  if (options_.display != ViewerDisplay::Headless) {
    std::string why;
    if (!display_available()) {
      why = "no display (DISPLAY is not set)";
    } else {
      try {
        display_ = std::make_unique<WindowDisplay>(d, link_);
        windowed_ = true;
      } catch (const Error& e) {
        why = std::string("cannot open a window (") + e.what() + ")";
      }
    }
    if (!display_) {
      if (options_.display == ViewerDisplay::Window) throw Error(link_->name + ": " + why);
      notice(why + ": rendering headless through EGL");
    }
  }
  if (!display_) display_ = std::make_unique<HeadlessDisplay>(d, link_);
  GlRingOptions ro{options_.ring, interop_options(options_), link_->name};
  ring_ = std::make_shared<PushRing>(display_->share(), ro, options_.paused_show, [link = link_] { link->wake(); });
  rings_.push_back(ring_);
  PlayConfig cfg = play_config(options_);
  Display* display = display_.get();
  link_->call([display, ring = ring_, cfg] { display->use_feed(std::make_unique<PushFeed>(ring), cfg); },
              link_->name + ": its display taking the application's frames");
}

void ViewerImpl::close() noexcept {
  std::lock_guard lock(close_mutex_);
  for (const auto& r : rings()) r->close(link_->name + " is closed");
  if (display_) display_->close();
}

namespace {

void check_stream_name(std::string_view name, const std::string& viewer) {
  if (name.size() > 64)
    throw UsageError(viewer + ": stream name '" + std::string(name.substr(0, 64)) + "...' is longer than 64 bytes");
  if (const auto c = first_control_character(name))
    throw UsageError(viewer + ": stream name has a control character (" + *c + "); it is shown as the tile's title");
}

}  // namespace

// The first named stream takes the first tile when nothing was shown there;
// every other name gets a ring and a tile of its own, added on the display
// thread before its first frame is handed in.
PushRing& ViewerImpl::ring(std::string_view name) {
  if (!link_->open()) throw ViewerClosed(link_->closed_reason());
  if (played_.load()) throw UsageError(link_->name + " plays a source (play()): show / acquire / present need a "
                                       "viewer of its own");
  pushed_.store(true);
  if (name.empty()) return *ring_;
  check_stream_name(name, link_->name);
  const auto find = [&]() -> PushRing* {
    std::lock_guard lock(streams_mutex_);
    for (const auto& r : rings_)
      if (r->stream() == name) return r.get();
    if (rings_.size() == 1 && ring_->stream().empty() && ring_->counters().submitted == 0) {
      ring_->set_stream(std::string(name));
      return ring_.get();
    }
    return nullptr;
  };
  if (PushRing* r = find()) return *r;
  // One tile added at a time (tile order is rings_' order); close() does not wait for this lock.
  std::lock_guard adding(add_stream_mutex_);
  if (PushRing* r = find()) return *r;
  const std::size_t tiles = rings().size();
  if (tiles >= Viewer::kMaxStreams)
    throw UsageError(link_->name + ": stream '" + std::string(name) + "' would be tile " + std::to_string(tiles + 1) +
                     "; a viewer shows at most " + std::to_string(Viewer::kMaxStreams));
  GlRingOptions ro{options_.ring, interop_options(options_), link_->name + " stream '" + std::string(name) + "'"};
  auto r = std::make_shared<PushRing>(display_->share(), ro, options_.paused_show, [link = link_] { link->wake(); });
  r->set_stream(std::string(name));
  r->set_paused(link_->paused.load());
  Display* display = display_.get();
  link_->call([display, r, cfg = play_config(options_)] { display->add_tile(std::make_unique<PushFeed>(r), cfg); },
              link_->name + ": its display adding stream '" + std::string(name) + "'");
  std::lock_guard lock(streams_mutex_);
  rings_.push_back(r);
  return *r;
}

namespace {

// A grid of a recording's topics: the clock's feed (returned) and the
// others' (`followers`, in the listed order), with `clock_tile` its place
// among the tiles. All tiles share one timeline, every tile's log times
// (Display): the clock paces it, and is the topic whose first frame comes
// first (on a tie the one with the most frames, then the first listed), so
// no tile has a frame before the timeline starts. Every topic is opened here,
// so one that is not in the recording fails before anything plays; with
// all_images, the topics the listing says cannot be shown are left out, each
// named in a warning, and so are those past Viewer::kMaxStreams tiles (one
// warning naming them); more topics named is a UsageError. Followers loop
// (the clock may go back to the start).
// The overlay topics asked for are drawn on every tile.
std::unique_ptr<Feed> grid_feeds(const Viewer::PlayOptions& o, const GlRingOptions& ro, bool loop,
                                 std::vector<std::unique_ptr<Feed>>& followers, std::size_t& clock_tile) {
  std::vector<std::string> topics = o.topics;
  for (std::size_t i = 0; i < topics.size(); ++i)
    if (std::find(topics.begin(), topics.begin() + std::ptrdiff_t(i), topics[i]) != topics.begin() + std::ptrdiff_t(i))
      throw UsageError("PlayOptions::topics names " + topics[i] + " twice");
  if (topics.size() > Viewer::kMaxStreams)
    throw UsageError("PlayOptions::topics: " + std::to_string(topics.size()) + " topics; a viewer shows at most " +
                     std::to_string(Viewer::kMaxStreams) + " side by side");
  if (o.all_images) {
    std::vector<std::string> warnings;
    for (const media::RecordingTopicListing& t : media::list_recording_topics(o.file, &warnings)) {
      if (std::find(topics.begin(), topics.end(), t.topic) != topics.end()) continue;
      if (t.kind == media::RecordingTopicListing::Kind::Image) topics.push_back(t.topic);
      else if (t.kind == media::RecordingTopicListing::Kind::NotShown)
        log(LogLevel::Warning, o.file + ": topic " + t.topic + " (" + t.type + ") is not shown: " + t.note);
    }
    if (topics.empty()) throw media::ParseError(o.file, "", "", "no topic of the recording can be shown (--list says why)");
    if (topics.size() > Viewer::kMaxStreams) {
      std::string left;
      for (std::size_t i = Viewer::kMaxStreams; i < topics.size(); ++i) left += (left.empty() ? "" : ", ") + topics[i];
      log(LogLevel::Warning, o.file + ": " + std::to_string(topics.size()) + " image topics; a viewer shows at most " +
                                 std::to_string(Viewer::kMaxStreams) + " side by side: showing the first " +
                                 std::to_string(Viewer::kMaxStreams) + ", leaving out " + left + " (use --topic to pick)");
      topics.resize(Viewer::kMaxStreams);
    }
  }
  std::vector<std::unique_ptr<RecordingFeed>> feeds;
  for (const std::string& topic : topics)
    feeds.push_back(std::make_unique<RecordingFeed>(o.file, topic, ro, true, o.overlay_topics));
  const auto first_time = [&](std::size_t i) {
    const auto t = feeds[i]->log_times();
    return t.empty() ? std::numeric_limits<std::uint64_t>::max() : t.front();
  };
  clock_tile = 0;
  for (std::size_t i = 1; i < feeds.size(); ++i) {
    const std::uint64_t a = first_time(i), b = first_time(clock_tile);
    if (a < b || (a == b && feeds[i]->log_times().size() > feeds[clock_tile]->log_times().size())) clock_tile = i;
  }
  feeds[clock_tile]->set_loop(loop);
  std::unique_ptr<Feed> clock;
  for (std::size_t i = 0; i < feeds.size(); ++i) {
    if (i == clock_tile) clock = std::move(feeds[i]);
    else followers.push_back(std::move(feeds[i]));
  }
  return clock;
}

}  // namespace

// Opens the source here (bad input throws on the caller's thread), then hands
// it to the display, which starts it (the Vulkan scene may fail there).
void ViewerImpl::play(const Viewer::PlayOptions& o) {
  if (!link_->open()) throw ViewerClosed(link_->closed_reason());
  if (pushed_.load()) throw UsageError(link_->name + ": play() after frames were shown (a viewer plays or shows)");
  if (played_.load()) throw UsageError(link_->name + ": play() was called already");
  const bool recording = o.source == Viewer::Source::File && is_recording_path(o.file);
  if (!o.topic.empty() && !recording)
    throw UsageError(link_->name + ": PlayOptions::topic ('" + o.topic + "') is for recordings (.mcap / .db3 files)");
  if ((!o.topics.empty() || o.all_images) && !recording)
    throw UsageError(link_->name + ": PlayOptions::topics / all_images are for recordings (.mcap / .db3 files)");
  if (!o.overlay_topics.empty() && !recording)
    throw UsageError(link_->name + ": PlayOptions::overlay_topics is for ROS 2 bags (.mcap / .db3 files, bag folders)");
  for (const auto* list : {&o.topics, &o.overlay_topics})
    if (std::find(list->begin(), list->end(), std::string()) != list->end())
      throw UsageError(link_->name + ": PlayOptions::" + (list == &o.topics ? "topics" : "overlay_topics") +
                       " has an empty topic name");
  if (o.frames == 0 || o.frames < -1)
    throw UsageError(link_->name + ": PlayOptions::frames is " + std::to_string(o.frames) +
                     "; 1 or more, or -1 for the source's end");
  if (o.bench_boxes > Viewer::kMaxBenchBoxes)
    throw UsageError(link_->name + ": PlayOptions::bench_boxes is " + std::to_string(o.bench_boxes) + "; at most " +
                     std::to_string(Viewer::kMaxBenchBoxes));
  try {
    check_outputs(options_, o, link_->name);
  } catch (const UsageError&) {
    // Refused, and the screenshot at close must not write over the input either.
    on_display([](Display& d) { d.forget_screenshot(); }, "dropping its screenshot");
    throw;
  }
  if (recording && (o.width || o.height || o.format))
    log(LogLevel::Warning, "the size and format given for " + o.file +
                               " are ignored (a recording's messages say them)");
  const bool headless = display_->headless();
  media::SceneOptions so;
  if (o.width) so.width = o.width;
  if (o.height) so.height = o.height;
  if (o.format) so.format = *o.format;
  if (o.matrix) so.colorimetry.matrix = *o.matrix;
  if (o.range) so.colorimetry.range = *o.range;
  const GlRingOptions ro{options_.ring, interop_options(options_), {}};
  const bool loop = o.loop.value_or(!headless);
  std::unique_ptr<Feed> feed;
  std::vector<std::unique_ptr<Feed>> followers;  // a grid's other tiles
  std::size_t clock_tile = 0;                    // where `feed` goes among them
  switch (o.source) {
    case Viewer::Source::Scene: feed = std::make_unique<SceneFeed>(so, ro); break;
    case Viewer::Source::File:
      if (recording && (o.topics.size() > 1 || o.all_images)) feed = grid_feeds(o, ro, loop, followers, clock_tile);
      else if (recording)
        feed = std::make_unique<RecordingFeed>(o.file, o.topics.empty() ? o.topic : o.topics[0], ro, loop,
                                               o.overlay_topics);
      else
        feed = std::make_unique<FileFeed>(o.file, FileOptions{o.width, o.height, o.format, o.matrix, o.range}, ro,
                                          loop);
      break;
    case Viewer::Source::VulkanScene: {
      VulkanSceneOptions vo;
      vo.scene = so;
      vo.validation = o.vulkan_validation;
      vo.on_message = [link = link_](const std::string& m) {
        log(LogLevel::Warning, "Vulkan validation: " + m);
        link->count_vulkan_message(m);
      };
      feed = make_vulkan_scene_feed(std::move(vo));
      break;
    }
  }
  played_.store(true);  // from here show() is refused (a source opened above may take a while to start)
  PlayConfig cfg = play_config(options_);
  cfg.state.overlay_file = o.overlays;
  cfg.state.bench_boxes = o.bench_boxes;
  cfg.state.speed = o.speed;
  cfg.state.no_vsync = cfg.state.no_vsync || o.fast;
  cfg.state.matrix = o.matrix;
  cfg.state.range = o.range;
  cfg.frames = o.frames;
  // Headless, an endless source (the scenes) plays 60 frames unless told.
  if (cfg.frames < 0 && headless && o.source != Viewer::Source::File) cfg.frames = 60;
  cfg.close_at_end = o.close_at_end;
  Display* display = display_.get();
  try {
    link_->call(
        [display, feed = std::move(feed), cfg, followers = std::move(followers), clock_tile]() mutable {
          display->use_feed(std::move(feed), cfg, std::move(followers), clock_tile);
        },
        link_->name + ": its display starting the source");
  } catch (...) {
    played_.store(false);  // the display goes on with the application's frames
    throw;
  }
}

// The subscriber starts here (a bad name throws on the caller's thread), then
// the display takes the attach feed instead of the application's frames.
void ViewerImpl::attach(std::string_view name_or_path, const AttachOptions& o) {
  if (!link_->open()) throw ViewerClosed(link_->closed_reason());
  if (pushed_.load()) throw UsageError(link_->name + ": attach() after frames were shown (a viewer attaches or shows)");
  std::size_t tiles = 0;
  {
    std::lock_guard lock(attach_mutex_);
    tiles = attached_.size();
    for (const auto& l : attached_) {
      const AttachStatus s = l->status();
      if (name_or_path == s.publisher || name_or_path == s.socket)
        throw UsageError(link_->name + ": attach('" + std::string(name_or_path) + "'): attached to it already");
    }
  }
  if (played_.load() && tiles == 0) throw UsageError(link_->name + ": attach() after play()");
  if (tiles >= Viewer::kMaxStreams)
    throw UsageError(link_->name + ": attach('" + std::string(name_or_path) + "') would be tile " +
                     std::to_string(tiles + 1) + "; a viewer shows at most " + std::to_string(Viewer::kMaxStreams));
  AttachLinkOptions lo;
  lo.allow_group = o.allow_group;
  lo.wake = [link = link_] { link->wake(); };
  lo.notice = [on = options_.on_notice, name = link_->name](const std::string& text) {
    if (on) on(text);
    else log(LogLevel::Warning, name + ": " + text);
  };
  auto live = std::make_shared<AttachLink>(name_or_path, std::move(lo));
  if (!live->wait_for(LinkState::Connected, std::chrono::milliseconds(200)) &&
      live->subscriber_status().state != LinkState::Failed)  // a failure ends the display, saying why
    notice(live->subscriber_status().message);  // "waiting for publisher 'cam0' at ..."
  GlRingOptions ro{options_.ring, interop_options(options_), link_->name + " (attached)"};
  auto feed = std::make_unique<AttachFeed>(live, display_->share(), ro);
  const bool first = !played_.exchange(true);
  PlayConfig cfg = play_config(options_);
  cfg.frames = o.frames;
  cfg.state.attach_status = [live] { return std::optional<AttachStatus>(live->status()); };
  Display* display = display_.get();
  try {
    if (first)
      link_->call([display, feed = std::move(feed), cfg]() mutable { display->use_feed(std::move(feed), cfg); },
                  link_->name + ": its display attaching");
    else  // another publisher: a tile of its own beside the others
      link_->call([display, feed = std::move(feed), cfg]() mutable { display->add_tile(std::move(feed), cfg); },
                  link_->name + ": its display adding a tile for '" + std::string(name_or_path) + "'");
  } catch (...) {
    if (first) played_.store(false);
    throw;
  }
  std::lock_guard lock(attach_mutex_);
  attached_.push_back(std::move(live));
}

ViewerStats ViewerImpl::stats() const {
  ViewerStats s = link_->stats();
  if (played_.load()) {
    s.submitted = s.shown;
  } else {
    s.submitted = s.dropped = 0;
    for (const auto& r : rings()) {
      const PushRing::Counters c = r->counters();
      s.submitted += c.submitted;
      s.dropped += c.dropped;
    }
  }
  return s;
}

void ViewerImpl::present(std::unique_ptr<AcquiredSlot> slot, const media::OverlayFrame& overlays) {
  if (!slot) throw UsageError("Viewer::present: an empty ViewerFrame (not acquired, or presented already)");
  const std::vector<std::shared_ptr<PushRing>> mine = rings();
  if (std::find(mine.begin(), mine.end(), slot->ring) == mine.end())
    throw UsageError("Viewer::present: the frame was acquired from another viewer");
  if (overlays.layers.empty()) return slot->ring->present(*slot, overlays);
  slot->ring->present(*slot, copy_layers(overlays, options_.cuda_device));  // a refusal gives the slot back
}

std::shared_ptr<GlWorker> ViewerImpl::gl_worker() const {
  const std::shared_ptr<GlShare>& share = display_->share();
  return std::shared_ptr<GlWorker>(share, &share->worker());  // keeps the share group alive
}

std::vector<AttachStatus> ViewerImpl::attach_statuses() const {
  std::vector<std::shared_ptr<AttachLink>> live;
  {
    std::lock_guard lock(attach_mutex_);
    live = attached_;
  }
  std::vector<AttachStatus> out;
  for (const auto& l : live) out.push_back(l->status());
  return out;
}

void ViewerImpl::set_paused(bool paused) {
  for (const auto& r : rings()) r->set_paused(paused);  // producers see it at once (PausedShow::Block)
  link_->paused.store(paused);
  on_display([paused](Display& d) { d.set_playing(!paused); }, "pausing");
}

void ViewerImpl::on_display(std::function<void(Display&)> what, const std::string& doing) {
  Display* display = display_.get();
  link_->call([display, what = std::move(what)] { what(*display); }, link_->name + ": its display " + doing);
}

RgbaImage ViewerImpl::snapshot(SnapshotKind kind) {
  if (!link_->open()) throw ViewerClosed(link_->closed_reason());
  std::vector<std::uint64_t> newest;  // by tile
  if (!played_.load())
    for (const auto& r : rings()) newest.push_back(r->counters().last_sequence);
  std::future<RgbaImage> image = display_->request_snapshot(kind, newest);
  const auto limit = wait_limit();
  if (image.wait_for(limit) != std::future_status::ready) {
    std::string frames;
    for (std::uint64_t n : newest) frames += (frames.empty() ? "" : ", ") + std::to_string(n);
    throw WaitTimeout(link_->name + ": a snapshot (the display has not shown frame " + frames + ")", limit);
  }
  try {
    return image.get();
  } catch (const std::future_error&) {
    throw ViewerClosed(link_->closed_reason());
  }
}

}  // namespace view

// --- RgbaImage -----------------------------------------------------------------------

RgbaImage::RgbaImage(std::uint32_t width, std::uint32_t height, std::vector<std::uint8_t> pixels)
    : width_(width), height_(height) {
  if (pixels.size() != std::size_t(width) * height * 4)
    throw UsageError("RgbaImage: " + std::to_string(pixels.size()) + " bytes for " + std::to_string(width) + "x" +
                     std::to_string(height) + " RGBA8");
  pixels_ = std::make_shared<const std::vector<std::uint8_t>>(std::move(pixels));
}

const std::uint8_t* RgbaImage::data() const noexcept { return pixels_ ? pixels_->data() : nullptr; }

const std::uint8_t* RgbaImage::pixel(std::uint32_t x, std::uint32_t y) const {
  if (x >= width_ || y >= height_)
    throw UsageError("RgbaImage::pixel: (" + std::to_string(x) + ", " + std::to_string(y) + ") outside " +
                     std::to_string(width_) + "x" + std::to_string(height_));
  return data() + (std::size_t(y) * width_ + x) * 4;
}

// --- ViewerFrame -------------------------------------------------------------------------

ViewerFrame::ViewerFrame() noexcept = default;
ViewerFrame::ViewerFrame(std::unique_ptr<view::AcquiredSlot> slot) noexcept : slot_(std::move(slot)) {}
ViewerFrame::ViewerFrame(ViewerFrame&&) noexcept = default;
ViewerFrame& ViewerFrame::operator=(ViewerFrame&&) noexcept = default;
ViewerFrame::~ViewerFrame() = default;

Frame& ViewerFrame::frame() {
  if (!slot_) throw UsageError("ViewerFrame::frame: empty (not acquired, or presented already)");
  return slot_->frame;
}

const Frame& ViewerFrame::frame() const {
  if (!slot_) throw UsageError("ViewerFrame::frame: empty (not acquired, or presented already)");
  return slot_->frame;
}

// --- Viewer ---------------------------------------------------------------------------------

Viewer::Viewer(ViewerOptions options) : impl_(std::make_shared<view::ViewerImpl>(std::move(options))) {}

Viewer::~Viewer() {
  try {
    impl_->close();
  } catch (const std::exception& e) {
    log(LogLevel::Error, std::string("~Viewer: ") + e.what());
  }
}

void Viewer::show(const Frame& frame, const media::OverlayFrame& overlays, CudaStream stream) {
  impl_->show(frame, overlays, {}, stream);
}

void Viewer::show(const Frame& frame, const media::OverlayFrame& overlays, std::string_view stream,
                  CudaStream cuda_stream) {
  impl_->show(frame, overlays, stream, cuda_stream);
}

std::shared_ptr<GlWorker> Viewer::gl_worker() const { return impl_->gl_worker(); }

ViewerFrame Viewer::acquire(PixelFormat format, std::uint32_t width, std::uint32_t height, Colorimetry colorimetry,
                            std::string_view stream) {
  return ViewerFrame(impl_->acquire(format, width, height, colorimetry, stream));
}

void Viewer::present(ViewerFrame&& frame, const media::OverlayFrame& overlays) {
  impl_->present(std::move(frame.slot_), overlays);
}

RgbaImage Viewer::snapshot(SnapshotKind kind) { return impl_->snapshot(kind); }

bool Viewer::is_open() const noexcept { return impl_->link().open() && !impl_->link().close_requested(); }
bool Viewer::windowed() const noexcept { return impl_->windowed(); }

void Viewer::close() { impl_->close(); }

void Viewer::wait_closed() {
  impl_->link().wait_closed();
  if (std::exception_ptr e = impl_->link().error()) std::rethrow_exception(e);
}

bool Viewer::wait_closed_for(std::chrono::milliseconds timeout) {
  if (!impl_->link().wait_closed_for(timeout)) return false;
  if (std::exception_ptr e = impl_->link().error()) std::rethrow_exception(e);
  return true;
}

ViewerStats Viewer::stats() const { return impl_->stats(); }
StreamInfo Viewer::stream() const { return impl_->link().stream(); }
ViewerDiagnostics Viewer::diagnostics() const { return impl_->link().diagnostics(); }

bool Viewer::paused() const noexcept { return impl_->link().paused.load(); }
void Viewer::set_paused(bool paused) { impl_->set_paused(paused); }
namespace {

// `out` is in the ROS 2 bag folder `folder` under a name the bag may be read
// from: metadata.yaml or a storage file's (.mcap, .db3, .zstd).
bool in_bag_folder(const std::string& out, const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return false;
  const fs::path path(out);
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!view::same_file(parent.string(), folder)) return false;
  std::string ext = path.extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return path.filename() == "metadata.yaml" || ext == ".mcap" || ext == ".db3" || ext == ".zstd";
}

}  // namespace

std::optional<OutputOverInput> output_over_input(const ViewerOptions& v, const Viewer::PlayOptions& p) {
  using Out = OutputOverInput::Output;
  using In = OutputOverInput::Input;
  const std::pair<Out, const std::string*> outputs[] = {{Out::Record, &v.record.path}, {Out::Screenshot, &v.screenshot}};
  const std::pair<In, const std::string*> inputs[] = {
      {In::File, &p.file}, {In::Overlays, &p.overlays}, {In::Record, &v.record.path}};
  for (const auto& [output, out] : outputs)
    for (const auto& [input, in] : inputs)
      if (in != out && !out->empty() && !in->empty() &&
          (view::same_file(*out, *in) || (input == In::File && in_bag_folder(*out, *in))))
        return OutputOverInput{output, input, *out};
  return std::nullopt;
}

bool Viewer::wait_show_unblocked_for(std::string_view stream, std::chrono::milliseconds timeout) {
  return impl_->wait_show_unblocked_for(stream, timeout);
}
void Viewer::step() { impl_->on_display([](view::Display& d) { d.step(+1); }, "stepping"); }
void Viewer::step_back() { impl_->on_display([](view::Display& d) { d.step_back(); }, "stepping back"); }
void Viewer::seek(std::int64_t index) {
  impl_->on_display([index](view::Display& d) { d.seek(index); }, "seeking");
}
std::uint64_t Viewer::steps() const noexcept { return impl_->link().steps.load(); }
std::vector<Viewer::TileStatus> Viewer::tiles() const {
  std::vector<TileStatus> out;
  impl_->on_display([&out](view::Display& d) { out = d.tile_status(); }, "listing its tiles");
  return out;
}
void Viewer::focus_tile(int tile) {
  impl_->on_display([tile](view::Display& d) { d.focus_tile(tile); }, "focusing a tile");
}
int Viewer::focused_tile() const {
  int tile = -1;
  impl_->on_display([&tile](view::Display& d) { tile = d.focused_tile(); }, "naming its focused tile");
  return tile;
}
bool Viewer::finished() const noexcept { return impl_->link().finished.load(); }

void Viewer::play(const PlayOptions& options) { impl_->play(options); }

void Viewer::attach(std::string_view name_or_path, const AttachOptions& options) {
  impl_->attach(name_or_path, options);
}

std::optional<AttachStatus> Viewer::attach_status() const {
  std::vector<AttachStatus> all = impl_->attach_statuses();
  if (all.empty()) return std::nullopt;
  return std::move(all.front());
}

std::vector<AttachStatus> Viewer::attach_statuses() const { return impl_->attach_statuses(); }

}  // namespace handoff
