#pragma once
// Records what a display shows (ViewerOptions::record) into an MCAP file
// without making the display wait for the disk or the encoder.
//
// Each displayed frame's plane textures are read back asynchronously into one
// of a few pixel-pack buffers (glGetTextureImage into the buffer, then a
// fence). A buffer whose fence has signalled goes, with a copy of the frame's
// overlays, to the recorder thread, which hands it to media::RecordingWriter
// (whose own writer thread compresses and writes) and gives the buffer back.
// Nothing blocks: when every readback buffer is still in flight, or the
// writer's queue is full, the frame is left out of the recording and counted
// (RecorderStats::dropped).
//
// Thread safety: capture(), poll() and finish() on the display thread with
// its GL context current; stats() and errors() from any thread.
#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <handoff/frame.hpp>
#include <handoff/gl_worker.hpp>
#include <handoff/viewer.hpp>
#include <handoff/media/overlay.hpp>
#include <handoff/media/recording.hpp>

namespace handoff::view {

struct RecorderStats {
  std::uint64_t recorded = 0;  // frames in the file (or queued for it)
  std::uint64_t dropped = 0;   // displayed but left out (no free readback buffer, writer queue full, the recording stopped)
  std::uint64_t skipped = 0;   // displayed but not recordable: another format or size than the recording's first
                               // frame, or one its codec cannot hold (h264 / h265: gray32f, an odd size)
};

class FrameRecorder {
 public:
  // Creates the file (handoff::Error naming it when it cannot be) and starts the threads.
  explicit FrameRecorder(const media::RecordTarget& options, std::size_t buffers = 4);
  ~FrameRecorder();  // finish() if not called; never throws
  FrameRecorder(const FrameRecorder&) = delete;
  FrameRecorder& operator=(const FrameRecorder&) = delete;

  // The frame now in `textures` (the renderer's, as frame_textures(format)
  // makes them: every format) with its overlays (copied; nullptr: none),
  // shown at `time_ns` (nanoseconds since the Unix epoch). Starts its
  // readback, and hands over earlier readbacks that have finished. A frame
  // of another format or size than the recording's first, or one the codec
  // cannot hold (h264 / h265: gray32f, an odd size; it does not set the
  // recording's format), is left out and counted (stats().skipped, a
  // warning for each of the two reasons, once). A GL failure stops the recording
  // (errors()), not the display: it never throws. `tile`: the grid tile it
  // was shown in (a stream's or a publisher's name, a recording's topic):
  // recorded on "<topic>/<tile>"; empty: on the recording's topic.
  void capture(const std::array<unsigned, kMaxPlanes>& textures, PixelFormat format, std::uint32_t width,
               std::uint32_t height, const Colorimetry& colorimetry, const media::OverlayFrame* overlays,
               std::uint64_t time_ns, std::string_view tile = {});
  // Hands over finished readbacks (call once per display tick).
  void poll();
  // Waits for the readbacks in flight (bounded), writes them, the summary and
  // the footer, and frees the GL buffers. Errors go to errors(). Never throws.
  void finish() noexcept;

  RecorderStats stats() const;
  std::vector<std::string> errors() const;  // "<path>: <reason>" (the recording stopped there)
  const std::string& path() const { return options_.path; }

 private:
  struct Slot;
  struct Shape {
    PixelFormat format;
    std::uint32_t width, height;
  };
  std::string tile_topic(std::string_view tile) const;
  bool fits_stream(const std::string& topic, PixelFormat format, std::uint32_t width, std::uint32_t height);
  void read_back(Slot& slot, const std::array<unsigned, kMaxPlanes>& textures, PixelFormat format,
                 std::uint32_t width, std::uint32_t height);
  void hand_over(bool wait_all);
  void run();

  media::RecordTarget options_;
  media::RecordingWriter writer_;
  std::vector<std::unique_ptr<Slot>> slots_;  // GL parts: display thread only; emptied by finish()
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Slot*> ready_;  // read back, waiting for the recorder thread; guarded by mutex_
  std::uint64_t dropped_ = 0, recorded_ = 0, skipped_ = 0;  // guarded by mutex_
  bool codec_told_ = false, shape_told_ = false;             // guarded by mutex_: a warning each, once
  std::vector<std::string> errors_;            // guarded by mutex_
  bool stop_ = false, failed_ = false;         // guarded by mutex_
  bool finished_ = false;                      // display thread
  std::map<std::string, Shape> streams_;       // display thread: by topic, its first captured frame's
  std::thread thread_;                         // last: starts once the members above exist
};

}  // namespace handoff::view
