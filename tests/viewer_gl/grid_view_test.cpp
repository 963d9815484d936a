// Several topics of a recording side by side (PlayOptions::topics,
// handoff-view --topic A --topic B / --all-images): the grid's shape, each
// tile's pixels and overlays against a viewer showing that frame alone, one
// timeline (every tile's log times: at each, each tile shows its newest frame
// at or before it; the clock, the topic whose first frame comes first, paces
// it; step, step back and seek move the tiles together), a tile's frame that
// will not decode, the composed --output, and an unknown topic. And the application's own streams
// (Viewer::show(frame, overlays, "left")): a tile per stream, each showing
// its newest frame. Headless (EGL), GL debug contexts on.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <handoff/frame_copy.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/viewer.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/mcap.hpp>
#include <handoff/media/png.hpp>
#include <handoff/media/recording.hpp>

#include "process.hpp"
#include "scratch_dir.hpp"
#include "tile_grid.hpp"
#include "viewer_frames.hpp"

namespace handoff::view::test {
namespace {

constexpr std::uint32_t kW = 96, kH = 64;
constexpr std::uint64_t kStart = 1'000'000'000ull;
constexpr std::uint64_t kMs = 1'000'000ull;

TEST(GridLayout, ShapeFitsTheTilesLargest) {
  EXPECT_EQ(grid_shape(1, 96, 64, 640, 240), (GridShape{1, 1}));
  EXPECT_EQ(grid_shape(2, 96, 64, 640, 240), (GridShape{2, 1}));  // side by side in a wide view
  EXPECT_EQ(grid_shape(2, 96, 64, 240, 640), (GridShape{1, 2}));  // stacked in a tall one
  EXPECT_EQ(grid_shape(3, 96, 64, 320, 240), (GridShape{2, 2}));
  EXPECT_EQ(grid_shape(4, 16, 9, 1600, 900), (GridShape{2, 2}));
  EXPECT_EQ(grid_shape(6, 16, 9, 2400, 900), (GridShape{3, 2}));
  const CellRect last = grid_cell(GridShape{3, 1}, 2, 100, 50);
  EXPECT_EQ(last.x, 66);
  EXPECT_EQ(last.w, 34);  // the last column takes the remainder
  EXPECT_EQ(last.h, 50);
}

// The tile under a view point (a double click's, the pixel inspector's):
// the cell holding it, the last column's and row's remainder included.
TEST(GridLayout, TileAtIsTheCellUnderThePoint) {
  const GridShape two_by_two{2, 2};
  EXPECT_EQ(tile_at(two_by_two, 4, 101, 51, 0, 0), 0);
  EXPECT_EQ(tile_at(two_by_two, 4, 101, 51, 49.9, 24.9), 0);
  EXPECT_EQ(tile_at(two_by_two, 4, 101, 51, 50, 0), 1);
  EXPECT_EQ(tile_at(two_by_two, 4, 101, 51, 100.5, 10), 1);  // the remainder column
  EXPECT_EQ(tile_at(two_by_two, 4, 101, 51, 10, 25), 2);
  EXPECT_EQ(tile_at(two_by_two, 4, 101, 51, 60, 50.5), 3);
  EXPECT_EQ(tile_at(two_by_two, 3, 101, 51, 60, 30), -1);  // the empty cell
  EXPECT_EQ(tile_at(two_by_two, 4, 101, 51, -0.5, 10), -1);
  EXPECT_EQ(tile_at(two_by_two, 4, 101, 51, 101, 10), -1);
  EXPECT_EQ(tile_at(GridShape{}, 1, 320, 240, 319, 239), 0);  // one tile shown alone fills the view
}

Frame pattern(int i) {
  Frame f = allocate_host_frame(PixelFormat::NV12, kW, kH);
  fill_frame(f, [&](std::uint32_t x, std::uint32_t y) {
    return Yuv{int((x * 3 + y * 5 + std::uint32_t(i) * 17) % 200 + 16), int((x + std::uint32_t(i) * 9) % 200 + 16),
               int((y + std::uint32_t(i) * 29) % 200 + 16)};
  });
  f.index = i;
  return f;
}

media::OverlayFrame box(int i) {
  media::OverlayFrame o;
  o.add_box(float(i * 4), 2, float(i * 4) + 20, 30, "n" + std::to_string(i), 0.5f, i);
  return o;
}

// What a viewer of its own shows of frame `i` with its box.
RgbaImage reference(int i) {
  ViewerOptions o;
  o.display = ViewerDisplay::Headless;
  o.vsync = false;
  Viewer v(o);
  v.show(pattern(i), box(i));
  return v.snapshot();
}

// Pixels of `image` in [x0, x0 + w) x [0, h) against `want` (w x h).
void expect_region(const RgbaImage& image, std::uint32_t x0, const RgbaImage& want, const std::string& what) {
  ASSERT_GE(image.width(), x0 + want.width()) << what;
  ASSERT_GE(image.height(), want.height()) << what;
  std::size_t differ = 0;
  for (std::uint32_t y = 0; y < want.height(); ++y)
    differ += std::memcmp(image.pixel(x0, y), want.pixel(0, y), want.stride()) != 0;
  EXPECT_EQ(differ, 0u) << what << ": rows that differ";
}

// A region that shows no frame: the background only.
void expect_empty_region(const RgbaImage& image, std::uint32_t x0, const std::string& what) {
  const std::uint8_t* p = image.pixel(x0, 0);
  for (std::uint32_t y = 0; y < kH; y += 7)
    for (std::uint32_t x = x0; x < x0 + kW; x += 5)
      ASSERT_EQ(std::memcmp(image.pixel(x, y), p, 4), 0) << what << " at " << x << "," << y;
}

class GridView : public ScratchDirTest {
 public:
  GridView() : ScratchDirTest("handoff-grid-view-") {}
  static ViewerOptions options() {
    ViewerOptions o;
    o.width = 640;  // wide: the two tiles side by side
    o.height = 240;
    o.display = ViewerDisplay::Headless;
    o.gl_debug = true;
    o.vsync = false;
    return o;
  }

 protected:
  // /a: frames 0..5 every 40 ms from 1 s; /b: frames 10..12 every 80 ms from 1.02 s.
  void SetUp() override {
    ScratchDirTest::SetUp();
    media::RecordingWriter w(path("two.mcap"), {.block_when_full = true});
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(w.write(pattern(i), box(i), "/a", kStart + std::uint64_t(i) * 40 * kMs));
    for (int i = 0; i < 3; ++i)
      ASSERT_TRUE(w.write(pattern(10 + i), box(10 + i), "/b", kStart + 20 * kMs + std::uint64_t(i) * 80 * kMs));
    w.close();
    file_ = path("two.mcap");
  }
  std::unique_ptr<Viewer> paused_grid(std::vector<std::string> topics, bool all_images = false) {
    auto v = std::make_unique<Viewer>(options());
    v->set_paused(true);
    Viewer::PlayOptions p;
    p.source = Viewer::Source::File;
    p.file = file_;
    p.topics = std::move(topics);
    p.all_images = all_images;
    p.loop = false;
    p.close_at_end = false;
    v->play(p);
    return v;
  }
  // The composed frame shows /a's frame `a` on the left and /b's `b` on the right (-1: nothing yet).
  void expect_tiles(Viewer& v, int a, int b, const std::string& what) {
    const RgbaImage shot = v.snapshot();
    ASSERT_EQ(shot.width(), 2 * kW) << what;
    ASSERT_EQ(shot.height(), kH) << what;
    expect_region(shot, 0, reference(a), what + ": /a tile");
    if (b < 0) expect_empty_region(shot, kW, what + ": /b tile");
    else expect_region(shot, kW, reference(b), what + ": /b tile");
  }
  std::string file_;
};

// The timeline is both topics' times: /a's every 40 ms from 1.00 s and /b's
// at 1.02, 1.10 and 1.18 s. A step goes to the next of them.
TEST_F(GridView, EachStepIsTheNextTimeOfAnyTile) {
  auto v = paused_grid({"/a", "/b"});
  expect_tiles(*v, 0, -1, "start (1.00 s: /b has nothing yet)");
  v->step();
  expect_tiles(*v, 0, 10, "step (1.02 s: /b's first frame)");
  v->step();
  expect_tiles(*v, 1, 10, "step (1.04 s)");
  v->step();
  expect_tiles(*v, 2, 10, "step (1.08 s)");
  v->step();
  expect_tiles(*v, 2, 11, "step (1.10 s)");
  v->step();
  expect_tiles(*v, 3, 11, "step (1.12 s)");
  v->seek(5);
  expect_tiles(*v, 5, 12, "seek 5 (1.20 s)");
  v->step_back();
  expect_tiles(*v, 4, 12, "step back (1.18 s)");
  v->step_back();
  expect_tiles(*v, 4, 11, "step back (1.16 s)");
  v->step_back();
  expect_tiles(*v, 3, 11, "step back (1.12 s)");
  v->step_back();
  expect_tiles(*v, 2, 11, "step back (1.10 s)");
  v->seek(0);
  expect_tiles(*v, 0, -1, "seek 0 (1.00 s)");
  const RgbaImage view = v->snapshot(SnapshotKind::View);  // the grid fitted into the view, the panel over it
  EXPECT_EQ(view.width(), 640u);
  EXPECT_EQ(view.height(), 240u);
  EXPECT_EQ(v->diagnostics().gl_errors, 0u) << v->diagnostics().first_gl_error;
}

// The topic whose first frame comes first (/a at 1.00 s) is the clock
// wherever it is listed; the tiles stay in the order given, and every frame of
// each topic is shown on the way, whatever the order.
TEST_F(GridView, TheEarliestTopicSetsTheClockWhereverItIsListed) {
  auto v = paused_grid({"/b", "/a"});
  RgbaImage shot = v->snapshot();  // 1.00 s: /a frame 0; /b has nothing yet
  ASSERT_EQ(shot.width(), 2 * kW);
  expect_empty_region(shot, 0, "/b at 1.00 s");
  expect_region(shot, kW, reference(0), "/a at 1.00 s");
  // 1.02, 1.04, 1.08, 1.10, 1.12, 1.16, 1.18, 1.20 s
  const int b_at[] = {10, 10, 10, 11, 11, 11, 12, 12};
  const int a_at[] = {0, 1, 2, 2, 3, 4, 4, 5};
  for (int step = 1; step <= 8; ++step) {
    v->step();
    shot = v->snapshot();
    expect_region(shot, 0, reference(b_at[step - 1]), "/b after step " + std::to_string(step));
    expect_region(shot, kW, reference(a_at[step - 1]), "/a after step " + std::to_string(step));
  }
  v->seek(2);  // the clock topic's frame indices
  shot = v->snapshot();
  expect_region(shot, 0, reference(10), "/b at /a's frame 2 (1.08 s)");
  expect_region(shot, kW, reference(2), "/a frame 2");
}

// tiles(): what the panel lists of each tile (its topic, frame, log time and
// offset from the clock tile); /a (6 frames) is the clock, listed second.
TEST_F(GridView, TilesListTheirFrameTimeAndOffsetFromTheClock) {
  auto v = paused_grid({"/b", "/a"});
  (void)v->snapshot();
  std::vector<Viewer::TileStatus> t = v->tiles();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].name, "/b");
  EXPECT_EQ(t[0].frame, -1) << "1.00 s: /b has nothing yet";
  EXPECT_FALSE(t[0].clock);
  EXPECT_EQ(t[1].name, "/a");
  EXPECT_EQ(t[1].frame, 0);
  EXPECT_EQ(t[1].time_ns, kStart);
  EXPECT_TRUE(t[1].clock);
  v->seek(3);  // 1.12 s: /b's newest is its frame 1 (1.10 s)
  (void)v->snapshot();
  t = v->tiles();
  EXPECT_EQ(t[0].frame, 1);
  EXPECT_EQ(t[0].time_ns, kStart + 100 * kMs);
  EXPECT_EQ(t[0].offset_ns, -20 * std::int64_t(kMs));
  EXPECT_EQ(t[1].frame, 3);
  EXPECT_EQ(t[1].time_ns, kStart + 120 * kMs);
  EXPECT_EQ(t[1].offset_ns, 0);
}

// focus_tile (a double-click or the G key in a window): the view shows that
// tile alone, as a viewer of that stream alone would; the composed frame
// still has every tile; -1 gives the grid back.
TEST_F(GridView, AFocusedTileFillsTheViewAndTheComposedFrameKeepsAll) {
  ViewerOptions o = options();
  o.show_ui = false;  // the view alone, no panel over it
  Viewer v(o);
  v.set_paused(true);
  Viewer::PlayOptions p;
  p.source = Viewer::Source::File;
  p.file = file_;
  p.topics = {"/a", "/b"};
  p.loop = false;
  p.close_at_end = false;
  v.play(p);
  v.seek(1);
  (void)v.snapshot();
  const RgbaImage grid_view = v.snapshot(SnapshotKind::View);
  EXPECT_EQ(v.focused_tile(), -1);
  v.focus_tile(1);
  EXPECT_EQ(v.focused_tile(), 1);
  const RgbaImage focused = v.snapshot(SnapshotKind::View);
  Viewer alone(o);  // /b's frame 10 with its box, alone in the same view
  alone.show(pattern(10), box(10));
  (void)alone.snapshot();
  const RgbaImage want = alone.snapshot(SnapshotKind::View);
  ASSERT_EQ(focused.width(), want.width());
  ASSERT_EQ(focused.height(), want.height());
  // 96 x 64 fitted into 640 x 240: 360 x 240 at x 140 .. 500.
  auto differing = [](const RgbaImage& a, const RgbaImage& b) {
    std::size_t n = 0;
    for (std::uint32_t y = 0; y < a.height(); ++y)
      for (std::uint32_t x = 142; x < 498; ++x) n += std::memcmp(a.pixel(x, y), b.pixel(x, y), 4) != 0;
    return n;
  };
  EXPECT_EQ(differing(focused, want), 0u) << "focused: /b's tile fitted alone, as a viewer of it alone";
  EXPECT_GT(differing(focused, grid_view), 10000u) << "focused, the view is not the grid";
  expect_tiles(v, 1, 10, "the composed frame keeps both tiles");
  EXPECT_THROW(v.focus_tile(2), UsageError);
  EXPECT_THROW(v.focus_tile(-2), UsageError);
  v.focus_tile(-1);
  EXPECT_EQ(differing(v.snapshot(SnapshotKind::View), grid_view), 0u) << "-1: the grid again";
  EXPECT_EQ(v.diagnostics().gl_errors, 0u) << v.diagnostics().first_gl_error;
}

TEST_F(GridView, AllImagesShowsEveryImageTopic) {
  auto v = paused_grid({}, true);
  v->step();
  v->step();
  expect_tiles(*v, 1, 10, "--all-images, two steps (1.04 s)");
}

TEST_F(GridView, ATopicListedTwiceIsRefused) {
  Viewer v(options());
  Viewer::PlayOptions p;
  p.source = Viewer::Source::File;
  p.file = file_;
  p.topics = {"/a", "/b", "/a"};
  try {
    v.play(p);
    ADD_FAILURE() << "a topic listed twice played";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("/a twice"), std::string::npos) << e.what();
  }
}

// As many tiles as live streams (Viewer::kMaxStreams): more topics named is
// refused (PlayOptions::topics' UsageError, --topic's exit 2, naming the
// limit); --all-images shows the first 16 listed and names the others in a
// warning.
TEST_F(GridView, AtMostKMaxStreamsTopicsAreShown) {
  const std::string many = path("many.mcap");
  std::vector<std::string> topics;
  {
    media::RecordingWriter w(many, {.block_when_full = true});
    for (std::size_t i = 0; i < Viewer::kMaxStreams + 2; ++i) {
      topics.push_back((i < 10 ? "/t0" : "/t") + std::to_string(i));
      ASSERT_TRUE(w.write(pattern(int(i)), {}, topics.back(), kStart + i * kMs));
    }
    w.close();
  }
  Viewer v(options());
  v.set_paused(true);
  Viewer::PlayOptions p;
  p.source = Viewer::Source::File;
  p.file = many;
  p.topics.assign(topics.begin(), topics.begin() + Viewer::kMaxStreams + 1);
  p.loop = false;
  p.close_at_end = false;
  try {
    v.play(p);
    ADD_FAILURE() << "17 topics played";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("17 topics; a viewer shows at most 16"), std::string::npos) << e.what();
  }
  p.topics.clear();
  p.all_images = true;
  v.play(p);
  v.step();
  const auto tiles = v.tiles();
  ASSERT_EQ(tiles.size(), Viewer::kMaxStreams);
  EXPECT_EQ(tiles.back().name, "/t15");

  std::vector<std::string> args{"--headless", many};
  for (std::size_t i = 0; i <= Viewer::kMaxStreams; ++i) args.insert(args.end(), {"--topic", topics[i]});
  const auto refused = run_program(HANDOFF_VIEW_EXE, args);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("--topic: 17 topics; at most 16"), std::string::npos) << refused.output;
  const auto all = run_program(HANDOFF_VIEW_EXE, {"--headless", "--fast", "--all-images", many});
  EXPECT_EQ(all.exit_code, 0) << all.output;
  EXPECT_NE(all.output.find("18 image topics; a viewer shows at most 16 side by side: showing the first 16, "
                            "leaving out /t16, /t17 (use --topic to pick)"),
            std::string::npos)
      << all.output;
}

// /a: frames 0..3 every 100 ms from 1.00 s; /b: 10 at 1.05 s, a frame of
// another size (malformed) at 1.21 s, 12 at 1.26 s and 13 at 1.50 s, after
// /a's last. No overlays.
void write_gaps(const std::string& file) {
  media::mcap::Writer w(file);
  const auto schema = w.add_schema(media::kRawImageSchema, "protobuf", media::raw_image_descriptor_set());
  const auto metadata = media::colorimetry_metadata(pattern(0).colorimetry);  // as RecordingWriter writes it
  const auto a = w.add_channel(schema, "/a", "protobuf", metadata), b = w.add_channel(schema, "/b", "protobuf", metadata);
  std::vector<std::uint8_t> msg;
  for (int i = 0; i < 4; ++i) {
    media::encode_raw_image(pattern(i), 0, msg);
    w.write(a, std::uint32_t(i), kStart + std::uint64_t(i) * 100 * kMs, 0, msg);
  }
  const std::uint64_t b_times[] = {50, 210, 260, 500};
  for (int i = 0; i < 4; ++i) {
    media::encode_raw_image(i == 1 ? allocate_host_frame(PixelFormat::NV12, kW / 2, kH) : pattern(10 + i), 0, msg);
    w.write(b, std::uint32_t(i), kStart + b_times[i] * kMs, 0, msg);
  }
  w.close();
}

// What a viewer of its own shows of frame `i`, without overlays.
RgbaImage plain(int i) {
  ViewerOptions o;
  o.display = ViewerDisplay::Headless;
  o.vsync = false;
  Viewer v(o);
  v.show(pattern(i));
  return v.snapshot();
}

// A recording whose second topic starts later, has frames after the first
// topic's last, and one frame that will not decode (a RawImage whose data is
// cut short): every good frame of each topic is shown, at its time; the bad
// one is skipped once, its tile keeping its newest good frame (never a later
// one); the play ends after the last frame of either topic.
TEST_F(GridView, EveryGoodFrameOfEachTopicIsShownAndABadOneSkippedOnce) {
  const std::string file = path("gaps.mcap");
  write_gaps(file);
  auto v = std::make_unique<Viewer>(options());
  v->set_paused(true);
  Viewer::PlayOptions p;
  p.source = Viewer::Source::File;
  p.file = file;
  p.topics = {"/b", "/a"};
  p.loop = false;
  p.close_at_end = false;
  v->play(p);
  // 1.00, 1.05, 1.10, 1.20, 1.21 (bad: no change), 1.26, 1.30, 1.50 s
  struct At { int a, b; };
  const At want[] = {{0, -1}, {0, 10}, {1, 10}, {2, 10}, {2, 10}, {2, 12}, {3, 12}, {3, 13}};
  for (std::size_t k = 0; k < std::size(want); ++k) {
    if (k) v->step();
    const RgbaImage shot = v->snapshot();
    ASSERT_EQ(shot.width(), 2 * kW);
    const std::string what = "time " + std::to_string(k);
    if (want[k].b < 0) expect_empty_region(shot, 0, what + ": /b");
    else expect_region(shot, 0, plain(want[k].b), what + ": /b");
    expect_region(shot, kW, plain(want[k].a), what + ": /a");
  }
  v->seek(0);  // back over the bad frame, and forward again: it is reported once
  for (int k = 0; k < 7; ++k) v->step();
  EXPECT_EQ(v->diagnostics().frame_errors, 1u) << v->diagnostics().first_frame_error;
}

// The same file played to its end by handoff-view: a PNG for each time of the
// timeline where a tile changed (the bad frame's time changes nothing), the
// last after /a's last frame.
TEST_F(GridView, CliOutputHasAFrameForEveryTimeOfEitherTopic) {
  const std::string file = path("gaps.mcap");
  write_gaps(file);
  for (const auto& order : {std::vector<std::string>{"--topic", "/a", "--topic", "/b"},
                            std::vector<std::string>{"--topic", "/b", "--topic", "/a"}}) {
    const std::string out = path("out" + order[1].substr(1));
    std::vector<std::string> args{"--headless", file, "--window", "640x240", "--fast", "--output", out};
    args.insert(args.end(), order.begin(), order.end());
    const auto r = run_program(HANDOFF_VIEW_EXE, args);
    ASSERT_FALSE(r.timed_out) << r.output;
    EXPECT_EQ(r.exit_code, 1) << r.output;  // the malformed frame: played past, said, exit 1
    EXPECT_NE(r.output.find("1 malformed frame(s) skipped"), std::string::npos) << r.output;
    std::size_t pngs = 0;
    for (const auto& e : std::filesystem::directory_iterator(out)) pngs += e.path().extension() == ".png";
    EXPECT_EQ(pngs, 7u) << r.output;
    const media::Image8 last = media::read_png(std::filesystem::path(out) / "frame_000006.png", 4);
    const RgbaImage shot(last.width, last.height, last.pixels);
    const bool a_first = order[1] == "/a";
    expect_region(shot, a_first ? 0 : kW, plain(3), "--output, last frame, /a");
    expect_region(shot, a_first ? kW : 0, plain(13), "--output, last frame, /b");
  }
}

TEST_F(GridView, OneTopicInTheListPlaysAsBefore) {
  auto v = paused_grid({"/b"});
  const RgbaImage shot = v->snapshot();
  ASSERT_EQ(shot.width(), kW);
  expect_region(shot, 0, reference(10), "/b alone");
}

TEST_F(GridView, AnUnknownTopicNamesTheTopicsThere) {
  Viewer v(options());
  Viewer::PlayOptions p;
  p.source = Viewer::Source::File;
  p.file = file_;
  p.topics = {"/a", "/nope"};
  try {
    v.play(p);
    ADD_FAILURE() << "an unknown topic played";
  } catch (const media::ParseError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("/nope"), std::string::npos) << m;
    EXPECT_NE(m.find("/a"), std::string::npos) << m;
    EXPECT_NE(m.find("/b"), std::string::npos) << m;
  }
  Viewer scene(options());
  Viewer::PlayOptions s;
  s.topics = {"/a", "/b"};  // the scene has no topics
  EXPECT_THROW(scene.play(s), UsageError);
}

// handoff-view: --output writes the composed frames (every tile, overlays);
// a missing topic exits 1 naming the topics there are.
TEST_F(GridView, CliWritesTheComposedViewAndRefusesAMissingTopic) {
  const std::string out = path("out");
  const auto r = run_program(HANDOFF_VIEW_EXE, {"--headless", "--gl-debug", file_, "--topic", "/a", "--topic", "/b",
                                                "--window", "640x240", "--fast", "--output", out});
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::size_t pngs = 0;
  for (const auto& e : std::filesystem::directory_iterator(out)) pngs += e.path().extension() == ".png";
  EXPECT_EQ(pngs, 9u) << r.output;  // one per time of either topic: /a's 6, /b's 3
  const media::Image8 last = media::read_png(std::filesystem::path(out) / "frame_000008.png", 4);
  ASSERT_EQ(last.width, 2 * kW);
  ASSERT_EQ(last.height, kH);
  const RgbaImage shot(last.width, last.height, last.pixels);
  expect_region(shot, 0, reference(5), "--output, last frame, /a");
  expect_region(shot, kW, reference(12), "--output, last frame, /b");

  const auto bad = run_program(HANDOFF_VIEW_EXE, {"--headless", file_, "--topic", "/a", "--topic", "/nope"});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("/nope"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("/b"), std::string::npos) << bad.output;
  const auto no_file = run_program(HANDOFF_VIEW_EXE, {"--headless", "--all-images"});
  EXPECT_EQ(no_file.exit_code, 2) << no_file.output;
  EXPECT_NE(no_file.output.find("--all-images"), std::string::npos) << no_file.output;
}

// Viewer::show(frame, overlays, stream): a tile per stream in the order they
// came, each with its newest frame and its own overlays; unnamed frames go to
// the first tile, which took the first stream's name.
TEST(StreamGrid, EachStreamShowsItsNewestFrameInItsTile) {
  Viewer v(GridView::options());
  v.show(pattern(1), box(1), "left");
  const RgbaImage one = v.snapshot();
  ASSERT_EQ(one.width(), kW) << "one stream: no grid yet";
  expect_region(one, 0, reference(1), "left alone");
  v.show(pattern(10), box(10), "right");
  RgbaImage shot = v.snapshot();
  ASSERT_EQ(shot.width(), 2 * kW);
  ASSERT_EQ(shot.height(), kH);
  expect_region(shot, 0, reference(1), "left");
  expect_region(shot, kW, reference(10), "right");
  v.show(pattern(2), box(2), "left");
  shot = v.snapshot();
  expect_region(shot, 0, reference(2), "left's newer frame");
  expect_region(shot, kW, reference(10), "right unchanged");
  v.show(pattern(3), box(3));  // unnamed: the first tile, "left"
  v.show(pattern(11), box(11), "right");
  shot = v.snapshot();
  expect_region(shot, 0, reference(3), "unnamed into the first tile");
  expect_region(shot, kW, reference(11), "right's newer frame");
  EXPECT_EQ(v.stats().submitted, 5u);
  EXPECT_EQ(v.diagnostics().gl_errors, 0u) << v.diagnostics().first_gl_error;
}

// Paused, every tile keeps its frame; a step lets each stream's next one through.
TEST(StreamGrid, PauseAndStepMoveEveryTile) {
  Viewer v(GridView::options());
  v.show(pattern(1), box(1), "a");
  v.show(pattern(10), box(10), "b");
  (void)v.snapshot();
  v.set_paused(true);
  v.show(pattern(2), box(2), "a");
  v.show(pattern(11), box(11), "b");
  RgbaImage shot = v.snapshot();
  expect_region(shot, 0, reference(1), "paused: a keeps its frame");
  expect_region(shot, kW, reference(10), "paused: b keeps its frame");
  v.step();
  v.set_paused(false);  // the snapshot then waits for the newest of each stream
  shot = v.snapshot();
  expect_region(shot, 0, reference(2), "after the step: a");
  expect_region(shot, kW, reference(11), "after the step: b");
}

// A stream shown into by acquire / present, and the limits on names and tiles.
TEST(StreamGrid, AcquireNamesAStreamAndTheLimitsAreChecked) {
  Viewer v(GridView::options());
  v.show(pattern(1), box(1));  // unnamed: the first tile keeps no name
  {
    ViewerFrame slot = v.acquire(PixelFormat::NV12, kW, kH, {}, "second");
    ASSERT_EQ(slot.frame().memory, MemoryKind::Host) << "no CUDA here: host-mapped buffers";
    copy_frame(pattern(12), slot.frame());
    v.present(std::move(slot), box(12));
  }
  const RgbaImage shot = v.snapshot();
  ASSERT_EQ(shot.width(), 2 * kW);
  expect_region(shot, 0, reference(1), "the unnamed first tile");
  expect_region(shot, kW, reference(12), "the acquired stream");
  EXPECT_THROW(v.show(pattern(1), {}, std::string(65, 's')), UsageError);
  for (std::size_t i = 2; i < Viewer::kMaxStreams; ++i) v.show(pattern(int(i)), {}, "s" + std::to_string(i));
  EXPECT_THROW(v.show(pattern(1), {}, "one too many"), UsageError);
  v.show(pattern(2), {}, "s2");  // an existing stream still takes frames
  const RgbaImage all = v.snapshot();
  EXPECT_EQ(all.width(), 6 * kW) << "16 tiles of 96x64 fill a 640x240 view largest as 6 x 3";
  EXPECT_EQ(all.height(), 3 * kH);
  EXPECT_EQ(v.diagnostics().gl_errors, 0u) << v.diagnostics().first_gl_error;
}

}  // namespace
}  // namespace handoff::view::test
