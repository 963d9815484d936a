// Recordings: frames (every format, odd sizes, padded pitches, colorimetry)
// and overlays (every kind) through RawImage / ImageAnnotations and back;
// the published schemas decoding handoff's bytes; other writers' annotations
// mapped onto the overlay model; topics; the writer thread's bounded queue,
// drops, waits and I/O errors.
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/log.hpp>
#include <handoff/wait.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>

#include <foxglove/ImageAnnotations.pb.h>
#include <foxglove/RawImage.pb.h>

#include "cut_chunk_oracle.hpp"
#include "log_capture.hpp"
#include "recording_test_util.hpp"
#include "test_util.hpp"
#include "wait_support.hpp"

#include <gmock/gmock.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <future>
#include <mutex>
#include <optional>

namespace handoff::media {
namespace {

using test::message_of;
using test::TempDir;
using ::testing::HasSubstr;

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

MessagePlace here() {
  return {"t.mcap", [] { return std::string("message"); }};
}

// --- Messages ----------------------------------------------------------------------

TEST(RecordingMessages, RawImageMatchesThePublishedSchema) {
  const Frame f = test::pattern_frame(PixelFormat::NV12, 6, 4, 3);
  std::vector<std::uint8_t> bytes;
  encode_raw_image(f, 1'700'000'000'123'456'789ull, bytes);
  foxglove::RawImage m;
  ASSERT_TRUE(m.ParseFromArray(bytes.data(), int(bytes.size())));
  EXPECT_EQ(m.width(), 6u);
  EXPECT_EQ(m.height(), 4u);
  EXPECT_EQ(m.encoding(), "nv12");
  EXPECT_EQ(m.step(), 6u);
  EXPECT_EQ(m.timestamp().seconds(), 1'700'000'000);
  EXPECT_EQ(m.timestamp().nanos(), 123'456'789);
  ASSERT_EQ(m.data().size(), 6u * (4 + 2));
  // Row y of luma is the frame's row y (its pitch of 64 is gone).
  const auto* luma = static_cast<const std::uint8_t*>(f.luma().data);
  EXPECT_EQ(std::memcmp(m.data().data() + 6 * 3, luma + 3 * f.luma().pitch, 6), 0);
  // And back through the reader's parser, without copying.
  const RawImageView v = parse_raw_image(bytes, here());
  EXPECT_EQ(v.width, 6u);
  EXPECT_EQ(v.encoding, "nv12");
  EXPECT_TRUE(v.has_timestamp);
  EXPECT_EQ(v.timestamp_ns, 1'700'000'000'123'456'789ull);
  EXPECT_EQ(v.data.data(), bytes.data() + (bytes.size() - v.data.size()));
}

TEST(RecordingMessages, ParsesRawImageFromOtherWriters) {
  // Fields in another order, an extra frame_id, data first: the parser takes the wire format as it comes.
  foxglove::RawImage m;
  m.set_frame_id("camera");
  m.set_data(std::string(4 * 3 * 2, '\x7f'));
  m.set_step(4);
  m.set_encoding("nv12");
  m.set_height(4);
  m.set_width(4);
  const std::string s = m.SerializeAsString();
  const RawImageView v = parse_raw_image(bytes_of(s), here());
  EXPECT_EQ(v.width, 4u);
  EXPECT_EQ(v.height, 4u);
  EXPECT_EQ(v.step, 4u);
  EXPECT_FALSE(v.has_timestamp);
  EXPECT_EQ(v.data.size(), 24u);
  EXPECT_THAT(message_of<ParseError>([&] { parse_raw_image(bytes_of(s.substr(0, s.size() - 3)), here()); }),
              HasSubstr("t.mcap: message: RawImage:"));
}

TEST(RecordingMessages, OddSizedFramesRoundTrip) {
  for (PixelFormat fmt : {PixelFormat::NV12, PixelFormat::P010}) {
    const Frame f = test::pattern_frame(fmt, 5, 3, 11);
    std::vector<std::uint8_t> bytes;
    encode_raw_image(f, 0, bytes);
    const RawImageView v = parse_raw_image(bytes, here());
    EXPECT_EQ(v.step, 6u * bytes_per_sample(fmt));  // the chroma row: 3 UV pairs
    HostFrame out(fmt, 5, 3, 32);
    copy_raw_image(v, fmt, 5, 3, out.target(), here());
    EXPECT_TRUE(test::has_pattern(out, 11)) << to_string(fmt);
  }
}

TEST(RecordingMessages, OverlaysRoundTrip) {
  const OverlayFrame in = test::rich_overlays();
  std::string bytes;
  encode_annotations(in, 42, bytes);
  OverlayFrame out;
  out.frame = 9;
  decode_annotations(bytes_of(bytes), out, here());
  EXPECT_EQ(out.frame, 9);
  EXPECT_TRUE(test::same_overlays(in, out));
}

// A label that is not UTF-8 (a C++ caller's Latin-1 bytes, a ROS class id)
// is written as valid UTF-8, its bad byte U+FFFD: a proto3 string must be
// UTF-8, and a message with one that is not is refused whole by readers.
TEST(RecordingMessages, LabelsThatAreNotUtf8AreWrittenReadably) {
  OverlayFrame in;
  const std::uint32_t i = in.add_box(1, 2, 30, 40);
  in.objects[i].label = in.add_text("caf\xE9 \xFF");
  std::string bytes;
  encode_annotations(in, 42, bytes);
  OverlayFrame out;
  decode_annotations(bytes_of(bytes), out, here());
  ASSERT_EQ(out.objects.size(), 1u);
  EXPECT_EQ(out.text(out.objects[0].label), "caf\xEF\xBF\xBD \xEF\xBF\xBD");
}

TEST(RecordingMessages, AnnotationsAsFoxgloveSeesThem) {
  OverlayFrame in;
  in.add_box(10, 20, 110, 80, "car", 0.5f, 2, 17);
  in.add_label_text(5, 6, "hi");
  std::string bytes;
  encode_annotations(in, 2'000'000'001ull, bytes);
  foxglove::ImageAnnotations m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  EXPECT_EQ(m.timestamp().seconds(), 2);
  EXPECT_EQ(m.timestamp().nanos(), 1);
  ASSERT_EQ(m.points_size(), 1);
  const auto& box = m.points(0);
  EXPECT_EQ(box.type(), foxglove::PointsAnnotation::LINE_LOOP);
  ASSERT_EQ(box.points_size(), 4);
  EXPECT_EQ(box.points(2).x(), 110);
  EXPECT_EQ(box.points(2).y(), 80);
  EXPECT_EQ(box.timestamp().seconds(), 2);
  std::map<std::string, std::string> meta;
  for (const auto& kv : box.metadata()) meta[kv.key()] = kv.value();
  EXPECT_EQ(meta["handoff.kind"], "box");
  EXPECT_EQ(meta["handoff.score"], "0.5");
  EXPECT_EQ(meta["handoff.class_id"], "2");
  EXPECT_EQ(meta["handoff.track_id"], "17");
  // The label sits on the box's top edge; the free text's top-left corner becomes Foxglove's bottom-left origin.
  ASSERT_EQ(m.texts_size(), 2);
  EXPECT_EQ(m.texts(0).text(), "car");
  EXPECT_EQ(m.texts(0).position().y(), 20);
  EXPECT_EQ(m.texts(1).text(), "hi");
  EXPECT_EQ(m.texts(1).position().y(), 6 + m.texts(1).font_size());
}

TEST(RecordingMessages, OtherWritersAnnotationsAreMapped) {
  foxglove::ImageAnnotations m;
  auto add = [&](foxglove::PointsAnnotation::Type t, std::vector<std::pair<double, double>> pts) {
    auto* a = m.add_points();
    a->set_type(t);
    for (auto [x, y] : pts) {
      auto* p = a->add_points();
      p->set_x(x);
      p->set_y(y);
    }
    a->mutable_outline_color()->set_r(1);
    a->mutable_outline_color()->set_a(1);
    return a;
  };
  add(foxglove::PointsAnnotation::LINE_LOOP, {{1, 2}, {1, 9}, {7, 9}, {7, 2}});           // a box
  add(foxglove::PointsAnnotation::LINE_LOOP, {{0, 0}, {4, 0}, {2, 3}});                     // a polygon
  add(foxglove::PointsAnnotation::LINE_STRIP, {{0, 0}, {1, 1}, {2, 0}});                    // a polyline
  add(foxglove::PointsAnnotation::POINTS, {{3, 3}, {4, 4}});                                // keypoints
  add(foxglove::PointsAnnotation::LINE_LIST, {{0, 0}, {1, 0}, {2, 2}, {3, 3}});             // a skeleton
  add(foxglove::PointsAnnotation::LINE_STRIP, {{0, 0}, {NAN, 1}});                          // skipped
  auto* c = m.add_circles();
  c->mutable_position()->set_x(50);
  c->mutable_position()->set_y(60);
  c->set_diameter(20);
  auto* t = m.add_texts();
  t->mutable_position()->set_x(10);
  t->mutable_position()->set_y(40);
  t->set_font_size(12);
  t->set_text("plate");
  const std::string s = m.SerializeAsString();
  OverlayFrame out;
  decode_annotations(bytes_of(s), out, here());
  ASSERT_EQ(out.objects.size(), 3u);
  const OverlayObject& box = out.objects[0];
  EXPECT_TRUE(box.has_box);
  EXPECT_EQ(box.x0, 1);
  EXPECT_EQ(box.y0, 2);
  EXPECT_EQ(box.x1, 7);
  EXPECT_EQ(box.y1, 9);
  EXPECT_TRUE(box.has_color);
  EXPECT_EQ(box.color, (Color8{255, 0, 0, 255}));
  EXPECT_EQ(out.objects[1].keypoint_count, 2u);
  EXPECT_FALSE(out.objects[1].has_box);
  EXPECT_EQ(out.objects[2].keypoint_count, 4u);
  ASSERT_EQ(out.objects[2].edge_count, 2u);
  EXPECT_EQ(out.edges[out.objects[2].edge_first + 1], (std::array<std::uint32_t, 2>{2, 3}));
  ASSERT_EQ(out.shapes.size(), 3u);  // polygon, polyline, circle
  EXPECT_TRUE(out.shapes[0].closed);
  EXPECT_FALSE(out.shapes[1].closed);
  EXPECT_TRUE(out.shapes[2].closed);
  EXPECT_EQ(out.shapes[2].point_count, 32u);
  EXPECT_NEAR(out.points[out.shapes[2].point_first].x, 60, 1e-4);  // centre + radius
  ASSERT_EQ(out.texts.size(), 1u);
  EXPECT_EQ(out.text(out.texts[0].text), "plate");
  EXPECT_EQ(out.texts[0].y, 28);  // baseline 40 - font size 12 = top
  EXPECT_THAT(message_of<ParseError>([&] { decode_annotations(bytes_of("\xff\xff"), out, here()); }),
              HasSubstr("ImageAnnotations: not a valid foxglove.ImageAnnotations message"));
}

TEST(RecordingMessages, AnnotationsTimestampIsTheMessagesElseTheFirstAnnotations) {
  foxglove::ImageAnnotations m;
  auto text = [](foxglove::ImageAnnotations& msg) { return msg.add_texts(); };
  text(m)->set_text("no timestamp");
  auto ts = [](const foxglove::ImageAnnotations& msg) { return annotations_timestamp(bytes_of(msg.SerializeAsString()), here()); };
  EXPECT_EQ(ts(m), std::nullopt);
  auto* p = m.add_points();
  p->mutable_timestamp()->set_seconds(3);
  p->mutable_timestamp()->set_nanos(7);
  text(m)->mutable_timestamp()->set_seconds(9);
  EXPECT_EQ(ts(m), 3'000'000'007u);  // the first annotation with one: circles, points, texts
  m.mutable_timestamp()->set_seconds(5);
  EXPECT_EQ(ts(m), 5'000'000'000u);  // the message's own wins
  EXPECT_THAT(message_of<ParseError>([&] { annotations_timestamp(bytes_of("\xff\xff"), here()); }),
              HasSubstr("ImageAnnotations: not a valid foxglove.ImageAnnotations message"));
}

TEST(RecordingMessages, ColorimetryMetadata) {
  const Colorimetry c{ColorMatrix::BT2020, ColorRange::Full, ChromaSiting::TopLeft};
  EXPECT_EQ(colorimetry_from_metadata(colorimetry_metadata(c), 1080), c);
  EXPECT_EQ(colorimetry_from_metadata({}, 480), (Colorimetry{ColorMatrix::BT601, ColorRange::Limited, ChromaSiting::Left}));
  EXPECT_EQ(colorimetry_from_metadata({{"handoff.color_matrix", "nonsense"}}, 1080).matrix, ColorMatrix::BT709);
}

// --- Files ----------------------------------------------------------------------------

// --- Issue 23: every format --------------------------------------------------------

// The encoding each format is recorded with (issue 23's table).
const std::pair<PixelFormat, const char*> kWrittenAs[] = {
    {PixelFormat::NV12, "nv12"},   {PixelFormat::P010, "p010"},    {PixelFormat::I420, "nv12"},
    {PixelFormat::YUYV, "yuyv"},   {PixelFormat::UYVY, "uyvy"},    {PixelFormat::RGB8, "rgb8"},
    {PixelFormat::BGR8, "bgr8"},   {PixelFormat::RGBA8, "rgba8"},  {PixelFormat::BGRA8, "bgra8"},
    {PixelFormat::GRAY8, "mono8"}, {PixelFormat::GRAY16, "mono16"}, {PixelFormat::GRAY32F, "32FC1"},
};

// Row y of plane p of a host frame.
const std::uint8_t* row_of(const Frame& f, int p, std::uint32_t y) {
  return static_cast<const std::uint8_t*>(f.planes[p].data) + std::size_t(y) * f.planes[p].pitch;
}

// Does `got` (read back) hold `want`'s samples? i420 comes back as nv12: its
// U and V interleaved.
::testing::AssertionResult same_samples(const HostFrame& got, const Frame& want) {
  const Frame g = got.frame();
  if (want.format == PixelFormat::I420) {
    if (g.format != PixelFormat::NV12) return ::testing::AssertionFailure() << "i420 read back as " << to_string(g.format);
    for (std::uint32_t y = 0; y < want.height; ++y)
      if (std::memcmp(row_of(g, 0, y), row_of(want, 0, y), want.width) != 0)
        return ::testing::AssertionFailure() << "luma row " << y;
    for (std::uint32_t y = 0; y < chroma_height(want.height); ++y)
      for (std::uint32_t x = 0; x < chroma_width(want.width); ++x)
        if (row_of(g, 1, y)[2 * x] != row_of(want, 1, y)[x] || row_of(g, 1, y)[2 * x + 1] != row_of(want, 2, y)[x])
          return ::testing::AssertionFailure() << "chroma " << x << "," << y;
    return ::testing::AssertionSuccess();
  }
  if (g.format != want.format) return ::testing::AssertionFailure() << "read back as " << to_string(g.format);
  for (int p = 0; p < plane_count(want.format); ++p) {
    const PlaneLayout l = plane_layout(want.format, want.width, want.height, p);
    for (std::uint32_t y = 0; y < l.height; ++y)
      if (std::memcmp(row_of(g, p, y), row_of(want, p, y), l.row_bytes) != 0)
        return ::testing::AssertionFailure() << "plane " << p << " row " << y;
  }
  return ::testing::AssertionSuccess();
}

TEST(RecordingMessages, EveryFormatIsWrittenWithItsEncodingAndReadBack) {
  for (auto [fmt, encoding] : kWrittenAs) {
    const Frame f = test::pattern_frame(fmt, 5, 3, 9);  // odd: a 4:2:2 row ends in a one-pixel pair
    std::vector<std::uint8_t> bytes;
    encode_raw_image(f, 0, bytes);
    foxglove::RawImage m;
    ASSERT_TRUE(m.ParseFromArray(bytes.data(), int(bytes.size()))) << to_string(fmt);
    EXPECT_EQ(m.encoding(), encoding);
    EXPECT_EQ(raw_image_encoding(fmt), encoding);
    const PixelFormat read_as = fmt == PixelFormat::I420 ? PixelFormat::NV12 : fmt;
    EXPECT_EQ(raw_image_format(encoding), read_as) << encoding;
    if (plane_count(read_as) == 1) {
      const std::size_t row = plane_layout(fmt, 5, 3, 0).row_bytes;
      EXPECT_EQ(m.step(), row) << encoding;
      ASSERT_EQ(m.data().size(), row * 3) << encoding;
      EXPECT_EQ(std::memcmp(m.data().data() + row * 2, row_of(f, 0, 2), row), 0) << encoding;
    }
    const RawImageView v = parse_raw_image(bytes, here());
    HostFrame out(read_as, 5, 3, 32);
    copy_raw_image(v, read_as, 5, 3, out.target(), here());
    EXPECT_TRUE(same_samples(out, f)) << to_string(fmt);
  }
}

// Images as Foxglove's other writers make them: every encoding handoff reads
// (aliases too), rows padded past the packed row, read from a recording.
TEST(Recording, ForeignImagesOfEveryEncodingWithPaddedRows) {
  const std::pair<const char*, PixelFormat> encodings[] = {
      {"rgb8", PixelFormat::RGB8},   {"bgr8", PixelFormat::BGR8},     {"rgba8", PixelFormat::RGBA8},
      {"bgra8", PixelFormat::BGRA8}, {"mono8", PixelFormat::GRAY8},   {"8UC1", PixelFormat::GRAY8},
      {"mono16", PixelFormat::GRAY16}, {"16UC1", PixelFormat::GRAY16}, {"32FC1", PixelFormat::GRAY32F},
      {"yuyv", PixelFormat::YUYV},   {"yuv422_yuy2", PixelFormat::YUYV}, {"uyvy", PixelFormat::UYVY},
      {"yuv422", PixelFormat::UYVY}, {"nv12", PixelFormat::NV12}};
  TempDir dir;
  for (auto [encoding, fmt] : encodings) {
    const std::uint32_t w = 6, h = 4;
    const Frame want = test::pattern_frame(fmt, w, h, 21);
    const std::size_t row = plane_layout(fmt, w, h, 0).row_bytes;
    const std::size_t step = std::max(row, fmt == PixelFormat::NV12 ? std::size_t(w) : 0) + 7;  // padding
    std::string data;
    for (std::uint32_t y = 0; y < h; ++y)
      data += std::string(reinterpret_cast<const char*>(row_of(want, 0, y)), row) + std::string(step - row, '\xee');
    if (fmt == PixelFormat::NV12)
      for (std::uint32_t y = 0; y < chroma_height(h); ++y)
        data += std::string(reinterpret_cast<const char*>(row_of(want, 1, y)), w) + std::string(step - w, '\xee');
    foxglove::RawImage m;
    m.set_width(w);
    m.set_height(h);
    m.set_encoding(encoding);
    m.set_step(std::uint32_t(step));
    m.set_data(data);
    const std::string msg = m.SerializeAsString();
    const auto path = dir / (std::string(encoding) + ".mcap");
    {
      mcap::Writer wr(path);
      const auto ch = wr.add_channel(wr.add_schema(kRawImageSchema, "protobuf", raw_image_descriptor_set()), "/c", "protobuf");
      wr.write(ch, 0, 1, 1, bytes_of(msg));
      wr.close();
    }
    auto src = open_recording(path);
    EXPECT_EQ(src->info().format, fmt) << encoding;
    HostFrame out(fmt, w, h, 16);
    ASSERT_TRUE(src->read_into(out.target())) << encoding;
    EXPECT_TRUE(same_samples(out, want)) << encoding;
  }
}

// --list judges a topic by the checks opening it makes of its first image
// (its size, step and data too, not only its encoding): a topic listed as an
// image opens, one that does not is not shown, with opening's error.
TEST(Recording, ListingRefusesAFirstImageThatDoesNotOpen) {
  TempDir dir;
  struct Bad {
    std::uint32_t width, height, step, data;
    const char* why;
  };
  for (const Bad& b : {Bad{0, 4, 0, 0, "RawImage.width: width is 0"},
                       Bad{70000, 1, 70000, 70000, "RawImage.width: width 70000 exceeds the maximum 32768"},
                       Bad{8, 8, 4, 64, "RawImage.step: 4 is below the 8-byte rows of a mono8 image 8 wide"},
                       Bad{8, 8, 8, 10, "RawImage.data: 10 bytes, shorter than step * height = 8 * 8 = 64"},
                       Bad{8, 8, 8, 64, nullptr}}) {
    foxglove::RawImage m;
    m.set_width(b.width);
    m.set_height(b.height);
    m.set_encoding("mono8");
    m.set_step(b.step);
    m.set_data(std::string(b.data, '\x05'));
    const std::string msg = m.SerializeAsString();
    const auto path = dir / "bad.mcap";
    {
      mcap::Writer wr(path);
      const auto ch = wr.add_channel(wr.add_schema(kRawImageSchema, "protobuf", raw_image_descriptor_set()), "/c", "protobuf");
      wr.write(ch, 0, 1, 1, bytes_of(msg));
      wr.close();
    }
    const auto topics = list_recording_topics(path);
    ASSERT_EQ(topics.size(), 1u);
    if (!b.why) {
      EXPECT_EQ(topics[0].kind, RecordingTopicListing::Kind::Image);
      EXPECT_EQ(open_recording(path)->info().width, 8u);
      continue;
    }
    EXPECT_EQ(topics[0].kind, RecordingTopicListing::Kind::NotShown) << b.why;
    EXPECT_THAT(topics[0].note, HasSubstr("topic /c: message 0: " + std::string(b.why)));
    EXPECT_THAT(message_of<ParseError>([&] { (void)open_recording(path); }), HasSubstr(b.why));
  }
}

// A recording of every format written by RecordingWriter plays back frame by
// frame (i420 as nv12).
TEST(Recording, EveryFormatRoundTripsThroughTheWriter) {
  TempDir dir;
  for (auto [fmt, encoding] : kWrittenAs) {
    const auto path = dir / (std::string(to_string(fmt)) + ".mcap");
    RecordingOptions o;
    o.block_when_full = true;
    {
      RecordingWriter w(path, o);
      for (std::uint32_t i = 0; i < 3; ++i)
        ASSERT_TRUE(w.write(test::pattern_frame(fmt, 7, 5, i), OverlayFrame{}, "/cam", 1'000'000 * (i + 1)));
      w.close();
    }
    auto src = open_recording(path);
    const PixelFormat read_as = fmt == PixelFormat::I420 ? PixelFormat::NV12 : fmt;
    EXPECT_EQ(src->info().format, read_as) << encoding;
    EXPECT_EQ(src->info().frame_count, 3);
    HostFrame out(read_as, 7, 5, 16);
    for (std::uint32_t i = 0; i < 3; ++i) {
      ASSERT_TRUE(src->read_into(out.target()));
      EXPECT_TRUE(same_samples(out, test::pattern_frame(fmt, 7, 5, i))) << to_string(fmt) << " frame " << i;
    }
  }
}

struct Case {
  PixelFormat format;
  std::uint32_t width, height;
  mcap::Compression compression;
  bool summary;
};

class RecordingRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(RecordingRoundTrip, FramesAndOverlaysComeBack) {
  const Case& p = GetParam();
  TempDir dir;
  const Colorimetry c{ColorMatrix::BT2020, ColorRange::Full, ChromaSiting::Center};
  RecordingOptions o;
  o.compression = p.compression;
  o.summary = p.summary;
  o.chunk_size = 4096;
  o.block_when_full = true;
  {
    RecordingWriter w(dir / "r.mcap", o);
    for (std::uint32_t i = 0; i < 6; ++i) {
      const OverlayFrame ov = i % 2 ? OverlayFrame{} : test::rich_overlays(float(i));
      ASSERT_TRUE(w.write(test::pattern_frame(p.format, p.width, p.height, i, c), ov, "/cam", 1'000'000 * (i + 1)));
    }
    w.close();
    EXPECT_EQ(w.stats().frames_written, 6u);
    EXPECT_EQ(w.stats().frames_dropped, 0u);
    EXPECT_EQ(w.stats().bytes_written, std::filesystem::file_size(dir / "r.mcap"));
  }
  auto src = open_recording(dir / "r.mcap");
  const SourceInfo& info = src->info();
  EXPECT_EQ(info.format, p.format);
  EXPECT_EQ(info.width, p.width);
  EXPECT_EQ(info.height, p.height);
  EXPECT_EQ(info.colorimetry, c);
  EXPECT_EQ(info.frame_count, 6);
  EXPECT_EQ(info.rate, (Rational{1000, 1}));  // 1 ms apart
  EXPECT_EQ(src->topic(), "/cam");
  EXPECT_EQ(src->annotations_topic(), "/cam/annotations");
  EXPECT_EQ(src->indexed(), p.summary);
  EXPECT_TRUE(src->warnings().empty());
  HostFrame fr(p.format, p.width, p.height, 16);
  OverlayFrame ov;
  for (std::uint32_t i = 0; i < 6; ++i) {
    ASSERT_TRUE(src->read_into(fr.target()));
    EXPECT_TRUE(test::has_pattern(fr, i)) << "frame " << i;
    EXPECT_EQ(src->log_time(i), 1'000'000u * (i + 1));
    EXPECT_EQ(src->overlays_for(i, ov), i % 2 == 0);
    if (i % 2 == 0) {
      EXPECT_EQ(ov.frame, std::int64_t(i));
      EXPECT_TRUE(test::same_overlays(test::rich_overlays(float(i)), ov)) << "frame " << i;
    }
  }
  EXPECT_FALSE(src->read_into(fr.target()));
  // Seek anywhere, both ways.
  for (std::int64_t k : {4, 1, 5, 0}) {
    src->seek(k);
    ASSERT_TRUE(src->read_into(fr.target()));
    EXPECT_TRUE(test::has_pattern(fr, std::uint32_t(k)));
  }
  EXPECT_THROW(src->seek(7), UsageError);
}

INSTANTIATE_TEST_SUITE_P(Formats, RecordingRoundTrip,
                         ::testing::Values(Case{PixelFormat::NV12, 64, 48, mcap::Compression::Zstd, true},
                                           Case{PixelFormat::NV12, 7, 5, mcap::Compression::Lz4, true},
                                           Case{PixelFormat::P010, 9, 3, mcap::Compression::None, true},
                                           Case{PixelFormat::P010, 32, 18, mcap::Compression::Zstd, false}));

TEST(Recording, ColorimetryChangeStartsANewChannel) {
  TempDir dir;
  const Colorimetry a{ColorMatrix::BT709, ColorRange::Limited, ChromaSiting::Left};
  const Colorimetry b{ColorMatrix::BT601, ColorRange::Full, ChromaSiting::Center};
  {
    RecordingWriter w(dir / "r.mcap", {.block_when_full = true});
    for (std::uint32_t i = 0; i < 4; ++i) w.write(test::pattern_frame(PixelFormat::NV12, 8, 8, i, i < 2 ? a : b), {}, "/c", i + 1);
    w.close();
  }
  auto r = mcap::Reader::open(dir / "r.mcap");
  EXPECT_EQ(r->channels().size(), 2u);
  auto src = open_recording(dir / "r.mcap");
  EXPECT_EQ(src->info().frame_count, 4);
  EXPECT_EQ(src->colorimetry(0), a);
  EXPECT_EQ(src->colorimetry(3), b);
}

TEST(Recording, TopicsAreChosenByName) {
  TempDir dir;
  {
    RecordingWriter w(dir / "r.mcap", {.block_when_full = true});
    OverlayFrame ov;
    ov.add_box(1, 1, 2, 2, "x");
    for (std::uint32_t i = 0; i < 3; ++i) {
      w.write(test::pattern_frame(PixelFormat::NV12, 8, 6, i), ov, "/cam0", 10 + i);
      w.write(test::pattern_frame(PixelFormat::P010, 4, 4, 100 + i), {}, "/cam1", 10 + i);
    }
    w.close();
  }
  auto first = open_recording(dir / "r.mcap");
  EXPECT_EQ(first->topic(), "/cam0");
  ASSERT_EQ(first->image_topics().size(), 2u);
  EXPECT_EQ(first->image_topics()[1].topic, "/cam1");
  EXPECT_EQ(first->image_topics()[1].messages, 3u);
  RecordingOpenOptions cam1;
  cam1.topic = "/cam1";
  auto second = open_recording(dir / "r.mcap", cam1);
  EXPECT_EQ(second->info().format, PixelFormat::P010);
  EXPECT_EQ(second->annotations_topic(), "/cam0/annotations");  // the only annotation topic
  HostFrame fr(PixelFormat::P010, 4, 4);
  ASSERT_TRUE(second->read_into(fr.target()));
  EXPECT_TRUE(test::has_pattern(fr, 100));
  RecordingOpenOptions nope;
  nope.topic = "/nope";
  EXPECT_THAT(message_of<ParseError>([&] { open_recording(dir / "r.mcap", nope); }),
              HasSubstr("topic: no image topic \"/nope\" (image topics: /cam0, /cam1)"));
  RecordingOpenOptions x;
  x.annotations_topic = "/x";
  EXPECT_THAT(message_of<ParseError>([&] { open_recording(dir / "r.mcap", x); }),
              HasSubstr("annotations_topic: no foxglove.ImageAnnotations topic \"/x\""));
}

// Annotations on a topic of their own are matched to images by their
// timestamp fields, as Foxglove's image panel does, not by log time; a message
// without a timestamp is matched by its log time.
class RecordingTimestamps : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kMs = 1'000'000;
  RecordingTimestamps() : path_(dir_ / "t.mcap"), w_(path_) {
    const auto si = w_.add_schema(kRawImageSchema, "protobuf", raw_image_descriptor_set());
    const auto sa = w_.add_schema(kImageAnnotationsSchema, "protobuf", image_annotations_descriptor_set());
    images_ = w_.add_channel(si, "/cam", "protobuf");
    detections_ = w_.add_channel(sa, "/detections", "protobuf");
  }
  // Frame `i` logged at `log`, its RawImage.timestamp `ts` (none: no timestamp field).
  void image(std::uint32_t i, std::uint64_t log, std::optional<std::uint64_t> ts) {
    std::vector<std::uint8_t> bytes;
    encode_raw_image(test::pattern_frame(PixelFormat::NV12, 16, 8, i), ts.value_or(0), bytes);
    if (!ts) {
      foxglove::RawImage m;
      ASSERT_TRUE(m.ParseFromArray(bytes.data(), int(bytes.size())));
      m.clear_timestamp();
      const std::string s = m.SerializeAsString();
      bytes.assign(s.begin(), s.end());
    }
    w_.write(images_, i, log, log, bytes);
  }
  // A box at x = `x` logged at `log`, every timestamp in it `ts` (none: no timestamps at all).
  void box(float x, std::uint64_t log, std::optional<std::uint64_t> ts) {
    OverlayFrame o;
    o.add_box(x, 1, x + 4, 5, "car");
    std::string bytes;
    encode_annotations(o, ts.value_or(0), bytes);
    if (!ts) {
      foxglove::ImageAnnotations m;
      ASSERT_TRUE(m.ParseFromString(bytes));
      m.clear_timestamp();
      for (auto& p : *m.mutable_points()) p.clear_timestamp();
      for (auto& t : *m.mutable_texts()) t.clear_timestamp();
      bytes = m.SerializeAsString();
    }
    w_.write(detections_, 0, log, log, bytes_of(bytes));
  }
  std::unique_ptr<RecordingSource> open(RecordingOpenOptions o = {}) {
    w_.close();
    return open_recording(path_, o);
  }
  // The x of frame `i`'s box; -1 when it has no overlays.
  static float box_x(const RecordingSource& src, std::int64_t i) {
    OverlayFrame o;
    if (!src.overlays_for(i, o)) return o.empty() ? -1.0f : -2.0f;
    return o.objects.empty() ? -3.0f : o.objects[0].x0;
  }
  TempDir dir_;
  std::filesystem::path path_;
  mcap::Writer w_;
  std::uint16_t images_ = 0, detections_ = 0;
};

TEST_F(RecordingTimestamps, AnnotationsWithTheImagesTimestampButAnotherLogTimeShowTheirOverlays) {
  image(0, 1000 * kMs, 50 * kMs);
  image(1, 1100 * kMs, 60 * kMs);
  box(1, 1300 * kMs, 50 * kMs);  // frame 0's, logged 300 ms after it (after frame 1, too)
  box(2, 1100 * kMs, 61 * kMs);  // logged with frame 1, but its timestamp is no frame's
  image(2, 1200 * kMs, 70 * kMs);
  box(3, 1190 * kMs, 70 * kMs);  // frame 2's, logged just before it
  const auto src = open();
  EXPECT_EQ(src->annotations_topic(), "/detections");
  EXPECT_EQ(box_x(*src, 0), 1.0f);
  EXPECT_EQ(box_x(*src, 1), -1.0f) << "no annotation message has frame 1's timestamp";
  EXPECT_EQ(box_x(*src, 2), 3.0f);
  // Played in order, as a viewer does: read_into() then overlays_for().
  HostFrame f(PixelFormat::NV12, 16, 8);
  for (std::int64_t i : {0, 1, 2}) {
    ASSERT_TRUE(src->read_into(f.target()));
    EXPECT_EQ(box_x(*src, i), (std::array{1.0f, -1.0f, 3.0f})[std::size_t(i)]) << "frame " << i;
  }
}

TEST_F(RecordingTimestamps, WithoutTimestampsLogTimesAreMatched) {
  image(0, 1000 * kMs, std::nullopt);
  box(1, 1000 * kMs, std::nullopt);  // frame 0's: same log time
  image(1, 1100 * kMs, std::nullopt);
  box(2, 1150 * kMs, std::nullopt);  // another log time: no frame's
  image(2, 1200 * kMs, 1300 * kMs);  // a timestamp equal to a log time below
  box(3, 1300 * kMs, std::nullopt);
  const auto src = open();
  EXPECT_EQ(box_x(*src, 0), 1.0f);
  EXPECT_EQ(box_x(*src, 1), -1.0f);
  EXPECT_EQ(box_x(*src, 2), 3.0f);
}

TEST_F(RecordingTimestamps, OnlyAnnotationsLoggedWithinTheWindowAreMatched) {
  image(0, 1000 * kMs, 50 * kMs);
  box(1, 1300 * kMs, 50 * kMs);
  RecordingOpenOptions narrow;
  narrow.annotation_window_ns = 200 * kMs;
  EXPECT_EQ(box_x(*open(narrow), 0), -1.0f);
  EXPECT_EQ(box_x(*open_recording(path_), 0), 1.0f);  // the default window: 2 s
}

TEST(Recording, CrashedRecordingPlaysUpToItsLastWholeFrame) {
  TempDir dir;
  {
    RecordingWriter w(dir / "r.mcap", {.compression = mcap::Compression::Lz4, .chunk_size = 1, .block_when_full = true});
    for (std::uint32_t i = 0; i < 8; ++i) w.write(test::pattern_frame(PixelFormat::NV12, 16, 16, i), {}, "/c", i + 1);
    w.close();
  }
  auto b = test::read_bytes(dir / "r.mcap");
  const auto chunks = test::records_of(b, 0x06);
  ASSERT_EQ(chunks.size(), 8u);  // one frame per chunk
  b.resize(chunks[5].at + 20);   // dies while writing the sixth frame
  test::write_bytes(dir / "cut.mcap", b);
  std::unique_ptr<RecordingSource> src;
  {
    handoff::test::LogCapture log;
    src = open_recording(dir / "cut.mcap");
    EXPECT_EQ(log.count(LogLevel::Warning), 1u);
  }
  ASSERT_EQ(src->warnings().size(), 1u);
  EXPECT_EQ(src->info().frame_count, 5);
  HostFrame fr(PixelFormat::NV12, 16, 16);
  for (std::uint32_t i = 0; i < 5; ++i) {
    ASSERT_TRUE(src->read_into(fr.target()));
    EXPECT_TRUE(test::has_pattern(fr, i));
  }
  EXPECT_FALSE(src->read_into(fr.target()));
}

// --- Recordings cut short inside a compressed chunk (issue 22) ------------------------

// Frame k of a recording whose pixels do not compress (as a camera's or a
// rendered scene's hardly do), so the compressed chunk is most of the file.
HostFrame noise_frame(std::uint32_t w, std::uint32_t h, std::uint32_t k) {
  HostFrame f(PixelFormat::NV12, w, h);
  std::uint32_t x = 0x9E3779B9u * (k + 1);
  auto fill = [&](std::uint8_t* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      x = x * 1664525u + 1013904223u;
      p[i] = std::uint8_t(x >> 24);
    }
  };
  fill(f.luma(), f.luma_pitch() * h);
  fill(f.chroma(), f.chroma_pitch() * chroma_height(h));
  return f;
}

bool same_pixels(const HostFrame& a, const HostFrame& b) {
  return std::equal(a.luma(), a.luma() + a.luma_pitch() * a.height(), b.luma()) &&
         std::equal(a.chroma(), a.chroma() + a.chroma_pitch() * chroma_height(a.height()), b.chroma());
}

// Issue 22's recording: 12 frames, one compressed chunk (below 4 MiB and 1 s),
// cut at 60% and at other points of the file. Every frame wholly in what the
// blocks written decompress to plays, pixel-equal to the uncut file's.
class RecordingCutInACompressedChunk : public ::testing::TestWithParam<mcap::Compression> {};

TEST_P(RecordingCutInACompressedChunk, PlaysEveryWholeFrameOfIt) {
  TempDir dir;
  constexpr std::uint32_t kW = 320, kH = 180, kFrames = 12;
  {
    RecordingWriter w(dir / "rec.mcap", {.compression = GetParam(), .block_when_full = true});
    for (std::uint32_t k = 0; k < kFrames; ++k) w.write(noise_frame(kW, kH, k).frame(), {}, "/cam", 40'000'000ull * k);
    w.close();
  }
  const auto whole = test::read_bytes(dir / "rec.mcap");
  const auto chunks = test::records_of(whole, 0x06);
  ASSERT_EQ(chunks.size(), 1u) << "every frame in one chunk, as in the issue";
  std::vector<HostFrame> uncut;
  {
    auto src = open_recording(dir / "rec.mcap");
    ASSERT_EQ(src->info().frame_count, kFrames);
    for (std::uint32_t k = 0; k < kFrames; ++k) {
      uncut.emplace_back(PixelFormat::NV12, kW, kH);
      ASSERT_TRUE(src->read_into(uncut.back().target()));
      ASSERT_TRUE(same_pixels(uncut.back(), noise_frame(kW, kH, k)));
    }
  }
  for (const double at : {0.6, 0.2, 0.35, 0.5, 0.75, 0.9}) {
    SCOPED_TRACE("cut at " + std::to_string(at) + " of the file");
    const auto cut = std::size_t(double(whole.size()) * at);
    ASSERT_GT(cut, test::chunk_records_at(whole, chunks[0]));
    ASSERT_LT(cut, chunks[0].end());
    const std::size_t want = test::what_survives(whole, chunks[0], GetParam(), cut).messages;
    if (at >= 0.35) {
      EXPECT_GT(want, 0u);  // before issue 22 nothing played
    }
    EXPECT_LT(want, kFrames);
    test::write_bytes(dir / "cut.mcap", std::vector<std::uint8_t>(whole.begin(), whole.begin() + std::ptrdiff_t(cut)));
    if (want == 0) {
      handoff::test::LogCapture quiet;
      EXPECT_THAT(message_of<ParseError>([&] { open_recording(dir / "cut.mcap"); }), HasSubstr("cut.mcap: "));
      continue;
    }
    std::unique_ptr<RecordingSource> src;
    {
      handoff::test::LogCapture log;
      src = open_recording(dir / "cut.mcap");
      EXPECT_EQ(log.count(LogLevel::Warning), 1u);
    }
    ASSERT_EQ(src->warnings().size(), 1u);
    EXPECT_THAT(src->warnings()[0], HasSubstr("the " + std::to_string(want) + " messages wholly in them are kept"));
    ASSERT_EQ(src->info().frame_count, std::int64_t(want));
    HostFrame f(PixelFormat::NV12, kW, kH);
    for (std::size_t k = 0; k < want; ++k) {
      ASSERT_TRUE(src->read_into(f.target()));
      EXPECT_TRUE(same_pixels(f, uncut[k])) << "frame " << k;
    }
    EXPECT_FALSE(src->read_into(f.target()));
  }
}

INSTANTIATE_TEST_SUITE_P(Compressions, RecordingCutInACompressedChunk,
                         ::testing::Values(mcap::Compression::Zstd, mcap::Compression::Lz4),
                         [](const auto& info) { return std::string(mcap::compression_field(info.param)); });

// A recording longer than a second is chunked by time, whatever its size:
// 60 small frames 40 ms apart (2.36 s) make 3 chunks.
TEST(Recording, ChunksHoldAboutOneSecond) {
  TempDir dir;
  {
    RecordingWriter w(dir / "r.mcap", {.block_when_full = true});
    for (std::uint32_t k = 0; k < 60; ++k) {
      w.write(test::pattern_frame(PixelFormat::NV12, 16, 8, k), {}, "/c", 1'000'000'000ull + 40'000'000ull * k);
    }
    w.close();
  }
  auto r = mcap::Reader::open(dir / "r.mcap");
  ASSERT_TRUE(r->indexed());
  std::vector<std::uint32_t> chunk_of;
  for (const auto& ref : r->messages(0)) chunk_of.push_back(ref.chunk);
  ASSERT_EQ(chunk_of.size(), 60u);
  // Frames 0..25 span 1.0 s and close the first chunk; 26..51 the second.
  for (std::uint32_t k = 0; k < 60; ++k) EXPECT_EQ(chunk_of[k], k / 26) << "frame " << k;
  // RecordingOptions::chunk_duration_ns reaches the MCAP writer: 0, one chunk.
  {
    RecordingWriter w(dir / "one.mcap", {.chunk_duration_ns = 0, .block_when_full = true});
    for (std::uint32_t k = 0; k < 60; ++k) {
      w.write(test::pattern_frame(PixelFormat::NV12, 16, 8, k), {}, "/c", 1'000'000'000ull + 40'000'000ull * k);
    }
    w.close();
  }
  EXPECT_EQ(test::records_of(test::read_bytes(dir / "one.mcap"), 0x06).size(), 1u);
}

// --- The writer thread ---------------------------------------------------------------

// A FIFO whose reader the test controls: the writer thread blocks in write()
// until the test reads, so the queue fills deterministically.
class Fifo {
 public:
  explicit Fifo(const std::filesystem::path& p) : path_(p) {
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0);
    fd_ = ::open(p.c_str(), O_RDONLY | O_NONBLOCK);  // opens at once; lets the writer's open() succeed
    EXPECT_GE(fd_, 0);
  }
  ~Fifo() {
    if (fd_ >= 0) ::close(fd_);
  }
  // Reads everything until the writer closes its end.
  std::future<std::vector<std::uint8_t>> drain() {
    const int fd = std::exchange(fd_, -1);
    return std::async(std::launch::async, [fd] {
      ::fcntl(fd, F_SETFL, 0);  // blocking from now on
      std::vector<std::uint8_t> all;
      std::uint8_t buf[65536];
      for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
        if (n < 0) {
          if (errno == EINTR) continue;
          break;
        }
        all.insert(all.end(), buf, buf + n);
      }
      ::close(fd);
      return all;
    });
  }
  void close_reader() { ::close(std::exchange(fd_, -1)); }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

TEST(RecordingWriter, DropsFramesWhenTheDiskFallsBehind) {
  TempDir dir;
  Fifo fifo(dir / "pipe.mcap");
  RecordingOptions o;
  o.compression = mcap::Compression::None;
  o.chunk_size = 1;  // each frame goes to the file at once
  o.queue_capacity = 2;
  RecordingWriter w(dir / "pipe.mcap", o);
  // 256x256 NV12 frames (98 KiB) overflow the pipe's buffer: the writer thread
  // blocks on the first or second, the queue holds two, the rest are dropped.
  const Frame f = test::pattern_frame(PixelFormat::NV12, 256, 256, 1);
  int accepted = 0;
  for (std::uint32_t i = 0; i < 8; ++i) accepted += w.write(f, {}, "/c", i + 1);
  EXPECT_LE(accepted, 4);
  EXPECT_EQ(w.stats().frames_dropped, std::uint64_t(8 - accepted));
  auto bytes = fifo.drain();
  w.close();
  const auto file = bytes.get();
  EXPECT_EQ(w.stats().frames_written, std::uint64_t(accepted));
  auto src = open_recording_memory(file, "pipe.mcap");
  EXPECT_EQ(src->info().frame_count, accepted);
}

TEST(RecordingWriter, BlockingWriteWaitsAtMostTheWaitLimit) {
  TempDir dir;
  Fifo fifo(dir / "pipe.mcap");
  RecordingOptions o;
  o.compression = mcap::Compression::None;
  o.chunk_size = 1;
  o.queue_capacity = 1;
  o.block_when_full = true;
  RecordingWriter w(dir / "pipe.mcap", o);
  const Frame f = test::pattern_frame(PixelFormat::NV12, 256, 256, 1);
  std::string msg;
  try {
    handoff::test::ScopedWaitLimit limit(std::chrono::milliseconds(200));
    for (std::uint32_t i = 0; i < 8; ++i) w.write(f, {}, "/c", i + 1);
  } catch (const WaitTimeout& e) {
    msg = e.what();
  }
  EXPECT_THAT(msg, HasSubstr("RecordingWriter::write: waiting for room in the queue"));
  EXPECT_THAT(msg, HasSubstr("pipe.mcap"));
  auto bytes = fifo.drain();
  w.close();
  EXPECT_EQ(open_recording_memory(bytes.get(), "pipe.mcap")->info().frame_count, std::int64_t(w.stats().frames_written));
}

TEST(RecordingWriter, AnIoErrorStopsTheRecordingAndIsReported) {
  std::signal(SIGPIPE, SIG_IGN);  // a closed pipe must be an EPIPE error, not a signal
  TempDir dir;
  Fifo fifo(dir / "pipe.mcap");
  RecordingOptions o;
  o.compression = mcap::Compression::None;
  o.chunk_size = 1;
  o.block_when_full = true;
  handoff::test::LogCapture quiet;
  RecordingWriter w(dir / "pipe.mcap", o);
  fifo.close_reader();
  const Frame f = test::pattern_frame(PixelFormat::NV12, 16, 16, 1);
  std::string msg;
  try {
    for (std::uint32_t i = 0; i < 100; ++i) {
      w.write(f, {}, "/c", i + 1);
      w.flush();
    }
  } catch (const Error& e) {
    msg = e.what();
  }
  EXPECT_THAT(msg, HasSubstr("write"));
  EXPECT_THAT(msg, HasSubstr("pipe.mcap"));
  EXPECT_THROW(w.close(), Error);
}

// A disk that fills mid-recording (the file size limit here): the frames the
// writer says are in the file are those a reader finds there, not those it was
// given (the ones queued or in the chunk whose write failed are lost).
TEST(RecordingWriter, AfterAFailedWriteFramesWrittenIsWhatTheFileHolds) {
  TempDir dir;
  const auto file = dir / "full.mcap";
  test::FileSizeLimit limit(200 * 1024);
  RecordingOptions o;
  o.compression = mcap::Compression::None;
  o.chunk_size = 20'000;  // about four frames a chunk: a failed chunk loses several
  o.block_when_full = true;
  handoff::test::LogCapture quiet;
  std::uint32_t given = 0;
  RecordingStats stats;
  {
    RecordingWriter w(file, o);
    limit.apply();
    const Frame f = test::pattern_frame(PixelFormat::NV12, 64, 64, 1);
    try {
      for (; given < 1000; ++given) w.write(f, {}, "/c", 1000 + given);
    } catch (const Error&) {
    }
    EXPECT_THROW(w.close(), Error);
    stats = w.stats();
  }
  limit.restore();
  ASSERT_LT(given, 1000u) << "the size limit stopped nothing";
  const auto r = open_recording(file);
  EXPECT_GT(r->info().frame_count, 0);
  EXPECT_LT(r->info().frame_count, std::int64_t(given));
  EXPECT_EQ(std::int64_t(stats.frames_written), r->info().frame_count);
}

// What handoff writes, handoff reads: a frame or layer whose message a chunk
// of max_chunk_bytes (the readers' limit) cannot hold is refused up front,
// naming its size and the limit, and the topic keeps no shape from it; what
// fits reads back with that limit.
TEST(RecordingWriter, RefusesAMessageLargerThanAChunkReadersAccept) {
  TempDir dir;
  RecordingOptions o;
  o.compression = mcap::Compression::None;
  o.chunk_size = 1024;
  o.max_chunk_bytes = kChunkRecordsReserve + 8192;  // a gray8 64x64 frame fits, 128x128 does not
  RecordingWriter w(dir / "r.mcap", o);
  const std::string refused = message_of<InvalidFrame>(
      [&] { w.write(test::pattern_frame(PixelFormat::GRAY8, 128, 128, 0), {}, "/c", 1); });
  EXPECT_THAT(refused, HasSubstr("gray8 128x128 frame"));
  EXPECT_THAT(refused, HasSubstr(std::to_string(raw_image_message_bytes(PixelFormat::GRAY8, 128, 128))));
  EXPECT_THAT(refused, HasSubstr("at most 8192 bytes"));
  const Frame small = test::pattern_frame(PixelFormat::GRAY8, 64, 64, 1);
  OverlayFrame layered;
  ScalarMap scalars;  // 32FC1, 16 KiB
  scalars.values.type = SampleType::F32;
  scalars.values.width = scalars.values.height = 64;
  scalars.values.count = 1;
  const std::vector<float> values(64 * 64, 0.5f);
  scalars.values.data = values.data();
  layered.layers.push_back(scalars);
  try {
    w.write(small, layered, "/c", 2);
    ADD_FAILURE() << "a layer of 16 KiB was written";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "layers[0]");
    EXPECT_THAT(e.what(), HasSubstr("at most 8192 bytes"));
  }
  EXPECT_TRUE(w.write(small, {}, "/c", 3));
  w.close();
  EXPECT_EQ(w.stats().frames_written, 1u);
  EXPECT_EQ(open_recording(dir / "r.mcap", {.max_chunk_bytes = o.max_chunk_bytes})->info().frame_count, 1);
}

// With the default limit (the readers' 1 GiB): the largest frames are refused
// (gray8 32768x32768, rgba8 16384x16384: 1 GiB of pixels each), slightly
// smaller ones are not.
TEST(RecordingWriter, TheDefaultLimitIsTheReadersChunkLimit) {
  EXPECT_EQ(RecordingOptions{}.max_chunk_bytes, mcap::ReaderOptions{}.max_chunk_bytes);
  EXPECT_EQ(RecordingOpenOptions{}.max_chunk_bytes, mcap::ReaderOptions{}.max_chunk_bytes);
  EXPECT_THROW(check_recorded_frame(VideoCodec::Raw, PixelFormat::GRAY8, 32768, 32768), InvalidFrame);
  EXPECT_THROW(check_recorded_frame(VideoCodec::Raw, PixelFormat::RGBA8, 16384, 16384), InvalidFrame);
  EXPECT_NO_THROW(check_recorded_frame(VideoCodec::Raw, PixelFormat::GRAY8, 32768, 32704));
  EXPECT_NO_THROW(check_recorded_frame(VideoCodec::Raw, PixelFormat::NV12, 32768, 21800));
  EXPECT_LE(raw_image_message_bytes(PixelFormat::GRAY8, 32768, 32704) + kChunkRecordsReserve,
            mcap::ReaderOptions{}.max_chunk_bytes);
}

TEST(RecordingWriter, Misuse) {
  TempDir dir;
  RecordingWriter w(dir / "r.mcap");
  Frame f = test::pattern_frame(PixelFormat::NV12, 8, 8, 0);
  EXPECT_THROW(w.write(f, {}, "", 1), UsageError);
  Frame gpu = f;
  gpu.memory = MemoryKind::Cuda;
  EXPECT_THROW(w.write(gpu, {}, "/c", 1), UsageError);
  w.close();
  EXPECT_THROW(w.write(f, {}, "/c", 1), UsageError);
  EXPECT_THAT(message_of<Error>([] { RecordingWriter bad("/dev/full"); }), HasSubstr("/dev/full"));
}

}  // namespace
}  // namespace handoff::media
