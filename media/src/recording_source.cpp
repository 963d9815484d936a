// A recording played as a FrameSource: the chosen image topic's messages by
// log time, each one indexed read away; overlays from the annotation message
// with the image's timestamp (matched as Foxglove's image panel does), logged
// near it.
#include "mcap_format.hpp"
#include "recording_topics.hpp"
#include "recording_video.hpp"
#include "ros_overlay.hpp"
#include "rosbag_db3.hpp"
#include "rosbag_folder.hpp"

#include <handoff/media/image_codec.hpp>
#include <handoff/media/ros_image.hpp>

#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/log.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/media/rosbag.hpp>

#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

namespace handoff::media {
namespace {

using google::protobuf::FieldDescriptorProto;

struct ExpectedField {
  const char* name;
  int number;
  FieldDescriptorProto::Type type;
};

// The fields handoff reads, as Foxglove publishes them.
constexpr ExpectedField kRawImageFields[] = {
    {"timestamp", 1, FieldDescriptorProto::TYPE_MESSAGE}, {"width", 2, FieldDescriptorProto::TYPE_FIXED32},
    {"height", 3, FieldDescriptorProto::TYPE_FIXED32},    {"encoding", 4, FieldDescriptorProto::TYPE_STRING},
    {"step", 5, FieldDescriptorProto::TYPE_FIXED32},      {"data", 6, FieldDescriptorProto::TYPE_BYTES}};
constexpr ExpectedField kCompressedImageFields[] = {{"timestamp", 1, FieldDescriptorProto::TYPE_MESSAGE},
                                                   {"data", 2, FieldDescriptorProto::TYPE_BYTES},
                                                   {"format", 3, FieldDescriptorProto::TYPE_STRING}};
constexpr ExpectedField kCompressedVideoFields[] = {
    {"timestamp", 1, FieldDescriptorProto::TYPE_MESSAGE}, {"frame_id", 2, FieldDescriptorProto::TYPE_STRING},
    {"data", 3, FieldDescriptorProto::TYPE_BYTES},        {"format", 4, FieldDescriptorProto::TYPE_STRING}};
constexpr ExpectedField kAnnotationFields[] = {{"circles", 1, FieldDescriptorProto::TYPE_MESSAGE},
                                               {"points", 2, FieldDescriptorProto::TYPE_MESSAGE},
                                               {"texts", 3, FieldDescriptorProto::TYPE_MESSAGE}};

std::string schema_place(const mcap::Schema& s) {
  return "Schema " + std::to_string(s.id) + " (" + s.name + ") at byte " + std::to_string(s.offset);
}
std::string channel_place(const mcap::Channel& c) {
  return "Channel " + std::to_string(c.id) + " (" + c.topic + ") at byte " + std::to_string(c.offset);
}

// Checks that a schema's FileDescriptorSet defines the message with the fields handoff reads.
void check_descriptor(const std::string& file, const mcap::Schema& s, std::span<const ExpectedField> fields) {
  auto fail = [&](const std::string& detail) { throw ParseError(file, schema_place(s), "data", detail); };
  google::protobuf::FileDescriptorSet set;
  // A damaged schema is reported by the ParseError below; libprotobuf's own log lines are not wanted.
  const google::protobuf::LogSilencer quiet;
  if (s.data.size() > std::size_t(INT_MAX) || !set.ParseFromArray(s.data.data(), int(s.data.size()))) {
    fail("not a serialized FileDescriptorSet");
  }
  const google::protobuf::DescriptorProto* message = nullptr;
  for (const auto& f : set.file()) {
    for (const auto& m : f.message_type()) {
      if (f.package() + "." + m.name() == s.name) message = &m;
    }
  }
  if (!message) fail("the descriptor set does not define " + s.name);
  for (const ExpectedField& e : fields) {
    const auto it = std::find_if(message->field().begin(), message->field().end(),
                                 [&](const FieldDescriptorProto& f) { return f.name() == e.name; });
    if (it == message->field().end()) fail(s.name + " has no field " + mcap::detail::quoted(e.name));
    if (it->number() != e.number || it->type() != e.type) {
      fail(s.name + "." + e.name + " is field " + std::to_string(it->number()) + " of type " +
           FieldDescriptorProto::Type_Name(it->type()) + ", Foxglove's is field " + std::to_string(e.number) +
           " of type " + FieldDescriptorProto::Type_Name(e.type));
    }
  }
}

// A ROS 2 sensor_msgs/msg/Image or CompressedImage schema (spelled with or without "/msg/").
bool is_ros_image(std::string_view schema) { return ros::is_image_type(schema); }
bool is_image_schema(std::string_view schema) {
  return schema == kRawImageSchema || schema == kCompressedImageSchema || schema == kCompressedVideoSchema ||
         is_ros_image(schema);
}

// One image message read into the RawImage view (pixels not copied).
struct DecodedImage {
  RawImageView image;
  bool ros = false;         // a sensor_msgs/Image (fields named "Image.*") or CompressedImage
  bool big_endian = false;  // its is_bigendian
  bool compressed = false;  // a CompressedImage: `image` points into the decoded picture
};

Rational estimate_rate(const std::vector<mcap::MessageRef>& frames) {
  if (frames.size() < 2 || frames.back().log_time <= frames.front().log_time) return {30, 1};
  const double interval = double(frames.back().log_time - frames.front().log_time) / double(frames.size() - 1);
  auto num = std::int64_t(std::llround(1e12 / interval));  // frames per 1000 s
  if (num <= 0) return {30, 1};
  std::int64_t den = 1000;
  const std::int64_t g = std::gcd(num, den);
  return {num / g, den / g};
}

class RecordingSourceImpl final : public RecordingSource {
 public:
  // `reader` may be shared with open_recording while it picks a topic (one thread at a time).
  RecordingSourceImpl(std::shared_ptr<mcap::Reader> reader, const RecordingOpenOptions& options);

  const SourceInfo& info() const override { return info_; }
  bool read_into(const FrameWriteTarget& target) override;
  void seek(std::int64_t index) override;
  std::int64_t position() const override { return position_; }
  bool overlays_for(std::int64_t index, OverlayFrame& out) const override;
  const std::vector<RecordingTopic>& image_topics() const override { return topics_; }
  const std::string& topic() const override { return topic_; }
  const std::string& annotations_topic() const override { return annotations_topic_; }
  const std::vector<std::string>& overlay_topics() const override { return overlay_topic_names_; }
  std::uint64_t log_time(std::int64_t index) const override { return frames_.at(checked(index)).log_time; }
  Colorimetry colorimetry(std::int64_t index) const override {
    return colorimetry_.at(frames_.at(checked(index)).channel);
  }
  bool indexed() const override { return reader_->indexed(); }
  // The three lists only grow: rebuilt only when one of them did (the frame
  // pipeline asks after every frame).
  const std::vector<std::string>& warnings() const override {
    const std::vector<std::string>& reader = reader_->warnings();
    if (all_warnings_.size() != reader.size() + frame_warnings_.size() + overlay_warnings_.size()) {
      all_warnings_ = reader;
      all_warnings_.insert(all_warnings_.end(), frame_warnings_.begin(), frame_warnings_.end());
      all_warnings_.insert(all_warnings_.end(), overlay_warnings_.begin(), overlay_warnings_.end());
    }
    return all_warnings_;
  }

 private:
  std::size_t checked(std::int64_t index) const {
    if (index < 0 || index >= std::int64_t(frames_.size())) {
      throw UsageError("RecordingSource: frame " + std::to_string(index) + " is not in 0.." +
                       std::to_string(frames_.size() - 1));
    }
    return std::size_t(index);
  }
  std::vector<mcap::MessageRef> topic_messages(const std::string& topic, std::string_view schema, bool check);
  void check_ros_channel(const mcap::Channel& ch, const mcap::Schema& s);
  DecodedImage decode_image(const mcap::MessageRef& ref, std::span<const std::uint8_t> bytes,
                            const MessagePlace& where, bool pixels = true) const;
  void read_frame(const mcap::MessageRef& ref, const FrameWriteTarget& target);
  void choose_topics(const RecordingOpenOptions& options);
  void read_first_frame();
  bool plays_as_video() const;
  void open_video();
  CompressedVideoView video_message(const mcap::MessageRef& ref, std::span<const std::uint8_t> bytes,
                                    const MessagePlace& where) const;
  // Matching overlays to frames by timestamp (RecordingSource's comment).
  void remember_key(std::size_t index, const RawImageView& image) const;
  std::uint64_t image_key(std::size_t index) const;
  std::uint64_t annotation_key(std::size_t k) const;
  const mcap::MessageRef* matching_annotations(std::size_t index) const;
  // Dense layers: each layer topic's messages matched to the frame as annotations are.
  struct LayerTopic {
    std::size_t index = 0;
    std::string topic;
    std::vector<mcap::MessageRef> messages;
    mutable std::vector<std::optional<std::uint64_t>> keys;
  };
  void find_layer_topics();
  void add_layers(std::size_t index, OverlayFrame& out) const;
  void add_layer(const LayerTopic& t, const mcap::MessageRef& ref, OverlayFrame& out) const;
  void warn_layer(const LayerTopic& t, const std::string& what) const;
  void warn_annotations(const std::string& what) const;  // once per message, logged and in warnings()
  // Two captured pointers fit std::function's inline storage: naming the
  // place allocates nothing unless an error is reported.
  MessagePlace place(const mcap::MessageRef& ref) const {
    return {reader_->name(), [this, r = &ref] {
              const bool frame = r >= frames_.data() && r < frames_.data() + frames_.size();
              return (frame ? "topic " + mcap::detail::quoted(topic_) + ", frame " + std::to_string(r - frames_.data())
                            : "overlay topic " + mcap::detail::quoted(annotations_topic_)) +
                     ": " + reader_->describe(*r);
            }};
  }

  std::shared_ptr<mcap::Reader> reader_;
  SourceInfo info_;
  std::vector<RecordingTopic> topics_;
  std::string topic_, annotations_topic_;
  std::vector<mcap::MessageRef> frames_, annotations_;  // by log time
  std::map<std::uint16_t, Colorimetry> colorimetry_;    // per image channel
  // The message definition of each sensor_msgs/Image channel (from its
  // schema, else the built-in one).
  std::map<std::uint16_t, std::shared_ptr<const ros::MessageDefinition>> definitions_;
  mutable DecodedPicture picture_;  // a CompressedImage's pixels, decoded
  bool compressed_ = false;                    // the topic is a CompressedImage (ROS 2 or Foxglove)
  std::set<std::uint16_t> foxglove_compressed_;  // foxglove.CompressedImage channels
  std::vector<std::string> frame_warnings_;    // frames that could not be shown
  mutable std::vector<std::string> overlay_warnings_;  // annotation messages left out (each once)
  mutable std::vector<std::string> all_warnings_;  // the reader's, then frame_warnings_
  std::int64_t position_ = 0;
  std::uint64_t window_ns_ = 0;                          // RecordingOpenOptions::annotation_window_ns
  // The timestamps (else log times) matched: the last frame read's, and each
  // annotation message's once read.
  mutable std::int64_t keyed_frame_ = -1;
  mutable std::uint64_t frame_key_ = 0;
  mutable std::vector<std::optional<std::uint64_t>> annotation_keys_;
  std::vector<LayerTopic> layer_topics_;            // by layer index
  std::unique_ptr<VideoTrack> video_;               // a video topic (plays_as_video)
  void find_overlay_topics(const RecordingOpenOptions& options);
  std::vector<ros::OverlayTopic> overlay_topics_;  // ROS 2 detections and annotations
  std::vector<std::string> overlay_topic_names_;
  mutable std::set<std::string> layer_warnings_;    // each bad layer logged once
};

// Among `refs` (by log time) logged within `window` of `t`, nearest in log
// time first, the first whose key (key_of(position)) is `key`; null when none.
template <typename KeyOf>
const mcap::MessageRef* match_key(const std::vector<mcap::MessageRef>& refs, std::uint64_t t, std::uint64_t key,
                                  std::uint64_t window, KeyOf&& key_of) {
  const std::uint64_t lo = t - std::min(t, window);
  const std::uint64_t hi = t + std::min(window, std::numeric_limits<std::uint64_t>::max() - t);
  auto by_time = [](const mcap::MessageRef& r, std::uint64_t v) { return r.log_time < v; };
  const auto begin = refs.begin();
  const auto first = std::lower_bound(begin, refs.end(), lo, by_time);
  const auto last = std::upper_bound(first, refs.end(), hi,
                                     [](std::uint64_t v, const mcap::MessageRef& r) { return v < r.log_time; });
  auto right = std::lower_bound(first, last, t, by_time), left = right;
  while (left != first || right != last) {
    const bool go_right = right != last && (left == first || right->log_time - t <= t - std::prev(left)->log_time);
    const auto it = go_right ? right++ : --left;
    if (key_of(std::size_t(it - begin)) == key) return &*it;
  }
  return nullptr;
}

RecordingSourceImpl::RecordingSourceImpl(std::shared_ptr<mcap::Reader> reader, const RecordingOpenOptions& options)
    : reader_(std::move(reader)), window_ns_(options.annotation_window_ns) {
  info_.name = reader_->name();
  choose_topics(options);
  read_first_frame();
}

// Messages on `topic` whose schema is `schema`, by log time; with `check`,
// their channels must be protobuf with a descriptor set handoff can read.
std::vector<mcap::MessageRef> RecordingSourceImpl::topic_messages(const std::string& topic, std::string_view schema,
                                                                  bool check) {
  std::vector<mcap::MessageRef> out;
  for (const auto& [id, ch] : reader_->channels()) {
    const auto s = reader_->schemas().find(ch.schema_id);
    if (ch.topic != topic || s == reader_->schemas().end()) continue;
    if (is_ros_image(schema) ? ros::normalize_type_name(s->second.name) != ros::normalize_type_name(schema)
                             : s->second.name != schema)
      continue;
    if (check && is_ros_image(schema)) {
      check_ros_channel(ch, s->second);
    } else if (check) {
      if (ch.message_encoding != "protobuf") {
        throw ParseError(reader_->name(), channel_place(ch), "message_encoding",
                         mcap::detail::quoted(ch.message_encoding) + " is not supported (handoff reads protobuf " + std::string(schema) + ")");
      }
      if (s->second.encoding != "protobuf") {
        throw ParseError(reader_->name(), schema_place(s->second), "encoding",
                         mcap::detail::quoted(s->second.encoding) + " is not supported (handoff reads protobuf schemas)");
      }
      using Fields = std::span<const ExpectedField>;
      check_descriptor(reader_->name(), s->second,
                       schema == kRawImageSchema          ? Fields(kRawImageFields)
                       : schema == kCompressedImageSchema ? Fields(kCompressedImageFields)
                       : schema == kCompressedVideoSchema ? Fields(kCompressedVideoFields)
                                                          : Fields(kAnnotationFields));
      if (schema == kCompressedImageSchema) foxglove_compressed_.insert(ch.id);
    }
    const auto& refs = reader_->messages(id);
    out.insert(out.end(), refs.begin(), refs.end());
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.log_time < b.log_time; });
  return out;
}

// A sensor_msgs/Image channel: CDR messages, a ros2msg schema whose
// definition handoff parses (the built-in one when the schema is empty).
void RecordingSourceImpl::check_ros_channel(const mcap::Channel& ch, const mcap::Schema& s) {
  if (ch.message_encoding != "cdr") {
    throw ParseError(reader_->name(), channel_place(ch), "message_encoding",
                     mcap::detail::quoted(ch.message_encoding) + " is not supported (handoff reads cdr " + s.name + ")");
  }
  if (s.encoding != "ros2msg" && !(s.encoding.empty() && s.data.empty())) {
    throw ParseError(reader_->name(), schema_place(s), "encoding",
                     mcap::detail::quoted(s.encoding) + " is not supported (handoff reads ros2msg schemas)");
  }
  const std::string_view text(reinterpret_cast<const char*>(s.data.data()), s.data.size());
  definitions_[ch.id] = text.empty() ? ros::MessageDefinition::builtin(s.name)
                                     : ros::MessageDefinition::parse(s.name, text, reader_->name() + ": " + schema_place(s));
}

DecodedImage RecordingSourceImpl::decode_image(const mcap::MessageRef& ref, std::span<const std::uint8_t> bytes,
                                               const MessagePlace& where, bool pixels) const {
  if (video_) {  // a video topic: only its timestamp is read here (overlay matching)
    const CompressedVideoView v = video_message(ref, bytes, where);
    RawImageView image;
    image.has_timestamp = v.has_timestamp;
    image.timestamp_ns = v.timestamp_ns;
    return {image};
  }
  if (foxglove_compressed_.count(ref.channel)) {
    const CompressedImageView c = parse_compressed_image(bytes, where);
    if (!pixels) {
      RawImageView stamp;
      stamp.has_timestamp = c.has_timestamp;
      stamp.timestamp_ns = c.timestamp_ns;
      return {stamp, false, false, true};
    }
    return {decode_compressed_image(c, picture_, where), false, false, true};
  }
  const auto d = definitions_.find(ref.channel);
  if (d == definitions_.end()) return {parse_raw_image(bytes, where)};
  const ros::CdrMessage m = ros::CdrMessage::decode(d->second, bytes, {std::string(where.file), where.location()});
  const ros::ImageView v = ros::any_image_view(m, picture_, where, pixels);
  return {v.image, true, v.big_endian, v.compressed};
}

// A video topic's message: a foxglove.CompressedVideo, or a ROS 2 one (CDR).
CompressedVideoView RecordingSourceImpl::video_message(const mcap::MessageRef& ref, std::span<const std::uint8_t> bytes,
                                                       const MessagePlace& where) const {
  const auto d = definitions_.find(ref.channel);
  if (d == definitions_.end()) return parse_compressed_video(bytes, where);
  return ros_video_view(ros::CdrMessage::decode(d->second, bytes, {std::string(where.file), where.location()}));
}

// The topic plays as video: a foxglove.CompressedVideo topic, or a ROS 2 one
// whose first message says so (is_ros_video). A first message that does not
// decode is left to the image path, which reports it.
bool RecordingSourceImpl::plays_as_video() const {
  const mcap::MessageRef& first = frames_.front();
  if (reader_->schemas().at(reader_->channels().at(first.channel).schema_id).name == kCompressedVideoSchema) return true;
  const auto d = definitions_.find(first.channel);
  if (d == definitions_.end()) return false;
  try {
    return is_ros_video(ros::CdrMessage::decode(d->second, reader_->read(first).data));
  } catch (const ParseError&) {
    return false;
  }
}

void RecordingSourceImpl::choose_topics(const RecordingOpenOptions& options) {
  std::vector<std::string> annotation_topics;
  for (const auto& [id, ch] : reader_->channels()) {
    const auto s = reader_->schemas().find(ch.schema_id);
    if (s == reader_->schemas().end()) continue;
    const auto n = reader_->messages(id).size();
    if (is_image_schema(s->second.name)) {
      const std::string& name = ch.topic;  // a structured binding cannot be captured before C++20 in clang 14
      auto t = std::find_if(topics_.begin(), topics_.end(), [&](const RecordingTopic& r) { return r.topic == name; });
      if (t == topics_.end()) topics_.push_back({ch.topic, s->second.name, n});
      else t->messages += n;
    } else if (s->second.name == kImageAnnotationsSchema &&
               std::find(annotation_topics.begin(), annotation_topics.end(), ch.topic) == annotation_topics.end()) {
      annotation_topics.push_back(ch.topic);
    }
  }
  std::string list;
  for (const auto& t : topics_) list += (list.empty() ? "" : ", ") + t.topic;
  if (topics_.empty()) throw ParseError(reader_->name(), "", "topic", "the recording has no foxglove.RawImage, foxglove.CompressedImage, foxglove.CompressedVideo, sensor_msgs/msg/Image or CompressedImage channel");
  topic_ = options.topic.empty() ? topics_.front().topic : options.topic;
  if (std::none_of(topics_.begin(), topics_.end(), [&](const auto& t) { return t.topic == topic_; })) {
    throw ParseError(reader_->name(), "", "topic", "no image topic " + mcap::detail::quoted(topic_) + " (image topics: " + list + ")");
  }
  const auto chosen = std::find_if(topics_.begin(), topics_.end(), [&](const auto& t) { return t.topic == topic_; });
  frames_ = topic_messages(topic_, chosen->schema, true);
  compressed_ = chosen->schema == kCompressedImageSchema ||
                ros::normalize_type_name(chosen->schema) == ros::kCompressedImageType;
  if (frames_.empty()) throw ParseError(reader_->name(), "", "topic", "image topic " + mcap::detail::quoted(topic_) + " has no messages");
  const std::string paired = topic_ + std::string(kAnnotationsSuffix);
  if (!options.annotations_topic.empty()) {
    annotations_topic_ = options.annotations_topic;
    if (std::find(annotation_topics.begin(), annotation_topics.end(), annotations_topic_) == annotation_topics.end()) {
      throw ParseError(reader_->name(), "", "annotations_topic",
                       "no foxglove.ImageAnnotations topic " + mcap::detail::quoted(annotations_topic_));
    }
  } else if (std::find(annotation_topics.begin(), annotation_topics.end(), paired) != annotation_topics.end()) {
    annotations_topic_ = paired;
  } else if (annotation_topics.size() == 1) {
    annotations_topic_ = annotation_topics.front();
  }
  if (!annotations_topic_.empty()) annotations_ = topic_messages(annotations_topic_, kImageAnnotationsSchema, true);
  annotation_keys_.assign(annotations_.size(), std::nullopt);
  find_layer_topics();
  find_overlay_topics(options);
}

// The ROS 2 overlay topics drawn on the image topic (RecordingOpenOptions::overlay_topics).
void RecordingSourceImpl::find_overlay_topics(const RecordingOpenOptions& options) {
  std::map<std::string, std::pair<std::vector<std::uint16_t>, const mcap::Schema*>> found;
  for (const auto& [id, ch] : reader_->channels()) {
    const auto s = reader_->schemas().find(ch.schema_id);
    if (s == reader_->schemas().end() || !ros::is_overlay_type(s->second.name) || ch.message_encoding != "cdr") continue;
    auto& f = found[ch.topic];
    f.first.push_back(id);
    f.second = &s->second;
  }
  std::vector<std::string> chosen = options.overlay_topics;
  for (const std::string& t : chosen) {
    if (!found.count(t)) {
      throw ParseError(reader_->name(), "", "overlay_topic",
                       "no vision_msgs/msg/Detection2DArray or foxglove_msgs/msg/ImageAnnotations topic " + mcap::detail::quoted(t));
    }
  }
  if (chosen.empty()) {
    for (const auto& [topic, f] : found)
      if (ros::parent_namespace(topic) == ros::image_namespace(topic_)) chosen.push_back(topic);
  }
  for (const std::string& topic : chosen) {
    const auto& [ids, schema] = found.at(topic);
    const std::string_view text(reinterpret_cast<const char*>(schema->data.data()), schema->data.size());
    std::shared_ptr<const ros::MessageDefinition> definition;
    try {
      definition = text.empty() ? ros::MessageDefinition::builtin(schema->name)
                                : ros::MessageDefinition::parse(schema->name, text, reader_->name() + ": " + schema_place(*schema));
    } catch (const ParseError& e) {  // a topic found by namespace is left out; one asked for is an error
      if (!options.overlay_topics.empty()) throw;
      log(LogLevel::Warning, std::string("recording: overlay topic left out: ") + e.what());
      continue;
    }
    auto refs = std::make_shared<std::vector<mcap::MessageRef>>();
    for (std::uint16_t id : ids) refs->insert(refs->end(), reader_->messages(id).begin(), reader_->messages(id).end());
    std::stable_sort(refs->begin(), refs->end(), [](const auto& a, const auto& b) { return a.log_time < b.log_time; });
    std::vector<std::uint64_t> times;
    for (const auto& r : *refs) times.push_back(r.log_time);
    auto read = [this, refs](std::size_t k) {
      const mcap::MessageView m = reader_->read((*refs)[k]);
      return std::vector<std::uint8_t>(m.data.begin(), m.data.end());
    };
    overlay_topics_.emplace_back(reader_->name(), topic, std::move(definition), std::move(times), read);
    overlay_topic_names_.push_back(topic);
  }
}

void RecordingSourceImpl::read_first_frame() {
  if (plays_as_video()) return open_video();
  const mcap::MessageRef& ref = frames_.front();
  const MessagePlace where = place(ref);
  const mcap::MessageView m = reader_->read(ref);
  const DecodedImage decoded = decode_image(ref, m.data, where);
  const RawImageView& image = decoded.image;
  const std::string type = decoded.compressed ? "CompressedImage" : decoded.ros ? "Image" : "RawImage";
  const PixelFormat format = ros::first_image_format(image, decoded.ros, where, type);
  remember_key(0, image);
  info_.format = format;  // the first image's encoding is the stream's format
  info_.width = image.width;
  info_.height = image.height;
  for (const auto& [id, ch] : reader_->channels()) colorimetry_[id] = colorimetry_from_metadata(ch.metadata, image.height);
  info_.colorimetry = colorimetry_.at(ref.channel);
  info_.rate = estimate_rate(frames_);
  info_.frame_count = std::int64_t(frames_.size());
}

// A video topic: NV12 frames of the decoded pictures' size, the colours the
// stream signals (else the channel's, else the default).
void RecordingSourceImpl::open_video() {
  const auto d = definitions_.find(frames_.front().channel);
  const std::string type = d == definitions_.end() || d->second->root().name == ros::kCompressedVideoType
                               ? "CompressedVideo" : "CompressedImage";
  auto read = [this](std::size_t i) {
    const MessagePlace unnamed{"", [] { return std::string(); }};  // VideoTrack names the frame
    return video_message(frames_[i], reader_->read(frames_[i]).data, unnamed);
  };
  video_ = std::make_unique<VideoTrack>(reader_->name(), type, frames_.size(), read, [this](std::size_t i) {
    return place(frames_[i]).location();
  });
  const PictureInfo& p = video_->first_picture();
  info_.format = PixelFormat::NV12;
  info_.width = p.width;
  info_.height = p.height;
  for (const auto& [id, ch] : reader_->channels()) {
    Colorimetry c = colorimetry_from_metadata(ch.metadata, p.height);
    c.matrix = p.matrix.value_or(c.matrix);
    c.range = p.range.value_or(c.range);
    colorimetry_[id] = c;
  }
  info_.colorimetry = colorimetry_.at(frames_.front().channel);
  info_.rate = estimate_rate(frames_);
  info_.frame_count = std::int64_t(frames_.size());
}

bool RecordingSourceImpl::read_into(const FrameWriteTarget& target) {
  if (position_ >= std::int64_t(frames_.size())) return false;
  check_target(info_, target);
  if (video_) {
    video_->play(position_, target);
    return true;
  }
  const mcap::MessageRef& ref = frames_[std::size_t(position_)];
  try {
    read_frame(ref, target);
  } catch (const ParseError& e) {
    // A raw image that does not fit its frame (a short step, data cut short):
    // the error names it, and the next read is the next frame.
    if (!compressed_) {
      ++position_;
      throw;
    }
    // A compressed image that does not decode (or decodes to another size):
    // said once, shown black; the recording plays on.
    ros::blank_frame(info_, target);
    log(LogLevel::Warning, std::string("recording: ") + e.what());
    frame_warnings_.push_back(e.what());
  }
  ++position_;
  return true;
}

void RecordingSourceImpl::read_frame(const mcap::MessageRef& ref, const FrameWriteTarget& target) {
  const MessagePlace where = place(ref);
  const mcap::MessageView m = reader_->read(ref);
  const DecodedImage d = decode_image(ref, m.data, where);
  if (d.ros) {
    ros::copy_image({d.image, d.big_endian, d.compressed}, info_.format, info_.width, info_.height, target, where);
  } else {
    copy_raw_image(d.image, info_.format, info_.width, info_.height, target, where,
                   d.compressed ? "CompressedImage" : "RawImage");
  }
  remember_key(std::size_t(position_), d.image);
}

void RecordingSourceImpl::seek(std::int64_t index) {
  if (index < 0 || index > std::int64_t(frames_.size())) {
    throw UsageError("RecordingSource::seek: " + std::to_string(index) + " is not in 0.." + std::to_string(frames_.size()));
  }
  position_ = index;
}

bool RecordingSourceImpl::overlays_for(std::int64_t index, OverlayFrame& out) const {
  out.clear();
  if (index < 0 || index >= std::int64_t(frames_.size())) return false;
  // A bad annotation message is left out with one warning naming it: the
  // frame, its other overlays and layers play on.
  try {
    if (const mcap::MessageRef* match = annotations_.empty() ? nullptr : matching_annotations(std::size_t(index))) {
      const mcap::MessageView m = reader_->read(*match);
      decode_annotations(m.data, out, place(*match));
    }
  } catch (const ParseError& e) {
    out.clear();
    warn_annotations(e.what());
  }
  for (const ros::OverlayTopic& t : overlay_topics_)
    t.add(frames_[std::size_t(index)].log_time, image_key(std::size_t(index)), window_ns_, out);
  add_layers(std::size_t(index), out);
  out.frame = index;
  return out.has_content();
}

void RecordingSourceImpl::warn_annotations(const std::string& what) const {
  if (std::find(overlay_warnings_.begin(), overlay_warnings_.end(), what) != overlay_warnings_.end()) return;
  overlay_warnings_.push_back(what);
  log(LogLevel::Warning, "recording: annotations left out: " + what);
}

void RecordingSourceImpl::remember_key(std::size_t index, const RawImageView& image) const {
  keyed_frame_ = std::int64_t(index);
  frame_key_ = image.has_timestamp ? image.timestamp_ns : frames_[index].log_time;
}

// Frame `index`'s RawImage.timestamp or Image.header.stamp (its log time when it has none).
std::uint64_t RecordingSourceImpl::image_key(std::size_t index) const {
  if (keyed_frame_ != std::int64_t(index)) {
    const mcap::MessageRef& ref = frames_[index];
    const mcap::MessageView m = reader_->read(ref);
    remember_key(index, decode_image(ref, m.data, place(ref), false).image);
  }
  return frame_key_;
}

// Annotation message `k`'s timestamp (its log time when it carries none, or
// when the message cannot be read: matched by log time, it is then named
// when a frame takes it, and left out).
std::uint64_t RecordingSourceImpl::annotation_key(std::size_t k) const {
  std::optional<std::uint64_t>& key = annotation_keys_[k];
  if (!key) {
    const mcap::MessageRef& ref = annotations_[k];
    try {
      key = annotations_timestamp(reader_->read(ref).data, place(ref)).value_or(ref.log_time);
    } catch (const ParseError& e) {
      key = ref.log_time;
      warn_annotations(e.what());
    }
  }
  return *key;
}

// The annotation message with frame `index`'s timestamp, among those logged
// within window_ns_ of the frame, nearest in log time first; null when none.
const mcap::MessageRef* RecordingSourceImpl::matching_annotations(std::size_t index) const {
  return match_key(annotations_, frames_[index].log_time, image_key(index), window_ns_,
                   [&](std::size_t k) { return annotation_key(k); });
}

// Layer topics of the image topic ("<topic>/layers/<i>", RawImage), by index.
void RecordingSourceImpl::find_layer_topics() {
  std::map<std::size_t, std::string> found;
  for (const auto& t : topics_)
    if (const auto i = layer_topic_index(topic_, t.topic)) found[*i] = t.topic;
  for (const auto& [i, topic] : found) {
    LayerTopic t;
    t.index = i;
    t.topic = topic;
    t.messages = topic_messages(topic, kRawImageSchema, true);
    t.keys.assign(t.messages.size(), std::nullopt);
    layer_topics_.push_back(std::move(t));
  }
}

// Each layer topic's message with frame `index`'s timestamp, in index order.
// A bad layer is left out with one warning naming its topic and field; the
// frame and the other layers play on.
void RecordingSourceImpl::add_layers(std::size_t index, OverlayFrame& out) const {
  if (layer_topics_.empty()) return;
  const std::uint64_t key = image_key(index), t = frames_[index].log_time;
  for (const LayerTopic& lt : layer_topics_) {
    try {
      const mcap::MessageRef* ref = match_key(lt.messages, t, key, window_ns_, [&](std::size_t k) {
        std::optional<std::uint64_t>& v = lt.keys[k];
        if (!v) {
          const RawImageView image = parse_raw_image(reader_->read(lt.messages[k]).data, place(lt.messages[k]));
          v = image.has_timestamp ? image.timestamp_ns : lt.messages[k].log_time;
        }
        return *v;
      });
      if (ref) add_layer(lt, *ref, out);
    } catch (const Error& e) {  // ParseError
      warn_layer(lt, e.what());
    }
  }
}

void RecordingSourceImpl::warn_layer(const LayerTopic& lt, const std::string& what) const {
  if (layer_warnings_.insert(lt.topic + what).second)
    log(LogLevel::Warning, "recording: layer topic " + mcap::detail::quoted(lt.topic) + " left out: " + what);
}

void RecordingSourceImpl::add_layer(const LayerTopic& lt, const mcap::MessageRef& ref, OverlayFrame& out) const {
  const std::string location = "layer topic " + mcap::detail::quoted(lt.topic) + ": " + reader_->describe(ref);
  const auto& channel = reader_->channels().at(ref.channel);
  const auto settings = std::find_if(channel.metadata.begin(), channel.metadata.end(),
                                     [](const auto& kv) { return kv.first == kLayerMetadataKey; });
  if (settings == channel.metadata.end())
    throw ParseError(reader_->name(), location, std::string(kLayerMetadataKey), "the channel has no layer settings");
  const RawImageView image = parse_raw_image(reader_->read(ref).data, {reader_->name(), [&] { return location; }});
  out.layers.push_back(decode_layer_message(image, settings->second, reader_->name(), location));
  try {
    validate_layers(out, -1);  // against the frame's boxes (masks) and the layer rules
  } catch (const InvalidFrame& e) {
    // Named by the topic's layer index, not its place among the layers read.
    out.layers.pop_back();
    const std::string what = e.what(), field = e.field();
    const std::string rest = field.substr(std::min(field.find(']') + 1, field.size()));
    throw ParseError(reader_->name(), location, "layers[" + std::to_string(lt.index) + "]" + rest,
                     what.substr(field.size() + 2));
  }
}

}  // namespace

namespace {

// A recording as opened once: its MCAP reader (an MCAP file, a rosbag2
// folder of MCAP files: read, scanned when it has no summary), or the .db3
// bag open_db3_recording reads (reader null).
struct OpenedRecording {
  std::shared_ptr<mcap::Reader> reader;
  RosbagFolder db3;
};

OpenedRecording open_files(const std::filesystem::path& path, const RecordingOpenOptions& options) {
  std::error_code ec;
  mcap::ReaderOptions r;
  r.max_chunk_bytes = options.max_chunk_bytes;
  if (std::filesystem::is_directory(path, ec)) {
    RosbagFolder bag = read_rosbag_folder(path);
    if (bag.files.size() == 1 && bag.missing.empty() && bag.compression == BagCompression::None)
      return open_files(bag.files.front(), options);
    if (bag.db3) return {nullptr, std::move(bag)};
    return {open_bag_mcap(bag, r), {}};
  }
  if (is_db3_path(path)) return {nullptr, lone_db3_file(path)};
  return {mcap::Reader::open(path, r), {}};
}

// `again`: the recording was opened before (a .db3 bag's skipped files are not said twice).
std::unique_ptr<RecordingSource> open_topic(const OpenedRecording& opened, const RecordingOpenOptions& options,
                                            bool again = false) {
  if (opened.reader) return std::make_unique<RecordingSourceImpl>(opened.reader, options);
  return open_db3_recording(opened.db3, options, !again);
}

// The topics of what open_files opened: an MCAP reader's without reading the
// file again; a .db3 bag's files are opened again, the files skipped not said twice.
std::vector<RecordingTopicListing> list_topics(const OpenedRecording& opened) {
  if (opened.reader) return list_mcap_topics(*opened.reader);
  return list_db3_topics(opened.db3, nullptr, false);
}

}  // namespace

// No topic asked for: the first image topic, unless its first message does
// not open (an encoding handoff does not show, a corrupt picture): then the
// first topic by name that --list calls an image. The topics are judged from
// the recording as opened (an MCAP file is read once, so a damaged tail is
// one warning).
std::unique_ptr<RecordingSource> open_recording(const std::filesystem::path& path, const RecordingOpenOptions& options) {
  const OpenedRecording opened = open_files(path, options);
  if (!options.topic.empty()) return open_topic(opened, options);
  std::unique_ptr<RecordingSource> source;
  std::exception_ptr refused;
  try {
    source = open_topic(opened, options);
  } catch (const ParseError&) {
    refused = std::current_exception();
  }
  if (source && source->image_topics().size() < 2) return source;
  std::vector<RecordingTopicListing> listed;
  try {
    listed = list_topics(opened);
  } catch (const ParseError&) {
    if (refused) std::rethrow_exception(refused);
    throw;
  }
  const auto shown = [](const RecordingTopicListing& l) { return l.kind == RecordingTopicListing::Kind::Image; };
  if (source && std::any_of(listed.begin(), listed.end(),
                            [&](const RecordingTopicListing& l) { return l.topic == source->topic() && shown(l); }))
    return source;
  const auto other = std::find_if(listed.begin(), listed.end(), shown);
  if (other == listed.end()) {  // none can be shown: the first, whose error names why
    if (refused) std::rethrow_exception(refused);
    return source;
  }
  std::string why;
  if (refused) {
    try {
      std::rethrow_exception(refused);
    } catch (const ParseError& e) {
      why = e.what();
    }
  } else {
    for (const RecordingTopicListing& l : listed)
      if (l.topic == source->topic()) why = "topic " + l.topic + ": " + l.note;
  }
  source.reset();  // its reader serves the topic played instead
  RecordingOpenOptions o = options;
  o.topic = other->topic;
  std::unique_ptr<RecordingSource> instead;
  try {
    instead = open_topic(opened, o, true);
  } catch (const ParseError&) {  // not the image topic's fault (an overlay_topic that is not there): its own error
    if (refused) std::rethrow_exception(refused);
    throw;
  }
  log(LogLevel::Warning, path.string() + ": the first image topic is not shown (" + why + "); playing " +
                             other->topic + " instead (--topic picks one)");
  return instead;
}

bool is_recording_path(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec) || is_db3_path(path) || lower_extension(path) == ".mcap") return true;
  std::ifstream in(path, std::ios::binary);
  char head[5] = {};  // 0x89 "MCAP": the version byte after it is the reader's to judge
  return in.read(head, sizeof head) && std::equal(head, head + sizeof head, mcap::kMagic.begin(),
                                                   [](char a, std::uint8_t b) { return std::uint8_t(a) == b; });
}

std::unique_ptr<RecordingSource> open_recording_memory(std::span<const std::uint8_t> bytes, std::string name,
                                                       const RecordingOpenOptions& options) {
  mcap::ReaderOptions r;
  r.max_chunk_bytes = options.max_chunk_bytes;
  return std::make_unique<RecordingSourceImpl>(mcap::Reader::open_memory(bytes, std::move(name), r), options);
}

std::unique_ptr<RecordingSource> open_bag_memory(const std::vector<std::span<const std::uint8_t>>& parts,
                                                 bool compressed_messages, const std::string& name,
                                                 const RecordingOpenOptions& options) {
  mcap::ReaderOptions r;
  r.max_chunk_bytes = options.max_chunk_bytes;
  return std::make_unique<RecordingSourceImpl>(open_bag_mcap_memory(parts, compressed_messages, name, r), options);
}

}  // namespace handoff::media
