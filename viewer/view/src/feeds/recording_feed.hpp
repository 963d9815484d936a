#pragma once
// An MCAP recording played through the frame pipeline (docs/recording.md):
// the frames of one foxglove.RawImage topic in log-time order, each with the
// annotations logged at its time, paced by the recorded times (each frame
// stays as long as the gap to the next one, divided by the speed), seekable
// both ways through the recording's index.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <handoff/media/recording.hpp>

#include "feeds/pipeline_feed.hpp"

namespace handoff::view {

class RecordingFeed final : public PipelineFeed {
 public:
  // Opens the recording (media::ParseError naming the file, record, offset
  // and field; for an unknown `topic`, the image topics there are).
  RecordingFeed(const std::string& path, const std::string& topic, GlRingOptions ring, bool loop,
                std::vector<std::string> overlay_topics = {});

  FeedInfo info() const override;
  bool next(FeedFrame& out, bool wait) override;
  std::int64_t index_at(std::uint64_t time_ns) const override;
  std::span<const std::uint64_t> log_times() const override { return log_times_; }

 private:
  struct Opened;
  RecordingFeed(Opened opened, GlRingOptions ring, bool loop);

  std::vector<std::uint64_t> log_times_;  // of every frame, in order
  std::string description_;
  std::string topic_;
  double fallback_ms_ = 0;  // the last frame's time on display: one period at the mean rate
};

// True for paths the file feed reads as recordings (".mcap", any case).
bool is_recording_path(const std::string& path);

}  // namespace handoff::view
