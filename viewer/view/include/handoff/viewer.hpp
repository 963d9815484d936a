#pragma once
// handoff::Viewer: show your own frames (every PixelFormat: YUV, RGB, grey;
// docs/viewer.md "Pixel formats") and detections, from any
// thread, in a window (or headless through EGL), without the producer ever
// waiting for the display.
//
//   #include <handoff/viewer.hpp>
//
//   handoff::Viewer viewer({.title = "detector"});  // a window; headless (EGL) where no display works
//   std::thread producer([&] {
//     for (std::int64_t n = 0; viewer.is_open(); ++n) {
//       handoff::Frame frame = decode(n);             // host or CUDA planes
//       handoff::media::OverlayFrame boxes;
//       boxes.add_box(100, 80, 260, 200, "car", 0.92f, /*class_id=*/2);
//       viewer.show(frame, boxes);                    // one copy; `frame` is yours again on return
//     }
//   });
//   viewer.wait_closed();                             // until the user closes the window
//   producer.join();                                  // show() threw ViewerClosed or is_open() went false
//
// Zero copy: write straight into the viewer's buffer, then hand it back.
//   handoff::ViewerFrame slot = viewer.acquire(handoff::PixelFormat::NV12, 1920, 1080);
//   my_kernel(slot.frame());                          // CUDA device pointers where CUDA works, else host
//   viewer.present(std::move(slot), boxes);
//
// The model. The viewer draws on a display thread of its own (windows of one
// process share one display thread; each headless viewer has its own). Frames
// handed in by show() / present() go into a small ring of GL buffers (3 by
// default) that the display thread uploads from. The newest frame wins: a frame
// replaced before it was displayed is counted in ViewerStats::dropped, and the
// caller never waits for the display. With more threads inside show() at once
// than the ring has buffers, a call may wait for another thread's copy (bounded
// by handoff::wait_limit(), then WaitTimeout), never for the display.
//
// Memory: when show() returns, the viewer holds no reference to the frame's
// memory (host frames were copied; CUDA frames were copied device to device on
// the viewer's CUDA stream and show() synchronised that stream, waiting for
// its own copy only; GL-buffer frames were copied GPU-side and show() waited
// for that copy). A CUDA frame's contents must be complete when show() is
// called: synchronise the stream that wrote them first.
//
// Errors: InvalidFrame (a UsageError naming the field) for a frame the viewer
// cannot show; ViewerClosed once the viewer is closed; handoff::Error for
// runtime conditions (no GL, a driver failure, WaitTimeout).
//
// Thread safety: every Viewer method may be called from any thread,
// concurrently, except the destructor (no call may be in progress or start
// while it runs). Ownership: the Viewer owns its window, GL contexts, display
// thread and buffers; frames and overlays passed in stay the caller's.
// ViewerOptions, ViewerStats, StreamInfo, ViewerDiagnostics and PlayOptions are
// plain values (copy them freely; one writer at a time, as for any value).
#include <handoff/cuda_stream.hpp>
#include <handoff/dlpack_v1.hpp>
#include <handoff/error.hpp>
#include <handoff/frame.hpp>
#include <handoff/media/overlay.hpp>
#include <handoff/media/recording.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace handoff {

class GlWorker;  // <handoff/gl_worker.hpp>

namespace view {
class ViewerImpl;
struct AcquiredSlot;
}  // namespace view

// --- core -------------------------------------------------------------------------

// Where the viewer draws.
enum class ViewerDisplay : std::uint8_t {
  Auto,      // a window where a display works; otherwise headless, with a notice
  Window,    // a window or an error (handoff::Error naming why: no display, no GL 4.5)
  Headless,  // EGL, no window: nothing on screen; snapshot() and output_dir show what it draws
};

// Which memory the viewer's ring buffers map to for writing.
enum class ViewerMemory : std::uint8_t {
  Auto,  // CUDA device pointers where CUDA works and shares the GL device, else host memory
  Cuda,  // CUDA or an error saying why not
  Host,  // host memory (glMapNamedBufferRange); CUDA frames are then copied device to host
};

// Where frames become the view's R'G'B' pixels: YUV converted, RGB
// resampled, grey mapped over its range.
enum class ViewerConvert : std::uint8_t {
  Auto,  // Gpu, except where GL is a software rasteriser (llvmpipe, softpipe, SwiftShader): Cpu
  Gpu,   // the fragment shader: filtered texture fetches (and the matrix) per view pixel
  // On the CPU, at the size shown (the shader's sampling and uniforms, the
  // viewer's threads), then copied into the framebuffer: on a software
  // rasteriser this is several times cheaper than the shader; on a GPU it is
  // slower. The frame's planes are kept in host memory for it.
  Cpu,
};

// What show() does while the UI is paused (space bar, the Pause button, set_paused(true)).
enum class PausedShow : std::uint8_t {
  KeepNewest,  // return at once; the newest frame waits (the one it replaces counts as dropped)
  Block,       // wait until the user resumes, steps (one frame goes through), or the viewer closes
};

// The values a grey frame is shown over: lo black, hi white, in the frame's
// sample units (gray16: codes 0..65535; gray32f: the floats themselves);
// outside it clamps. Both finite, lo < hi.
struct ValueRange {
  double lo = 0.0, hi = 1.0;
  bool operator==(const ValueRange&) const = default;
};

struct ViewerOptions {
  std::string title = "handoff";
  int width = 1280, height = 720;  // window size; headless: the size of the view it draws
  bool vsync = true;               // windows: swap with the display's refresh
  bool show_ui = true;             // the panel (H / Tab toggles it)
  bool show_overlays = true;       // (O toggles them)
  ViewerDisplay display = ViewerDisplay::Auto;
  ViewerMemory memory = ViewerMemory::Auto;
  int cuda_device = 0;  // CUDA frames must be on this device; acquire() hands out its pointers
  std::size_t ring = 3;  // buffers for frames in flight, >= 3 (UsageError below)
  PausedShow paused_show = PausedShow::KeepNewest;
  ViewerConvert convert = ViewerConvert::Auto;
  // gray16 / gray32f frames are shown over this range (UsageError naming it
  // when lo >= hi or either is not finite). None: gray16 over its full
  // 0..65535, gray32f over a range picked from the data (the 1st .. 99th
  // percentile, smoothed from frame to frame; the panel shows it). gray8 is
  // always 0..255.
  std::optional<ValueRange> value_range{};
  // Every displayed frame, at its own size with its overlays (no UI), written
  // as frame_NNNNNN.png into this folder (created). Empty: none.
  std::string output_dir{};
  // When the viewer closes (any reason), what the view last showed (UI
  // included) is written here as PNG. Empty: none. play() refuses a
  // PlayOptions::file or overlays file named here, and none is written then.
  std::string screenshot{};
  bool gl_debug = false;  // debug GL contexts; KHR_debug errors are counted in diagnostics()
  // Records what the viewer shows into an MCAP file (docs/recording.md):
  // every displayed frame, of every format (as displayed, with the UI's colour
  // overrides; i420 is written as nv12, docs/recording.md) and its overlays, as foxglove.RawImage and
  // foxglove.ImageAnnotations on record.topic (default "/handoff/view") and
  // "<topic>/annotations", logged at the time it was displayed. The display
  // never waits for it: frames are read back from the GPU asynchronously and
  // written by threads of their own; a frame that finds them all busy is left
  // out of the recording and counted (ViewerStats::record_dropped). The file
  // is created by the constructor (handoff::Error naming it when it cannot
  // be; a file there is replaced, so never name an input of play() here:
  // play() then refuses, too late for that file) and finished when the viewer closes. A recording's topic holds one
  // format and size, its first frame's: displayed frames of another are left
  // out, counted (ViewerStats::record_skipped) and named in one warning.
  // Several streams (show(..., stream)): each tile on "<topic>/<stream>"
  // (docs/viewer.md "Several streams").
  media::RecordTarget record{};
  // One-line notices ("no display: rendering headless through EGL"), from any
  // thread. Empty: handoff::log at Warning level.
  std::function<void(std::string_view)> on_notice{};
};

// show(), present() or acquire() on a viewer that is closed (by the user, by
// close(), or because its display thread failed: what() then says why).
class ViewerClosed : public Error {
 public:
  explicit ViewerClosed(const std::string& what) : Error(what) {}
};

struct ViewerStats {
  std::uint64_t submitted = 0;  // frames handed in (show / present), or produced by a played source
  std::uint64_t shown = 0;      // frames displayed (drawn into the window or the headless view)
  std::uint64_t dropped = 0;    // handed in, then replaced by a newer frame before being displayed
  std::int64_t last_index = -1; // Frame::index of the frame on display (-1: none yet)
  double display_fps = 0;       // displayed frames per second (smoothed)
  // From entering show() / present() to the frame displayed (window: buffers
  // swapped; headless: drawn), over the last 1024 displayed frames.
  double latency_p50_ms = 0, latency_p99_ms = 0;
  // Over the last 256 displayed frames: time between displayed frames (p50 /
  // p99), and means of the producer's copy (map + write + unmap), of which
  // mapping, the upload into textures and the draw (CPU time to submit).
  double frame_p50_ms = 0, frame_p99_ms = 0;
  double copy_ms = 0, map_ms = 0, upload_ms = 0, draw_ms = 0;
  // ViewerOptions::record: displayed frames in the recording, displayed
  // frames left out of it (its readback buffers or writer queue were full, or
  // the recording had stopped on an error: the frame that stopped it and those
  // after), and displayed frames it cannot hold (another format or size than
  // its first). The three add up to the frames displayed.
  std::uint64_t recorded = 0, record_dropped = 0, record_skipped = 0;
};

// What is on display. A value.
struct StreamInfo {
  std::string name;    // "application", "scene", the file's path
  std::string source;  // e.g. "vulkan (zero-copy, sync: cpu-fence)"; may be empty
  std::string memory;  // what the frame buffers are, e.g. "host-mapped GL buffers (CUDA unavailable: ...)"
  PixelFormat format = PixelFormat::NV12;
  std::uint32_t width = 0, height = 0;  // 0 before the first frame
  std::size_t ring = 0;
  std::string convert;  // where colour is converted, e.g. "cpu (software rasteriser: llvmpipe ...)"
};

// What went wrong without stopping the viewer (tests and tools turn these into exit codes).
struct ViewerDiagnostics {
  std::size_t gl_errors = 0;  // KHR_debug errors (gl_debug)
  std::string first_gl_error;
  std::size_t vulkan_messages = 0;  // validation messages (PlayOptions::vulkan_validation)
  std::string first_vulkan_message;
  std::size_t output_written = 0;            // PNGs written to output_dir
  std::vector<std::string> output_errors;    // "<path>: <reason>"
  // ViewerOptions::record: "<path>: <reason>" for the error that stopped the
  // recording (frames displayed after it are not in the file). Complete once closed.
  std::vector<std::string> record_errors;
  // Frames of a played file or recording that were malformed and skipped
  // (a raw image that does not fit its stream, a corrupt video access unit:
  // each logged, playback going on past it), counted each time one is met
  // (a looping file meets it again); the first one's error.
  std::size_t frame_errors = 0;
  std::string first_frame_error;
  // What was wrong in a played file but played past, each once: a
  // recording's warnings() (a damaged tail or chunk, a corrupt picture shown
  // black, annotations left out) and an overlay file's bad lines; the first one.
  std::size_t input_warnings = 0;
  std::string first_input_warning;
};

// A snapshot: RGBA8 pixels, rows top-down, tightly packed (stride = width * 4).
// Ownership: copies share the pixels (immutable). Thread safety: any thread.
class RgbaImage {
 public:
  RgbaImage() = default;  // empty (width 0)
  RgbaImage(std::uint32_t width, std::uint32_t height, std::vector<std::uint8_t> pixels);
  std::uint32_t width() const noexcept { return width_; }
  std::uint32_t height() const noexcept { return height_; }
  std::size_t stride() const noexcept { return std::size_t(width_) * 4; }
  const std::uint8_t* data() const noexcept;
  const std::uint8_t* pixel(std::uint32_t x, std::uint32_t y) const;  // UsageError outside the image
  bool empty() const noexcept { return width_ == 0; }
  // DLPack export: shape (height, width, 4), uint8, strides (width * 4, 4, 1)
  // in elements, device (kDLCPU, 0); the tensor shares the pixels until its
  // deleter runs. Transfer: the caller owns the tensor and calls its deleter once.
  // The versioned tensor has version 1.0 and the read-only flag set.
  DLManagedTensor* to_dlpack() const;
  DLManagedTensorVersioned* to_dlpack_versioned() const;

 private:
  std::uint32_t width_ = 0, height_ = 0;
  std::shared_ptr<const std::vector<std::uint8_t>> pixels_;
};

enum class SnapshotKind : std::uint8_t {
  Frame,  // the frame on display with its overlays, at the frame's own size (no UI)
  View,   // what the view shows: its size, the frame as fitted / zoomed, overlays and the UI when shown
};

// A buffer of the viewer's ring, acquired for writing by acquire() and handed
// back by present(). Move-only. Ownership: holds the buffer, mapped and
// writable, until present() or its destruction, even if the viewer closes
// meanwhile (the viewer's GL worker lives as long as it does). Destroying it
// without present() gives the buffer back unshown.
// Thread safety: one thread at a time (it may be moved between threads).
class ViewerFrame {
 public:
  ViewerFrame() noexcept;
  ViewerFrame(ViewerFrame&&) noexcept;
  ViewerFrame& operator=(ViewerFrame&&) noexcept;
  ~ViewerFrame();  // gives an unpresented buffer back; never throws
  explicit operator bool() const noexcept { return slot_ != nullptr; }

  // The writable frame: MemoryKind::Cuda (device pointers in the primary
  // context of ViewerOptions::cuda_device) or MemoryKind::Host, packed rows at
  // 256-byte pitches. `owner` is empty: the pointers are valid only while this
  // ViewerFrame holds the buffer. The caller may set index and timestamp; the
  // other fields must stay as they are (present() checks them).
  Frame& frame();
  const Frame& frame() const;

 private:
  friend class Viewer;
  explicit ViewerFrame(std::unique_ptr<view::AcquiredSlot> slot) noexcept;
  std::unique_ptr<view::AcquiredSlot> slot_;
};

// --- optional: attaching to a publisher in another process (docs/live.md) -------------

// How an attached viewer's link to its publisher stands (Viewer::attach_status). A value.
struct AttachStatus {
  std::string publisher;  // the publisher's name (a socket path's file name without ".sock")
  std::string socket;     // the socket path
  // "waiting" (no publisher yet), "live", "gone" (it went: the last frame stays on
  // display, and the viewer reconnects when a publisher of that name comes back),
  // "failed" (a permanent error: message says why).
  std::string state;
  std::string message;        // the subscriber's status line ("connected to 'cam0' (pid 12, host memfd)", ...)
  std::uint32_t pid = 0;      // the (last) publisher's process id; 0 before the first connection
  std::string memory;         // how the slots are shared, as the publisher says (its route)
  double publisher_fps = 0;   // frames the publisher announces per second (smoothed; 0 until known)
  std::uint64_t received = 0;           // frames that arrived here
  std::uint64_t publisher_dropped = 0;  // dropped by the publisher: every slot was held
  std::uint64_t publisher_skipped = 0;  // not sent to this viewer (it held its limit, or its socket was full)
  std::uint64_t viewer_dropped = 0;     // arrived, then replaced by a newer one before the display took it
  std::uint64_t connections = 0;        // sessions with a publisher so far
};

struct AttachOptions {
  std::int64_t frames = -1;             // close after this many displayed frames (-1: until closed)
  std::optional<unsigned> allow_group;  // publishers running with this gid are trusted too (default: same user)
};

class Viewer {
 public:
  // Opens the window (or the headless view) and starts the display thread.
  // Throws UsageError for bad options, handoff::Error when no GL 4.5 context
  // can be made (or, with ViewerDisplay::Window, no window).
  explicit Viewer(ViewerOptions options = {});
  // close(), then frees everything. Never throws (errors are logged).
  ~Viewer();
  Viewer(const Viewer&) = delete;
  Viewer& operator=(const Viewer&) = delete;

  // Shows `frame` (host, CUDA or GL-buffer memory; Vulkan memory is refused)
  // with `overlays` (pixel coordinates of the frame), in any PixelFormat
  // (YUV through its colorimetry, RGB codes as they are, grey over
  // ViewerOptions::value_range or its full / automatic range). Frames may change format,
  // size and colorimetry from one call to the next. Returns once the frame is
  // copied into the viewer's ring (see "Memory" above); never waits for the
  // display (see "The model"). GL-buffer frames: `gl_buffer` must be a buffer
  // of the viewer's GL share group (made on gl_worker()), not mapped (or mapped
  // persistently), and not mapped to CUDA during the call; it is copied GPU-side
  // (glCopyNamedBufferSubData on the worker, no host round trip) and show()
  // waits for that copy. Throws InvalidFrame naming the field (bad layout, a
  // CUDA frame on another device than ViewerOptions::cuda_device, a GL buffer
  // of another share group or too small for its planes, Vulkan memory),
  // ViewerClosed, or handoff::Error (a driver failure). CUDA frames: the copy
  // is ordered after the work queued on `stream` before the call (an event
  // recorded there; `stream` of the primary context of
  // ViewerOptions::cuda_device); with the default value the writes must be
  // finished (the producer's stream synchronised) before show().
  // Publisher::publish takes frames the same way (publisher.hpp says where
  // the two differ: a publisher never waits). Dense layers in
  // overlays.layers (class maps, scalar maps, instance masks: docs/layers.md)
  // are validated (InvalidFrame naming "layers[i]...") and copied before
  // show() returns; host arrays only for now (a CUDA layer is refused).
  void show(const Frame& frame, const media::OverlayFrame& overlays = {}, CudaStream stream = {});
  // Several streams side by side (docs/viewer.md "Several streams"): the
  // same, into the tile named `stream`, made on its first frame (a ring of
  // its own, ViewerOptions::ring buffers). Tiles are laid out in a grid in
  // the order they were made; each shows its newest frame with its own
  // overlays and layers; pause and step apply to all; snapshot(Frame) and
  // output_dir give every tile. show() without a name goes to the first
  // tile, which takes the name of the first named stream when nothing was
  // shown there before. UsageError for a name longer than 64 bytes or a
  // tile past kMaxStreams.
  void show(const Frame& frame, const media::OverlayFrame& overlays, std::string_view stream,
            CudaStream cuda_stream = {});
  static constexpr std::size_t kMaxStreams = 16;
  static constexpr std::uint32_t kMaxBenchBoxes = 1'000'000;  // PlayOptions::bench_boxes (an overlay's object limit)
  static constexpr double kMinSpeed = 0.01, kMaxSpeed = 64.0;  // PlayOptions::speed (--speed, the + / - keys)

  // The GL worker whose context shares objects with the viewer's: make GL
  // buffers here (GlBuffer(*viewer.gl_worker(), size), CudaGlBuffer on it)
  // to show() them as GL-buffer frames. The pointer keeps the worker (and its
  // context) alive after the viewer is destroyed; buffers made on it stay
  // valid as long as it does. Thread safety: the worker takes calls from any
  // thread.
  std::shared_ptr<GlWorker> gl_worker() const;

  // Zero copy: a buffer of the viewer's ring for a frame of this format (any
  // PixelFormat; its planes laid out by FrameLayout::contiguous) and size,
  // mapped for writing (see ViewerFrame). Waits like show() when every
  // buffer is in use. Throws InvalidFrame for bad dimensions, ViewerClosed.
  // `stream`: the tile it is shown in (as show()'s; empty: the first).
  ViewerFrame acquire(PixelFormat format, std::uint32_t width, std::uint32_t height,
                      Colorimetry colorimetry = {}, std::string_view stream = {});
  // Hands an acquired buffer back to be displayed (newest wins, as show()).
  // The caller must have finished writing (CUDA: its stream synchronised).
  // `frame` is empty afterwards, whatever happens. Throws UsageError for an
  // empty ViewerFrame or one of another viewer, ViewerClosed.
  void present(ViewerFrame&& frame, const media::OverlayFrame& overlays = {});

  // A picture of what is displayed, once the newest frame handed in before
  // this call is displayed (while paused: what is on display now; several
  // streams: the newest of each). Frame: empty image when nothing was
  // displayed yet; with several tiles, all of them in their grid. Waits for the display thread,
  // bounded (WaitTimeout); ViewerClosed after close.
  RgbaImage snapshot(SnapshotKind kind = SnapshotKind::Frame);

  // False once the viewer closed: the user closed the window (close button,
  // Q / Esc), close() was called, a played source ended with close_at_end, or
  // the display thread failed.
  bool is_open() const noexcept;
  // True when the viewer has a window; false when it draws headless (asked
  // for, or chosen by ViewerDisplay::Auto because no display works). Only a
  // window is closed by a person: wait_closed() on a headless viewer waits
  // for close() or a signal.
  bool windowed() const noexcept;
  // Closes the window and stops the display thread (waiting for it, bounded);
  // writes ViewerOptions::screenshot. Idempotent. Frames being copied by other
  // threads finish their copy; their show() then throws ViewerClosed.
  void close();
  // Blocks until the viewer closes (a wait for a person, so not bounded by
  // wait_limit()), then rethrows the error the display thread stopped on, if any
  // (a played file's ParseError, a WaitTimeout, a GL failure).
  void wait_closed();
  // The same with a limit; false when still open after `timeout`.
  bool wait_closed_for(std::chrono::milliseconds timeout);

  ViewerStats stats() const;
  StreamInfo stream() const;
  ViewerDiagnostics diagnostics() const;

  // The UI's pause and step. While paused the display keeps its frame; show()
  // does what ViewerOptions::paused_show says. step() (the Step button, the
  // Right key) displays the next frame (the newest waiting one, or the next
  // handed in; a played file or the scene moves one frame) and stays paused.
  // set_paused() and step() wait for the display thread (bounded) and throw
  // ViewerClosed once the viewer is closed.
  bool paused() const noexcept;
  void set_paused(bool paused);
  // ViewerOptions::paused_show Block: waits up to `timeout` until show() on
  // `stream` would not wait for the pause (resumed, a step, closed); true
  // then, and at once for the other policies and for a stream with no tile
  // yet. For callers that wait in slices between their own checks (Python:
  // Ctrl-C); show() itself still waits as it says.
  bool wait_show_unblocked_for(std::string_view stream, std::chrono::milliseconds timeout);
  void step();
  // One frame back and pause (a played file or recording; the scene): what
  // the Left key and the "< Step" button do. UsageError when the stream is
  // not seekable (the application's frames, a live stream).
  void step_back();
  // Shows frame `index` of a played file or recording (0 .. frame_count - 1)
  // next, playing on from there unless paused; while paused it is displayed
  // at once. UsageError when the stream is not seekable or `index` is outside
  // it. Waits for the display thread (bounded), ViewerClosed once closed.
  void seek(std::int64_t index);
  std::uint64_t steps() const noexcept;  // steps taken so far (UI, step() and step_back())

  // Several streams or topics in a grid: each tile as the panel lists it, in
  // the grid's order (one entry without a grid; none before the first frame
  // or play()). Waits for the display thread (bounded), ViewerClosed once closed.
  struct TileStatus {
    std::string name;            // its topic, stream or publisher name (may be empty)
    std::int64_t frame = -1;     // index of the frame it shows; -1: none yet
    std::uint64_t time_ns = 0;   // that frame's log time (recordings); 0: none
    std::int64_t offset_ns = 0;  // time_ns minus the clock tile's (0 where either has no time)
    bool clock = false;          // its frames set the time of the others (a played recording's grid)
  };
  std::vector<TileStatus> tiles() const;
  // The tile drawn alone over the whole view, as a double-click on it or the
  // G key does in a window (index into tiles(); -1: the whole grid). The
  // composed snapshot(Frame) and output_dir still give every tile; the view
  // (SnapshotKind::View) shows the focus. UsageError for an index outside
  // -1 .. tiles().size() - 1. Waits for the display thread (bounded).
  void focus_tile(int tile);
  int focused_tile() const;

  // --- optional: playing a built-in source instead of the application's frames ---
  enum class Source : std::uint8_t {
    Scene,        // the synthetic scene with its ground-truth overlays (CUDA kernel, else all CPU cores)
    VulkanScene,  // a Vulkan compute shader writes the scene into memory GL samples in place (no copy)
    File,         // a Y4M file, a recording or ROS 2 bag (media::is_recording_path), or a raw file (needs width, height and format)
  };
  struct PlayOptions {
    Source source = Source::Scene;
    std::string file{};    // Source::File
    std::string overlays{};  // JSON Lines overlay file (one line per frame); empty: the source's own
    std::uint32_t width = 0, height = 0;  // raw files (required); the scenes' size (0: 1280x720)
    std::optional<PixelFormat> format{};    // raw files, the scenes (default NV12)
    std::optional<ColorMatrix> matrix{};    // override the source's colorimetry
    std::optional<ColorRange> range{};
    std::optional<bool> loop{};             // default: loop in a window, play once headless
    double speed = 1.0;                   // playback speed factor
    std::int64_t frames = -1;             // end after N >= 1 displayed frames (-1: the source's end; headless scene: 60)
    bool close_at_end = true;             // the viewer closes when playback ends
    std::uint32_t bench_boxes = 0;        // N <= kMaxBenchBoxes synthetic boxes on every frame (benchmarks)
    bool vulkan_validation = false;       // VulkanScene: the validation layer on (an error where it is missing)
    // Recordings: the image topic to play (empty: the first); a ParseError
    // naming the image topics there are when it is not one of them.
    std::string topic{};
    // Recordings: several image topics side by side in a grid, one tile each
    // in the order given (overrides `topic`; docs/viewer.md "Several
    // streams"), on one timeline: the frames of the topic with the most of
    // them (the clock; the first on a tie) set the time, and every other tile
    // shows its newest frame logged at or before it; pause, step and seek
    // (frame indices of the clock topic) move them together. snapshot(Frame) and output_dir give every tile with its
    // overlays. A ParseError naming the image topics there are for one that is
    // not one of them.
    std::vector<std::string> topics{};
    bool all_images = false;  // recordings: every image topic in a grid (as `topics`)
    // ROS 2 bags: the Detection2DArray / foxglove_msgs ImageAnnotations topics
    // drawn on the image (empty: those in its namespace; docs/recording.md).
    // In a grid they are drawn on the first tile; the others take the topics
    // in their own namespaces.
    std::vector<std::string> overlay_topics{};
    // Played files: every frame as soon as it is ready, ignoring the source's
    // rate or a recording's times (without touching the window's vsync).
    bool fast = false;
  };
  // Plays `options` in this viewer (before any show / acquire). Headless, every
  // frame is drawn in turn as fast as possible; in a window at the source's
  // rate. Throws at once what opening the source throws (media::ParseError
  // naming the file and field, handoff::Error when the Vulkan scene cannot
  // start), UsageError when frames were already shown. show() / acquire()
  // afterwards throw UsageError.
  void play(const PlayOptions& options);
  // True once playback ended (the file's end without looping, or `frames` displayed).
  bool finished() const noexcept;

  // --- optional: frames from a handoff::Publisher in another process ---
  // Shows what the publisher `name_or_path` shares (a name in
  // $XDG_RUNTIME_DIR/handoff, or a socket path), instead of the application's
  // frames (before any show / acquire / play). Host slots are uploaded from
  // their mapping; CUDA slots are imported, then copied once device to device
  // into the viewer's buffers; Vulkan slots are imported into GL
  // (GL_EXT_memory_object_fd) and uploaded GPU-side. A publisher not there yet
  // is waited for (a notice says so); when it goes, the last frame stays and
  // the viewer reconnects when one of that name comes back (notices again).
  // Throws UsageError for a bad name or when frames were already shown or a
  // source played; handoff::Error when the socket folder cannot be used
  // (XDG_RUNTIME_DIR unset, a folder others can enter). A permanent failure
  // later (a refused or incompatible publisher) closes the viewer with it
  // (wait_closed rethrows). Called again (up to kMaxStreams publishers):
  // each publisher in a tile of its own, side by side (docs/viewer.md
  // "Several streams"); AttachOptions::frames of the first call counts.
  void attach(std::string_view name_or_path, const AttachOptions& options = {});
  // The link's state; nullopt when the viewer is not attached. Several
  // publishers: the first's; attach_statuses() gives each, in tile order.
  std::optional<AttachStatus> attach_status() const;
  std::vector<AttachStatus> attach_statuses() const;

 private:
  std::shared_ptr<view::ViewerImpl> impl_;
};

// An output of `viewer` that is an input of `play`, or the other output: it
// would destroy that file before, or while, it is read. Viewer::play refuses
// it; handoff-view checks it before the viewer (which creates record.path)
// is made. Paths are compared as the same file (another spelling counts);
// when `play.file` is a ROS 2 bag folder, a path in it named as the bag's
// files are (metadata.yaml, .mcap, .db3, .zstd) counts as that input.
struct OutputOverInput {
  enum class Output { Record, Screenshot } output;    // ViewerOptions::record.path, ::screenshot
  enum class Input { File, Overlays, Record } input;  // PlayOptions::file, ::overlays, ViewerOptions::record.path
  std::string path;                                   // the output as given
};
std::optional<OutputOverInput> output_over_input(const ViewerOptions& viewer, const Viewer::PlayOptions& play);

}  // namespace handoff
