#include "feeds/recording_feed.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <handoff/media/error.hpp>

namespace handoff::view {
namespace {

std::unique_ptr<media::RecordingSource> open(const std::string& path, const std::string& topic,
                                             std::vector<std::string> overlay_topics) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw media::ParseError(path, "", "", "no such file");
  media::RecordingOpenOptions o;
  o.topic = topic;
  o.overlay_topics = std::move(overlay_topics);
  return media::open_recording(path, o);
}

}  // namespace

bool is_recording_path(const std::string& path) { return media::is_recording_path(path); }

// What the feed keeps of the source, taken before the source goes to the
// pipeline (from start() on it belongs to the producer thread).
struct RecordingFeed::Opened {
  std::unique_ptr<media::RecordingSource> source;
  std::vector<std::uint64_t> log_times;
  std::string description;
  std::string topic;
  double fallback_ms = 0;

  explicit Opened(std::unique_ptr<media::RecordingSource> s) : source(std::move(s)) {
    const std::int64_t n = source->info().frame_count;
    log_times.reserve(std::size_t(std::max<std::int64_t>(n, 0)));
    for (std::int64_t i = 0; i < n; ++i) log_times.push_back(source->log_time(i));
    const double rate = source->info().rate.value();
    fallback_ms = rate > 0 ? 1000.0 / rate : 1000.0 / 30.0;
    topic = source->topic();
    description = "recording, topic " + source->topic();
    if (!source->annotations_topic().empty()) description += ", annotations " + source->annotations_topic();
    for (const std::string& t : source->overlay_topics()) description += ", overlays " + t;
    if (!source->indexed()) description += " (no index: scanned)";
  }
};

RecordingFeed::RecordingFeed(const std::string& path, const std::string& topic, GlRingOptions ring, bool loop,
                             std::vector<std::string> overlay_topics)
    : RecordingFeed(Opened(open(path, topic, std::move(overlay_topics))), std::move(ring), loop) {}

RecordingFeed::RecordingFeed(Opened opened, GlRingOptions ring, bool loop)
    : PipelineFeed(std::move(opened.source), std::move(ring), loop, std::nullopt),
      log_times_(std::move(opened.log_times)),
      description_(std::move(opened.description)),
      topic_(std::move(opened.topic)),
      fallback_ms_(opened.fallback_ms) {}

FeedInfo RecordingFeed::info() const {
  FeedInfo i = PipelineFeed::info();
  i.source = description_;
  i.topic = topic_;
  return i;
}

// The frame stays on display until the next one's log time (a gap of more
// than ten seconds plays as one period at the mean rate).
bool RecordingFeed::next(FeedFrame& out, bool wait) {
  if (!PipelineFeed::next(out, wait)) return false;
  const std::int64_t i = out.frame.index;
  out.display_ms = fallback_ms_;
  if (i >= 0 && std::size_t(i) < log_times_.size()) out.time_ns = log_times_[std::size_t(i)];
  if (i >= 0 && std::size_t(i) + 1 < log_times_.size() && log_times_[std::size_t(i) + 1] >= log_times_[std::size_t(i)]) {
    const double gap = double(log_times_[std::size_t(i) + 1] - log_times_[std::size_t(i)]) / 1e6;
    if (gap <= 10000.0) out.display_ms = gap;
  }
  return true;
}

// Log times are in order (frame i is the i-th by log time).
std::int64_t RecordingFeed::index_at(std::uint64_t time_ns) const {
  const auto after = std::upper_bound(log_times_.begin(), log_times_.end(), time_ns);
  return std::int64_t(after - log_times_.begin()) - 1;
}

}  // namespace handoff::view
