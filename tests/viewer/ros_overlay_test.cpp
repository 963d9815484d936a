// ROS 2 overlays (issue 24): vision_msgs/msg/Detection2DArray (Humble and
// older layouts) and foxglove_msgs/msg/ImageAnnotations decoded by definition
// into overlays; the namespace rule; bags whose detections are matched to
// their images by header stamp; bad detection messages left out with the
// topic, message index and field named while the images play on.
#include "../../media/src/ros_overlay.hpp"

#include <handoff/log.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>

#include "cdr_test_util.hpp"
#include "test_util.hpp"

#include <gmock/gmock.h>

#include <cmath>
#include <limits>

namespace handoff::media {
namespace {

using ros::CdrMessage;
using ros::MessageDefinition;
using test::CdrWriter;
using test::TempDir;
using ::testing::HasSubstr;

struct Det {
  double cx, cy, w, h;
  std::vector<std::pair<std::string, double>> results;
  std::string id;
  double theta = 0;
};

void header(CdrWriter& w, std::int32_t sec, std::uint32_t nanosec) { w.i32(sec).u32(nanosec).string("cam"); }

// A Detection2DArray in the vision_msgs 4 (Humble) layout.
std::vector<std::uint8_t> detections(std::int32_t sec, std::uint32_t nanosec, const std::vector<Det>& ds) {
  CdrWriter w;
  header(w, sec, nanosec);
  w.u32(std::uint32_t(ds.size()));
  for (const Det& d : ds) {
    header(w, sec, nanosec);
    w.u32(std::uint32_t(d.results.size()));
    for (const auto& [cls, score] : d.results) {
      w.string(cls).f64(score);
      for (int k = 0; k < 7 + 36; ++k) w.f64(k == 6 ? 1.0 : 0.0);  // pose (w = 1) and covariance
    }
    w.f64(d.cx).f64(d.cy).f64(d.theta).f64(d.w).f64(d.h).string(d.id);
  }
  return w.bytes();
}

CdrMessage decode(std::string_view type, const std::vector<std::uint8_t>& bytes) {
  return CdrMessage::decode(MessageDefinition::builtin(type), bytes, {"bag", "overlay topic \"/cam/detections\" message 0"});
}

TEST(RosOverlay, DetectionsBecomeBoxesWithTheBestHypothesisAndTrack) {
  const auto bytes = detections(1, 2, {{40, 30, 20, 10, {{"7", 0.25}, {"3", 0.75}}, "12"},
                                       {10, 10, 4, 6, {{"person", 0.5}}, "car-a"}});
  OverlayFrame out;
  ros::append_overlays(decode("vision_msgs/msg/Detection2DArray", bytes), out);
  ASSERT_EQ(out.objects.size(), 2u);
  const OverlayObject& a = out.objects[0];
  EXPECT_TRUE(a.has_box);
  EXPECT_FLOAT_EQ(a.x0, 30);
  EXPECT_FLOAT_EQ(a.x1, 50);
  EXPECT_FLOAT_EQ(a.y0, 25);
  EXPECT_FLOAT_EQ(a.y1, 35);
  EXPECT_EQ(a.class_id, 3);  // the best of the two hypotheses
  EXPECT_FLOAT_EQ(a.score, 0.75f);
  EXPECT_EQ(a.track_id, 12);
  EXPECT_EQ(out.text(a.label), "3");
  const OverlayObject& b = out.objects[1];
  EXPECT_EQ(b.class_id, -1);  // a class name is a label, not an id
  EXPECT_EQ(b.track_id, -1);
  EXPECT_EQ(out.text(b.label), "person #car-a");
  EXPECT_FLOAT_EQ(b.x0, 8);
  EXPECT_FLOAT_EQ(b.y1, 13);
  EXPECT_EQ(ros::overlay_stamp(decode("vision_msgs/Detection2DArray", bytes)), 1'000'000'002u);
}

TEST(RosOverlay, RotatedDetectionIsAPolygonOfItsCorners) {
  const auto bytes = detections(0, 0, {{10, 10, 4, 2, {}, "", std::acos(-1.0) / 2}});
  OverlayFrame out;
  ros::append_overlays(decode("vision_msgs/Detection2DArray", bytes), out);
  ASSERT_EQ(out.objects.size(), 1u);
  EXPECT_FALSE(out.objects[0].has_box);
  ASSERT_EQ(out.shapes.size(), 1u);
  EXPECT_EQ(out.shapes[0].object, 0);
  ASSERT_EQ(out.points.size(), 4u);
  EXPECT_NEAR(out.points[0].x, 11, 1e-4);  // (-2, -1) turned a quarter: (1, -2)
  EXPECT_NEAR(out.points[0].y, 8, 1e-4);
}

// vision_msgs 3 (Foxy, Galactic): center is a geometry_msgs/Pose2D, results carry id and score.
TEST(RosOverlay, OlderLayoutFromTheStoredDefinition) {
  constexpr std::string_view text =
      "std_msgs/Header header\nvision_msgs/Detection2D[] detections\n"
      "================================================================================\n"
      "MSG: vision_msgs/Detection2D\n"
      "std_msgs/Header header\nvision_msgs/ObjectHypothesisWithPose[] results\nvision_msgs/BoundingBox2D bbox\n"
      "sensor_msgs/Image source_img\nbool is_tracking\nstring tracking_id\n"
      "================================================================================\n"
      "MSG: vision_msgs/ObjectHypothesisWithPose\n"
      "string id\nfloat64 score\ngeometry_msgs/PoseWithCovariance pose\n"
      "================================================================================\n"
      "MSG: vision_msgs/BoundingBox2D\n"
      "geometry_msgs/Pose2D center\nfloat64 size_x\nfloat64 size_y\n";
  const auto def = MessageDefinition::parse("vision_msgs/msg/Detection2DArray", text);
  CdrWriter w;
  header(w, 3, 4);
  w.u32(1);
  header(w, 3, 4);
  w.u32(1).string("5").f64(0.9);
  for (int k = 0; k < 7 + 36; ++k) w.f64(0);
  w.f64(20).f64(20).f64(0).f64(10).f64(8);                     // center x y theta, size
  w.i32(0).u32(0).string("").u32(0).u32(0).string("").u8(0).u32(0).u32(0);  // empty source_img
  w.u8(0).string("t");
  OverlayFrame out;
  ros::append_overlays(CdrMessage::decode(def, w.bytes()), out);
  ASSERT_EQ(out.objects.size(), 1u);
  EXPECT_FLOAT_EQ(out.objects[0].x0, 15);
  EXPECT_FLOAT_EQ(out.objects[0].y0, 16);
  EXPECT_EQ(out.objects[0].class_id, 5);
  EXPECT_FLOAT_EQ(out.objects[0].score, 0.9f);
}

TEST(RosOverlay, NaNOrNegativeSizeNamesTheField) {
  OverlayFrame out;
  out.add_box(1, 1, 2, 2, "kept", NAN, -1, -1);
  const auto nan = detections(0, 0, {{1, 1, 2, 2, {}, ""}, {1, 1, std::numeric_limits<double>::quiet_NaN(), 2, {}, ""}});
  try {
    ros::append_overlays(decode("vision_msgs/Detection2DArray", nan), out);
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.field(), "vision_msgs/Detection2DArray.detections[1].bbox.size_x");
    EXPECT_THAT(e.what(), HasSubstr("overlay topic \"/cam/detections\" message 0"));
    EXPECT_THAT(e.what(), HasSubstr("is NaN"));
  }
  EXPECT_EQ(out.objects.size(), 1u);  // nothing of the bad message was added
  const auto negative = detections(0, 0, {{1, 1, 2, -2, {}, ""}});
  EXPECT_THROW(ros::append_overlays(decode("vision_msgs/Detection2DArray", negative), out), ParseError);
}

TEST(RosOverlay, CutShortAndOverlongSequenceNameTheField) {
  auto bytes = detections(0, 0, {{1, 1, 2, 2, {{"a", 1}}, "x"}});
  auto cut = bytes;
  cut.resize(cut.size() - 10);
  EXPECT_THROW(decode("vision_msgs/Detection2DArray", cut), ParseError);
  auto longer = bytes;
  longer[4 + 4 + 4 + 4 + 4 + 2] = 0xFF;  // detections' count (after the encapsulation, sec, nanosec, "cam")
  try {
    decode("vision_msgs/Detection2DArray", longer);
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.field(), "vision_msgs/Detection2DArray.detections");
  }
}

void color(CdrWriter& w, double r, double g, double b, double a) { w.f64(r).f64(g).f64(b).f64(a); }

TEST(RosOverlay, FoxgloveImageAnnotationsMapAsTheProtobufOnes) {
  CdrWriter w;
  w.u32(1);  // circles
  w.i32(7).u32(8).f64(50).f64(60).f64(10).f64(1);
  color(w, 0, 0, 0, 0);
  color(w, 1, 0, 0, 1);
  w.u32(1);  // points: one LINE_LOOP rectangle
  w.i32(7).u32(8).u8(2).u32(4);
  for (auto [x, y] : {std::pair{2.0, 3.0}, {12.0, 3.0}, {12.0, 9.0}, {2.0, 9.0}}) w.f64(x).f64(y);
  color(w, 0, 1, 0, 1);
  w.u32(0);
  color(w, 0, 0, 0, 0);
  w.f64(2);
  w.u32(1);  // texts
  w.i32(7).u32(8).f64(5).f64(30).string("hello").f64(10);
  color(w, 1, 1, 1, 1);
  color(w, 0, 0, 0, 1);
  const CdrMessage m = decode("foxglove_msgs/msg/ImageAnnotations", w.bytes());
  OverlayFrame out;
  ros::append_overlays(m, out);
  ASSERT_EQ(out.objects.size(), 1u);
  EXPECT_TRUE(out.objects[0].has_box);
  EXPECT_FLOAT_EQ(out.objects[0].x0, 2);
  EXPECT_FLOAT_EQ(out.objects[0].y1, 9);
  EXPECT_EQ(out.objects[0].color, (Color8{0, 255, 0, 255}));
  ASSERT_EQ(out.shapes.size(), 1u);  // the circle, as a polygon
  EXPECT_TRUE(out.shapes[0].closed);
  ASSERT_EQ(out.texts.size(), 1u);
  EXPECT_EQ(out.text(out.texts[0].text), "hello");
  EXPECT_FLOAT_EQ(out.texts[0].y, 20);  // Foxglove's baseline 30 less the font size
  EXPECT_EQ(ros::overlay_stamp(m), 7'000'000'008u);
}

// A ROS string is bytes: text that is not UTF-8 (Latin-1 here) is kept, its
// bad byte shown as U+FFFD, not the message lost (proto3 refuses such strings).
TEST(RosOverlay, AnnotationTextThatIsNotUtf8IsShownWithAReplacement) {
  CdrWriter w;
  w.u32(0);  // circles
  w.u32(0);  // points
  w.u32(1);  // texts
  w.i32(7).u32(8).f64(5).f64(30).string("caf\xE9").f64(10);
  color(w, 1, 1, 1, 1);
  color(w, 0, 0, 0, 1);
  const CdrMessage m = decode("foxglove_msgs/msg/ImageAnnotations", w.bytes());
  OverlayFrame out;
  ros::append_overlays(m, out);
  ASSERT_EQ(out.texts.size(), 1u);
  EXPECT_EQ(out.text(out.texts[0].text), "caf\xEF\xBF\xBD");
}

// Keyed as the protobuf message is (annotations_timestamp): with no circle or
// points, by the first text's stamp.
TEST(RosOverlay, TextsOnlyImageAnnotationsAreStampedByTheirFirstText) {
  CdrWriter w;
  w.u32(0);  // circles
  w.u32(0);  // points
  w.u32(2);  // texts
  for (std::uint32_t ns : {8u, 9u}) {
    w.i32(7).u32(ns).f64(5).f64(30).string("label").f64(10);
    color(w, 1, 1, 1, 1);
    color(w, 0, 0, 0, 1);
  }
  EXPECT_EQ(ros::overlay_stamp(decode("foxglove_msgs/msg/ImageAnnotations", w.bytes())), 7'000'000'008u);
  CdrWriter none;
  none.u32(0).u32(0).u32(0);
  EXPECT_EQ(ros::overlay_stamp(decode("foxglove_msgs/msg/ImageAnnotations", none.bytes())), std::nullopt);
}

TEST(RosOverlay, NamespaceRule) {
  EXPECT_EQ(ros::image_namespace("/cam/image_raw"), "/cam");
  EXPECT_EQ(ros::image_namespace("/cam/image_raw/compressed"), "/cam");
  EXPECT_EQ(ros::image_namespace("/image"), "/");
  EXPECT_EQ(ros::parent_namespace("/cam/detections"), "/cam");
  EXPECT_EQ(ros::parent_namespace("/detections"), "/");
  EXPECT_NE(ros::parent_namespace("/cam2/detections"), ros::image_namespace("/cam/image_raw"));
}

// --- In a bag -------------------------------------------------------------------------

std::filesystem::path write_bag(const TempDir& dir, bool bad_second, std::string_view definition = {}) {
  const auto path = dir / "bag.mcap";
  mcap::Writer wr(path);
  const auto image = wr.add_schema("sensor_msgs/msg/Image", "ros2msg", {});
  const auto det = wr.add_schema("vision_msgs/msg/Detection2DArray", "ros2msg",
                                 {reinterpret_cast<const std::uint8_t*>(definition.data()), definition.size()});
  const auto cam = wr.add_channel(image, "/cam/image_raw", "cdr");
  const auto ours = wr.add_channel(det, "/cam/detections", "cdr");
  const auto other = wr.add_channel(det, "/other/detections", "cdr");
  for (int k = 0; k < 3; ++k) {
    const std::uint64_t t = 1'000'000'000ull * (k + 1);
    wr.write(cam, std::uint32_t(k), t, 0,
             test::cdr_image(false, 100 + k, 500, "cam", 4, 4, "mono8", 0, 4, std::vector<std::uint8_t>(16, 9)));
    // Logged after its image, stamped with the image's stamp.
    auto d = detections(100 + k, 500, {{10.0 + k, 20, 4, 4, {{"1", 0.5}}, "3"}});
    if (bad_second && k == 1) d.resize(d.size() - 12);
    wr.write(ours, std::uint32_t(k), t + 5'000'000, 0, d);
    wr.write(other, std::uint32_t(k), t + 5'000'000, 0, detections(100 + k, 500, {{1, 1, 1, 1, {}, ""}, {2, 2, 1, 1, {}, ""}}));
  }
  wr.close();
  return path;
}

TEST(RosOverlayBag, DetectionsInTheImageNamespaceAreMatchedByStamp) {
  const TempDir dir;
  auto src = open_recording(write_bag(dir, false));
  EXPECT_EQ(src->overlay_topics(), std::vector<std::string>{"/cam/detections"});
  for (int k : {2, 0, 1}) {
    OverlayFrame out;
    ASSERT_TRUE(src->overlays_for(k, out));
    ASSERT_EQ(out.objects.size(), 1u);
    EXPECT_FLOAT_EQ(out.objects[0].x0, 8.0f + float(k)) << k;
    EXPECT_EQ(out.objects[0].track_id, 3);
  }
  RecordingOpenOptions o;
  o.overlay_topics = {"/other/detections"};
  auto picked = open_recording(write_bag(dir, false), o);
  OverlayFrame out;
  ASSERT_TRUE(picked->overlays_for(0, out));
  EXPECT_EQ(out.objects.size(), 2u);
  o.overlay_topics = {"/cam/image_raw"};
  try {
    open_recording(write_bag(dir, false), o);
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.field(), "overlay_topic");
  }
}

TEST(RosOverlayBag, BadDetectionMessageIsLeftOutWithAWarningAndThePlayGoesOn) {
  const TempDir dir;
  std::vector<std::string> logged;
  const LogSink previous = set_log_sink([&](LogLevel, std::string_view m) { logged.emplace_back(m); });
  auto src = open_recording(write_bag(dir, true));
  OverlayFrame out;
  EXPECT_FALSE(src->overlays_for(1, out));
  EXPECT_TRUE(out.objects.empty());
  ASSERT_TRUE(src->overlays_for(2, out));
  EXPECT_EQ(out.objects.size(), 1u);
  set_log_sink(previous);
  ASSERT_FALSE(logged.empty());
  EXPECT_THAT(logged.front(), HasSubstr("overlay topic \"/cam/detections\" message 1"));
  EXPECT_THAT(logged.front(), HasSubstr("Detection2DArray.detections"));
  HostFrame frame(PixelFormat::GRAY8, 4, 4, 16);
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(src->read_into(frame.target()));
}

TEST(RosOverlayBag, UnreadableDefinitionLeavesTheTopicOutUnlessAskedFor) {
  const TempDir dir;
  const auto path = write_bag(dir, false, "my_msgs/Unknown detections\n");
  auto src = open_recording(path);  // plays, without overlays
  EXPECT_TRUE(src->overlay_topics().empty());
  OverlayFrame out;
  EXPECT_FALSE(src->overlays_for(0, out));
  RecordingOpenOptions o;
  o.overlay_topics = {"/cam/detections"};
  EXPECT_THROW(open_recording(path, o), ParseError);
}

}  // namespace
}  // namespace handoff::media
