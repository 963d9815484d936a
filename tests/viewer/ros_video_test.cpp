// H.264 / H.265 in ROS 2 bags (issue 24 section 2): sensor_msgs/msg/CompressedImage
// whose format names the codec, and foxglove_msgs/msg/CompressedVideo, in MCAP
// and .db3 bags, play through the decoder and keyframe index of
// foxglove.CompressedVideo: every frame within 12 codes of the pattern encoded
// (libx264 / libx265), seeks and steps both ways, a corrupt access unit or a
// message of another format named by topic, frame and field with playback
// going on, overlays matched by the message's stamp, and --list calling the
// topic video. The bags are written here: CDR by the tests' own writer (the
// XCDR1 rules), MCAP by the project's writer, .db3 with SQLite in rosbag2's
// table layout.
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/media/video_decoder.hpp>

#include "cdr_test_util.hpp"
#include "test_util.hpp"
#include "video_test_util.hpp"

#include <gmock/gmock.h>
#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <string_view>

namespace handoff::media {
namespace {

using test::AccessUnit;
using test::CdrWriter;
using test::message_of;
using test::TempDir;
using ::testing::HasSubstr;

constexpr int kWidth = 96, kHeight = 64, kFrames = 30, kGop = 10;
constexpr std::string_view kTopic = "/cam/video";  // its overlays: /cam/detections (the namespace rule)
constexpr std::int32_t kSec = 100;  // frame i's stamp: kSec s + i * 33,333,333 ns (also its log time)

std::uint32_t nanosec(std::size_t i) { return std::uint32_t(i * 33'333'333u); }
std::uint64_t stamp_ns(std::size_t i) { return std::uint64_t(kSec) * 1'000'000'000u + nanosec(i); }

enum class Storage { Mcap, Db3 };

struct Case {
  std::string codec;   // "h264" / "h265": the encoder
  std::string format;  // the messages' format string (spelled as publishers do)
  std::string type;    // "sensor_msgs/msg/CompressedImage" or "foxglove_msgs/msg/CompressedVideo"
  Storage storage;
};

std::string case_name(const ::testing::TestParamInfo<Case>& p) {
  const bool image = p.param.type.find("CompressedImage") != std::string::npos;
  return p.param.codec + (image ? "_CompressedImage_" : "_CompressedVideo_") +
         (p.param.storage == Storage::Mcap ? "mcap" : "db3");
}

// sensor_msgs/CompressedImage: header (stamp, frame_id), format, data.
// foxglove_msgs/CompressedVideo: timestamp, frame_id, data, format.
std::vector<std::uint8_t> message(const std::string& type, std::size_t i, std::string_view format, const AccessUnit& au) {
  CdrWriter w;
  w.i32(kSec).u32(nanosec(i)).string("cam");
  if (type.find("CompressedImage") != std::string::npos) {
    w.string(format).u32(std::uint32_t(au.size())).raw(au);
  } else {
    w.u32(std::uint32_t(au.size())).raw(au).string(format);
  }
  return w.bytes();
}

// A Detection2DArray (vision_msgs 4) with one box and no hypotheses, stamped like frame i.
std::vector<std::uint8_t> detection(std::size_t i, double cx) {
  CdrWriter w;
  w.i32(kSec).u32(nanosec(i)).string("cam").u32(1);
  w.i32(kSec).u32(nanosec(i)).string("cam").u32(0);  // the detection's header, no results
  w.f64(cx).f64(20).f64(0).f64(10).f64(8).string("5");    // bbox centre, theta, size; id (track 5)
  return w.bytes();
}

std::span<const std::uint8_t> bytes_of(std::string_view s) { return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}; }

// The type's definition as rosbag2 stores it (foxglove_msgs is not among
// rosbags' built-in types; the bag carries its text); CompressedImage is
// left to handoff's built-in definition.
std::string definition_text(const std::string& type) {
  if (type.find("CompressedVideo") == std::string::npos) return {};
  return "builtin_interfaces/Time timestamp\nstring frame_id\nuint8[] data\nstring format\n"
         "================================================================================\n"
         "MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n";
}

// `formats[i]` (else c.format) on message i; one detection per frame on /cam/detections.
void write_mcap(const std::filesystem::path& path, const Case& c, const std::vector<AccessUnit>& aus,
                const std::map<std::size_t, std::string>& formats) {
  mcap::Writer w(path);
  const std::string text = definition_text(c.type);
  const auto s = w.add_schema(c.type, "ros2msg", bytes_of(text));
  const auto ch = w.add_channel(s, std::string(kTopic), "cdr");
  const auto det = w.add_channel(w.add_schema("vision_msgs/msg/Detection2DArray", "ros2msg", {}), "/cam/detections", "cdr");
  for (std::size_t i = 0; i < aus.size(); ++i) {
    const auto f = formats.find(i);
    w.write(ch, std::uint32_t(i), stamp_ns(i), stamp_ns(i), message(c.type, i, f == formats.end() ? c.format : f->second, aus[i]));
    w.write(det, std::uint32_t(i), stamp_ns(i) + 1000, stamp_ns(i) + 1000, detection(i, 10.0 + double(i)));
  }
  w.close();
}

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
}

// rosbag2's sqlite3 layout; the definition in Iron's message_definitions table when there is text.
void write_db3(const std::filesystem::path& path, const Case& c, const std::vector<AccessUnit>& aus,
               const std::map<std::size_t, std::string>& formats) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, "
           "serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL)");
  exec(db, "CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL, "
           "data BLOB NOT NULL)");
  exec(db, "INSERT INTO topics VALUES(1, '" + std::string(kTopic) + "', '" + c.type + "', 'cdr', ''), "
           "(2, '/cam/detections', 'vision_msgs/msg/Detection2DArray', 'cdr', '')");
  if (const std::string text = definition_text(c.type); !text.empty()) {
    exec(db, "CREATE TABLE message_definitions(id INTEGER PRIMARY KEY, topic_type TEXT NOT NULL, encoding TEXT NOT NULL, "
             "encoded_message_definition TEXT NOT NULL, type_description_hash TEXT NOT NULL)");
    exec(db, "INSERT INTO message_definitions VALUES(1, '" + c.type + "', 'ros2msg', '" + text + "', '')");
  }
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO messages(topic_id, timestamp, data) VALUES(?, ?, ?)", -1, &s, nullptr);
  auto insert = [&](int topic, std::uint64_t t, const std::vector<std::uint8_t>& m) {
    sqlite3_bind_int(s, 1, topic);
    sqlite3_bind_int64(s, 2, std::int64_t(t));
    sqlite3_bind_blob(s, 3, m.data(), int(m.size()), SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(s), SQLITE_DONE);
    sqlite3_reset(s);
  };
  for (std::size_t i = aus.size(); i-- > 0;) {  // rows out of time order: frames are played by timestamp
    const auto f = formats.find(i);
    insert(1, stamp_ns(i), message(c.type, i, f == formats.end() ? c.format : f->second, aus[i]));
    insert(2, stamp_ns(i) + 1000, detection(i, 10.0 + double(i)));
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
}

class RosVideo : public ::testing::TestWithParam<Case> {
 protected:
  std::filesystem::path write(const std::vector<AccessUnit>& aus, const std::map<std::size_t, std::string>& formats = {}) {
    const Case& c = GetParam();
    const auto p = dir_ / (c.storage == Storage::Mcap ? "bag.mcap" : "bag.db3");
    std::filesystem::remove(p);
    if (c.storage == Storage::Mcap) write_mcap(p, c, aus, formats);
    else write_db3(p, c, aus, formats);
    return p;
  }
  std::vector<AccessUnit> stream() { return test::encode_pattern(GetParam().codec, kFrames, kGop, kWidth, kHeight); }
  std::string field() const {
    return GetParam().type.find("CompressedImage") != std::string::npos ? "CompressedImage" : "CompressedVideo";
  }
  TempDir dir_;
};

void expect_frame(RecordingSource& src, int i) { test::expect_pattern_frame(src, i, kWidth, kHeight, kFrames); }

TEST_P(RosVideo, PlaysEveryFrameSeeksAndStepsBothWays) {
  auto src = open_recording(write(stream()));
  EXPECT_EQ(src->info().format, PixelFormat::NV12);
  EXPECT_EQ(src->info().width, std::uint32_t(kWidth));
  EXPECT_EQ(src->info().height, std::uint32_t(kHeight));
  EXPECT_EQ(src->info().frame_count, kFrames);
  EXPECT_EQ(src->topic(), kTopic);
  EXPECT_EQ(src->colorimetry(0).matrix, ColorMatrix::BT601);  // no VUI colours: the height's default
  EXPECT_EQ(src->log_time(kFrames - 1), stamp_ns(kFrames - 1));
  for (int i = 0; i < kFrames; ++i) expect_frame(*src, i);
  FrameWriteTarget t{nullptr, 0, nullptr, 0};
  EXPECT_FALSE(src->read_into(t));
  for (int i : {17, 16, 15, 25, 5, 29, 0, 10, 9, 11, 20, 19}) {
    src->seek(i);
    expect_frame(*src, i);
  }
  src->seek(8);  // forward from a seek, across a keyframe
  for (int i = 8; i < 13; ++i) expect_frame(*src, i);
}

TEST_P(RosVideo, OverlaysAreMatchedByTheMessagesStamp) {
  auto src = open_recording(write(stream()));
  ASSERT_EQ(src->overlay_topics(), std::vector<std::string>{"/cam/detections"});
  OverlayFrame out;
  for (int i : {0, 13, 29}) {
    ASSERT_TRUE(src->overlays_for(i, out)) << i;
    ASSERT_EQ(out.objects.size(), 1u);
    EXPECT_FLOAT_EQ(out.objects[0].x0, float(10 + i - 5)) << "frame " << i << " got another frame's detection";
    EXPECT_EQ(out.objects[0].track_id, 5);
  }
}

TEST_P(RosVideo, CorruptAccessUnitIsNamedAndPlaybackGoesOnAtTheNextKeyframe) {
  auto aus = stream();
  aus[14][aus[14][2] == 1 ? 3 : 4] |= 0x80;  // the first NAL unit's forbidden_zero_bit
  auto src = open_recording(write(aus));
  src->seek(13);
  expect_frame(*src, 13);
  const std::string e = message_of<ParseError>([&] { test::read_nv12(*src, kWidth, kHeight); });
  EXPECT_THAT(e, HasSubstr("topic \"" + std::string(kTopic) + "\", frame 14"));
  EXPECT_THAT(e, HasSubstr(field() + ".data: NAL unit 0 (byte"));
  EXPECT_THAT(e, HasSubstr("forbidden_zero_bit"));
  EXPECT_THAT(e, HasSubstr("playback goes on at frame 20 (the next keyframe)"));
  EXPECT_EQ(src->position(), 20);
  expect_frame(*src, 20);
  src->seek(17);
  EXPECT_THAT(message_of<ParseError>([&] { test::read_nv12(*src, kWidth, kHeight); }),
              HasSubstr("depends on frame 14, which is corrupt"));
}

TEST_P(RosVideo, AnotherFormatInTheTopicIsNamedAtItsFrame) {
  auto src = open_recording(write(stream(), {{3, "jpeg"}}));
  for (int i = 0; i < 3; ++i) expect_frame(*src, i);
  const std::string e = message_of<ParseError>([&] { test::read_nv12(*src, kWidth, kHeight); });
  EXPECT_THAT(e, HasSubstr("frame 3"));
  EXPECT_THAT(e, HasSubstr(field() + ".format: \"jpeg\", but the stream is " + GetParam().codec));
  EXPECT_THAT(e, HasSubstr("playback goes on at frame 10"));
  expect_frame(*src, 10);
}

TEST_P(RosVideo, ListedAsVideo) {
  const auto topics = list_recording_topics(write(stream()));
  const auto t = std::find_if(topics.begin(), topics.end(), [](const auto& l) { return l.topic == kTopic; });
  ASSERT_NE(t, topics.end());
  EXPECT_EQ(t->type, GetParam().type);
  EXPECT_EQ(t->messages, std::uint64_t(kFrames));
  EXPECT_EQ(t->kind, RecordingTopicListing::Kind::Image);
  EXPECT_EQ(t->note, GetParam().format + " video");
}

// --list opens the topic as playing does, reading up to its first keyframe:
// one starting mid-group is listed as video, one with no keyframe is not
// shown, with opening's error.
TEST_P(RosVideo, ListedAsOpeningFindsIt) {
  auto aus = stream();
  aus.erase(aus.begin(), aus.begin() + 3);  // the first keyframe is frame 7
  auto topics = list_recording_topics(write(aus));
  auto t = std::find_if(topics.begin(), topics.end(), [](const auto& l) { return l.topic == kTopic; });
  ASSERT_NE(t, topics.end());
  EXPECT_EQ(t->kind, RecordingTopicListing::Kind::Image);
  EXPECT_EQ(t->note, GetParam().format + " video");
  aus.erase(aus.begin() + 17);  // and the other keyframe: none left
  aus.erase(aus.begin() + 7);
  const auto path = write(aus);
  topics = list_recording_topics(path);
  t = std::find_if(topics.begin(), topics.end(), [](const auto& l) { return l.topic == kTopic; });
  ASSERT_NE(t, topics.end());
  EXPECT_EQ(t->kind, RecordingTopicListing::Kind::NotShown);
  EXPECT_THAT(t->note, HasSubstr("topic " + std::string(kTopic) + ": message 0: " + field() + ".data: the topic has no keyframe"));
  EXPECT_THAT(message_of<ParseError>([&] { (void)open_recording(path); }), HasSubstr("the topic has no keyframe"));
}

const std::string kImage = "sensor_msgs/msg/CompressedImage", kVideo = "foxglove_msgs/msg/CompressedVideo";

// Format strings as publishers spell them: case and "hevc" vary.
INSTANTIATE_TEST_SUITE_P(Bags, RosVideo,
                         ::testing::Values(Case{"h264", "h264", kImage, Storage::Mcap}, Case{"h264", "H264", kImage, Storage::Db3},
                                           Case{"h265", "hevc", kImage, Storage::Mcap}, Case{"h265", "h265", kImage, Storage::Db3},
                                           Case{"h264", "h264", kVideo, Storage::Mcap}, Case{"h264", "h264", kVideo, Storage::Db3},
                                           Case{"h265", "h265", kVideo, Storage::Mcap}, Case{"h265", "h265", kVideo, Storage::Db3}),
                         case_name);

TEST(RosVideoTopic, VideoCodecNamesAreReadLeniently) {
  EXPECT_EQ(video_codec("h264"), VideoCodec::H264);
  EXPECT_EQ(video_codec("H264"), VideoCodec::H264);
  EXPECT_EQ(video_codec(" h.264 "), VideoCodec::H264);
  EXPECT_EQ(video_codec("HEVC"), VideoCodec::H265);
  EXPECT_EQ(video_codec("H.265"), VideoCodec::H265);
  EXPECT_EQ(video_codec("h265"), VideoCodec::H265);
  EXPECT_EQ(video_codec("vp9"), std::nullopt);
  EXPECT_EQ(video_codec("jpeg"), std::nullopt);
  EXPECT_EQ(video_codec("h2645"), std::nullopt);
  EXPECT_EQ(video_codec(""), std::nullopt);
}

}  // namespace
}  // namespace handoff::media
