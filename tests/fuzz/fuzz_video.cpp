// Fuzz target: the compressed-video access-unit path (video_decoder.hpp).
// An input is one byte choosing the codec (bit 0: 0 h264, 1 h265), then
// access units, each a little-endian u16 length and that many bytes. Each is
// scanned (scan_access_unit), sent to a one-thread libavcodec decoder tagged
// with its index, and every picture that comes out is copied into an NV12
// buffer of its size. A VideoDecodeError is an accepted outcome; a crash, a
// sanitizer report, a hang or another exception type is a bug.
#include <handoff/media/video_decoder.hpp>

#include "fuzz_common.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace {

using namespace handoff::media;

void take_pictures(VideoDecoder& d, std::vector<std::uint8_t>& buffer) {
  for (;;) {
    try {
      if (!d.receive()) return;
    } catch (const VideoDecodeError&) {
      continue;  // that picture failed; the next may not
    }
    const PictureInfo p = d.picture();
    const std::size_t pitch = p.width + (p.width & 1);
    buffer.resize(pitch * (p.height + (p.height + 1) / 2));
    d.copy_nv12({buffer.data(), pitch, buffer.data() + pitch * p.height, pitch});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  handoff::media::fuzz::quiet_log();
  if (size < 1) return 0;
  const VideoCodec codec = (data[0] & 1) ? VideoCodec::H265 : VideoCodec::H264;
  VideoDecoder decoder(codec, 1);
  std::vector<std::uint8_t> buffer;
  std::span<const std::uint8_t> rest(data + 1, size - 1);
  for (std::int64_t i = 0; rest.size() >= 2; ++i) {
    const std::size_t n = std::min<std::size_t>(rest[0] | rest[1] << 8, rest.size() - 2);
    const auto unit = rest.subspan(2, n);
    rest = rest.subspan(2 + n);
    try {
      (void)scan_access_unit(codec, unit);
    } catch (const VideoDecodeError&) {
    }
    try {
      decoder.send(unit, i);
    } catch (const VideoDecodeError&) {
    }
    take_pictures(decoder, buffer);
  }
  decoder.drain();
  take_pictures(decoder, buffer);
  decoder.reset();
  return 0;
}
