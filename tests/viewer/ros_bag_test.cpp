// ROS 2 MCAP bags (issue 24): sensor_msgs/msg/Image channels (cdr messages,
// ros2msg schemas, or no schema text: the built-in definition) play as a
// recording, with their pixels, timestamps and topic choice; bad channels and
// messages are errors naming the schema, channel, frame and field.
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>

#include "cdr_test_util.hpp"
#include "test_util.hpp"

#include <gmock/gmock.h>

#include <algorithm>
#include <cstring>

namespace handoff::media {
namespace {

using test::TempDir;
using ::testing::HasSubstr;

// sensor_msgs/msg/Image as `ros2 bag record` stores it: the type, then its dependencies.
constexpr std::string_view kImageDefinition =
    "# This message contains an uncompressed image\n"
    "std_msgs/Header header # Header timestamp should be acquisition time of image\n"
    "uint32 height\nuint32 width\nstring encoding\nuint8 is_bigendian\nuint32 step\nuint8[] data\n"
    "================================================================================\n"
    "MSG: std_msgs/Header\n"
    "builtin_interfaces/Time stamp\nstring frame_id\n"
    "================================================================================\n"
    "MSG: builtin_interfaces/Time\n"
    "int32 sec\nuint32 nanosec\n";

std::span<const std::uint8_t> text_bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Frame k of a w x h rgb8 image: a pattern per frame, row and byte (a step
// below a row, as bad-input tests give, holds what fits).
std::vector<std::uint8_t> pixels(int k, std::uint32_t w, std::uint32_t h, std::size_t step) {
  std::vector<std::uint8_t> d(step * h, 0xEE);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < std::min<std::size_t>(w * 3, step); ++x) d[y * step + x] = std::uint8_t(k * 50 + y * 13 + x);
  return d;
}

struct Bag {
  std::string definition = std::string(kImageDefinition);
  std::string schema_encoding = "ros2msg";
  std::string message_encoding = "cdr";
  bool big_endian = false;
  std::vector<std::string> topics = {"/cam/image_raw"};
  int frames = 3;
};

constexpr std::uint32_t kW = 5, kH = 3, kStep = 17;  // 15-byte rows padded to 17

std::filesystem::path write_bag(const TempDir& dir, const Bag& b, const std::string& name = "bag.mcap") {
  const auto path = dir / name;
  mcap::Writer wr(path);
  const auto schema = wr.add_schema("sensor_msgs/msg/Image", b.schema_encoding, text_bytes(b.definition));
  for (std::size_t t = 0; t < b.topics.size(); ++t) {
    const auto ch = wr.add_channel(schema, b.topics[t], b.message_encoding);
    for (int k = 0; k < b.frames; ++k) {
      const int id = int(t) * 10 + k;
      const auto msg = test::cdr_image(b.big_endian, 100 + k, 500, "cam", kH, kW, "rgb8", 0, kStep,
                                       pixels(id, kW, kH, kStep));
      wr.write(ch, std::uint32_t(k), 1'000'000'000ull * (k + 1), 0, msg);
    }
  }
  wr.close();
  return path;
}

void expect_frame(RecordingSource& src, int id) {
  HostFrame out(PixelFormat::RGB8, kW, kH, 16);
  ASSERT_TRUE(src.read_into(out.target()));
  const auto want = pixels(id, kW, kH, kStep);
  for (std::uint32_t y = 0; y < kH; ++y) {
    ASSERT_EQ(std::memcmp(out.luma() + y * out.luma_pitch(), want.data() + y * kStep, kW * 3), 0) << "frame " << id << " row " << y;
  }
}

TEST(RosBag, ImageTopicPlaysWithItsPixelsInBothByteOrders) {
  TempDir dir;
  for (bool be : {false, true}) {
    Bag b;
    b.big_endian = be;
    auto src = open_recording(write_bag(dir, b));
    EXPECT_EQ(src->info().format, PixelFormat::RGB8);
    EXPECT_EQ(src->info().width, kW);
    EXPECT_EQ(src->info().height, kH);
    EXPECT_EQ(src->info().frame_count, 3);
    EXPECT_EQ(src->topic(), "/cam/image_raw");
    ASSERT_EQ(src->image_topics().size(), 1u);
    EXPECT_EQ(src->image_topics()[0].schema, "sensor_msgs/msg/Image");
    EXPECT_EQ(src->colorimetry(0).matrix, ColorMatrix::BT601);  // RawImage's default (no metadata)
    for (int k = 0; k < 3; ++k) expect_frame(*src, k);
    src->seek(1);
    expect_frame(*src, 1);
    EXPECT_EQ(src->log_time(2), 3'000'000'000u);
  }
}

TEST(RosBag, SchemaWithoutTextTakesTheBuiltInDefinition) {
  TempDir dir;
  Bag b;
  b.definition.clear();
  b.schema_encoding.clear();
  auto src = open_recording(write_bag(dir, b));
  for (int k = 0; k < 3; ++k) expect_frame(*src, k);
}

TEST(RosBag, TopicChoice) {
  TempDir dir;
  Bag b;
  b.topics = {"/left/image_raw", "/right/image_raw"};
  const auto path = write_bag(dir, b);
  RecordingOpenOptions right;
  right.topic = "/right/image_raw";
  auto src = open_recording(path, right);
  EXPECT_EQ(src->image_topics().size(), 2u);
  expect_frame(*src, 10);
  expect_frame(*src, 11);
  RecordingOpenOptions nope;
  nope.topic = "/nope";
  EXPECT_THAT(test::message_of<ParseError>([&] { (void)open_recording(path, nope); }),
              HasSubstr("no image topic \"/nope\" (image topics: /left/image_raw, /right/image_raw)"));
}

std::string open_error(const std::filesystem::path& p) {
  return test::message_of<ParseError>([&] {
    auto src = open_recording(p);
    HostFrame out(src->info().format, src->info().width, src->info().height);
    while (src->read_into(out.target())) {
    }
  });
}

TEST(RosBag, BadChannelsAndMessages) {
  TempDir dir;
  Bag json;
  json.message_encoding = "json";
  EXPECT_THAT(open_error(write_bag(dir, json)),
              HasSubstr("message_encoding: \"json\" is not supported (handoff reads cdr sensor_msgs/msg/Image)"));
  Bag proto;
  proto.schema_encoding = "protobuf";
  EXPECT_THAT(open_error(write_bag(dir, proto)), HasSubstr("encoding: \"protobuf\" is not supported (handoff reads ros2msg schemas)"));
  Bag unknown;
  unknown.definition = "my_msgs/Header header\nuint8[] data\n";
  EXPECT_THAT(open_error(write_bag(dir, unknown)),
              HasSubstr("Schema 1 (sensor_msgs/msg/Image) at byte "));
  EXPECT_THAT(open_error(write_bag(dir, unknown)),
              HasSubstr(": definition of sensor_msgs/Image: line 1: unknown type my_msgs/Header"));

  // A message cut short (frame 1), and one whose step does not fit its width (frame 2).
  const auto path = dir / "bad_frames.mcap";
  {
    mcap::Writer wr(path);
    const auto ch = wr.add_channel(wr.add_schema("sensor_msgs/msg/Image", "ros2msg", text_bytes(kImageDefinition)), "/c", "cdr");
    wr.write(ch, 0, 1, 0, test::cdr_image(false, 1, 0, "", kH, kW, "rgb8", 0, kStep, pixels(0, kW, kH, kStep)));
    auto cut = test::cdr_image(false, 2, 0, "", kH, kW, "rgb8", 0, kStep, pixels(1, kW, kH, kStep));
    cut.resize(cut.size() - 4);
    wr.write(ch, 1, 2, 0, cut);
    wr.write(ch, 2, 3, 0, test::cdr_image(false, 3, 0, "", kH, kW, "rgb8", 0, 14, pixels(2, kW, kH, 14)));
    wr.close();
  }
  auto src = open_recording(path);
  HostFrame out(PixelFormat::RGB8, kW, kH);
  EXPECT_TRUE(src->read_into(out.target()));
  // Each bad frame is an error naming its topic, frame and field; the read
  // after it is the next frame (the recording plays on, no seek needed).
  const std::string cut_error = test::message_of<ParseError>([&] { (void)src->read_into(out.target()); });
  EXPECT_THAT(cut_error, HasSubstr("topic \"/c\", frame 1: Message at offset"));
  EXPECT_THAT(cut_error, HasSubstr("sensor_msgs/Image.data: array needs 51 bytes, 47 left in the message"));
  EXPECT_EQ(src->position(), 2);
  const std::string step_error = test::message_of<ParseError>([&] { (void)src->read_into(out.target()); });
  EXPECT_THAT(step_error, HasSubstr("topic \"/c\", frame 2: Message at offset"));
  EXPECT_THAT(step_error, HasSubstr("Image.step: 14 is below the 15-byte rows of a rgb8 image 5 wide"));
  EXPECT_EQ(src->position(), 3);
  EXPECT_FALSE(src->read_into(out.target()));
  src->seek(0);
  expect_frame(*src, 0);
}

TEST(RosBag, UnsupportedEncodingAtOpenNamesTheField) {
  TempDir dir;
  const auto path = dir / "bayer.mcap";
  {
    mcap::Writer wr(path);
    const auto ch = wr.add_channel(wr.add_schema("sensor_msgs/msg/Image", "ros2msg", text_bytes(kImageDefinition)), "/c", "cdr");
    wr.write(ch, 0, 1, 0, test::cdr_image(false, 1, 0, "", 2, 2, "bayer_rggb8", 0, 2, std::vector<std::uint8_t>(4)));
    wr.close();
  }
  EXPECT_THAT(open_error(path), HasSubstr("frame 0: Message at offset"));
  EXPECT_THAT(open_error(path), HasSubstr("Image.encoding: unsupported encoding \"bayer_rggb8\" (supported: rgb8, bgr8, rgba8"));
}

// --list calls a topic an image only when its first message opens: a size,
// step or data that opening refuses makes it not shown, with opening's error;
// the other topics stay listed as images.
TEST(RosBag, ListingRefusesAFirstImageThatDoesNotOpen) {
  TempDir dir;
  const auto path = dir / "bad.mcap";
  struct Topic {
    const char* name;
    std::uint32_t width, height, step, data;
    const char* why;
  };
  const Topic topics[] = {{"/zero", 0, 0, 0, 0, "Image.width: width is 0"},
                          {"/wide", 70000, 1, 70000, 70000, "Image.width: width 70000 exceeds the maximum 32768"},
                          {"/step", 8, 8, 4, 64, "Image.step: 4 is below the 8-byte rows of a mono8 image 8 wide"},
                          {"/short", 8, 8, 8, 10, "Image.data: 10 bytes, shorter than step * height = 8 * 8 = 64"},
                          {"/good", 8, 8, 8, 64, nullptr}};
  {
    mcap::Writer wr(path);
    const auto schema = wr.add_schema("sensor_msgs/msg/Image", "ros2msg", text_bytes(kImageDefinition));
    for (const Topic& t : topics) {
      const auto ch = wr.add_channel(schema, t.name, "cdr");
      wr.write(ch, 0, 1, 0, test::cdr_image(false, 1, 0, "", t.height, t.width, "mono8", 0, t.step,
                                            std::vector<std::uint8_t>(t.data, 5)));
      // Later frames that would fit: the first one decides.
      wr.write(ch, 1, 2, 0, test::cdr_image(false, 1, 1, "", 8, 8, "mono8", 0, 8, std::vector<std::uint8_t>(64, 5)));
    }
    wr.close();
  }
  const auto listed = list_recording_topics(path);
  for (const Topic& t : topics) {
    const auto l = std::find_if(listed.begin(), listed.end(), [&](const auto& x) { return x.topic == t.name; });
    ASSERT_NE(l, listed.end()) << t.name;
    RecordingOpenOptions options;
    options.topic = t.name;
    if (!t.why) {
      EXPECT_EQ(l->kind, RecordingTopicListing::Kind::Image);
      EXPECT_EQ(l->note, "mono8");
      EXPECT_EQ(open_recording(path, options)->info().width, 8u);
      continue;
    }
    EXPECT_EQ(l->kind, RecordingTopicListing::Kind::NotShown) << t.name;
    EXPECT_THAT(l->note, HasSubstr("topic " + std::string(t.name) + ": message 0: " + t.why));
    EXPECT_THAT(test::message_of<ParseError>([&] { (void)open_recording(path, options); }), HasSubstr(t.why));
  }
}

}  // namespace
}  // namespace handoff::media
