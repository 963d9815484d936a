// Compressed recordings (RecordingOptions::codec h264 / h265): what the file
// holds read back with the MCAP reader and protobuf's own parser: the
// foxglove.CompressedVideo schema and messages, Annex B, IDR keyframes with
// their parameter sets, keyframe spacing, no B-frames (H.264 slice types),
// one message per frame; overlays as for raw recordings; refused frames.
// Decoding the pixels back is the python tier's (tests/python/mcap, PyAV).
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>

#include <foxglove/CompressedVideo.pb.h>
#include <google/protobuf/descriptor.pb.h>

#include "test_util.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace handoff::media {
namespace {

using test::TempDir;

struct Nal {
  int type = 0;
  std::span<const std::uint8_t> payload;  // after the start code, header included
};

// Splits an Annex B stream at its start codes (00 00 01 / 00 00 00 01).
std::vector<Nal> split_annex_b(std::span<const std::uint8_t> b, bool h265) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i + 3 <= b.size(); ++i)
    if (b[i] == 0 && b[i + 1] == 0 && b[i + 2] == 1) starts.push_back(i + 3);
  std::vector<Nal> out;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    std::size_t end = k + 1 < starts.size() ? starts[k + 1] - 3 : b.size();
    while (end > starts[k] && b[end - 1] == 0) --end;  // the next 4-byte start code's leading zero
    Nal n;
    n.payload = b.subspan(starts[k], end - starts[k]);
    if (!n.payload.empty()) n.type = h265 ? (n.payload[0] >> 1) & 0x3F : n.payload[0] & 0x1F;
    out.push_back(n);
  }
  return out;
}

// Unsigned Exp-Golomb from `bit` on (the first bytes of a slice header hold no emulation prevention here).
std::uint32_t read_ue(std::span<const std::uint8_t> b, std::size_t& bit) {
  auto next = [&] { const int v = (b[bit / 8] >> (7 - bit % 8)) & 1; ++bit; return v; };
  int zeros = 0;
  while (next() == 0) ++zeros;
  std::uint32_t v = 0;
  for (int i = 0; i < zeros; ++i) v = (v << 1) | std::uint32_t(next());
  return (1u << zeros) - 1 + v;
}

struct Unit {
  std::uint64_t log_time = 0, publish_time = 0;
  foxglove::CompressedVideo message;
};

struct Read {
  std::string schema, schema_encoding, message_encoding;
  std::size_t channels = 0;
  std::vector<Unit> units;
  std::size_t annotation_messages = 0;
  std::map<std::string, std::string> metadata;
};

Read read_video(const std::filesystem::path& path, const std::string& topic) {
  Read r;
  auto reader = mcap::Reader::open(path);
  for (const auto& [id, ch] : reader->channels()) {
    if (ch.topic == topic + "/annotations") r.annotation_messages = reader->messages(id).size();
    if (ch.topic != topic) continue;
    ++r.channels;
    const mcap::Schema& s = reader->schemas().at(ch.schema_id);
    r.schema = s.name;
    r.schema_encoding = s.encoding;
    r.message_encoding = ch.message_encoding;
    r.metadata = {ch.metadata.begin(), ch.metadata.end()};
    google::protobuf::FileDescriptorSet set;
    EXPECT_TRUE(set.ParseFromArray(s.data.data(), int(s.data.size())));
    for (const mcap::MessageRef& ref : reader->messages(id)) {
      const mcap::MessageView v = reader->read(ref);
      Unit u;
      u.log_time = v.log_time;
      u.publish_time = v.publish_time;
      EXPECT_TRUE(u.message.ParseFromArray(v.data.data(), int(v.data.size())));
      r.units.push_back(std::move(u));
    }
  }
  return r;
}

Frame pattern_frame(PixelFormat f, std::uint32_t w, std::uint32_t h, std::uint32_t seed) {
  Frame frame = allocate_host_frame(f, w, h);
  fill_test_pattern(frame, seed);
  return frame;
}

constexpr std::uint64_t kFrameNs = 33'333'333;  // 30 fps

class VideoRecording : public ::testing::TestWithParam<VideoCodec> {};

TEST_P(VideoRecording, AnnexBKeyframesWithParameterSetsNoBFrames) {
  const VideoCodec codec = GetParam();
  const bool h265 = codec == VideoCodec::H265;
  TempDir dir;
  RecordingOptions o;
  o.codec = codec;
  o.block_when_full = true;
  constexpr int kFrames = 75;  // 2.5 s
  {
    RecordingWriter w(dir / "v.mcap", o);
    for (int i = 0; i < kFrames; ++i) {
      OverlayFrame overlays;
      if (i % 10 == 0) overlays.add_box(4, 4, 40, 30, "car");
      const std::uint64_t t = 1'000'000'000 + std::uint64_t(i) * kFrameNs;
      ASSERT_TRUE(w.write(pattern_frame(PixelFormat::NV12, 160, 96, std::uint32_t(i * 3)), overlays, "/cam", t,
                          t + 7));
    }
    w.close();
    EXPECT_EQ(w.stats().frames_written, std::uint64_t(kFrames));
  }
  const Read r = read_video(dir / "v.mcap", "/cam");
  EXPECT_EQ(r.channels, 1u);
  EXPECT_EQ(r.schema, "foxglove.CompressedVideo");
  EXPECT_EQ(r.schema_encoding, "protobuf");
  EXPECT_EQ(r.message_encoding, "protobuf");
  EXPECT_EQ(r.metadata.at("handoff.color_matrix"), "bt709");
  EXPECT_EQ(r.annotation_messages, 8u);
  ASSERT_EQ(r.units.size(), std::size_t(kFrames));  // one access unit per frame

  std::vector<std::uint64_t> keyframes;
  for (std::size_t i = 0; i < r.units.size(); ++i) {
    SCOPED_TRACE("message " + std::to_string(i));
    const Unit& u = r.units[i];
    EXPECT_EQ(u.message.format(), h265 ? "h265" : "h264");
    EXPECT_EQ(u.log_time, 1'000'000'000 + i * kFrameNs);  // in order, each frame's own times
    EXPECT_EQ(u.publish_time, u.log_time + 7);
    const std::uint64_t stamp = std::uint64_t(u.message.timestamp().seconds()) * 1'000'000'000u +
                                std::uint64_t(u.message.timestamp().nanos());
    EXPECT_EQ(stamp, u.publish_time);
    const auto data = std::span(reinterpret_cast<const std::uint8_t*>(u.message.data().data()), u.message.data().size());
    ASSERT_GE(data.size(), 4u);
    EXPECT_TRUE((data[0] == 0 && data[1] == 0 && data[2] == 1) ||
                (data[0] == 0 && data[1] == 0 && data[2] == 0 && data[3] == 1));  // Annex B
    bool idr = false, sps = false, pps = false, vps = false;
    int pictures = 0;
    for (const Nal& n : split_annex_b(data, h265)) {
      if (h265) {
        vps |= n.type == 32;
        sps |= n.type == 33;
        pps |= n.type == 34;
        idr |= n.type == 19 || n.type == 20;
        EXPECT_NE(n.type, 21) << "a CRA (open GOP) picture";
        if (n.type <= 21 && (n.payload[2] & 0x80)) ++pictures;  // first_slice_segment_in_pic_flag
      } else {
        sps |= n.type == 7;
        pps |= n.type == 8;
        idr |= n.type == 5;
        if (n.type == 1 || n.type == 5) {
          std::size_t bit = 8;
          const std::uint32_t first_mb = read_ue(n.payload, bit);
          const std::uint32_t slice_type = read_ue(n.payload, bit) % 5;
          EXPECT_NE(slice_type, 1u) << "a B slice";
          if (first_mb == 0) ++pictures;
        }
      }
    }
    EXPECT_EQ(pictures, 1);  // one access unit: one picture
    if (idr) {
      keyframes.push_back(u.log_time);
      EXPECT_TRUE(sps && pps && (vps || !h265)) << "a keyframe without its parameter sets";
    } else {
      EXPECT_FALSE(sps || pps || vps);
    }
  }
  ASSERT_GE(keyframes.size(), 3u);
  EXPECT_EQ(keyframes.front(), r.units.front().log_time);  // the stream starts with one
  for (std::size_t k = 1; k < keyframes.size(); ++k)
    EXPECT_LE(keyframes[k] - keyframes[k - 1], o.video.keyframe_interval_ns + kFrameNs);
  const std::uint64_t end = r.units.back().log_time;
  EXPECT_LE(end - keyframes.back(), o.video.keyframe_interval_ns + kFrameNs);
}

TEST_P(VideoRecording, EveryConvertibleFormatEncodes) {
  TempDir dir;
  RecordingOptions o;
  o.codec = GetParam();
  o.block_when_full = true;
  for (PixelFormat f : kPixelFormats) {
    if (f == PixelFormat::GRAY32F) continue;
    SCOPED_TRACE(std::string(to_string(f)));
    const auto path = dir / (std::string(to_string(f)) + ".mcap");
    {
      RecordingWriter w(path, o);
      for (int i = 0; i < 3; ++i) ASSERT_TRUE(w.write(pattern_frame(f, 64, 48, std::uint32_t(i)), {}, "/c", std::uint64_t(i) * kFrameNs));
      w.close();
    }
    const Read r = read_video(path, "/c");
    EXPECT_EQ(r.units.size(), 3u);
    // RGB / gray are converted with the default the readers assume (BT.601 at 48 rows, limited).
    if (!is_yuv(f)) {
      EXPECT_EQ(r.metadata.at("handoff.color_matrix"), "bt601");
    }
  }
}

TEST_P(VideoRecording, FramesItCannotEncodeAreRefusedByName) {
  TempDir dir;
  RecordingOptions o;
  o.codec = GetParam();
  RecordingWriter w(dir / "bad.mcap", o);
  try {
    w.write(pattern_frame(PixelFormat::NV12, 65, 48, 0), {}, "/c", 0);
    FAIL() << "an odd width was taken";
  } catch (const InvalidFrame& e) {
    EXPECT_NE(std::string(e.what()).find("even width and height"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("65x48"), std::string::npos) << e.what();
  }
  try {
    w.write(pattern_frame(PixelFormat::GRAY32F, 64, 48, 0), {}, "/c", 0);
    FAIL() << "gray32f was taken";
  } catch (const InvalidFrame& e) {
    EXPECT_NE(std::string(e.what()).find("gray32f"), std::string::npos) << e.what();
  }
  w.close();
  EXPECT_EQ(w.stats().frames_written, 0u);
}

// A topic holds one format and size (readers refuse the others): a frame of
// another size is refused, naming both, and nothing of it is written; the
// frames before it stay whole, and another topic may take the new size.
TEST_P(VideoRecording, ASizeChangeIsRefusedNamingBoth) {
  TempDir dir;
  RecordingOptions o;
  o.codec = GetParam();
  o.block_when_full = true;
  {
    RecordingWriter w(dir / "s.mcap", o);
    for (int i = 0; i < 4; ++i) w.write(pattern_frame(PixelFormat::NV12, 64, 48, 1), {}, "/c", std::uint64_t(i) * kFrameNs);
    const auto refused = [&] {
      try {
        w.write(pattern_frame(PixelFormat::NV12, 96, 64, 1), {}, "/c", 4 * kFrameNs);
      } catch (const InvalidFrame& e) {
        return std::string(e.what());
      }
      return std::string("(written)");
    }();
    EXPECT_NE(refused.find("/c holds nv12 64x48 frames (its first frame's); this one is nv12 96x64"), std::string::npos)
        << refused;
    w.write(pattern_frame(PixelFormat::NV12, 96, 64, 1), {}, "/d", 4 * kFrameNs);
    w.close();
  }
  EXPECT_EQ(read_video(dir / "s.mcap", "/c").units.size(), 4u);
  EXPECT_EQ(read_video(dir / "s.mcap", "/d").units.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Codecs, VideoRecording, ::testing::Values(VideoCodec::H264, VideoCodec::H265),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(VideoCodecNames, ParseAndRefuse) {
  EXPECT_EQ(parse_video_codec("h264"), VideoCodec::H264);
  EXPECT_EQ(parse_video_codec("h265"), VideoCodec::H265);
  EXPECT_EQ(parse_video_codec("raw"), VideoCodec::Raw);
  try {
    parse_video_codec("vp9");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("\"vp9\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("h264, h265 or raw"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace handoff::media
