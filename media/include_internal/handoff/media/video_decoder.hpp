#pragma once
// H.264 / H.265 access units (Annex B, one per message, as
// foxglove.CompressedVideo carries them) decoded with FFmpeg's libavcodec
// into NV12. Software decoding only for now; NVDEC (libavcodec's CUDA
// hwaccel) is for a machine with a GPU.
#include <handoff/error.hpp>
#include <handoff/media/frame_source.hpp>
#include <handoff/media/recording.hpp>  // VideoCodec, to_string(VideoCodec)

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace handoff::media {

// H264 / H265 for "h264" / "h265" (CompressedVideo.format, a ROS
// CompressedImage's format; "h.264", "h.265" and "hevc" too, any case,
// surrounding blanks ignored); nullopt for others (Raw is never a
// CompressedVideo format).
std::optional<VideoCodec> video_codec(std::string_view format);

// A bad access unit or a picture libavcodec could not decode. what() is the
// detail only; the caller adds the topic and message index.
class VideoDecodeError : public handoff::Error {
 public:
  explicit VideoDecodeError(std::string detail) : handoff::Error(std::move(detail)) {}
};

// What an access unit's NAL unit headers say.
struct AccessUnitInfo {
  bool keyframe = false;        // H.264 IDR; H.265 IRAP (IDR, CRA, BLA)
  bool parameter_sets = false;  // SPS + PPS (and VPS for H.265) present
  int nal_units = 0;
};

// Splits `au` at its Annex B start codes and reads each NAL unit header.
// VideoDecodeError when it is empty, does not start with a start code
// (length-prefixed AVCC / HVCC data), has an empty NAL unit, a set
// forbidden_zero_bit or (H.265) a zero nuh_temporal_id_plus1.
AccessUnitInfo scan_access_unit(VideoCodec codec, std::span<const std::uint8_t> au);

// A decoded picture's size and colours (those the stream signals).
struct PictureInfo {
  std::uint32_t width = 0, height = 0;
  std::optional<ColorMatrix> matrix;
  std::optional<ColorRange> range;
};

// One libavcodec decoder. Access units go in with a number (their message
// index); pictures come out tagged with it, so a picture the decoder dropped
// or delayed is never shown as another frame.
class VideoDecoder {
 public:
  explicit VideoDecoder(VideoCodec codec, int threads = 0);  // 0: libavcodec's choice
  ~VideoDecoder();
  VideoDecoder(const VideoDecoder&) = delete;
  VideoDecoder& operator=(const VideoDecoder&) = delete;

  // Sends one access unit; VideoDecodeError when libavcodec refuses it.
  void send(std::span<const std::uint8_t> au, std::int64_t number);
  // No more access units: the pictures still inside come out.
  void drain();
  // The next picture: its number, or nullopt when the decoder needs input
  // (or, after drain(), has no more). VideoDecodeError when decoding failed
  // or libavcodec marked the picture corrupt.
  std::optional<std::int64_t> receive();
  // The last picture received.
  PictureInfo picture() const;
  // Whether there is one (receive() returned a number, and no receive() or reset() since).
  bool has_picture() const noexcept;
  // Copies it into an NV12 target of its size.
  void copy_nv12(const FrameWriteTarget& target) const;
  // Forgets every reference picture (before decoding from another keyframe).
  void reset();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// handoff-info's lines (name, state): each decoder, whether it is available and why not.
std::vector<std::pair<std::string, std::string>> video_decoders_report();

}  // namespace handoff::media
