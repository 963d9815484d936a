// A rosbag2 SQLite3 storage file (.db3, `ros2 bag record`'s default up to
// Humble) played as a RecordingSource: the chosen sensor_msgs/msg/Image
// topic's messages by timestamp, each read by its row id. Tables as rosbag2's
// sqlite3 plugin writes them: topics(id, name, type, serialization_format,
// ...), messages(id, topic_id, timestamp, data), and from Iron on
// message_definitions(topic_type, encoding, encoded_message_definition, ...).
#include "rosbag_db3.hpp"

#include "mcap_format.hpp"
#include "recording_video.hpp"
#include "ros_overlay.hpp"

#include <handoff/frame_validate.hpp>
#include <handoff/log.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/ros_image.hpp>

#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>

namespace handoff::media {
namespace {

constexpr char kSqliteMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};

struct DbClose {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StmtFinalize {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, DbClose>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalize>;

std::string text_column(sqlite3_stmt* s, int i) {
  const auto* p = sqlite3_column_text(s, i);
  return p ? std::string(reinterpret_cast<const char*>(p), std::size_t(sqlite3_column_bytes(s, i))) : std::string();
}

struct Frame {
  std::int64_t row = 0;
  std::uint64_t time = 0;
};

Rational rate_of(const std::vector<Frame>& frames) {
  if (frames.size() < 2 || frames.back().time <= frames.front().time) return {30, 1};
  const double interval = double(frames.back().time - frames.front().time) / double(frames.size() - 1);
  auto num = std::int64_t(std::llround(1e12 / interval));
  if (num <= 0) return {30, 1};
  const std::int64_t g = std::gcd(num, std::int64_t(1000));
  return {num / g, 1000 / g};
}

class Db3Source final : public RecordingSource {
 public:
  Db3Source(const std::filesystem::path& path, const RecordingOpenOptions& options);

  const SourceInfo& info() const override { return info_; }
  bool read_into(const FrameWriteTarget& target) override;
  void seek(std::int64_t index) override;
  std::int64_t position() const override { return position_; }
  const std::vector<RecordingTopic>& image_topics() const override { return topics_; }
  const std::string& topic() const override { return topic_; }
  const std::string& annotations_topic() const override { return none_; }
  const std::vector<std::string>& overlay_topics() const override { return overlay_topic_names_; }
  bool overlays_for(std::int64_t index, OverlayFrame& out) const override;
  std::uint64_t log_time(std::int64_t index) const override { return frames_.at(checked(index)).time; }
  Colorimetry colorimetry(std::int64_t) const override { return info_.colorimetry; }
  bool indexed() const override { return true; }
  const std::vector<std::string>& warnings() const override { return warnings_; }

 private:
  std::size_t checked(std::int64_t index) const {
    if (index < 0 || index >= std::int64_t(frames_.size())) {
      throw UsageError("RecordingSource: frame " + std::to_string(index) + " is not in 0.." +
                       std::to_string(frames_.size() - 1));
    }
    return std::size_t(index);
  }
  [[noreturn]] void fail_sqlite(const std::string& what) const {
    throw ParseError(name_, "", "sqlite", what + ": " + sqlite3_errmsg(db_.get()));
  }
  Stmt prepare(const char* sql) const {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_.get(), sql, -1, &s, nullptr) != SQLITE_OK) fail_sqlite(std::string("reading the bag (") + sql + ")");
    return Stmt(s);
  }
  void choose_topic(const RecordingOpenOptions& options);
  std::shared_ptr<const ros::MessageDefinition> load_definition(const std::string& type);
  void find_overlay_topics(const RecordingOpenOptions& options);
  // Reads frame `index` and hands its decoded image to `use` while the row's blob is valid.
  template <typename F>
  void with_image(std::size_t index, F&& use) const;
  std::string frame_location(std::size_t index) const;
  // Frame `index`'s message, copied into `into` (a video message outlives the row's read).
  void fetch(std::size_t index, std::vector<std::uint8_t>& into) const;
  bool plays_as_video() const;
  void open_video();
  void open_images();

  std::string name_;
  Db db_;
  SourceInfo info_;
  std::vector<RecordingTopic> topics_;
  std::string topic_, none_;
  std::vector<Frame> frames_;
  std::shared_ptr<const ros::MessageDefinition> definition_;
  Stmt read_;
  std::int64_t position_ = 0;
  std::vector<std::string> warnings_;
  bool compressed_ = false;  // the topic is sensor_msgs/CompressedImage
  std::unique_ptr<VideoTrack> video_;  // a video topic (plays_as_video)
  mutable std::vector<std::uint8_t> video_bytes_;  // the video message last read
  mutable DecodedPicture picture_;  // its pixels, decoded (with_image)
  std::vector<ros::OverlayTopic> overlay_topics_;  // ROS 2 detections and annotations
  std::vector<std::string> overlay_topic_names_;
  std::uint64_t window_ns_ = 0;  // RecordingOpenOptions::annotation_window_ns
};

Db3Source::Db3Source(const std::filesystem::path& path, const RecordingOpenOptions& options) : name_(path.string()) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(name_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  db_.reset(db);
  if (rc != SQLITE_OK) fail_sqlite("cannot open");
  choose_topic(options);
  read_ = prepare("SELECT data FROM messages WHERE id = ?");
  window_ns_ = options.annotation_window_ns;
  find_overlay_topics(options);
  info_.name = name_;
  if (plays_as_video()) open_video();
  else open_images();
  info_.rate = rate_of(frames_);
  info_.frame_count = std::int64_t(frames_.size());
}

// The first image sets the stream's format and size.
void Db3Source::open_images() {
  with_image(0, [&](const ros::ImageView& v, const MessagePlace& where) {
    const auto format = ros::image_format(v.image.encoding);
    if (!format) {
      throw ParseError(name_, where.location(), v.compressed ? "CompressedImage.encoding" : "Image.encoding",
                       "unsupported encoding " + mcap::detail::quoted(v.image.encoding) + " (supported: " +
                           ros::image_encodings() + ")");
    }
    for (auto [field, value] : {std::pair{"width", v.image.width}, std::pair{"height", v.image.height}}) {
      if (std::string problem = dimension_problem(field, value); !problem.empty())
        throw ParseError(name_, where.location(), std::string(v.compressed ? "CompressedImage." : "Image.") + field, problem);
    }
    ros::check_image(v, *format, v.image.width, v.image.height, where);
    info_.format = *format;
    info_.width = v.image.width;
    info_.height = v.image.height;
  });
  info_.colorimetry = colorimetry_from_metadata({}, info_.height);
}

std::string Db3Source::frame_location(std::size_t index) const {
  return "frame " + std::to_string(index) + ": message row " + std::to_string(frames_[index].row);
}

void Db3Source::fetch(std::size_t index, std::vector<std::uint8_t>& into) const {
  sqlite3_bind_int64(read_.get(), 1, frames_[index].row);
  struct Reset {
    sqlite3_stmt* s;
    ~Reset() { sqlite3_reset(s); }
  } reset{read_.get()};
  if (sqlite3_step(read_.get()) != SQLITE_ROW) fail_sqlite(frame_location(index));
  const auto* blob = static_cast<const std::uint8_t*>(sqlite3_column_blob(read_.get(), 0));
  into.assign(blob, blob + sqlite3_column_bytes(read_.get(), 0));
}

// A CompressedImage topic whose first message is h264 / h265, or a
// foxglove_msgs/CompressedVideo topic (is_ros_video). A first message that
// does not decode is left to the image path, which reports it.
bool Db3Source::plays_as_video() const {
  if (definition_->root().name == ros::kCompressedVideoType) return true;
  if (!compressed_) return false;
  try {
    fetch(0, video_bytes_);
    return is_ros_video(ros::CdrMessage::decode(definition_, video_bytes_));
  } catch (const ParseError&) {
    return false;
  }
}

// NV12 frames of the decoded pictures' size, the colours the stream signals (else the default).
void Db3Source::open_video() {
  auto read = [this](std::size_t i) {
    fetch(i, video_bytes_);
    return ros_video_view(ros::CdrMessage::decode(definition_, video_bytes_));
  };
  video_ = std::make_unique<VideoTrack>(name_, compressed_ ? "CompressedImage" : "CompressedVideo", frames_.size(), read,
                                        [this](std::size_t i) {
                                          return "topic " + mcap::detail::quoted(topic_) + ", " + frame_location(i);
                                        });
  const PictureInfo& p = video_->first_picture();
  info_.format = PixelFormat::NV12;
  info_.width = p.width;
  info_.height = p.height;
  info_.colorimetry = colorimetry_from_metadata({}, p.height);
  info_.colorimetry.matrix = p.matrix.value_or(info_.colorimetry.matrix);
  info_.colorimetry.range = p.range.value_or(info_.colorimetry.range);
}

void Db3Source::choose_topic(const RecordingOpenOptions& options) {
  Stmt topics = prepare("SELECT id, name, type, serialization_format FROM topics ORDER BY id");
  Stmt count = prepare("SELECT count(*) FROM messages WHERE topic_id = ?");
  std::vector<std::pair<std::int64_t, std::string>> ids;  // image topics' ids and types
  while (sqlite3_step(topics.get()) == SQLITE_ROW) {
    const std::string name = text_column(topics.get(), 1), type = text_column(topics.get(), 2);
    if (!ros::is_image_type(type) || text_column(topics.get(), 3) != "cdr") continue;
    sqlite3_bind_int64(count.get(), 1, sqlite3_column_int64(topics.get(), 0));
    const std::uint64_t n = sqlite3_step(count.get()) == SQLITE_ROW ? std::uint64_t(sqlite3_column_int64(count.get(), 0)) : 0;
    sqlite3_reset(count.get());
    topics_.push_back({name, type, n});
    ids.emplace_back(sqlite3_column_int64(topics.get(), 0), type);
  }
  if (sqlite3_errcode(db_.get()) != SQLITE_OK && sqlite3_errcode(db_.get()) != SQLITE_DONE &&
      sqlite3_errcode(db_.get()) != SQLITE_ROW) {
    fail_sqlite("reading the topics table");
  }
  if (topics_.empty()) throw ParseError(name_, "", "topic", "the bag has no sensor_msgs/msg/Image or CompressedImage topic in cdr");
  topic_ = options.topic.empty() ? topics_.front().topic : options.topic;
  const auto t = std::find_if(topics_.begin(), topics_.end(), [&](const auto& r) { return r.topic == topic_; });
  if (t == topics_.end()) {
    std::string list;
    for (const auto& r : topics_) list += (list.empty() ? "" : ", ") + r.topic;
    throw ParseError(name_, "", "topic", "no image topic " + mcap::detail::quoted(topic_) + " (image topics: " + list + ")");
  }
  const auto& [id, type] = ids[std::size_t(t - topics_.begin())];
  definition_ = load_definition(type);
  compressed_ = ros::normalize_type_name(type) == ros::kCompressedImageType;
  Stmt rows = prepare("SELECT id, timestamp FROM messages WHERE topic_id = ? ORDER BY timestamp, id");
  sqlite3_bind_int64(rows.get(), 1, id);
  while (sqlite3_step(rows.get()) == SQLITE_ROW) {
    frames_.push_back({sqlite3_column_int64(rows.get(), 0), std::uint64_t(sqlite3_column_int64(rows.get(), 1))});
  }
  if (frames_.empty()) throw ParseError(name_, "", "topic", "image topic " + mcap::detail::quoted(topic_) + " has no messages");
}

// The topic type's definition from message_definitions (rosbag2 Iron and
// later) when the bag has it, else the built-in one.
std::shared_ptr<const ros::MessageDefinition> Db3Source::load_definition(const std::string& type) {
  sqlite3_stmt* raw = nullptr;
  const char* sql = "SELECT encoding, encoded_message_definition FROM message_definitions WHERE topic_type = ?";
  if (sqlite3_prepare_v2(db_.get(), sql, -1, &raw, nullptr) == SQLITE_OK) {
    Stmt s(raw);
    sqlite3_bind_text(s.get(), 1, type.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(s.get()) == SQLITE_ROW && text_column(s.get(), 0) == "ros2msg" && !text_column(s.get(), 1).empty()) {
      return ros::MessageDefinition::parse(type, text_column(s.get(), 1), name_ + ": message_definitions (" + type + ")");
    }
  }
  return ros::MessageDefinition::builtin(type);
}

// The ROS 2 overlay topics drawn on the image topic (RecordingOpenOptions::overlay_topics).
void Db3Source::find_overlay_topics(const RecordingOpenOptions& options) {
  std::map<std::string, std::pair<std::int64_t, std::string>> found;  // topic -> (id, type)
  Stmt topics = prepare("SELECT id, name, type, serialization_format FROM topics ORDER BY id");
  while (sqlite3_step(topics.get()) == SQLITE_ROW) {
    const std::string name = text_column(topics.get(), 1), type = text_column(topics.get(), 2);
    if (ros::is_overlay_type(type) && text_column(topics.get(), 3) == "cdr")
      found.emplace(name, std::pair{sqlite3_column_int64(topics.get(), 0), type});
  }
  std::vector<std::string> chosen = options.overlay_topics;
  for (const std::string& t : chosen) {
    if (!found.count(t)) {
      throw ParseError(name_, "", "overlay_topic",
                       "no vision_msgs/msg/Detection2DArray or foxglove_msgs/msg/ImageAnnotations topic " + mcap::detail::quoted(t));
    }
  }
  if (chosen.empty()) {
    for (const auto& [topic, f] : found)
      if (ros::parent_namespace(topic) == ros::image_namespace(topic_)) chosen.push_back(topic);
  }
  auto read = std::make_shared<Stmt>(prepare("SELECT data FROM messages WHERE id = ?"));
  for (const std::string& topic : chosen) {
    const auto& [id, type] = found.at(topic);
    auto rows = std::make_shared<std::vector<std::int64_t>>();
    std::vector<std::uint64_t> times;
    Stmt q = prepare("SELECT id, timestamp FROM messages WHERE topic_id = ? ORDER BY timestamp, id");
    sqlite3_bind_int64(q.get(), 1, id);
    while (sqlite3_step(q.get()) == SQLITE_ROW) {
      rows->push_back(sqlite3_column_int64(q.get(), 0));
      times.push_back(std::uint64_t(sqlite3_column_int64(q.get(), 1)));
    }
    auto fetch = [this, read, rows, topic](std::size_t k) {
      sqlite3_stmt* st = read->get();
      sqlite3_bind_int64(st, 1, (*rows)[k]);
      struct Reset {
        sqlite3_stmt* s;
        ~Reset() { sqlite3_reset(s); }
      } reset{st};
      if (sqlite3_step(st) != SQLITE_ROW) fail_sqlite("overlay topic " + mcap::detail::quoted(topic) + " message " + std::to_string(k));
      const auto* blob = static_cast<const std::uint8_t*>(sqlite3_column_blob(st, 0));
      return std::vector<std::uint8_t>(blob, blob + sqlite3_column_bytes(st, 0));
    };
    std::shared_ptr<const ros::MessageDefinition> definition;
    try {
      definition = load_definition(type);
    } catch (const ParseError& e) {  // a topic found by namespace is left out; one asked for is an error
      if (!options.overlay_topics.empty()) throw;
      log(LogLevel::Warning, std::string("recording: overlay topic left out: ") + e.what());
      continue;
    }
    overlay_topics_.emplace_back(name_, topic, std::move(definition), std::move(times), fetch);
    overlay_topic_names_.push_back(topic);
  }
}

// Frame `index`'s overlays: each overlay topic's message with the image's header stamp.
bool Db3Source::overlays_for(std::int64_t index, OverlayFrame& out) const {
  out.clear();
  if (index < 0 || index >= std::int64_t(frames_.size())) return false;
  if (!overlay_topics_.empty()) {
    std::uint64_t key = 0;
    if (video_) {
      fetch(std::size_t(index), video_bytes_);
      key = ros_video_view(ros::CdrMessage::decode(definition_, video_bytes_, {name_, frame_location(std::size_t(index))}))
                .timestamp_ns;
    } else {
      with_image(std::size_t(index), [&](const ros::ImageView& v, const MessagePlace&) { key = v.image.timestamp_ns; });
    }
    for (const ros::OverlayTopic& t : overlay_topics_) t.add(frames_[std::size_t(index)].time, key, window_ns_, out);
  }
  out.frame = index;
  return out.has_content();
}

template <typename F>
void Db3Source::with_image(std::size_t index, F&& use) const {
  const Frame& f = frames_[index];
  const std::string location = frame_location(index);
  const MessagePlace where{name_, [&location] { return location; }};
  sqlite3_bind_int64(read_.get(), 1, f.row);
  struct Reset {
    sqlite3_stmt* s;
    ~Reset() { sqlite3_reset(s); }
  } reset{read_.get()};
  if (sqlite3_step(read_.get()) != SQLITE_ROW) fail_sqlite(location);
  const auto* blob = static_cast<const std::uint8_t*>(sqlite3_column_blob(read_.get(), 0));
  const std::size_t n = std::size_t(sqlite3_column_bytes(read_.get(), 0));
  const ros::CdrMessage m = ros::CdrMessage::decode(definition_, {blob, n}, {name_, location});
  use(ros::any_image_view(m, picture_, where), where);
}

bool Db3Source::read_into(const FrameWriteTarget& target) {
  if (position_ >= std::int64_t(frames_.size())) return false;
  check_target(info_, target);
  if (video_) {
    video_->play(position_, target);
    return true;
  }
  try {
    with_image(std::size_t(position_), [&](const ros::ImageView& v, const MessagePlace& where) {
      ros::copy_image(v, info_.format, info_.width, info_.height, target, where);
    });
  } catch (const ParseError& e) {
    // A compressed image that does not decode (or decodes to another size):
    // said once, shown black; the bag plays on.
    if (!compressed_) throw;
    ros::blank_frame(info_, target);
    warnings_.push_back("topic " + mcap::detail::quoted(topic_) + ": " + e.what());
    log(LogLevel::Warning, "recording: " + warnings_.back());
  }
  ++position_;
  return true;
}

void Db3Source::seek(std::int64_t index) {
  if (index < 0 || index > std::int64_t(frames_.size())) {
    throw UsageError("RecordingSource::seek: " + std::to_string(index) + " is not in 0.." + std::to_string(frames_.size()));
  }
  position_ = index;
}

}  // namespace

bool is_sqlite_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char head[16] = {};
  return in.read(head, sizeof head) && std::memcmp(head, kSqliteMagic, sizeof head) == 0;
}

std::unique_ptr<RecordingSource> open_db3_recording(const std::filesystem::path& path, const RecordingOpenOptions& options) {
  return std::make_unique<Db3Source>(path, options);
}

}  // namespace handoff::media
