// A rosbag2 SQLite3 storage file (.db3, `ros2 bag record`'s default up to
// Humble) played as a RecordingSource: the chosen sensor_msgs/msg/Image
// topic's messages by timestamp, each read by its row id. Tables as rosbag2's
// sqlite3 plugin writes them: topics(id, name, type, serialization_format,
// ...), messages(id, topic_id, timestamp, data), and from Iron on
// message_definitions(topic_type, encoding, encoded_message_definition, ...).
// A split bag's files play as one: a topic's messages from every file by
// timestamp (file order among equal ones), each file opened once.
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
  std::size_t file = 0;  // in Db3Source::files_
  std::int64_t row = 0;
  std::uint64_t time = 0;
};

// One storage file of the bag, open for the recording's lifetime.
struct Db3File {
  std::string name;  // its path (the .db3.zstd one for a file compressed whole)
  TempFile temp;     // its decompressed copy (compression_mode file)
  Db db;
  Stmt read;          // a frame's message by row id
  Stmt overlay_read;  // an overlay message by row id
};

[[noreturn]] void fail_sqlite(const Db3File& f, const std::string& what) {
  throw ParseError(f.name, "", "sqlite", what + ": " + sqlite3_errmsg(f.db.get()));
}

Stmt prepare(const Db3File& f, const char* sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(f.db.get(), sql, -1, &s, nullptr) != SQLITE_OK) fail_sqlite(f, std::string("reading the bag (") + sql + ")");
  return Stmt(s);
}

Db3File open_file(const std::filesystem::path& path, BagCompression compression) {
  Db3File f;
  f.name = path.string();
  // SQLite reads files, not memory: a file compressed whole is decompressed
  // to a private temporary file, removed when the recording closes.
  if (compression == BagCompression::File) f.temp = zstd_decompress_to_temp(path);
  const std::string open = f.temp.path().empty() ? f.name : f.temp.path().string();
  f.db.reset(open_db3(open, f.name));
  return f;
}

// A row's blob, decompressed in compression_mode message.
// `limit`: 0 when the messages are not compressed, else the most one decompresses to.
std::vector<std::uint8_t> row_data(const Db3File& f, sqlite3_stmt* s, std::uint64_t limit, const std::string& where) {
  const auto* blob = static_cast<const std::uint8_t*>(sqlite3_column_blob(s, 0));
  const std::span<const std::uint8_t> data(blob, std::size_t(sqlite3_column_bytes(s, 0)));
  if (limit) return zstd_decompress_message(data, f.name, where, limit);
  return {data.begin(), data.end()};
}

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
  Db3Source(const RosbagFolder& bag, const RecordingOpenOptions& options, bool log_skipped);

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
  void choose_topic(const RecordingOpenOptions& options);
  std::shared_ptr<const ros::MessageDefinition> load_definition(const std::string& type);
  void find_overlay_topics(const RecordingOpenOptions& options);
  // Reads frame `index` and hands its decoded image to `use` while the row's
  // blob is valid; `pixels` false: a compressed picture's header only (its
  // timestamp: a corrupt picture shown black still has one).
  template <typename F>
  void with_image(std::size_t index, F&& use, bool pixels = true) const;
  std::string frame_location(std::size_t index) const;
  // Frame `index`'s message, copied into `into` (a video message outlives the row's read).
  void fetch(std::size_t index, std::vector<std::uint8_t>& into) const;
  bool plays_as_video() const;
  void open_video();
  void open_images();

  std::string name_;  // the file, or a split / compressed bag's folder
  std::vector<Db3File> files_;
  std::uint64_t compressed_message_limit_ = 0;  // compression_mode message: the most one decompresses to (max_chunk_bytes)
  SourceInfo info_;
  std::vector<RecordingTopic> topics_;
  std::string topic_, none_;
  std::vector<Frame> frames_;
  std::shared_ptr<const ros::MessageDefinition> definition_;
  mutable std::vector<std::uint8_t> message_bytes_;  // the image message last read (with_image)
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

Db3Source::Db3Source(const RosbagFolder& bag, const RecordingOpenOptions& options, bool log_skipped)
    : name_(bag.name), compressed_message_limit_(bag.compression == BagCompression::Message ? options.max_chunk_bytes : 0) {
  // A file that does not open is skipped (its problem in warnings_), unless it is the only one.
  open_bag_files(bag, [&](std::size_t i) { files_.push_back(open_file(bag.files[i], bag.compression)); }, warnings_,
                 log_skipped);
  choose_topic(options);
  for (Db3File& f : files_) f.read = prepare(f, "SELECT data FROM messages WHERE id = ?");
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
    info_.format = ros::first_image_format(v.image, true, where, v.compressed ? "CompressedImage" : "Image");
    info_.width = v.image.width;
    info_.height = v.image.height;
  });
  info_.colorimetry = colorimetry_from_metadata({}, info_.height);
}

std::string Db3Source::frame_location(std::size_t index) const {
  std::string where = "topic " + mcap::detail::quoted(topic_) + ", frame " + std::to_string(index) + ": message row " +
                      std::to_string(frames_[index].row);
  // Which file of a split bag (a frame's video decoding error is reported under the bag's name).
  if (files_.size() > 1) where += " of " + std::filesystem::path(files_[frames_[index].file].name).filename().string();
  return where;
}

void Db3Source::fetch(std::size_t index, std::vector<std::uint8_t>& into) const {
  const Db3File& f = files_[frames_[index].file];
  sqlite3_bind_int64(f.read.get(), 1, frames_[index].row);
  struct Reset {
    sqlite3_stmt* s;
    ~Reset() { sqlite3_reset(s); }
  } reset{f.read.get()};
  if (sqlite3_step(f.read.get()) != SQLITE_ROW) fail_sqlite(f, frame_location(index));
  into = row_data(f, f.read.get(), compressed_message_limit_, frame_location(index));
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
                                          return frame_location(i);
                                        });
  const PictureInfo& p = video_->first_picture();
  info_.format = PixelFormat::NV12;
  info_.width = p.width;
  info_.height = p.height;
  info_.colorimetry = colorimetry_from_metadata({}, p.height);
  info_.colorimetry.matrix = p.matrix.value_or(info_.colorimetry.matrix);
  info_.colorimetry.range = p.range.value_or(info_.colorimetry.range);
}

// Image topics by name over every file (a topic's id is the file's own).
void Db3Source::choose_topic(const RecordingOpenOptions& options) {
  std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> ids;  // per image topic: (file, topic id)
  for (std::size_t fi = 0; fi < files_.size(); ++fi) {
    const Db3File& f = files_[fi];
    Stmt topics = prepare(f, "SELECT id, name, type, serialization_format FROM topics ORDER BY id");
    Stmt count = prepare(f, "SELECT count(*) FROM messages WHERE topic_id = ?");
    while (next_row(topics.get(), f.name, "reading the topics table")) {
      const std::string name = text_column(topics.get(), 1), type = text_column(topics.get(), 2);
      if (!ros::is_image_type(type) || text_column(topics.get(), 3) != "cdr") continue;
      sqlite3_bind_int64(count.get(), 1, sqlite3_column_int64(topics.get(), 0));
      const std::uint64_t n =
          next_row(count.get(), f.name, "counting topic " + mcap::detail::quoted(name) + "'s messages")
              ? std::uint64_t(sqlite3_column_int64(count.get(), 0))
              : 0;
      sqlite3_reset(count.get());
      auto t = std::find_if(topics_.begin(), topics_.end(), [&](const auto& r) { return r.topic == name; });
      if (t == topics_.end()) {
        topics_.push_back({name, type, 0});
        ids.emplace_back();
        t = topics_.end() - 1;
      }
      t->messages += n;
      ids[std::size_t(t - topics_.begin())].emplace_back(fi, sqlite3_column_int64(topics.get(), 0));
    }
  }
  if (topics_.empty()) {
    throw ParseError(name_, "", "topic",
                     "the bag has no sensor_msgs/msg/Image, sensor_msgs/msg/CompressedImage or "
                     "foxglove_msgs/msg/CompressedVideo topic in cdr");
  }
  topic_ = options.topic.empty() ? topics_.front().topic : options.topic;
  const auto t = std::find_if(topics_.begin(), topics_.end(), [&](const auto& r) { return r.topic == topic_; });
  if (t == topics_.end()) {
    std::string list;
    for (const auto& r : topics_) list += (list.empty() ? "" : ", ") + r.topic;
    throw ParseError(name_, "", "topic", "no image topic " + mcap::detail::quoted(topic_) + " (image topics: " + list + ")");
  }
  definition_ = load_definition(t->schema);
  compressed_ = ros::normalize_type_name(t->schema) == ros::kCompressedImageType;
  for (const auto& [fi, id] : ids[std::size_t(t - topics_.begin())]) {
    Stmt rows = prepare(files_[fi], "SELECT id, timestamp FROM messages WHERE topic_id = ? ORDER BY timestamp, id");
    sqlite3_bind_int64(rows.get(), 1, id);
    while (next_row(rows.get(), files_[fi].name, "reading topic " + mcap::detail::quoted(topic_) + "'s messages")) {
      frames_.push_back({fi, sqlite3_column_int64(rows.get(), 0), std::uint64_t(sqlite3_column_int64(rows.get(), 1))});
    }
  }
  // Files in recording order, each by timestamp: a stable sort keeps file order among equal times.
  std::stable_sort(frames_.begin(), frames_.end(), [](const Frame& a, const Frame& b) { return a.time < b.time; });
  if (frames_.empty()) throw ParseError(name_, "", "topic", "image topic " + mcap::detail::quoted(topic_) + " has no messages");
}

// The topic type's definition from message_definitions (rosbag2 Iron and
// later; the first file that has it) when the bag has it, else the built-in
// one, checked against the type hash the bag stores where it has one (its
// message_definitions or topics table, Iron and later): a hash that differs is
// a warning (the type changed since the built-in definition was written, and
// its messages may not decode as recorded).
std::shared_ptr<const ros::MessageDefinition> Db3Source::load_definition(const std::string& type) {
  std::string stored_hash, hash_place;
  for (const Db3File& f : files_) {
    for (const char* sql : {"SELECT encoding, encoded_message_definition, type_description_hash FROM "
                            "message_definitions WHERE topic_type = ?",
                            "SELECT encoding, encoded_message_definition, '' FROM message_definitions WHERE "
                            "topic_type = ?"}) {  // before Jazzy's hash column
      sqlite3_stmt* raw = nullptr;
      if (sqlite3_prepare_v2(f.db.get(), sql, -1, &raw, nullptr) != SQLITE_OK) continue;
      Stmt s(raw);
      sqlite3_bind_text(s.get(), 1, type.c_str(), -1, SQLITE_TRANSIENT);
      if (!next_row(s.get(), f.name, "reading message_definitions")) break;
      if (text_column(s.get(), 0) == "ros2msg" && !text_column(s.get(), 1).empty()) {
        return ros::MessageDefinition::parse(type, text_column(s.get(), 1),
                                             f.name + ": message_definitions (" + type + ")");
      }
      if (stored_hash.empty() && !text_column(s.get(), 2).empty()) {
        stored_hash = text_column(s.get(), 2);
        hash_place = f.name + ": message_definitions";
      }
      break;
    }
    sqlite3_stmt* raw = nullptr;
    if (stored_hash.empty() &&
        sqlite3_prepare_v2(f.db.get(), "SELECT type_description_hash FROM topics WHERE type = ? LIMIT 1", -1, &raw,
                           nullptr) == SQLITE_OK) {
      Stmt s(raw);
      sqlite3_bind_text(s.get(), 1, type.c_str(), -1, SQLITE_TRANSIENT);
      if (next_row(s.get(), f.name, "reading the topics table's type hashes") && !text_column(s.get(), 0).empty()) {
        stored_hash = text_column(s.get(), 0);
        hash_place = f.name + ": topics";
      }
    }
  }
  auto definition = ros::MessageDefinition::builtin(type);
  if (!stored_hash.empty()) {
    const std::string ours = ros::type_hash(*definition);
    if (stored_hash != ours) {
      warnings_.push_back(hash_place + ": " + type + " has type hash " + stored_hash +
                          ", handoff's built-in definition " + ours +
                          " (the bag stores no definition): its messages may not decode as recorded");
      log(LogLevel::Warning, "recording: " + warnings_.back());
    }
  }
  return definition;
}

// The ROS 2 overlay topics drawn on the image topic (RecordingOpenOptions::overlay_topics).
void Db3Source::find_overlay_topics(const RecordingOpenOptions& options) {
  struct Found {
    std::string type;
    std::vector<std::pair<std::size_t, std::int64_t>> ids;  // (file, topic id)
  };
  std::map<std::string, Found> found;
  for (std::size_t fi = 0; fi < files_.size(); ++fi) {
    Stmt topics = prepare(files_[fi], "SELECT id, name, type, serialization_format FROM topics ORDER BY id");
    while (next_row(topics.get(), files_[fi].name, "reading the topics table")) {
      const std::string name = text_column(topics.get(), 1), type = text_column(topics.get(), 2);
      if (!ros::is_overlay_type(type) || text_column(topics.get(), 3) != "cdr") continue;
      Found& f = found[name];
      if (f.type.empty()) f.type = type;
      f.ids.emplace_back(fi, sqlite3_column_int64(topics.get(), 0));
    }
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
  if (chosen.empty()) return;
  for (Db3File& f : files_) f.overlay_read = prepare(f, "SELECT data FROM messages WHERE id = ?");
  for (const std::string& topic : chosen) {
    const Found& t = found.at(topic);
    auto rows = std::make_shared<std::vector<Frame>>();  // the topic's messages over every file
    for (const auto& [fi, id] : t.ids) {
      Stmt q = prepare(files_[fi], "SELECT id, timestamp FROM messages WHERE topic_id = ? ORDER BY timestamp, id");
      sqlite3_bind_int64(q.get(), 1, id);
      while (next_row(q.get(), files_[fi].name, "reading overlay topic " + mcap::detail::quoted(topic) + "'s messages"))
        rows->push_back({fi, sqlite3_column_int64(q.get(), 0), std::uint64_t(sqlite3_column_int64(q.get(), 1))});
    }
    std::stable_sort(rows->begin(), rows->end(), [](const Frame& a, const Frame& b) { return a.time < b.time; });
    std::vector<std::uint64_t> times;
    for (const Frame& r : *rows) times.push_back(r.time);
    auto fetch = [this, rows, topic](std::size_t k) {
      const Db3File& f = files_[(*rows)[k].file];
      sqlite3_stmt* st = f.overlay_read.get();
      sqlite3_bind_int64(st, 1, (*rows)[k].row);
      struct Reset {
        sqlite3_stmt* s;
        ~Reset() { sqlite3_reset(s); }
      } reset{st};
      const std::string where = "overlay topic " + mcap::detail::quoted(topic) + " message " + std::to_string(k);
      if (sqlite3_step(st) != SQLITE_ROW) fail_sqlite(f, where);
      return row_data(f, st, compressed_message_limit_, where);
    };
    std::shared_ptr<const ros::MessageDefinition> definition;
    try {
      definition = load_definition(t.type);
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
      key = ros_video_view(ros::CdrMessage::decode(definition_, video_bytes_, {files_[frames_[std::size_t(index)].file].name, frame_location(std::size_t(index))}))
                .timestamp_ns;
    } else {
      with_image(
          std::size_t(index), [&](const ros::ImageView& v, const MessagePlace&) { key = v.image.timestamp_ns; }, false);
    }
    for (const ros::OverlayTopic& t : overlay_topics_) t.add(frames_[std::size_t(index)].time, key, window_ns_, out);
  }
  out.frame = index;
  return out.has_content();
}

template <typename F>
void Db3Source::with_image(std::size_t index, F&& use, bool pixels) const {
  const Frame& fr = frames_[index];
  const Db3File& f = files_[fr.file];
  const std::string location = frame_location(index);
  const MessagePlace where{f.name, [&location] { return location; }};
  sqlite3_bind_int64(f.read.get(), 1, fr.row);
  struct Reset {
    sqlite3_stmt* s;
    ~Reset() { sqlite3_reset(s); }
  } reset{f.read.get()};
  if (sqlite3_step(f.read.get()) != SQLITE_ROW) fail_sqlite(f, location);
  std::span<const std::uint8_t> data(static_cast<const std::uint8_t*>(sqlite3_column_blob(f.read.get(), 0)),
                                     std::size_t(sqlite3_column_bytes(f.read.get(), 0)));
  if (compressed_message_limit_) {
    message_bytes_ = zstd_decompress_message(data, f.name, location,
                                             compressed_message_limit_);
    data = message_bytes_;
  }
  const ros::CdrMessage m = ros::CdrMessage::decode(definition_, data, {f.name, location});
  use(ros::any_image_view(m, picture_, where, pixels), where);
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
    // A raw image that does not fit its frame: the error names it, and the
    // next read is the next frame.
    if (!compressed_) {
      ++position_;
      throw;
    }
    // A compressed image that does not decode (or decodes to another size):
    // said once, shown black; the bag plays on.
    ros::blank_frame(info_, target);
    warnings_.push_back(e.what());
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

bool next_row(sqlite3_stmt* s, const std::string& file, const std::string& what) {
  const int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw ParseError(file, "", "sqlite", what + ": " + sqlite3_errmsg(sqlite3_db_handle(s)));
}

sqlite3* open_db3(const std::string& path, const std::string& file) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  Db db(raw);  // closed on every failure below (sqlite3_open_v2 may return a handle with an error)
  if (rc != SQLITE_OK) throw ParseError(file, "", "sqlite", std::string("cannot open: ") + sqlite3_errmsg(raw));
  if (sqlite3_exec(raw, "PRAGMA cell_size_check = ON", nullptr, nullptr, nullptr) != SQLITE_OK)
    throw ParseError(file, "", "sqlite", std::string("cannot open: ") + sqlite3_errmsg(raw));
  for (const char* sql : {"SELECT count(*) FROM topics", "SELECT count(*) FROM messages"}) {
    sqlite3_stmt* st = nullptr;
    const int prepared = sqlite3_prepare_v2(raw, sql, -1, &st, nullptr);
    const Stmt s(st);
    if (prepared != SQLITE_OK || sqlite3_step(s.get()) != SQLITE_ROW)
      throw ParseError(file, "", "sqlite", std::string("reading the bag (") + sql + "): " + sqlite3_errmsg(raw));
  }
  return db.release();
}

bool is_sqlite_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char head[16] = {};
  return in.read(head, sizeof head) && std::memcmp(head, kSqliteMagic, sizeof head) == 0;
}

bool is_db3_path(const std::filesystem::path& path) { return lower_extension(path) == ".db3" || is_sqlite_file(path); }

std::unique_ptr<RecordingSource> open_db3_recording(const RosbagFolder& bag, const RecordingOpenOptions& options,
                                                    bool log_skipped) {
  return std::make_unique<Db3Source>(bag, options, log_skipped);
}

}  // namespace handoff::media
