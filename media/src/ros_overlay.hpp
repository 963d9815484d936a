#pragma once
// ROS 2 overlay messages drawn on a bag's images: vision_msgs/msg/Detection2DArray
// (boxes, best hypothesis, id as track) and foxglove_msgs/msg/ImageAnnotations
// (mapped as foxglove.ImageAnnotations are). docs/recording.md "ROS 2 bags".
#include <handoff/media/cdr.hpp>
#include <handoff/media/overlay.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::media::ros {

inline constexpr std::string_view kDetectionsType = "vision_msgs/Detection2DArray";
inline constexpr std::string_view kRosAnnotationsType = "foxglove_msgs/ImageAnnotations";

// Detection2DArray or foxglove_msgs ImageAnnotations (spelled with or without "/msg/").
bool is_overlay_type(std::string_view type_name);

// The namespace an image topic's overlays are looked up in: the topic's parent
// after a trailing "/compressed" is dropped ("/cam/image_raw" and
// "/cam/image_raw/compressed" -> "/cam"; "/image" -> "/").
std::string image_namespace(std::string_view image_topic);
// The parent namespace of a topic ("/cam/detections" -> "/cam").
std::string parent_namespace(std::string_view topic);

// The message's stamp: Detection2DArray.header.stamp, or the first timestamp
// of an ImageAnnotations' circles, else points, else texts (as
// annotations_timestamp()); std::nullopt for an ImageAnnotations with none.
std::optional<std::uint64_t> overlay_stamp(const CdrMessage& m);

// Appends the message's overlays to `out` (nothing in `out` is changed).
// ParseError naming "<Type>.<field path>" for a NaN, infinite or negative
// size or position.
void append_overlays(const CdrMessage& m, OverlayFrame& out);

// One overlay topic of a bag: its messages by log time, read on demand
// through `read`, each matched to a frame by stamp as recording annotations
// are (RecordingSource).
class OverlayTopic {
 public:
  using Read = std::function<std::vector<std::uint8_t>(std::size_t)>;
  OverlayTopic(std::string file, std::string topic, std::shared_ptr<const MessageDefinition> definition,
               std::vector<std::uint64_t> log_times, Read read);

  const std::string& topic() const { return topic_; }
  // Appends the overlays of the message whose stamp is `key` among those
  // logged within `window` of `t`, nearest first. A bad message is left out
  // with one logged warning naming the topic, the message index and the
  // field; the frame plays on.
  void add(std::uint64_t t, std::uint64_t key, std::uint64_t window, OverlayFrame& out) const;

 private:
  CdrMessage decode(std::size_t k, const std::vector<std::uint8_t>& bytes) const;
  std::optional<std::uint64_t> key(std::size_t k) const;  // nullopt: the message is bad
  void warn(const std::string& what) const;

  std::string file_, topic_;
  std::shared_ptr<const MessageDefinition> definition_;
  std::vector<std::uint64_t> log_times_;
  Read read_;
  mutable std::vector<std::optional<std::optional<std::uint64_t>>> keys_;  // outer: read yet
  mutable std::set<std::string> warned_;
};

}  // namespace handoff::media::ros
