#pragma once
// Test streams for the compressed-video path: a moving pattern encoded with
// libavcodec's libx264 / libx265 (Annex B, no B-frames, a keyframe with its
// parameter sets every `gop` frames), written as foxglove.CompressedVideo into
// an MCAP with a FileDescriptorSet built here from the Foxglove field list.
#include <handoff/media/mcap.hpp>
#include <handoff/media/recording.hpp>

#include <gtest/gtest.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/opt.h>
}

#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/timestamp.pb.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace handoff::media::test {

using AccessUnit = std::vector<std::uint8_t>;

// The pattern's luma and chroma at (x, y) of frame `i`: smooth ramps that
// move 3 codes a frame, so neighbouring frames differ everywhere.
inline std::uint8_t pattern_y(std::uint32_t x, std::uint32_t y, int i) {
  return std::uint8_t(40 + (x + y / 2 + std::uint32_t(3 * i)) % 160);
}
inline std::uint8_t pattern_u(std::uint32_t x, std::uint32_t y, int i) { return std::uint8_t(90 + (x + 2 * y + std::uint32_t(i)) % 60); }
inline std::uint8_t pattern_v(std::uint32_t x, std::uint32_t y, int i) { return std::uint8_t(150 - (2 * x + y) % 50); }

// One NV12 frame read from a source (w x h, packed rows).
struct Decoded {
  std::vector<std::uint8_t> luma, chroma;
};

inline Decoded read_nv12(RecordingSource& src, int w, int h) {
  Decoded d;
  d.luma.resize(std::size_t(w) * h);
  d.chroma.resize(std::size_t(w) * h / 2);
  FrameWriteTarget t{d.luma.data(), std::size_t(w), d.chroma.data(), std::size_t(w)};
  EXPECT_TRUE(src.read_into(t));
  return d;
}

// Largest difference from frame `i` of the pattern, over luma and chroma.
inline int pattern_error(const Decoded& d, int i, int w, int h) {
  int worst = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) worst = std::max(worst, std::abs(d.luma[y * w + x] - pattern_y(x, y, i)));
  for (int y = 0; y < h / 2; ++y)
    for (int x = 0; x < w / 2; ++x) {
      worst = std::max(worst, std::abs(d.chroma[y * w + 2 * x] - pattern_u(x, y, i)));
      worst = std::max(worst, std::abs(d.chroma[y * w + 2 * x + 1] - pattern_v(x, y, i)));
    }
  return worst;
}

// The next frame read is pattern frame `i` of `n`: within 12 codes of it,
// and further from its neighbours (so a frame off by one would be caught).
inline void expect_pattern_frame(RecordingSource& src, int i, int w, int h, int n) {
  SCOPED_TRACE("frame " + std::to_string(i));
  EXPECT_EQ(src.position(), i);
  const Decoded d = read_nv12(src, w, h);
  const int e = pattern_error(d, i, w, h);
  EXPECT_LE(e, 12);
  if (i > 0) {
    EXPECT_GT(pattern_error(d, i - 1, w, h), e);
  }
  if (i + 1 < n) {
    EXPECT_GT(pattern_error(d, i + 1, w, h), e);
  }
}

inline void check_av(int r, const char* what) {
  if (r < 0) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(r));
}

// `n` frames of `w`x`h` encoded with libx264 ("h264") or libx265 ("h265"), one access unit each.
inline std::vector<AccessUnit> encode_pattern(const std::string& format, int n, int gop, int w, int h) {
  const AVCodec* c = avcodec_find_encoder_by_name(format == "h264" ? "libx264" : "libx265");
  if (!c) throw std::runtime_error("libavcodec has no encoder for " + format);
  AVCodecContext* ctx = avcodec_alloc_context3(c);
  ctx->width = w;
  ctx->height = h;
  ctx->pix_fmt = AV_PIX_FMT_YUV420P;
  ctx->time_base = {1, 30};
  ctx->gop_size = gop;
  ctx->max_b_frames = 0;
  const std::string k = std::to_string(gop);
  if (format == "h264") {
    av_opt_set(ctx->priv_data, "x264-params", ("keyint=" + k + ":min-keyint=" + k + ":scenecut=0:bframes=0:qp=12").c_str(), 0);
  } else {
    av_opt_set(ctx->priv_data, "x265-params",
               ("keyint=" + k + ":min-keyint=" + k + ":scenecut=0:bframes=0:open-gop=0:qp=12:log-level=none").c_str(), 0);
  }
  check_av(avcodec_open2(ctx, c, nullptr), "avcodec_open2");
  AVFrame* f = av_frame_alloc();
  f->format = AV_PIX_FMT_YUV420P;
  f->width = w;
  f->height = h;
  check_av(av_frame_get_buffer(f, 0), "av_frame_get_buffer");
  AVPacket* p = av_packet_alloc();
  std::vector<AccessUnit> out;
  auto collect = [&] {
    while (avcodec_receive_packet(ctx, p) == 0) {
      out.emplace_back(p->data, p->data + p->size);
      av_packet_unref(p);
    }
  };
  for (int i = 0; i < n; ++i) {
    check_av(av_frame_make_writable(f), "av_frame_make_writable");
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) f->data[0][y * f->linesize[0] + x] = pattern_y(x, y, i);
    for (int y = 0; y < h / 2; ++y)
      for (int x = 0; x < w / 2; ++x) {
        f->data[1][y * f->linesize[1] + x] = pattern_u(x, y, i);
        f->data[2][y * f->linesize[2] + x] = pattern_v(x, y, i);
      }
    f->pts = i;
    check_av(avcodec_send_frame(ctx, f), "avcodec_send_frame");
    collect();
  }
  check_av(avcodec_send_frame(ctx, nullptr), "avcodec_send_frame (drain)");
  collect();
  av_packet_free(&p);
  av_frame_free(&f);
  avcodec_free_context(&ctx);
  if (int(out.size()) != n) throw std::runtime_error("the encoder gave " + std::to_string(out.size()) + " packets");
  return out;
}

// foxglove.CompressedVideo's FileDescriptorSet, with google/protobuf/timestamp.proto.
inline std::string compressed_video_descriptor_set() {
  google::protobuf::FileDescriptorSet set;
  google::protobuf::Timestamp::descriptor()->file()->CopyTo(set.add_file());
  auto* file = set.add_file();
  file->set_name("foxglove/CompressedVideo.proto");
  file->set_package("foxglove");
  file->set_syntax("proto3");
  file->add_dependency("google/protobuf/timestamp.proto");
  auto* m = file->add_message_type();
  m->set_name("CompressedVideo");
  using F = google::protobuf::FieldDescriptorProto;
  auto field = [&](const char* name, int number, F::Type type) {
    auto* f = m->add_field();
    f->set_name(name);
    f->set_number(number);
    f->set_type(type);
    f->set_label(F::LABEL_OPTIONAL);
    if (type == F::TYPE_MESSAGE) f->set_type_name(".google.protobuf.Timestamp");
  };
  field("timestamp", 1, F::TYPE_MESSAGE);
  field("frame_id", 2, F::TYPE_STRING);
  field("data", 3, F::TYPE_BYTES);
  field("format", 4, F::TYPE_STRING);
  return set.SerializeAsString();
}

inline std::vector<std::uint8_t> compressed_video_message(std::uint64_t timestamp_ns, const AccessUnit& au,
                                                          const std::string& format) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream s(&out);
    google::protobuf::io::CodedOutputStream o(&s);
    google::protobuf::Timestamp ts;
    ts.set_seconds(std::int64_t(timestamp_ns / 1'000'000'000u));
    ts.set_nanos(std::int32_t(timestamp_ns % 1'000'000'000u));
    const std::string t = ts.SerializeAsString();
    o.WriteTag(1 << 3 | 2);
    o.WriteVarint32(std::uint32_t(t.size()));
    o.WriteString(t);
    o.WriteTag(2 << 3 | 2);
    o.WriteVarint32(3);
    o.WriteString("cam");
    o.WriteTag(3 << 3 | 2);
    o.WriteVarint32(std::uint32_t(au.size()));
    o.WriteRaw(au.data(), int(au.size()));
    o.WriteTag(4 << 3 | 2);
    o.WriteVarint32(std::uint32_t(format.size()));
    o.WriteString(format);
  }
  return {out.begin(), out.end()};
}

// Writes `aus` on topic `topic` at 30 fps; `formats` per message (else `format`).
inline void write_video_mcap(const std::filesystem::path& path, const std::vector<AccessUnit>& aus,
                             const std::string& format, const std::string& topic = "/cam") {
  mcap::Writer w(path);
  const std::string desc = compressed_video_descriptor_set();
  const auto s = w.add_schema("foxglove.CompressedVideo", "protobuf",
                              std::span(reinterpret_cast<const std::uint8_t*>(desc.data()), desc.size()));
  const auto ch = w.add_channel(s, topic, "protobuf");
  for (std::size_t i = 0; i < aus.size(); ++i) {
    const std::uint64_t t = 1'000'000'000u + i * 33'333'333u;
    w.write(ch, std::uint32_t(i), t, t, compressed_video_message(t, aus[i], format));
  }
  w.close();
}

}  // namespace handoff::media::test
