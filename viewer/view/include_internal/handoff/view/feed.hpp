#pragma once
// The frame-feed interface: every route frames take into the viewer is one
// class behind it (the built-in scene, the Vulkan scene, files, MCAP
// recordings, frames pushed by the application, live attach; the GStreamer
// sink pushes frames as an application does).
// The renderer, UI, overlays, snapshots and PNG output never know which feed
// they draw. A private header of handoff::view (include_internal/, not
// installed): for feed implementers inside handoff; applications use Viewer.
//
// The display thread owns a feed: it calls start() once, then next() /
// release() per frame, and stop() before its GL context goes. Frames reach it
// either as memory to upload (host memory, or a GL buffer of the display's
// share group, e.g. made on FeedContext::worker) or as two plane textures
// sampled in place (no upload). A feed makes its frame's contents visible to
// GL commands the display issues after next() returns (a glWaitSync on its
// own fence, a finished Vulkan fence, ...), and may reuse the memory once the
// display's release() fenced the upload.
#include <handoff/frame.hpp>
#include <handoff/gl_worker.hpp>
#include <handoff/viewer.hpp>
#include <handoff/media/overlay.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

namespace handoff::view {

// What a feed says about its stream (the panel and Viewer::stream() show it).
// A value.
struct FeedInfo {
  std::string name;    // "application", "scene", the file's path
  std::string source;  // a line for the notices and the panel; may be empty
  std::string memory;  // what the frame buffers are
  std::string topic;   // a recording's image topic, a stream's or publisher's name (a grid tile's name); or empty
  std::string stream;  // the application's stream (Viewer::show's `stream`); empty otherwise
  PixelFormat format = PixelFormat::NV12;
  std::uint32_t width = 0, height = 0;  // of the current frame; 0 before the first
  Colorimetry colorimetry{};
  double rate = 0;                  // frames per second it plays at; 0: each frame as it comes
  std::int64_t frame_count = -1;    // -1: endless or unknown
  bool seekable = false;            // seek() works (files, the scenes)
  std::size_t ring = 0;             // frame buffers in flight
  bool uploads = true;              // false: frames are sampled in place (no map, no upload)
};

// One frame a feed hands the display thread.
struct FeedFrame {
  // Memory to upload: MemoryKind::Host, or MemoryKind::GlBuffer naming a
  // buffer of the display's share group with planes at byte offsets. Ignored
  // (but for format, size, colorimetry and index) when luma_texture is set.
  Frame frame;
  // Plane textures to sample in place (R8 / RG8, or R16 / RG16 for P010),
  // valid until the next next(); 0: upload `frame` instead.
  unsigned luma_texture = 0, chroma_texture = 0;
  // Overlays of this frame, or nullptr. The display may swap their contents
  // with its own (both keep their capacity) before release().
  media::OverlayFrame* overlays = nullptr;
  // When the frame was handed in (show / present), for the latency figures;
  // the epoch when unknown (played sources).
  std::chrono::steady_clock::time_point submitted{};
  std::uint64_t sequence = 0;  // order of hand-in (pushed frames); 0 otherwise
  double produce_ms = 0;       // the producer's copy: map + write + unmap
  double map_ms = 0;           // of which mapping and unmapping
  // Paced feeds whose frames carry their own times (recordings): how long
  // this frame stays on display at speed 1, in ms; 0: 1 / FeedInfo::rate.
  double display_ms = 0;
  // Recordings: the frame's log time (ns), for tiles that follow another's
  // clock (a grid of topics); 0 otherwise.
  std::uint64_t time_ns = 0;
};

// What the display thread gives a feed when it starts it.
struct FeedContext {
  GlWorker& worker;     // a GL worker whose context shares objects with the display's
  bool headless = false;
  bool gl_debug = false;
  // The display thread waits for this to say a new frame may be there (for
  // feeds whose frames arrive from other threads). Any thread.
  std::function<void()> wake;
  // A frame of a file or recording was malformed and skipped (its error, the
  // file, frame and field; logged already), and playback went on: counted in
  // ViewerDiagnostics. Any thread.
  std::function<void(const std::string&)> bad_frame;
  // What was wrong in the input but played past, each once (a recording's
  // warnings(): a damaged tail or chunk, a corrupt picture shown black,
  // annotations left out; an overlay file's bad lines): counted in
  // ViewerDiagnostics. Any thread.
  std::function<void(const std::string&)> input_warning;
};

// Thread safety: every method on the display thread with its GL context
// current, unless stated otherwise. Ownership: the display thread owns the
// feed; frames it hands out stay the feed's.
class Feed {
 public:
  virtual ~Feed() = default;
  Feed() = default;
  Feed(const Feed&) = delete;
  Feed& operator=(const Feed&) = delete;

  // Called once before anything else. Throws what opening the stream throws.
  virtual void start(FeedContext& context) = 0;
  virtual FeedInfo info() const = 0;
  // True when frames are due at info().rate (a player); false when each
  // frame is displayed as soon as it arrives (the newest wins).
  virtual bool paced() const = 0;
  // The next frame, if there is one: `wait` false, now or never; true, within
  // handoff::wait_limit() (WaitTimeout) unless the stream ended. Returns false
  // with nothing to show (finished() tells the end from "not yet").
  virtual bool next(FeedFrame& out, bool wait) = 0;
  // After the display issued its upload from (or its draws of) `frame`, the
  // frame the last next() returned (one at a time: each next() that returns
  // true is followed by one release() before the next next()).
  virtual void release(FeedFrame& frame) = 0;
  // Paced feeds: the next frame next() returns is `index` (seekable feeds).
  virtual void seek(std::int64_t index) { (void)index; }
  // Recordings: the newest frame logged at or before `time_ns` (-1: none,
  // or a feed without log times). What a tile of a grid follows.
  virtual std::int64_t index_at(std::uint64_t time_ns) const {
    (void)time_ns;
    return -1;
  }
  // Recordings: every frame's log time, in frame order (non-decreasing);
  // empty for feeds without them. A grid's timeline is all its tiles' times.
  virtual std::span<const std::uint64_t> log_times() const { return {}; }
  // Frames from other threads only: `paused` true makes them wait according
  // to the viewer's PausedShow; step() lets one through. Any thread.
  virtual void set_paused(bool paused) { (void)paused; }
  virtual void step() {}
  // The stream ended (a file played once).
  virtual bool finished() const { return false; }
  // Before the display's GL context goes: free what lives in it. Never throws.
  virtual void stop() noexcept {}
};

}  // namespace handoff::view
