// Every topic of a recording, with whether handoff shows it and why not
// (handoff-view FILE --list): judged by the topic's type, its message
// encoding and its first message, decoded and checked as opening the topic
// checks it (a video topic read up to its first keyframe that decodes).
#include "recording_topics.hpp"

#include "mcap_format.hpp"
#include "recording_video.hpp"
#include "ros_overlay.hpp"
#include "rosbag_db3.hpp"
#include "rosbag_folder.hpp"

#include <handoff/media/error.hpp>
#include <handoff/media/image_codec.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/media/rosbag.hpp>
#include <handoff/media/ros_image.hpp>

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace handoff::media {
namespace {

using Kind = RecordingTopicListing::Kind;

// A topic as found, before it is judged.
struct Found {
  RecordingTopicListing listing;
  std::uint64_t first = 0, last = 0;     // log times
  std::string schema_encoding;           // "ros2msg", "protobuf", "" (db3: from message_definitions)
  std::string definition;                // a ros2msg definition text ("" : the built-in one)
  std::vector<std::uint8_t> first_message;
  std::string first_error;  // why the first message could not be read ("" : it was)
  // Message i of the topic in the order it plays (log time), read while the
  // listing is made: a video topic is read up to its first keyframe.
  std::function<std::vector<std::uint8_t>(std::size_t)> read;
};

const std::string kShown =
    "foxglove.RawImage, foxglove.CompressedImage, foxglove.CompressedVideo, sensor_msgs/msg/Image, "
    "sensor_msgs/msg/CompressedImage and foxglove_msgs/msg/CompressedVideo";

void set(RecordingTopicListing& l, Kind kind, std::string note) {
  l.kind = kind;
  l.note = std::move(note);
}

std::string message_location(const std::string& topic, std::size_t i) {
  return "topic " + topic + ": message " + std::to_string(i);
}

// A video topic as playing opens it (VideoTrack), its messages read only up to
// the first keyframe that decodes: ParseError for a topic with no keyframe
// or none that decodes. `view` reads one message's bytes.
template <typename View>
void probe_video(const Found& f, const std::string& file, const std::string& type, View&& view) {
  const std::string& topic = f.listing.topic;
  auto location = [&topic](std::size_t i) { return message_location(topic, i); };
  std::vector<std::uint8_t> bytes;  // the message last read (the view points into it)
  VideoTrack::probe(file, type, f.listing.messages, [&](std::size_t i) {
    bytes = f.read(i);
    return view(std::span<const std::uint8_t>(bytes), MessagePlace{file, [&location, i] { return location(i); }});
  }, location);
}

// A ROS 2 image topic: its first message decoded by definition and checked as
// playing checks it (pictures decoded, a video topic's keyframe found).
void judge_ros_image(Found& f, const std::string& file) {
  RecordingTopicListing& l = f.listing;
  if (l.encoding != "cdr") return set(l, Kind::NotShown, "message encoding " + mcap::detail::quoted(l.encoding) + " (handoff reads cdr)");
  const auto definition = f.definition.empty() ? ros::MessageDefinition::builtin(l.type)
                                               : ros::MessageDefinition::parse(l.type, f.definition, file);
  const std::string location = message_location(l.topic, 0);
  const MessagePlace where{file, [&location] { return location; }};
  const ros::CdrMessage m = ros::CdrMessage::decode(definition, f.first_message, {file, location});
  const std::string type = ros::normalize_type_name(l.type);
  auto probe = [&](const std::string& message) {
    probe_video(f, file, message, [&](std::span<const std::uint8_t> bytes, const MessagePlace& at) {
      return ros_video_view(ros::CdrMessage::decode(definition, bytes, {file, at.location()}));
    });
  };
  if (type == ros::kCompressedImageType) {
    const std::string format(m.at("format").as_string());
    if (video_codec(format)) {
      probe("CompressedImage");
      return set(l, Kind::Image, format + " video");
    }
    if (!image_codec(format)) return set(l, Kind::NotShown, "unsupported format " + mcap::detail::quoted(format) + " (handoff decodes jpeg, png, h264 and h265)");
    DecodedPicture picture;
    ros::first_image_format(ros::any_image_view(m, picture, where).image, true, where, "CompressedImage");
    return set(l, Kind::Image, format);
  }
  if (type == ros::kCompressedVideoType) {
    const std::string format(m.at("format").as_string());
    if (!video_codec(format)) return set(l, Kind::NotShown, "unsupported format " + mcap::detail::quoted(format) + " (handoff decodes h264 and h265)");
    probe("CompressedVideo");
    return set(l, Kind::Image, format + " video");
  }
  const ros::ImageView v = ros::image_view(m);
  const std::string encoding(v.image.encoding);
  if (!ros::image_format(encoding)) return set(l, Kind::NotShown, "unsupported encoding " + mcap::detail::quoted(encoding));
  ros::first_image_format(v.image, true, where, "Image");
  set(l, Kind::Image, encoding);
}

// The RawImage topic `topic` is a layer of ("<it>/layers/<i>"), if one is in `image_topics`.
std::optional<std::string> layer_parent(const std::string& topic, const std::set<std::string, std::less<>>& image_topics) {
  const std::size_t at = topic.rfind(kLayersInfix);
  if (at == std::string::npos) return std::nullopt;
  const auto parent = image_topics.find(std::string_view(topic).substr(0, at));
  if (parent == image_topics.end() || !layer_topic_index(*parent, topic)) return std::nullopt;
  return *parent;
}

void judge_raw_image(Found& f, const std::string& file, const std::set<std::string, std::less<>>& image_topics) {
  RecordingTopicListing& l = f.listing;
  if (l.encoding != "protobuf") return set(l, Kind::NotShown, "message encoding " + mcap::detail::quoted(l.encoding) + " (handoff reads protobuf)");
  if (const auto parent = layer_parent(l.topic, image_topics)) return set(l, Kind::Overlay, "layer of " + *parent);
  const std::string where = message_location(l.topic, 0);
  const MessagePlace place{file, [&] { return where; }};
  const RawImageView image = parse_raw_image(f.first_message, place);
  if (!raw_image_format(image.encoding)) return set(l, Kind::NotShown, "unsupported encoding " + mcap::detail::quoted(image.encoding));
  ros::first_image_format(image, false, place, "RawImage");
  set(l, Kind::Image, std::string(image.encoding));
}

void judge_foxglove_compressed(Found& f, const std::string& file) {
  RecordingTopicListing& l = f.listing;
  if (l.encoding != "protobuf") return set(l, Kind::NotShown, "message encoding " + mcap::detail::quoted(l.encoding) + " (handoff reads protobuf)");
  const std::string where = message_location(l.topic, 0);
  const MessagePlace place{file, [&] { return where; }};
  const CompressedImageView c = parse_compressed_image(f.first_message, place);
  if (!image_codec(c.format)) return set(l, Kind::NotShown, "unsupported format " + mcap::detail::quoted(c.format) + " (handoff decodes jpeg and png)");
  DecodedPicture picture;
  ros::first_image_format(decode_compressed_image(c, picture, place), false, place, "CompressedImage");
  set(l, Kind::Image, std::string(c.format));
}

void judge_compressed_video(Found& f, const std::string& file) {
  RecordingTopicListing& l = f.listing;
  if (l.encoding != "protobuf") return set(l, Kind::NotShown, "message encoding " + mcap::detail::quoted(l.encoding) + " (handoff reads protobuf)");
  const std::string where = message_location(l.topic, 0);
  const CompressedVideoView v = parse_compressed_video(f.first_message, {file, [&] { return where; }});
  if (!video_codec(v.format)) return set(l, Kind::NotShown, "unsupported format " + mcap::detail::quoted(v.format) + " (handoff decodes h264 and h265)");
  const std::string format(v.format);
  probe_video(f, file, "CompressedVideo", parse_compressed_video);
  set(l, Kind::Image, format + " video");
}

void judge(Found& f, const std::string& file, const std::set<std::string, std::less<>>& image_topics) {
  RecordingTopicListing& l = f.listing;
  if (l.messages > 1 && f.last > f.first) l.rate = double(l.messages - 1) * 1e9 / double(f.last - f.first);
  const bool image = l.type == kRawImageSchema || l.type == kCompressedImageSchema ||
                     l.type == kCompressedVideoSchema || ros::is_image_type(l.type);
  if (l.type == kImageAnnotationsSchema) return set(l, Kind::Overlay, "annotations");
  if (ros::is_overlay_type(l.type)) {
    if (l.encoding != "cdr") return set(l, Kind::NotShown, "message encoding " + mcap::detail::quoted(l.encoding) + " (handoff reads cdr)");
    return set(l, Kind::Overlay, ros::normalize_type_name(l.type) == ros::kDetectionsType ? "detections" : "annotations");
  }
  if (!image) return set(l, Kind::NotShown, "type " + mcap::detail::quoted(l.type) + " is not an image type (handoff shows " + kShown + ")");
  if (l.messages == 0) return set(l, Kind::NotShown, "no messages");
  if (!f.first_error.empty()) return set(l, Kind::NotShown, f.first_error);
  try {
    if (l.type == kRawImageSchema) judge_raw_image(f, file, image_topics);
    else if (l.type == kCompressedImageSchema) judge_foxglove_compressed(f, file);
    else if (l.type == kCompressedVideoSchema) judge_compressed_video(f, file);
    else judge_ros_image(f, file);
  } catch (const Error& e) {  // ParseError: the first message does not decode
    set(l, Kind::NotShown, e.what());
  }
}

std::vector<RecordingTopicListing> judge_all(std::vector<Found>& found, const std::string& file) {
  std::set<std::string, std::less<>> image_topics;
  for (const Found& f : found)
    if (f.listing.type == kRawImageSchema) image_topics.insert(f.listing.topic);
  std::vector<RecordingTopicListing> out;
  for (Found& f : found) {
    judge(f, file, image_topics);
    out.push_back(std::move(f.listing));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.topic < b.topic; });
  return out;
}

// `warnings`, when given, receives the reader's (a damaged tail, a split bag's file skipped).
std::vector<RecordingTopicListing> list_mcap(mcap::Reader& reader, std::vector<std::string>* warnings = nullptr) {
  if (warnings) warnings->insert(warnings->end(), reader.warnings().begin(), reader.warnings().end());
  std::map<std::string, Found> by_topic;  // channels of one topic together
  std::map<std::string, std::vector<std::uint16_t>> channels_of;
  for (const auto& [id, ch] : reader.channels()) {
    const auto s = reader.schemas().find(ch.schema_id);
    Found& f = by_topic[ch.topic];
    channels_of[ch.topic].push_back(id);
    RecordingTopicListing& l = f.listing;
    const auto& refs = reader.messages(id);
    if (l.topic.empty()) {
      l.topic = ch.topic;
      l.type = s == reader.schemas().end() ? "(no schema)" : s->second.name;
      l.encoding = ch.message_encoding;
      if (s != reader.schemas().end()) {
        f.schema_encoding = s->second.encoding;
        f.definition.assign(s->second.data.begin(), s->second.data.end());
      }
      if (!refs.empty()) f.first = f.last = refs.front().log_time;
    }
    for (const mcap::MessageRef& r : refs) {
      if ((f.first_message.empty() && f.first_error.empty()) || r.log_time < f.first) {
        f.first = r.log_time;
        try {
          const mcap::MessageView m = reader.read(r);
          f.first_message.assign(m.data.begin(), m.data.end());
          f.first_error.clear();
        } catch (const Error& e) {  // ParseError (a message that does not decompress): listed as not shown
          f.first_message.clear();
          f.first_error = e.what();
        }
      }
      f.last = std::max(f.last, r.log_time);
    }
    l.messages += refs.size();
  }
  std::vector<Found> found;
  for (auto& [topic, f] : by_topic) {
    if (ros::is_image_type(f.listing.type) && f.schema_encoding != "ros2msg") f.definition.clear();
    // The topic's messages in playing order (every channel's, stable by log time), gathered when first read.
    f.read = [&reader, channels = std::move(channels_of[topic]), refs = std::vector<mcap::MessageRef>()](std::size_t i) mutable {
      if (refs.empty()) {
        for (const std::uint16_t id : channels) refs.insert(refs.end(), reader.messages(id).begin(), reader.messages(id).end());
        std::stable_sort(refs.begin(), refs.end(), [](const auto& a, const auto& b) { return a.log_time < b.log_time; });
      }
      const mcap::MessageView m = reader.read(refs.at(i));
      return std::vector<std::uint8_t>(m.data.begin(), m.data.end());
    };
    found.push_back(std::move(f));
  }
  return judge_all(found, reader.name());
}

// --- .db3 -------------------------------------------------------------------------

struct Db {
  sqlite3* db = nullptr;
  ~Db() { sqlite3_close(db); }
};
struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};

std::string text(sqlite3_stmt* s, int i) {
  const auto* p = sqlite3_column_text(s, i);
  return p ? std::string(reinterpret_cast<const char*>(p), std::size_t(sqlite3_column_bytes(s, i))) : std::string();
}

void prepare(const Db& db, const std::string& file, const char* sql, Stmt& out) {
  if (sqlite3_prepare_v2(db.db, sql, -1, &out.s, nullptr) != SQLITE_OK)
    throw ParseError(file, "", "sqlite", std::string("reading the bag (") + sql + "): " + sqlite3_errmsg(db.db));
}

// The ros2msg definition of `type` in message_definitions (rosbag2 Iron on), else "".
std::string db3_definition(const Db& db, const std::string& file, const std::string& type) {
  Stmt s;
  const char* sql = "SELECT encoding, encoded_message_definition FROM message_definitions WHERE topic_type = ?";
  if (sqlite3_prepare_v2(db.db, sql, -1, &s.s, nullptr) != SQLITE_OK) return {};
  sqlite3_bind_text(s.s, 1, type.c_str(), -1, SQLITE_TRANSIENT);
  return next_row(s.s, file, "reading message_definitions") && text(s.s, 0) == "ros2msg" ? text(s.s, 1) : std::string();
}

// The messages of `topic` (its id in each file of `parts`) in playing order:
// by timestamp, file order among equal times, gathered when first read.
template <typename Open>
std::function<std::vector<std::uint8_t>(std::size_t)> db3_messages(const RosbagFolder& bag, const std::string& topic,
                                                                  std::vector<std::pair<const Open*, std::int64_t>> parts) {
  struct Row {
    const Open* file;
    std::string name;
    std::int64_t id;
    std::uint64_t time;
  };
  return [&bag, topic, parts = std::move(parts), rows = std::vector<Row>()](std::size_t i) mutable {
    if (rows.empty()) {
      for (const auto& [o, id] : parts) {
        Stmt s;
        prepare(o->db, o->name, "SELECT id, timestamp FROM messages WHERE topic_id = ? ORDER BY timestamp, id", s);
        sqlite3_bind_int64(s.s, 1, id);
        while (next_row(s.s, o->name, "reading topic " + topic + "'s messages"))
          rows.push_back({o, o->name, sqlite3_column_int64(s.s, 0), std::uint64_t(sqlite3_column_int64(s.s, 1))});
      }
      std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.time < b.time; });
    }
    const Row& r = rows.at(i);
    const std::string where = message_location(topic, i);
    Stmt s;
    prepare(r.file->db, r.name, "SELECT data FROM messages WHERE id = ?", s);
    sqlite3_bind_int64(s.s, 1, r.id);
    if (!next_row(s.s, r.name, where)) throw ParseError(r.name, where, "", "the message row is gone");
    const auto* blob = static_cast<const std::uint8_t*>(sqlite3_column_blob(s.s, 0));
    std::vector<std::uint8_t> data(blob, blob + sqlite3_column_bytes(s.s, 0));
    if (bag.compression == BagCompression::Message)
      data = zstd_decompress_message(data, r.name, where, mcap::ReaderOptions{}.max_chunk_bytes);
    return data;
  };
}

// A topic's messages in one file: their count, first and last timestamp and
// the row of the first (the earliest; the lowest id among equal times).
struct Db3TopicStats {
  std::uint64_t messages = 0;
  std::int64_t first = 0, last = 0, first_id = 0;
};

// Every topic id's Db3TopicStats in one pass over the messages table: a query
// per topic would scan the table once per topic (rosbag2 indexes messages by
// timestamp only, and a user's bag is never written to, so no index is added).
std::unordered_map<std::int64_t, Db3TopicStats> db3_topic_stats(const Db& db, const std::string& file) {
  Stmt s;
  prepare(db, file, "SELECT id, topic_id, timestamp FROM messages", s);
  std::unordered_map<std::int64_t, Db3TopicStats> out;
  while (next_row(s.s, file, "counting the messages of each topic")) {
    const std::int64_t id = sqlite3_column_int64(s.s, 0), time = sqlite3_column_int64(s.s, 2);
    Db3TopicStats& t = out[sqlite3_column_int64(s.s, 1)];
    if (t.messages == 0 || time < t.first || (time == t.first && id < t.first_id)) {
      t.first = time;
      t.first_id = id;
    }
    t.last = t.messages == 0 ? time : std::max(t.last, time);
    ++t.messages;
  }
  return out;
}

// Each topic over every file of the bag (a split bag's files listed as one):
// its count, first and last timestamp, and its first message.
// A file that does not open is skipped as open_recording skips it (open_bag_files).
std::vector<RecordingTopicListing> list_db3(const RosbagFolder& bag, std::vector<std::string>* warnings,
                                            bool log_skipped = true) {
  std::vector<Found> found;
  std::map<std::string, std::size_t> index;  // topic -> its place in found
  struct Open {
    TempFile temp;
    Db db;
    std::string name;  // the bag's file (errors name it, not the temporary file)
  };
  std::vector<std::pair<std::filesystem::path, std::unique_ptr<Open>>> files;
  std::vector<std::string> skipped;
  open_bag_files(bag, [&](std::size_t i) {
    const std::filesystem::path& path = bag.files[i];
    auto o = std::make_unique<Open>();
    // SQLite reads files: a file compressed whole is decompressed to a private temporary file while it is listed.
    if (bag.compression == BagCompression::File) o->temp = zstd_decompress_to_temp(path);
    const std::string open = o->temp.path().empty() ? path.string() : o->temp.path().string();
    o->db.db = open_db3(open, path.string());
    o->name = path.string();
    files.emplace_back(path, std::move(o));
  }, skipped, log_skipped);
  if (warnings) warnings->insert(warnings->end(), skipped.begin(), skipped.end());
  std::vector<std::vector<std::pair<const Open*, std::int64_t>>> parts;  // per topic: (file, topic id)
  for (const auto& [path, o] : files) {
    const std::string file = path.string();
    const Db& db = o->db;
    Stmt topics, first;
    prepare(db, file, "SELECT id, name, type, serialization_format FROM topics ORDER BY id", topics);
    prepare(db, file, "SELECT data FROM messages WHERE id = ?", first);
    const auto stats = db3_topic_stats(db, file);
    while (next_row(topics.s, file, "reading the topics table")) {
      const std::int64_t id = sqlite3_column_int64(topics.s, 0);
      const std::string name = text(topics.s, 1);
      const bool fresh = index.emplace(name, found.size()).second;
      if (fresh) {
        parts.emplace_back();
        found.emplace_back();
        found.back().listing.topic = name;
        found.back().listing.type = text(topics.s, 2);
        found.back().listing.encoding = text(topics.s, 3);
        if (ros::is_image_type(found.back().listing.type)) found.back().definition = db3_definition(db, file, found.back().listing.type);
      }
      Found& f = found[index.at(name)];
      parts[index.at(name)].emplace_back(o.get(), id);
      const auto st = stats.find(id);
      if (st == stats.end()) continue;
      const std::uint64_t n = st->second.messages, t0 = std::uint64_t(st->second.first),
                          t1 = std::uint64_t(st->second.last);
      const bool earliest = f.listing.messages == 0 || t0 < f.first;
      f.first = earliest ? t0 : f.first;
      f.last = f.listing.messages == 0 ? t1 : std::max(f.last, t1);
      f.listing.messages += n;
      if (!earliest) continue;
      sqlite3_bind_int64(first.s, 1, st->second.first_id);
      if (next_row(first.s, file, "reading topic " + name + "'s first message")) {
        const auto* blob = static_cast<const std::uint8_t*>(sqlite3_column_blob(first.s, 0));
        f.first_message.assign(blob, blob + sqlite3_column_bytes(first.s, 0));
        f.first_error.clear();
        if (bag.compression == BagCompression::Message) {
          try {
            f.first_message = zstd_decompress_message(f.first_message, file, "topic " + name + ": message 0",
                                                      mcap::ReaderOptions{}.max_chunk_bytes);
          } catch (const Error& e) {  // ParseError: listed as not shown, with the reason
            f.first_error = e.what();
          }
        }
      }
      sqlite3_reset(first.s);
    }
  }
  for (std::size_t t = 0; t < found.size(); ++t) found[t].read = db3_messages(bag, found[t].listing.topic, parts[t]);
  return judge_all(found, bag.name);
}

}  // namespace

std::vector<RecordingTopicListing> list_mcap_topics(mcap::Reader& reader) { return list_mcap(reader); }

std::vector<RecordingTopicListing> list_db3_topics(const RosbagFolder& bag, std::vector<std::string>* warnings,
                                                   bool log_skipped) {
  return list_db3(bag, warnings, log_skipped);
}

std::string_view to_string(RecordingTopicListing::Kind kind) {
  switch (kind) {
    case Kind::Image: return "image";
    case Kind::Overlay: return "overlay";
    default: return "not shown";
  }
}

std::vector<RecordingTopicListing> list_recording_topics(const std::filesystem::path& path,
                                                        std::vector<std::string>* warnings) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    const RosbagFolder bag = read_rosbag_folder(path);
    if (bag.files.size() == 1 && bag.missing.empty() && bag.compression == BagCompression::None)
      return list_recording_topics(bag.files.front(), warnings);
    if (bag.db3) return list_db3(bag, warnings);
    return list_mcap(*open_bag_mcap(bag, {}), warnings);
  }
  if (is_db3_path(path)) return list_db3(lone_db3_file(path), warnings);
  return list_mcap(*mcap::Reader::open(path), warnings);
}

std::vector<RecordingTopicListing> list_recording_topics_memory(std::span<const std::uint8_t> bytes, std::string name,
                                                                std::uint64_t max_chunk_bytes) {
  mcap::ReaderOptions r;
  r.max_chunk_bytes = max_chunk_bytes;
  return list_mcap(*mcap::Reader::open_memory(bytes, std::move(name), r));
}

std::vector<RecordingTopicListing> list_bag_topics_memory(const std::vector<std::span<const std::uint8_t>>& parts,
                                                          bool compressed_messages, const std::string& name,
                                                          std::uint64_t max_chunk_bytes) {
  mcap::ReaderOptions r;
  r.max_chunk_bytes = max_chunk_bytes;
  return list_mcap(*open_bag_mcap_memory(parts, compressed_messages, name, r));
}

}  // namespace handoff::media
