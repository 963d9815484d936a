// Video topic playback (recording_video.hpp): a foxglove.CompressedVideo
// message read with protobuf's wire-format primitives, a ROS 2 one through the
// CDR decoder (the access unit is not copied either way), a keyframe index
// built on open, and decoding restarted at the keyframe at or before a frame
// whenever the decoder is not already on its way to it.
#include "recording_video.hpp"

#include "mcap_format.hpp"

#include <handoff/media/error.hpp>
#include <handoff/media/ros_image.hpp>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <climits>
#include <exception>

namespace handoff::media {
namespace {

using google::protobuf::io::CodedInputStream;
using WFL = google::protobuf::internal::WireFormatLite;

// foxglove/CompressedVideo.proto's field numbers.
enum : int { kTimestamp = 1, kFrameId = 2, kData = 3, kFormat = 4 };

constexpr std::size_t kNone = std::size_t(-1);

}  // namespace

CompressedVideoView parse_compressed_video(std::span<const std::uint8_t> bytes, const MessagePlace& where) {
  auto fail = [&](const std::string& detail) {
    throw ParseError(std::string(where.file), where.location(), "CompressedVideo", detail);
  };
  if (bytes.size() > std::size_t(INT_MAX)) fail("message larger than 2 GiB");
  CodedInputStream in(bytes.data(), int(bytes.size()));
  CompressedVideoView v;
  while (const std::uint32_t tag = in.ReadTag()) {
    const int field = WFL::GetTagFieldNumber(tag);
    std::uint32_t n = 0;
    if (WFL::GetTagWireType(tag) != WFL::WIRETYPE_LENGTH_DELIMITED || field < kTimestamp || field > kFormat) {
      if (!WFL::SkipField(&in, tag)) fail("malformed field " + std::to_string(field));
      continue;
    }
    if (!in.ReadVarint32(&n)) fail("truncated length");
    const int at = in.CurrentPosition();
    if (!in.Skip(int(n))) fail("a length-delimited field runs past the end of the message");
    const auto s = bytes.subspan(std::size_t(at), n);
    const std::string_view text(reinterpret_cast<const char*>(s.data()), s.size());
    if (field == kFrameId) v.frame_id = text;
    if (field == kFormat) v.format = text;
    if (field == kData) v.data = s;
    if (field == kTimestamp) {
      const char* error = nullptr;
      v.timestamp_ns = mcap::detail::protobuf_timestamp_ns(s, error);
      if (error) fail(error);
      v.has_timestamp = true;
    }
  }
  if (!in.ConsumedEntireMessage() || in.CurrentPosition() != int(bytes.size())) fail("malformed protobuf message");
  return v;
}

CompressedVideoView ros_video_view(const ros::CdrMessage& m) {
  const bool image = m.type_name() == ros::kCompressedImageType;
  const std::string stamp = image ? "header.stamp" : "timestamp";
  CompressedVideoView v;
  v.has_timestamp = true;
  // Wraps for negative times as RawImage's timestamp does.
  v.timestamp_ns = std::uint64_t(m.at(stamp + ".sec").as_int()) * 1'000'000'000u + m.at(stamp + ".nanosec").as_uint();
  v.frame_id = m.at(image ? "header.frame_id" : "frame_id").as_string();
  v.format = m.at("format").as_string();
  v.data = m.at("data").as_bytes();
  return v;
}

bool is_ros_video(const ros::CdrMessage& first) {
  if (first.type_name() == ros::kCompressedVideoType) return true;
  return first.type_name() == ros::kCompressedImageType && video_codec(first.at("format").as_string()).has_value();
}

VideoTrack::VideoTrack(std::string file, std::string type, std::size_t count, VideoMessages read,
                       std::function<std::string(std::size_t)> location)
    : VideoTrack(std::move(file), std::move(type), count, std::move(read), std::move(location), false) {}

PictureInfo VideoTrack::probe(std::string file, std::string type, std::size_t count, VideoMessages read,
                              std::function<std::string(std::size_t)> location) {
  return VideoTrack(std::move(file), std::move(type), count, std::move(read), std::move(location), true).first_;
}

VideoTrack::VideoTrack(std::string file, std::string type, std::size_t count, VideoMessages read,
                       std::function<std::string(std::size_t)> location, bool probe)
    : file_(std::move(file)), type_(std::move(type)), count_(count), read_(std::move(read)), location_(std::move(location)) {
  std::optional<VideoCodec> codec;
  std::exception_ptr failed;  // a probe's last keyframe that did not decode
  for (std::size_t i = 0; i < count_; ++i) {
    index(i, codec);
    if (!probe || keyframes_.empty() || keyframes_.back() != i) continue;
    try {
      first_ = decode_alone(i);
      return;
    } catch (const ParseError&) {
      failed = std::current_exception();
    }
  }
  if (keyframes_.empty()) {
    throw ParseError(file_, location_(0), type_ + ".data",
                     "the topic has no keyframe (an IDR / IRAP access unit carrying its parameter sets)");
  }
  if (failed) std::rethrow_exception(failed);
  decoder_ = std::make_unique<VideoDecoder>(codec_);
  for (std::size_t k = 0;; ++k) {  // the first keyframe that decodes gives the stream's size
    try {
      position(keyframes_[k]);
      first_ = decoder_->picture();
      return;
    } catch (const ParseError&) {
      if (k + 1 == keyframes_.size()) throw;
    }
  }
}

// Message i into the keyframe index (its codec the stream's when it is the
// first), or into bad_ with what is wrong with it.
void VideoTrack::index(std::size_t i, std::optional<VideoCodec>& codec) {
  try {
    const CompressedVideoView v = read_(i);
    if (!codec) {
      codec = video_codec(v.format);
      if (!codec) {
        throw ParseError(file_, location_(i), type_ + ".format",
                         "unsupported format " + mcap::detail::quoted(v.format) + " (supported: h264, h265)");
      }
      codec_ = *codec;
    }
    if (video_codec(v.format) != codec) {
      bad_[i] = type_ + ".format: " + mcap::detail::quoted(v.format) + ", but the stream is " +
                std::string(to_string(codec_));
      return;
    }
    const AccessUnitInfo au = scan_access_unit(codec_, v.data);
    if (au.keyframe && au.parameter_sets) keyframes_.push_back(i);
  } catch (const VideoDecodeError& e) {
    bad_[i] = type_ + ".data: " + e.what();
  } catch (const ParseError& e) {
    if (!codec && e.field() == type_ + ".format") throw;
    bad_[i] = e.what();
  }
}

// A keyframe's picture decoded from it alone (an IDR / IRAP access unit
// needs no other).
PictureInfo VideoTrack::decode_alone(std::size_t keyframe) {
  VideoDecoder decoder(codec_);
  try {
    decoder.send(read_(keyframe).data, std::int64_t(keyframe));
    decoder.drain();
    if (decoder.receive()) return decoder.picture();
  } catch (const VideoDecodeError& e) {
    throw ParseError(file_, location_(keyframe), type_ + ".data", e.what());
  }
  throw ParseError(file_, location_(keyframe), type_ + ".data", "libavcodec gave no picture for it");
}

std::span<const std::uint8_t> VideoTrack::access_unit(std::size_t index) { return read_(index).data; }

std::size_t VideoTrack::next_keyframe(std::size_t index) const {
  const auto it = std::upper_bound(keyframes_.begin(), keyframes_.end(), index);
  return it == keyframes_.end() ? count_ : *it;
}

void VideoTrack::fail(std::size_t index, std::size_t bad, const std::string& what) {
  bad_.emplace(bad, what);
  fed_from_ = kNone;  // the decoder's state is not to be trusted
  std::string detail = bad == index ? what : "depends on frame " + std::to_string(bad) + ", which is corrupt: " + what;
  const std::size_t next = next_keyframe(bad);
  detail += next < count_ ? "; playback goes on at frame " + std::to_string(next) + " (the next keyframe)"
                                   : "; no keyframe follows it";
  throw ParseError(file_, location_(index), "", detail);
}

void VideoTrack::restart(std::size_t keyframe) {
  decoder_->reset();
  fed_from_ = fed_ = keyframe;
  out_ = -1;
  drained_ = false;
}

// Leaves the decoder's current picture at frame `index`.
void VideoTrack::position(std::size_t index) {
  const auto after = std::upper_bound(keyframes_.begin(), keyframes_.end(), index);
  if (after == keyframes_.begin()) {
    throw ParseError(file_, location_(index), type_ + ".data",
                     "comes before the topic's first keyframe (frame " + std::to_string(keyframes_.front()) +
                         "), so it cannot be decoded; playback goes on there");
  }
  const std::size_t k = *std::prev(after);
  // The picture asked for is the one the decoder holds (the one the track
  // opened on, a frame shown again): no decoding.
  if (fed_from_ != kNone && out_ == std::int64_t(index) && decoder_->has_picture()) return;
  if (const auto b = bad_.lower_bound(k); b != bad_.end() && b->first <= index) fail(index, b->first, b->second);
  // Ahead of the last picture, from the same keyframe: decode on. After a
  // drain (the topic's last access unit fed) the pictures still inside come
  // out in order, so that too goes on rather than decoding the last group
  // again for each of them.
  const bool on_the_way = fed_from_ != kNone && fed_from_ <= index && out_ < std::int64_t(index) && k < fed_;
  if (!on_the_way) restart(k);
  for (;;) {
    std::optional<std::int64_t> got;
    try {
      got = decoder_->receive();
    } catch (const VideoDecodeError& e) {
      // Pictures come out in order: the one that failed is the next expected.
      fail(index, std::size_t(out_ + 1 < std::int64_t(k) ? k : out_ + 1), type_ + ".data: " + e.what());
    }
    if (got) {
      out_ = *got;
      if (out_ == std::int64_t(index)) return;
      if (out_ > std::int64_t(index)) fail(index, index, type_ + ".data: libavcodec gave no picture for it");
      continue;
    }
    if (drained_) fail(index, index, type_ + ".data: libavcodec gave no picture for it");
    if (fed_ < count_ && !bad_.count(fed_)) {
      try {
        decoder_->send(access_unit(fed_), std::int64_t(fed_));
      } catch (const VideoDecodeError& e) {
        fail(index, fed_, type_ + ".data: " + e.what());
      } catch (const ParseError& e) {
        fail(index, fed_, e.what());
      }
      ++fed_;
    } else {
      decoder_->drain();
      drained_ = true;
    }
  }
}

void VideoTrack::read(std::size_t index, const FrameWriteTarget& target) {
  position(index);
  const PictureInfo p = decoder_->picture();
  if (p.width != first_.width || p.height != first_.height) {
    fail(index, index, type_ + ".data: the picture is " + std::to_string(p.width) + "x" +
                           std::to_string(p.height) + ", but the stream is " + std::to_string(first_.width) + "x" +
                           std::to_string(first_.height));
  }
  decoder_->copy_nv12(target);
}

void VideoTrack::play(std::int64_t& position, const FrameWriteTarget& target) {
  try {
    read(std::size_t(position), target);
  } catch (const ParseError&) {
    position = std::int64_t(next_keyframe(std::size_t(position)));
    throw;
  }
  ++position;
}

}  // namespace handoff::media
