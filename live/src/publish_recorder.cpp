#include "publish_recorder.hpp"

#include <algorithm>
#include <chrono>

#include <handoff/frame_copy.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/log.hpp>

namespace handoff::live::detail {
namespace {

media::RecordingOptions writer_options(const media::RecordTarget& t) {
  media::RecordingOptions o;
  o.compression = t.compression;
  o.codec = t.codec;  // h264 / h265: encoded on the writer thread
  o.block_when_full = false;  // publish() never waits for the disk: a full queue drops the frame (counted)
  return o;
}

std::uint64_t now_ns() {
  return std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count());
}

}  // namespace

PublishRecorder::PublishRecorder(const media::RecordTarget& target, const std::string& publisher_name)
    : writer_(target.path, writer_options(target)),
      topic_(target.topic.empty() ? "/" + publisher_name : target.topic),
      path_(target.path) {}

PublishRecorder::~PublishRecorder() { close(); }

const Frame& PublishRecorder::to_host(const Frame& cuda, CudaStream stream) {
  if (!staging_.owner || staging_.format != cuda.format || staging_.width != cuda.width ||
      staging_.height != cuda.height)
    staging_ = allocate_host_frame(cuda.format, cuda.width, cuda.height);
  copy_frame(cuda, staging_, stream, CopyCompletion::Finished);
  staging_.colorimetry = cuda.colorimetry;
  staging_.index = cuda.index;
  staging_.timestamp = cuda.timestamp;
  return staging_;
}

void PublishRecorder::record(const Frame& frame, const media::OverlayFrame* overlays, CudaStream cuda_stream) noexcept {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  if (!figures_.error.empty()) {  // the recording stopped: published, not recorded
    ++figures_.dropped;
    return;
  }
  if (frame.memory != MemoryKind::Host && frame.memory != MemoryKind::Cuda) {
    if (figures_.skipped++ == 0)
      log(LogLevel::Warning, path_ + ": a frame in Vulkan memory is not recorded (host and CUDA frames are); "
                                 "such frames are counted in PublisherStats::record_skipped");
    return;
  }
  try {
    static const media::OverlayFrame kNone;
    const Frame& host = frame.memory == MemoryKind::Cuda ? to_host(frame, cuda_stream) : frame;
    if (writer_.write(host, overlays ? *overlays : kNone, topic_, now_ns())) ++figures_.recorded;
    else ++figures_.dropped;
  } catch (const InvalidFrame& e) {  // another format or size than the first: left out, as the viewer's recorder does
    if (figures_.skipped++ == 0)
      log(LogLevel::Warning, path_ + ": " + e.what() + "; such frames are not recorded (PublisherStats::record_skipped)");
  } catch (const std::exception& e) {
    ++figures_.dropped;  // the frame whose write failed
    fail(e.what());
  }
}

void PublishRecorder::fail(const std::string& what) noexcept {
  figures_.error = path_ + ": " + what;
  log(LogLevel::Error, "recording stopped: " + figures_.error);
}

void PublishRecorder::close() noexcept {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  closed_ = true;
  try {
    writer_.close();
  } catch (const std::exception& e) {
    if (figures_.error.empty()) fail(e.what());
  }
}

RecordFigures PublishRecorder::figures() const {
  const std::uint64_t in_file = writer_.stats().frames_written;
  std::lock_guard lock(mutex_);
  RecordFigures f = figures_;
  // After a failure, what the file holds: frames queued or in the write that
  // failed are not in it, and are counted as left out (recorded + dropped +
  // skipped stays what was published).
  if (!f.error.empty()) {
    const std::uint64_t held = std::min(f.recorded, in_file);
    f.dropped += f.recorded - held;
    f.recorded = held;
  }
  return f;
}

}  // namespace handoff::live::detail
