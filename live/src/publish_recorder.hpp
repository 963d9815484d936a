#pragma once
// PublisherOptions::record: what a Publisher publishes, into an MCAP file.
// Frames in host memory are handed to media::RecordingWriter (one copy on
// the publishing thread; its writer thread compresses and writes, and a frame
// that finds its queue full is left out and counted). CUDA frames are first
// copied device to host into a staging frame, on the stream their producer
// used, and that stream synchronised (the recording's cost, on the publishing
// thread). Frames the publisher only has in Vulkan memory are not recorded:
// they are counted, and the first one is logged.
//
// Thread safety: any thread (one lock around the writer).
#include <cstdint>
#include <mutex>
#include <string>

#include <handoff/cuda_stream.hpp>
#include <handoff/frame.hpp>
#include <handoff/media/overlay.hpp>
#include <handoff/media/recording.hpp>

namespace handoff::live::detail {

struct RecordFigures {
  std::uint64_t recorded = 0, dropped = 0, skipped = 0;
  std::string error;  // the error that stopped the recording ("" while none)
};

class PublishRecorder {
 public:
  // Creates the file: handoff::Error naming it when it cannot be.
  PublishRecorder(const media::RecordTarget& target, const std::string& publisher_name);
  ~PublishRecorder();  // close(); never throws
  PublishRecorder(const PublishRecorder&) = delete;
  PublishRecorder& operator=(const PublishRecorder&) = delete;

  // Records `frame` as published (its index and timestamp kept; logged now).
  // CUDA frames are read on `cuda_stream` (default: the legacy default
  // stream), after the work queued there. Never throws: a write or
  // copy error stops the recording (RecordFigures::error).
  void record(const Frame& frame, const media::OverlayFrame* overlays, CudaStream cuda_stream = {}) noexcept;
  // Writes what is queued, the summary and footer. Never throws.
  void close() noexcept;
  RecordFigures figures() const;

 private:
  void fail(const std::string& what) noexcept;  // mutex_ held
  const Frame& to_host(const Frame& cuda, CudaStream stream);  // mutex_ held; into staging_

  mutable std::mutex mutex_;
  media::RecordingWriter writer_;
  std::string topic_, path_;
  RecordFigures figures_;
  Frame staging_;  // host copies of CUDA frames (reallocated when the layout changes)
  bool closed_ = false;
};

}  // namespace handoff::live::detail
