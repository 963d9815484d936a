// RecordingWriter: the caller encodes (one copy of the pixels), a writer
// thread owns the mcap::Writer (chunking, compression, CRCs, disk writes).
// The queue is bounded: a full queue drops the frame (counted) or, when asked,
// waits for room at most wait_limit().
#include <handoff/error.hpp>
#include <handoff/log.hpp>
#include <handoff/wait.hpp>
#include <handoff/frame_copy.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/media/recording.hpp>

#include "video_encoder.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <map>

namespace handoff::media {

struct RecordingWriter::Item {
  std::string topic;
  Colorimetry colorimetry{};
  std::uint64_t log_time = 0, publish_time = 0;
  std::vector<std::uint8_t> image;  // serialized foxglove.RawImage
  std::string annotations;          // serialized foxglove.ImageAnnotations; empty: none
  std::vector<LayerMessage> layers;  // one per layer (encode_layer_messages)
  // Compressed recordings: the frame's pixels packed (the writer thread encodes them).
  std::vector<std::uint8_t> pixels;
  PixelFormat format = PixelFormat::NV12;
  std::uint32_t width = 0, height = 0;
};

// A topic's video stream (RecordingOptions::codec h264 / h265): its encoder,
// channel and the frames inside the encoder, in order (no B-frames: units come
// out in the order frames went in).
struct VideoStream {
  struct Pending {
    std::int64_t pts;
    std::uint64_t log_time, publish_time;
    std::uint32_t sequence;
  };
  std::unique_ptr<VideoEncoder> encoder;
  Colorimetry colorimetry;
  std::uint16_t channel = 0;
  std::int64_t last_pts = -1;
  std::uint64_t last_log_time = 0;
  std::optional<std::uint64_t> last_keyframe;
  std::deque<Pending> pending;
};

// The writer thread's channels: one per (topic, colorimetry) for images, one
// per annotation topic; sequence numbers count per topic.
struct RecordingWriter::Channels {
  std::uint16_t image_schema = 0, annotation_schema = 0;
  struct Image {
    std::string topic;
    Colorimetry colorimetry;
    std::uint16_t channel;
  };
  std::vector<Image> images;
  std::map<std::string, std::uint16_t, std::less<>> annotations;
  // Layer channels by (topic, settings): settings that change start a new channel on the topic.
  std::map<std::pair<std::string, std::string>, std::uint16_t> layers;
  std::map<std::string, std::uint32_t, std::less<>> sequence;
  std::uint16_t video_schema = 0;
  std::vector<Image> video_channels;
  std::map<std::string, VideoStream, std::less<>> videos;
  std::vector<EncodedUnit> units;  // scratch
  std::vector<std::uint8_t> message;  // scratch
};

RecordingWriter::RecordingWriter(const std::filesystem::path& path, RecordingOptions options)
    : path_(path), options_(options), channels_(std::make_unique<Channels>()) {
  if (options_.queue_capacity == 0) options_.queue_capacity = 1;
  if (options_.chunk_size > options_.max_chunk_bytes)
    throw UsageError("RecordingOptions: chunk_size " + std::to_string(options_.chunk_size) + " is above max_chunk_bytes " +
                     std::to_string(options_.max_chunk_bytes) + " (the largest chunk its readers accept)");
  mcap::WriterOptions w;
  w.compression = options_.compression;
  w.compression_level = options_.compression_level;
  w.chunk_size = options_.chunk_size;
  w.chunk_duration_ns = options_.chunk_duration_ns;
  w.summary = options_.summary;
  w.sync_on_close = options_.sync_on_close;
  writer_ = std::make_unique<mcap::Writer>(path_, w);
  thread_ = std::thread([this] { run(); });
}

RecordingWriter::~RecordingWriter() {
  try {
    close();
  } catch (const std::exception& e) {
    log(LogLevel::Error, "RecordingWriter: " + path_.string() + ": " + e.what());
  }
}

void RecordingWriter::wait_for(std::unique_lock<std::mutex>& lock, const char* what, const std::function<bool()>& done) {
  // Bounded by the time without progress: a slow disk that keeps writing is
  // waited for; one that stopped becomes a WaitTimeout.
  const auto limit = wait_limit();
  std::uint64_t seen = progress_;
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    const bool timed_out = cv_.wait_until(lock, deadline) == std::cv_status::timeout;
    if (progress_ != seen) {
      seen = progress_;
      deadline = std::chrono::steady_clock::now() + limit;
    } else if (timed_out && !done()) {
      throw WaitTimeout(std::string(what) + " (" + std::to_string(queue_.size()) + " frames queued for " +
                            path_.string() + ")",
                        limit);
    }
  }
}

namespace {

// The layout a compressed recording's Item holds a frame in.
FrameLayout packed_layout(PixelFormat f, std::uint32_t w, std::uint32_t h) { return FrameLayout::contiguous(f, w, h, 1); }

}  // namespace

// Compressed recordings: the caller pays one copy (as for raw); conversion and
// encoding happen on the writer thread.
void RecordingWriter::copy_packed(const Frame& frame, Item& item) {
  const FrameLayout layout = packed_layout(frame.format, frame.width, frame.height);
  item.pixels.resize(layout.buffer_bytes(0));
  copy_frame(frame, layout.describe(MemoryKind::Host, {item.pixels.data()}));
  item.format = frame.format;
  item.width = frame.width;
  item.height = frame.height;
}

bool RecordingWriter::write(const Frame& frame, const OverlayFrame& overlays, std::string_view topic,
                            std::uint64_t log_time_ns, std::optional<std::uint64_t> publish_time_ns) {
  if (topic.empty()) throw UsageError("RecordingWriter::write: empty topic");
  if (frame.memory != MemoryKind::Host) throw UsageError("RecordingWriter::write: the frame is not in host memory");
  check_recorded_frame(options_.codec, frame.format, frame.width, frame.height, options_.max_chunk_bytes);
  std::unique_ptr<Item> item;
  {
    std::unique_lock lock(mutex_);
    if (closed_) throw UsageError("RecordingWriter::write after close");
    if (error_) std::rethrow_exception(error_);
    const Shape shape{frame.format, frame.width, frame.height};
    const auto [first, added] = shapes_.try_emplace(std::string(topic), shape);
    if (!added && !(first->second == shape)) {
      throw InvalidFrame("frame", std::string(topic) + " holds " + std::string(to_string(first->second.format)) + " " +
                                      std::to_string(first->second.width) + "x" + std::to_string(first->second.height) +
                                      " frames (its first frame's); this one is " +
                                      std::string(to_string(frame.format)) + " " + std::to_string(frame.width) + "x" +
                                      std::to_string(frame.height) + ": a recording's topic holds one format and size");
    }
    if (queue_.size() >= options_.queue_capacity) {
      if (!options_.block_when_full) {
        ++stats_.frames_dropped;
        return false;
      }
      wait_for(lock, "RecordingWriter::write: waiting for room in the queue",
               [&] { return queue_.size() < options_.queue_capacity || error_; });
      if (error_) std::rethrow_exception(error_);
    }
    if (!free_.empty()) {
      item = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (!item) item = std::make_unique<Item>();
  const std::uint64_t publish = publish_time_ns.value_or(log_time_ns);
  try {
    encode_layer_messages(overlays, publish, item->layers);  // first: bad layers refuse the frame
    for (const LayerMessage& m : item->layers) {
      check_message_size("layers[" + std::to_string(m.index) + "]", "layer " + std::to_string(m.index),
                         m.image.size(), options_.max_chunk_bytes);
    }
    if (overlays.empty()) item->annotations.clear();
    else encode_annotations(overlays, publish, item->annotations);
    check_message_size("overlays", "the frame's annotations", item->annotations.size(), options_.max_chunk_bytes);
  } catch (...) {
    std::lock_guard lock(mutex_);
    free_.push_back(std::move(item));
    throw;
  }
  if (options_.codec == VideoCodec::Raw) {
    encode_raw_image(frame, publish, item->image);
  } else {
    copy_packed(frame, *item);
  }
  item->topic.assign(topic);
  item->colorimetry = frame.colorimetry;
  item->log_time = log_time_ns;
  item->publish_time = publish;
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(item));
  }
  cv_.notify_all();
  return true;
}

void RecordingWriter::write_item(Item& item) {
  Channels& c = *channels_;
  if (c.image_schema == 0) {
    c.image_schema = writer_->add_schema(kRawImageSchema, "protobuf", raw_image_descriptor_set());
    c.annotation_schema = writer_->add_schema(kImageAnnotationsSchema, "protobuf", image_annotations_descriptor_set());
  }
  std::uint16_t image_channel = 0;
  auto it = options_.codec != VideoCodec::Raw ? c.images.end() : std::find_if(c.images.begin(), c.images.end(), [&](const Channels::Image& i) {
    return i.topic == item.topic && i.colorimetry == item.colorimetry;
  });
  if (options_.codec != VideoCodec::Raw) {
    // write_video() makes the video channels
  } else if (it != c.images.end()) {
    image_channel = it->channel;
  } else {
    image_channel = writer_->add_channel(c.image_schema, item.topic, "protobuf", colorimetry_metadata(item.colorimetry));
    c.images.push_back({item.topic, item.colorimetry, image_channel});
  }
  std::uint32_t& seq = c.sequence[item.topic];
  if (options_.codec == VideoCodec::Raw) writer_->write(image_channel, seq, item.log_time, item.publish_time, item.image);
  else write_video(item, seq);
  if (!item.annotations.empty()) {
    const std::string topic = item.topic + std::string(kAnnotationsSuffix);
    auto a = c.annotations.find(topic);
    if (a == c.annotations.end()) a = c.annotations.emplace(topic, writer_->add_channel(c.annotation_schema, topic, "protobuf")).first;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(item.annotations.data());
    writer_->write(a->second, seq, item.log_time, item.publish_time, std::span(bytes, item.annotations.size()));
  }
  for (const LayerMessage& layer : item.layers) {
    std::string topic = layer_topic(item.topic, layer.index);
    auto key = std::make_pair(std::move(topic), layer.settings);
    auto l = c.layers.find(key);
    if (l == c.layers.end()) {
      const mcap::StringMap metadata{{std::string(kLayerMetadataKey), layer.settings}};
      l = c.layers.emplace(key, writer_->add_channel(c.image_schema, key.first, "protobuf", metadata)).first;
    }
    writer_->write(l->second, seq, item.log_time, item.publish_time, layer.image);
  }
  ++seq;
}

// Encodes the item's frame on its topic's stream (a new encoder, and channel
// when the colorimetry changed, for a new format, size or colorimetry) and
// writes what the encoder returns.
void RecordingWriter::write_video(const Item& item, std::uint32_t sequence) {
  Channels& c = *channels_;
  if (c.video_schema == 0)
    c.video_schema = writer_->add_schema(kCompressedVideoSchema, "protobuf", compressed_video_descriptor_set());
  VideoStream& v = c.videos[item.topic];
  const Colorimetry col = video_colorimetry(item.format, item.height, item.colorimetry);
  if (!v.encoder || v.encoder->format() != item.format || v.encoder->width() != item.width ||
      v.encoder->height() != item.height || v.colorimetry != col) {
    finish_video(v);
    auto ch = std::find_if(c.video_channels.begin(), c.video_channels.end(), [&](const Channels::Image& i) {
      return i.topic == item.topic && i.colorimetry == col;
    });
    if (ch == c.video_channels.end()) {
      c.video_channels.push_back(
          {item.topic, col, writer_->add_channel(c.video_schema, item.topic, "protobuf", colorimetry_metadata(col))});
      ch = std::prev(c.video_channels.end());
    }
    v.channel = ch->channel;
    v.colorimetry = col;
    v.encoder = std::make_unique<VideoEncoder>(options_.codec, options_.video, item.format, item.width, item.height, col);
    v.last_keyframe.reset();
  }
  // Readers decode a topic's units in log-time order, which must be the order
  // they were encoded in: a frame given an earlier time than the one before
  // is logged at that one's time (its publish_time, the message's timestamp,
  // keeps the time given). Otherwise its P-frames would decode after the wrong ones.
  const std::uint64_t log_time = std::max(item.log_time, v.last_log_time);
  v.last_log_time = log_time;
  const bool key = !v.last_keyframe || log_time - *v.last_keyframe >= options_.video.keyframe_interval_ns;
  if (key) v.last_keyframe = log_time;
  // pts in microseconds, strictly increasing (the encoder refuses repeats).
  v.last_pts = std::max(v.last_pts + 1, std::int64_t(log_time / 1000));
  v.pending.push_back({v.last_pts, log_time, item.publish_time, sequence});
  const FrameLayout layout = packed_layout(item.format, item.width, item.height);
  Frame frame = layout.describe(MemoryKind::Host, {const_cast<std::uint8_t*>(item.pixels.data())});
  c.units.clear();
  v.encoder->encode(frame, v.last_pts, key, c.units);
  write_units(v);
}

void RecordingWriter::write_units(VideoStream& v) {
  Channels& c = *channels_;
  for (const EncodedUnit& u : c.units) {
    while (!v.pending.empty() && v.pending.front().pts < u.pts) v.pending.pop_front();  // none expected
    if (v.pending.empty() || v.pending.front().pts != u.pts) throw Error("video encoder: a unit for no frame");
    const VideoStream::Pending p = v.pending.front();
    v.pending.pop_front();
    encode_compressed_video(u.data, options_.codec, p.publish_time, c.message);
    writer_->write(v.channel, p.sequence, p.log_time, p.publish_time, c.message);
  }
  c.units.clear();
}

// Drains a stream's encoder into the file (a new encoder follows, or the file closes).
void RecordingWriter::finish_video(VideoStream& v) {
  if (!v.encoder) return;
  channels_->units.clear();
  v.encoder->flush(channels_->units);
  write_units(v);
  v.encoder.reset();
  v.pending.clear();
}

void lower_thread_priority(int nice) noexcept {
  if (nice <= 0) return;
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, tid);
  if (errno == 0) (void)::setpriority(PRIO_PROCESS, tid, std::min(now + nice, 19));
}

void RecordingWriter::run() {
  lower_thread_priority(options_.writer_nice);
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return !queue_.empty() || stop_; });
    if (queue_.empty()) return;  // stopping, and nothing left
    std::unique_ptr<Item> item = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    const bool failed = error_ != nullptr;
    lock.unlock();
    std::exception_ptr error;
    if (!failed) {
      try {
        write_item(*item);
      } catch (...) {
        error = std::current_exception();
      }
    }
    lock.lock();
    busy_ = false;
    ++progress_;
    if (error) {
      error_ = error;
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        log(LogLevel::Error, "RecordingWriter: " + path_.string() + ": recording stopped: " + e.what());
      }
    }
    if (failed || error) ++stats_.frames_dropped;
    else ++stats_.frames_written;
    if (error) stats_.frames_written = frames_in_file();  // those in the failed write or open chunk are not
    stats_.bytes_written = writer_->bytes_written();
    if (free_.size() <= options_.queue_capacity) free_.push_back(std::move(item));
    cv_.notify_all();
  }
}

void RecordingWriter::flush() {
  std::unique_lock lock(mutex_);
  wait_for(lock, "RecordingWriter::flush", [&] { return queue_.empty() && !busy_; });
  if (error_) std::rethrow_exception(error_);
}

void RecordingWriter::close() {
  std::exception_ptr timeout;
  {
    std::unique_lock lock(mutex_);
    if (closed_) return;
    closed_ = true;
    try {
      wait_for(lock, "RecordingWriter::close", [&] { return queue_.empty() && !busy_; });
    } catch (const WaitTimeout&) {
      timeout = std::current_exception();
      if (!error_) error_ = timeout;  // the thread discards what is left
    }
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  // The thread is gone: writer_ is this thread's now.
  try {
    if (!error_)
      for (auto& [topic, v] : channels_->videos) finish_video(v);
  } catch (...) {
    error_ = std::current_exception();
  }
  try {
    writer_->close();
  } catch (...) {
    if (!error_) error_ = std::current_exception();
  }
  {
    std::lock_guard lock(mutex_);
    stats_.bytes_written = writer_->bytes_written();
    if (error_) stats_.frames_written = frames_in_file();
  }
  if (error_) std::rethrow_exception(error_);
}

// Image messages (raw or video) on the file's whole records: a frame is one
// image message, its overlays and layers beside it.
std::uint64_t RecordingWriter::frames_in_file() const {
  std::uint64_t n = 0;
  for (const auto& i : channels_->images) n += writer_->messages_in_file(i.channel);
  for (const auto& i : channels_->video_channels) n += writer_->messages_in_file(i.channel);
  return n;
}

RecordingStats RecordingWriter::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace handoff::media
