// Overlay JSON Lines: every form of the schema, bad lines skipped with their
// line number, a 10,000-box line, colours, filters and label placement.
#include <handoff/log.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/overlay.hpp>

#include "log_capture.hpp"
#include "test_util.hpp"

#include <gmock/gmock.h>

#include <mutex>
#include <set>

namespace handoff::media {
namespace {

using test::message_of;
using ::testing::HasSubstr;

OverlayFrame parse(std::string_view line, OverlayParseOptions o = {}) {
  OverlayLineParser p(o);
  OverlayFrame f;
  p.parse(line, f, "t.jsonl", 1);
  return f;
}

std::string parse_error(std::string_view line, OverlayParseOptions o = {}) {
  return message_of<ParseError>([&] { parse(line, o); });
}

TEST(OverlayParse, MinimumForm) {
  const OverlayFrame f =
      parse(R"({"frame": 0, "objects": [{"box": [10, 20, 30, 40], "label": "car", "score": 0.9, "class_id": 2}]})");
  EXPECT_EQ(f.frame, 0);
  ASSERT_EQ(f.objects.size(), 1u);
  const OverlayObject& o = f.objects[0];
  EXPECT_TRUE(o.has_box);
  EXPECT_FLOAT_EQ(o.x0, 10);
  EXPECT_FLOAT_EQ(o.y0, 20);
  EXPECT_FLOAT_EQ(o.x1, 40);
  EXPECT_FLOAT_EQ(o.y1, 60);
  EXPECT_EQ(f.text(o.label), "car");
  EXPECT_FLOAT_EQ(o.score, 0.9f);
  EXPECT_EQ(o.class_id, 2);
  EXPECT_EQ(o.track_id, -1);
  EXPECT_FALSE(o.has_color);
}

TEST(OverlayParse, BoxFormatsAndNormalisation) {
  OverlayFrame f = parse(R"({"frame": 3, "box_format": "xyxy", "objects": [{"box": [1, 2, 11, 22]},
      {"box": [5, 5, 2, 2], "box_format": "xywh"}, {"box": [10, 10, 4, 6], "box_format": "cxcywh"}]})");
  ASSERT_EQ(f.objects.size(), 3u);
  EXPECT_FLOAT_EQ(f.objects[0].x1, 11);
  EXPECT_FLOAT_EQ(f.objects[0].y1, 22);
  EXPECT_FLOAT_EQ(f.objects[1].x1, 7);
  EXPECT_FLOAT_EQ(f.objects[2].x0, 8);
  EXPECT_FLOAT_EQ(f.objects[2].y0, 7);
  EXPECT_FLOAT_EQ(f.objects[2].x1, 12);
  EXPECT_FLOAT_EQ(f.objects[2].y1, 13);

  OverlayParseOptions size;
  size.frame_width = 200;
  size.frame_height = 100;
  f = parse(R"({"frame": 1, "normalized": true, "objects": [{"box": [0.1, 0.2, 0.5, 0.5],
      "keypoints": [[0.5, 0.5]], "polygon": [[0, 0], [1, 0], [1, 1]]}, {"box": [4, 4, 2, 2], "normalized": false}],
      "texts": [{"text": "hi", "pos": [0.25, 0.5]}]})", size);
  EXPECT_FLOAT_EQ(f.objects[0].x0, 20);
  EXPECT_FLOAT_EQ(f.objects[0].y0, 20);
  EXPECT_FLOAT_EQ(f.objects[0].x1, 120);
  EXPECT_FLOAT_EQ(f.objects[0].y1, 70);
  EXPECT_FLOAT_EQ(f.keypoints[0].x, 100);
  EXPECT_FLOAT_EQ(f.keypoints[0].y, 50);
  EXPECT_FLOAT_EQ(f.points[1].x, 200);
  EXPECT_FLOAT_EQ(f.points[2].y, 100);
  EXPECT_FLOAT_EQ(f.objects[1].x1, 6);
  EXPECT_FLOAT_EQ(f.texts[0].x, 50);
  EXPECT_FLOAT_EQ(f.texts[0].y, 50);

  // Scaling must not overflow to infinity.
  EXPECT_THAT(parse_error(R"({"frame": 1, "normalized": true, "objects": [{"keypoints": [[1e38, 0]]}]})", size),
              HasSubstr("objects[0].keypoints[0]: number out of range"));
  EXPECT_THAT(parse_error(R"({"frame": 1, "normalized": true, "polygons": [[[0, 0], [0, 1], [3e38, 0]]]})", size),
              HasSubstr("polygons[0][2]: number out of range"));
  EXPECT_THAT(parse_error(R"({"frame": 1, "normalized": true, "objects": [{"box": [0, 0, 3e38, 1]}]})", size),
              HasSubstr("objects[0].box: number out of range"));
  EXPECT_THAT(parse_error(R"({"frame": 1, "normalized": true, "objects": [{"box": [0, 0, 1, 1]}]})"),
              HasSubstr("t.jsonl: line 1: objects[0].box: normalized coordinates need the frame size"));
}

TEST(OverlayParse, EveryField) {
  const OverlayFrame f = parse(R"({"frame": 42, "objects": [
      {"box": [0, 0, 10, 10], "label": "person", "score": 0.75, "class_id": 0, "track_id": 17, "color": "#ff8800",
       "keypoints": [[1, 2], [3, 4, 0.5], [5, 6, 0.25]], "skeleton": [[0, 1], [1, 2]],
       "polygon": [[0, 0], [4, 0], [4, 4]], "polyline": [[1, 1], [2, 2]]},
      {"label": "no box", "color": [1, 2, 3]},
      {"box": [1, 1, 1, 1], "color": [10, 20, 30, 40], "color_note": "unknown keys are ignored"}],
    "polygons": [[[0, 0], [1, 0], [0, 1]]], "polylines": [[[5, 5], [6, 6], [7, 7]]],
    "texts": [{"text": "frame 42", "pos": [8, 9], "color": "#0f0"}, {"text": "no pos"}]})");
  EXPECT_EQ(f.frame, 42);
  ASSERT_EQ(f.objects.size(), 3u);
  const OverlayObject& p = f.objects[0];
  EXPECT_EQ(p.track_id, 17);
  EXPECT_TRUE(p.has_color);
  EXPECT_EQ(p.color, (Color8{255, 136, 0, 255}));
  ASSERT_EQ(p.keypoint_count, 3u);
  EXPECT_FLOAT_EQ(f.keypoints[p.keypoint_first].conf, 1.0f);
  EXPECT_FLOAT_EQ(f.keypoints[p.keypoint_first + 1].x, 3);
  EXPECT_FLOAT_EQ(f.keypoints[p.keypoint_first + 2].conf, 0.25f);
  ASSERT_EQ(p.edge_count, 2u);
  EXPECT_EQ(f.edges[p.edge_first + 1], (std::array<std::uint32_t, 2>{1, 2}));
  ASSERT_EQ(p.shape_count, 2u);
  EXPECT_TRUE(f.shapes[p.shape_first].closed);
  EXPECT_EQ(f.shapes[p.shape_first].point_count, 3u);
  EXPECT_FALSE(f.shapes[p.shape_first + 1].closed);
  EXPECT_EQ(f.shapes[p.shape_first + 1].object, 0);
  EXPECT_FALSE(f.objects[1].has_box);
  EXPECT_EQ(f.text(f.objects[1].label), "no box");
  EXPECT_EQ(f.objects[1].color, (Color8{1, 2, 3, 255}));
  EXPECT_EQ(f.objects[2].color, (Color8{10, 20, 30, 40}));
  EXPECT_FALSE(f.objects[2].has_score());
  ASSERT_EQ(f.shapes.size(), 4u);
  EXPECT_EQ(f.shapes[2].object, -1);
  EXPECT_TRUE(f.shapes[2].closed);
  EXPECT_EQ(f.shapes[3].point_count, 3u);
  EXPECT_FALSE(f.shapes[3].closed);
  ASSERT_EQ(f.texts.size(), 2u);
  EXPECT_EQ(f.text(f.texts[0].text), "frame 42");
  EXPECT_EQ(f.texts[0].color, (Color8{0, 255, 0, 255}));
  EXPECT_FLOAT_EQ(f.texts[0].y, 9);
  EXPECT_FALSE(f.texts[1].has_color);
}

TEST(OverlayParse, ErrorsNameTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {R"(not json)", "line 1: json: not valid JSON"},
      {R"([1, 2])", "json: expected an object, got an array"},
      {R"({"objects": []})", "frame: missing"},
      {R"({"frame": -1})", "frame: -1 is outside"},
      {R"({"frame": 1.5})", "frame: expected an integer"},
      {R"({"frame": "3"})", "frame: expected an integer, got a string"},
      {R"({"frame": 0, "objects": {}})", "objects: expected an array, got an object"},
      {R"({"frame": 0, "objects": [3]})", "objects[0]: expected an object, got a number"},
      {R"({"frame": 0, "objects": [{}, {"box": [1, 2, 3]}]})", "objects[1].box: expected 4 numbers, got 3 values"},
      {R"({"frame": 0, "objects": [{"box": [1, 2, "a", 4]}]})", "objects[0].box[2]: expected a number, got a string"},
      {R"({"frame": 0, "objects": [{"box": [1, 2, -3, 4]}]})", "objects[0].box: negative width or height"},
      {R"({"frame": 0, "box_format": "xyxy", "objects": [{"box": [5, 5, 1, 1]}]})", "x1 < x0"},
      {R"({"frame": 0, "box_format": "ltrb"})", "box_format: expected \"xywh\""},
      {R"({"frame": 0, "objects": [{"box": [1e300, 0, 1, 1]}]})", "objects[0].box[0]: number out of range"},
      {R"({"frame": 0, "objects": [{"score": "high"}]})", "objects[0].score: expected a number"},
      {R"({"frame": 0, "objects": [{"class_id": -2}]})", "objects[0].class_id: -2 is outside"},
      {R"({"frame": 0, "objects": [{"track_id": 1.5}]})", "objects[0].track_id: expected an integer"},
      {R"({"frame": 0, "objects": [{"label": 7}]})", "objects[0].label: expected a string, got a number"},
      {R"({"frame": 0, "objects": [{"color": "red"}]})", "objects[0].color: expected \"#rrggbb\""},
      {R"({"frame": 0, "objects": [{"color": [1, 2]}]})", "objects[0].color: expected [r, g, b]"},
      {R"({"frame": 0, "objects": [{"color": [1, 2, 300]}]})", "objects[0].color[2]: 300 is outside 0..255"},
      {R"({"frame": 0, "objects": [{"keypoints": [[1]]}]})", "objects[0].keypoints[0]: expected [x, y] or [x, y, conf]"},
      {R"({"frame": 0, "objects": [{"keypoints": [[1, 1], [2, 2]], "skeleton": [[0, 2]]}]})",
       "objects[0].skeleton[0][1]: 2 is outside 0..1"},
      {R"({"frame": 0, "objects": [{"skeleton": [[0, 1]]}]})", "objects[0].skeleton[0]: skeleton without keypoints"},
      {R"({"frame": 0, "objects": [{"polygon": [[0, 0], [1, 1]]}]})", "objects[0].polygon: needs at least 3 points, got 2"},
      {R"({"frame": 0, "objects": [{"polyline": [[0, 0], [1]]}]})", "objects[0].polyline[1]: expected [x, y]"},
      {R"({"frame": 0, "polygons": [[[0, 0]]]})", "polygons[0]: needs at least 3 points"},
      {R"({"frame": 0, "texts": [{"pos": [1, 1]}]})", "texts[0].text: missing"},
      {R"({"frame": 0, "texts": [{"text": "a", "pos": [1]}]})", "texts[0].pos: expected [x, y]"},
      {R"({"frame": 0, "normalized": "yes"})", "normalized: expected true or false, got a string"},
      {R"({"frame": 0, "objects": [{"box": [0, 0, 1, 1]}])", "json: not valid JSON"},
  };
  for (auto [line, want] : cases) {
    const std::string m = parse_error(line);
    EXPECT_THAT(m, HasSubstr("t.jsonl: line 1: ")) << line;
    EXPECT_THAT(m, HasSubstr(want)) << line;
  }
}

TEST(OverlayParse, CapsLimitHostileLines) {
  OverlayParseOptions o;
  o.max_objects = 2;
  EXPECT_THAT(parse_error(R"({"frame": 0, "objects": [{}, {}, {}]})", o), HasSubstr("objects: 3 objects exceed the cap of 2"));
  o.max_objects = 100;
  o.max_points = 3;
  EXPECT_THAT(parse_error(R"({"frame": 0, "polylines": [[[0, 0], [1, 1]], [[0, 0], [1, 1]]]})", o),
              HasSubstr("polylines[1]: too many points"));
}

TEST(OverlayParse, TenThousandBoxes) {
  std::string line = R"({"frame": 7, "box_format": "xyxy", "objects": [)";
  for (int i = 0; i < 10000; ++i) {
    if (i) line += ", ";
    line += R"({"box": [)" + std::to_string(i % 1900) + ", " + std::to_string(i % 1000) + ", " +
            std::to_string(i % 1900 + 20) + ", " + std::to_string(i % 1000 + 30) + R"(], "label": "obj)" +
            std::to_string(i % 80) + R"(", "score": 0.)" + std::to_string(i % 100) + R"(, "class_id": )" +
            std::to_string(i % 80) + R"(, "track_id": )" + std::to_string(i) + "}";
  }
  line += "]}";
  OverlayLineParser p;
  OverlayFrame f;
  // Twice with the same parser and frame: capacity is reused and the result is the same.
  for (int round = 0; round < 2; ++round) {
    p.parse(line, f, "big.jsonl", 1);
    ASSERT_EQ(f.objects.size(), 10000u);
    const OverlayObject& o = f.objects[9999];
    EXPECT_FLOAT_EQ(o.x0, float(9999 % 1900));
    EXPECT_FLOAT_EQ(o.y1, float(9999 % 1000 + 30));
    EXPECT_EQ(o.track_id, 9999);
    EXPECT_EQ(o.class_id, 9999 % 80);
    EXPECT_EQ(f.text(o.label), "obj" + std::to_string(9999 % 80));
  }
}

TEST(OverlayStore, BadLinesAreSkippedReportedOnceAndLoadingContinues) {
  auto log = std::make_unique<handoff::test::LogCapture>();
  OverlayStore store;
  const std::string text =
      "{\"frame\": 0, \"objects\": [{\"box\": [1, 1, 2, 2]}]}\n"
      "\n"
      "{\"frame\": 1, \"objects\": [{\"box\": [1, 1]}]}\n"
      "{\"frame\": 2, \"texts\": [{\"text\": \"ok\"}]}\r\n"
      "garbage\n"
      "{\"frame\": 0, \"objects\": [{\"box\": [5, 5, 1, 1]}, {\"box\": [6, 6, 1, 1]}]}\n"
      "   \n"
      "{\"frame\": 9}";
  const std::size_t n = store.load_jsonl_text(text, "clip.jsonl");
  const std::vector<std::string> logged = log->texts();
  log.reset();
  EXPECT_EQ(n, 4u);  // lines 1, 4, 6, 8
  EXPECT_EQ(store.size(), 3u);
  ASSERT_NE(store.find(0), nullptr);
  EXPECT_EQ(store.find(0)->objects.size(), 2u) << "a later line for the same frame replaces the earlier one";
  EXPECT_EQ(store.find(1), nullptr);
  ASSERT_NE(store.find(2), nullptr);
  EXPECT_EQ(store.find(2)->text(store.find(2)->texts[0].text), "ok");
  ASSERT_NE(store.find(9), nullptr);
  EXPECT_TRUE(store.find(9)->empty());
  ASSERT_EQ(store.diagnostics().size(), 2u);
  EXPECT_EQ(store.diagnostics()[0].line, 3);
  EXPECT_EQ(store.diagnostics()[0].field, "objects[0].box");
  EXPECT_THAT(store.diagnostics()[0].message, HasSubstr("clip.jsonl: line 3: objects[0].box: expected 4 numbers"));
  EXPECT_EQ(store.diagnostics()[1].line, 5);
  EXPECT_EQ(store.diagnostics()[1].field, "json");
  ASSERT_EQ(logged.size(), 2u);
  EXPECT_THAT(logged[0], HasSubstr("clip.jsonl: line 3"));
  EXPECT_THAT(logged[1], HasSubstr("clip.jsonl: line 5"));
}

TEST(OverlayStore, ProgrammaticFrames) {
  OverlayStore store;
  OverlayFrame f;
  const std::uint32_t person = f.add_box(10, 10, 50, 90, "person", 0.8f, 0, 3);
  const Keypoint kps[3] = {{20, 20, 1}, {30, 40, 0.5f}, {25, 80, 1}};
  const std::array<std::uint32_t, 2> edges[2] = {{0, 1}, {1, 2}};
  f.set_keypoints(person, kps, 3, edges, 2);
  const Point2 tri[3] = {{0, 0}, {5, 0}, {0, 5}};
  f.add_shape(tri, 3, true, static_cast<std::int32_t>(person));
  f.add_shape(tri, 3, false);
  f.add_label_text(1, 2, "hello");
  store.set(5, f);
  const OverlayFrame* got = store.find(5);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->frame, 5);
  EXPECT_EQ(got->objects[0].keypoint_count, 3u);
  EXPECT_EQ(got->objects[0].shape_count, 1u);
  EXPECT_EQ(got->text(got->texts[0].text), "hello");
  const std::array<std::uint32_t, 2> bad[1] = {{0, 3}};
  EXPECT_THROW(f.set_keypoints(person, kps, 3, bad, 1), UsageError);
  EXPECT_THROW(f.add_shape(tri, 3, true, 7), UsageError);
  store.erase(5);
  EXPECT_EQ(store.find(5), nullptr);
}

TEST(OverlayStore, MissingFileIsAnError) {
  OverlayStore store;
  EXPECT_THAT(message_of<ParseError>([&] { store.load_jsonl("/nonexistent/o.jsonl"); }),
              HasSubstr("/nonexistent/o.jsonl: open"));
}

TEST(OverlayStore, SampleFileParsesCleanly) {
  OverlayStore store;
  OverlayParseOptions o;
  o.frame_width = 640;
  o.frame_height = 360;
  const std::size_t n = store.load_jsonl(std::filesystem::path(HANDOFF_TEST_DATA) / "overlays.jsonl", o);
  EXPECT_EQ(store.diagnostics().size(), 0u) << (store.diagnostics().empty() ? "" : store.diagnostics()[0].message);
  EXPECT_EQ(n, 3u);
  ASSERT_NE(store.find(0), nullptr);
  ASSERT_NE(store.find(1), nullptr);
  ASSERT_NE(store.find(2), nullptr);
  EXPECT_EQ(store.find(0)->objects.size(), 2u);
  EXPECT_EQ(store.find(1)->objects[0].keypoint_count, 17u);
  EXPECT_FLOAT_EQ(store.find(2)->objects[0].x1, 320.0f);  // normalized 0.5 of 640
}

TEST(OverlayColors, PaletteIsStableAndDistinctForSmallIds) {
  std::set<std::tuple<int, int, int>> seen;
  for (int id = 0; id < 20; ++id) {
    const Color8 c = class_color(id);
    EXPECT_EQ(c, class_color(id));
    seen.insert({c.r, c.g, c.b});
  }
  EXPECT_EQ(seen.size(), 20u);
  EXPECT_EQ(class_color(-1), (Color8{255, 255, 255, 255}));
  EXPECT_EQ(class_color(1000003), class_color(1000003));
  OverlayObject o;
  EXPECT_EQ(object_color(o), (Color8{}));
  o.track_id = 4;
  EXPECT_NE(object_color(o), (Color8{}));
  o.class_id = 2;
  EXPECT_EQ(object_color(o), class_color(2));
  o.has_color = true;
  o.color = Color8{1, 2, 3, 4};
  EXPECT_EQ(object_color(o), (Color8{1, 2, 3, 4}));
  EXPECT_EQ(parse_hex_color("#A0b1C2"), (Color8{0xA0, 0xB1, 0xC2, 255}));
  EXPECT_FALSE(parse_hex_color("#12345"));
  EXPECT_FALSE(parse_hex_color("123456"));
  EXPECT_FALSE(parse_hex_color("#12345g"));
}

TEST(OverlayFilter, ScoreClassAndToggles) {
  OverlayFrame f;
  f.add_box(0, 0, 1, 1, "a", 0.2f, 1);
  f.add_box(0, 0, 1, 1, "b", 0.8f, 2, 5);
  f.add_box(0, 0, 1, 1, "c");  // no score, no class
  OverlayFilter filter;
  std::vector<std::uint32_t> sel;
  filter.select(f, sel);
  EXPECT_EQ(sel, (std::vector<std::uint32_t>{0, 1, 2}));
  filter.min_score = 0.5f;
  filter.select(f, sel);
  EXPECT_EQ(sel, (std::vector<std::uint32_t>{1, 2}));
  filter.classes = {1};
  filter.select(f, sel);
  EXPECT_TRUE(sel.empty());
  filter.classes = {2, 7};
  filter.select(f, sel);
  EXPECT_EQ(sel, (std::vector<std::uint32_t>{1}));
  OverlayFilter all;
  EXPECT_EQ(object_caption(f, f.objects[1], all), "b 0.80 #5");
  all.scores = false;
  EXPECT_EQ(object_caption(f, f.objects[1], all), "b #5");
  all.labels = false;
  all.track_ids = false;
  EXPECT_EQ(object_caption(f, f.objects[1], all), "");
  OverlayFrame g;
  g.add_box(0, 0, 1, 1, {}, NAN, 9);
  EXPECT_EQ(object_caption(g, g.objects[0], OverlayFilter{}), "class 9");
}

TEST(OverlayLabels, PlacedAboveOrInsideAndClampedToTheView) {
  const RectF view{0, 0, 100, 50};
  RectF r = place_label({20, 30, 40, 10}, 30, 8, view);
  EXPECT_FLOAT_EQ(r.x, 20);
  EXPECT_FLOAT_EQ(r.y, 22);  // above
  r = place_label({20, 3, 40, 10}, 30, 8, view);
  EXPECT_FLOAT_EQ(r.y, 3);  // no room above: inside the top edge
  r = place_label({90, 20, 40, 10}, 30, 8, view);
  EXPECT_FLOAT_EQ(r.x, 70);  // clamped to the right edge
  r = place_label({-50, 60, 10, 10}, 30, 8, view);
  EXPECT_FLOAT_EQ(r.x, 0);
  EXPECT_FLOAT_EQ(r.y, 42);  // box below the view: pulled inside
  r = place_label({10, 10, 5, 5}, 300, 80, view);
  EXPECT_FLOAT_EQ(r.x, 0);  // larger than the view: pinned top-left
  EXPECT_FLOAT_EQ(r.y, 0);
  r = place_label({10, 10, 5, 5}, 30, 8, RectF{100, 200, 50, 50});
  EXPECT_FLOAT_EQ(r.x, 100);
  EXPECT_FLOAT_EQ(r.y, 200);
}

}  // namespace
}  // namespace handoff::media
