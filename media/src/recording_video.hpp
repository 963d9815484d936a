#pragma once
// foxglove.CompressedVideo topics played as frames: the messages' access units
// decoded by VideoDecoder into NV12, any frame reached by decoding from the
// keyframe at or before it.
#include <handoff/media/mcap.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/media/video_decoder.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
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

class VideoTrack {
 public:
  // Reads every message of `frames` once (their format, their keyframes) and
  // decodes the first keyframe for the stream's size. A message whose access
  // unit is malformed is remembered, not thrown: it fails when played.
  // ParseError when the first message's format is not h264 / h265 or the
  // topic has no keyframe. `location(i)` names frame i in errors.
  VideoTrack(mcap::Reader& reader, const std::vector<mcap::MessageRef>& frames,
             std::function<std::string(std::size_t)> location);

  VideoCodec codec() const { return codec_; }
  const PictureInfo& first_picture() const { return first_; }
  // Decodes frame `index` into an NV12 target of the stream's size.
  // ParseError naming the frame, the corrupt message it depends on and what
  // is wrong with it, and where playback goes on (next_keyframe).
  void read(std::size_t index, const FrameWriteTarget& target);
  // The first keyframe after frame `index` (frames().size() when none).
  std::size_t next_keyframe(std::size_t index) const;

 private:
  std::span<const std::uint8_t> access_unit(std::size_t index);
  void restart(std::size_t keyframe);
  void position(std::size_t index);
  [[noreturn]] void fail(std::size_t index, std::size_t bad, const std::string& what);

  mcap::Reader& reader_;
  const std::vector<mcap::MessageRef>& frames_;
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
