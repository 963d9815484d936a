#pragma once
// One H.264 / H.265 stream encoded with FFmpeg's libavcodec (libx264 /
// libx265 on the CPU): frames of any 8-bit-convertible format in, Annex B
// access units out, one per frame, no B-frames, parameter sets with every
// keyframe (docs/recording.md "Compressed video"). Not thread-safe: one
// thread (the recording's writer thread) owns an encoder.
#include <handoff/frame.hpp>
#include <handoff/media/recording.hpp>

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace handoff::media {

struct EncodedUnit {
  std::vector<std::uint8_t> data;  // one Annex B access unit
  std::int64_t pts = 0;            // as given to encode()
  bool key = false;
};

// The colorimetry written for frames of `format`: the frame's own for YUV
// formats (samples kept), else BT.601 up to 576 rows / BT.709 above, limited range.
Colorimetry video_colorimetry(PixelFormat format, std::uint32_t height, const Colorimetry& frame);

class VideoEncoder {
 public:
  VideoEncoder(VideoCodec codec, const VideoOptions& options, PixelFormat format, std::uint32_t width,
               std::uint32_t height, const Colorimetry& colorimetry);
  ~VideoEncoder();
  VideoEncoder(const VideoEncoder&) = delete;
  VideoEncoder& operator=(const VideoEncoder&) = delete;
  // Converts `frame` (host, the encoder's format and size) and encodes it;
  // appends what the encoder returns (possibly nothing yet) to `out`.
  void encode(const Frame& frame, std::int64_t pts, bool keyframe, std::vector<EncodedUnit>& out);
  // Drains the encoder.
  void flush(std::vector<EncodedUnit>& out);
  PixelFormat format() const { return format_; }
  std::uint32_t width() const { return width_; }
  std::uint32_t height() const { return height_; }

 private:
  struct Impl;
  void receive(std::vector<EncodedUnit>& out);
  std::unique_ptr<Impl> impl_;
  PixelFormat format_;
  std::uint32_t width_, height_;
};

}  // namespace handoff::media
