#include "publish_recorder.hpp"

#include <chrono>

#include <handoff/log.hpp>

namespace handoff::live::detail {
namespace {

viewer::RecordingOptions writer_options(const viewer::RecordTarget& t) {
  viewer::RecordingOptions o;
  o.compression = t.compression;
  o.block_when_full = false;  // publish() never waits for the disk: a full queue drops the frame (counted)
  return o;
}

std::uint64_t now_ns() {
  return std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count());
}

}  // namespace

PublishRecorder::PublishRecorder(const viewer::RecordTarget& target, const std::string& publisher_name)
    : writer_(target.path, writer_options(target)),
      topic_(target.topic.empty() ? "/" + publisher_name : target.topic),
      path_(target.path) {}

PublishRecorder::~PublishRecorder() { close(); }

void PublishRecorder::record(const Frame& frame, const viewer::OverlayFrame* overlays) noexcept {
  std::lock_guard lock(mutex_);
  if (closed_ || !figures_.error.empty()) return;
  if (frame.memory != MemoryKind::Host) {
    if (figures_.skipped++ == 0)
      log(LogLevel::Warning, path_ + ": a frame in " + (frame.memory == MemoryKind::Cuda ? "CUDA" : "Vulkan") +
                                 " memory is not recorded (only frames the publisher has in host memory are); "
                                 "such frames are counted in PublisherStats::record_skipped");
    return;
  }
  try {
    static const viewer::OverlayFrame kNone;
    if (writer_.write(frame, overlays ? *overlays : kNone, topic_, now_ns())) ++figures_.recorded;
    else ++figures_.dropped;
  } catch (const std::exception& e) {
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
  std::lock_guard lock(mutex_);
  return figures_;
}

}  // namespace handoff::live::detail
