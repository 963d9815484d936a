#pragma once
// Video topics played as frames: foxglove.CompressedVideo (protobuf), and in
// ROS 2 bags CompressedImage carrying h264 / h265 and foxglove_msgs
// CompressedVideo (CDR). The messages' access units are decoded by
// VideoDecoder into NV12, any frame reached by decoding from the keyframe at
// or before it.
#include <handoff/media/cdr.hpp>
#include <handoff/media/mcap.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/media/video_decoder.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::media {


// A CompressedVideo message read without copying its data.
struct CompressedVideoView {
  bool has_timestamp = false;
  std::uint64_t timestamp_ns = 0;
  std::string_view frame_id, format;
  std::span<const std::uint8_t> data;
};

// ParseError at `where` (field "CompressedVideo") when `bytes` are not such a message.
CompressedVideoView parse_compressed_video(std::span<const std::uint8_t> bytes, const MessagePlace& where);

// ROS 2 messages played as video (CDR, by definition):
// sensor_msgs/CompressedImage whose format names h264 / h265, and Foxglove's
// foxglove_msgs/CompressedVideo (builtin_interfaces/Time timestamp, string
// frame_id, uint8[] data, string format).
// A decoded message of either type as a CompressedVideoView pointing into
// its bytes: the stamp is header.stamp or timestamp. ParseError naming the
// field when the message lacks one.
CompressedVideoView ros_video_view(const ros::CdrMessage& m);
// Whether a topic whose first message is `first` plays as video: a
// foxglove_msgs/CompressedVideo, or a CompressedImage whose format names
// h264 / h265 (a JPEG / PNG topic plays as pictures).
bool is_ros_video(const ros::CdrMessage& first);

// A track's messages: message `i` read (its format and access unit, valid
// until the next call); ParseError for one that is malformed.
using VideoMessages = std::function<CompressedVideoView(std::size_t)>;

class VideoTrack {
 public:
  // Reads every one of the `count` messages once (their format, their
  // keyframes) and decodes the first keyframe for the stream's size. A
  // message whose access unit is malformed is remembered, not thrown: it
  // fails when played. ParseError when the first message's format is not
  // h264 / h265 or the topic has no keyframe. Errors name `file`, frame i
  // as `location(i)` and fields as `<type>.format` / `<type>.data` (type:
  // "CompressedVideo", "CompressedImage").
  VideoTrack(std::string file, std::string type, std::size_t count, VideoMessages read,
             std::function<std::string(std::size_t)> location);
  // The constructor's checks for a topic listed, not played (--list): the
  // messages are read in order only up to the first keyframe that decodes
  // (alone), not all of them. Its picture; the ParseError the constructor
  // throws for a first format that is not video or a topic with no keyframe,
  // else the last keyframe's decoding error when none decodes.
  static PictureInfo probe(std::string file, std::string type, std::size_t count, VideoMessages read,
                           std::function<std::string(std::size_t)> location);

  VideoCodec codec() const { return codec_; }
  const PictureInfo& first_picture() const { return first_; }
  // Decodes frame `index` into an NV12 target of the stream's size.
  // ParseError naming the frame, the corrupt message it depends on and what
  // is wrong with it, and where playback goes on (next_keyframe).
  void read(std::size_t index, const FrameWriteTarget& target);
  // read(position) for a source playing the track: `position` advances past
  // the frame, or, when it cannot be shown, moves to the next keyframe (where
  // playback goes on) before the ParseError is rethrown.
  void play(std::int64_t& position, const FrameWriteTarget& target);
  // The first keyframe after frame `index` (the count when none).
  std::size_t next_keyframe(std::size_t index) const;

 private:
  VideoTrack(std::string file, std::string type, std::size_t count, VideoMessages read,
             std::function<std::string(std::size_t)> location, bool probe);
  void index(std::size_t i, std::optional<VideoCodec>& codec);
  PictureInfo decode_alone(std::size_t keyframe);
  std::span<const std::uint8_t> access_unit(std::size_t index);
  void restart(std::size_t keyframe);
  void position(std::size_t index);
  [[noreturn]] void fail(std::size_t index, std::size_t bad, const std::string& what);

  std::string file_, type_;
  std::size_t count_;
  VideoMessages read_;
  std::function<std::string(std::size_t)> location_;
  VideoCodec codec_ = VideoCodec::H264;
  std::vector<std::size_t> keyframes_;        // ascending
  std::map<std::size_t, std::string> bad_;    // message -> what is wrong with it
  PictureInfo first_;
  std::unique_ptr<VideoDecoder> decoder_;
  // The decoder has been fed frames [fed_from_, fed_) from a keyframe; the
  // last picture out was frame out_ (-1: none yet). fed_from_ == npos: needs a restart.
  std::size_t fed_from_ = std::size_t(-1), fed_ = 0;
  std::int64_t out_ = -1;
  bool drained_ = false;
};

}  // namespace handoff::media
