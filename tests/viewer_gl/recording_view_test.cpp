// Recording what a Viewer shows (ViewerOptions::record) and playing
// recordings back (Viewer::play of an .mcap file): the recorded planes equal
// the displayed frames byte for byte, overlays come back, seek / step both
// ways show the right frame, every pixel format round-trips, --topic picks a stream, a damaged tail plays to
// its last whole frame with one warning, and handoff-view's recording options
// fail clearly; sample.y4m plays as i420. Headless (EGL), GL debug contexts on; any KHR_debug error fails.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include <handoff/host_frame.hpp>
#include <handoff/viewer.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/mcap.hpp>
#include <handoff/media/recording.hpp>

#include <layer_samples.hpp>
#include <file_size_limit.hpp>
#include <log_capture.hpp>
#include <wait_support.hpp>
#include <handoff/media/scene.hpp>
#include <handoff/media/y4m_reader.hpp>

#include "process.hpp"
#include "scratch_dir.hpp"
#include "viewer_frames.hpp"

namespace handoff::view::test {
namespace {

using ::testing::HasSubstr;

constexpr std::uint32_t kW = 96, kH = 64;

class RecordingView : public ScratchDirTest {
 public:
  RecordingView() : ScratchDirTest("handoff-recording-view-") {}

 protected:
  static ViewerOptions options(const std::string& record = {}) {
    ViewerOptions o;
    o.width = 320;
    o.height = 240;
    o.display = ViewerDisplay::Headless;
    o.memory = ViewerMemory::Host;  // the scene on the CPU: its reference below is the same renderer
    o.gl_debug = true;
    o.vsync = false;
    o.record.path = record;
    return o;
  }
  static void expect_clean(const Viewer& v) {
    const ViewerDiagnostics d = v.diagnostics();
    EXPECT_EQ(d.gl_errors, 0u) << d.first_gl_error;
    EXPECT_TRUE(d.record_errors.empty()) << d.record_errors.front();
  }
  // A recording of frames whose planes all differ (frame i: pattern i), with
  // a box on each whose x is the frame number, at 40 ms steps.
  std::string write_patterns(const std::string& name, int n, const std::string& topic = "/cam0",
                             media::RecordingOptions ro = {}) {
    ro.block_when_full = true;
    media::RecordingWriter w(path(name), ro);
    for (int i = 0; i < n; ++i) {
      media::OverlayFrame o;
      o.add_box(float(i), 2, float(i) + 10, 12, "n" + std::to_string(i), 0.5f, i);
      EXPECT_TRUE(w.write(pattern(i), o, topic, 1'000'000'000ull + std::uint64_t(i) * 40'000'000ull));
    }
    w.close();
    return path(name);
  }
  static Frame pattern(int i) {
    Frame f = allocate_host_frame(PixelFormat::NV12, kW, kH);
    fill_frame(f, [&](std::uint32_t x, std::uint32_t y) {
      return Yuv{int((x * 3 + y * 5 + std::uint32_t(i) * 17) % 200 + 16), int((x + std::uint32_t(i) * 9) % 200 + 16),
                 int((y + std::uint32_t(i) * 29) % 200 + 16)};
    });
    f.index = i;
    return f;
  }
};

bool planes_equal(const media::HostFrame& a, const media::HostFrame& b) {
  if (a.width() != b.width() || a.height() != b.height() || a.format() != b.format()) return false;
  const std::size_t bps = bytes_per_sample(a.format());
  for (std::uint32_t y = 0; y < a.height(); ++y)
    if (std::memcmp(a.luma() + y * a.luma_pitch(), b.luma() + y * b.luma_pitch(), a.width() * bps) != 0) return false;
  for (std::uint32_t y = 0; y < chroma_height(a.height()); ++y)
    if (std::memcmp(a.chroma() + y * a.chroma_pitch(), b.chroma() + y * b.chroma_pitch(),
                    2 * chroma_width(a.width()) * bps) != 0)
      return false;
  return true;
}

void expect_same_boxes(const media::OverlayFrame& got, const media::OverlayFrame& want, const std::string& what) {
  ASSERT_EQ(got.objects.size(), want.objects.size()) << what;
  for (std::size_t k = 0; k < got.objects.size(); ++k) {
    const media::OverlayObject &g = got.objects[k], &w = want.objects[k];
    EXPECT_EQ(g.has_box, w.has_box) << what << " object " << k;
    EXPECT_EQ(g.x0, w.x0) << what << " object " << k;
    EXPECT_EQ(g.y0, w.y0) << what << " object " << k;
    EXPECT_EQ(g.x1, w.x1) << what << " object " << k;
    EXPECT_EQ(g.y1, w.y1) << what << " object " << k;
    EXPECT_EQ(got.text(g.label), want.text(w.label)) << what << " object " << k;
    EXPECT_EQ(g.score, w.score) << what << " object " << k;
    EXPECT_EQ(g.class_id, w.class_id) << what << " object " << k;
    EXPECT_EQ(g.track_id, w.track_id) << what << " object " << k;
  }
}

// Every recorded frame is a frame of the scene, in order, byte for byte, with
// the scene's own overlays; recorded + left out = displayed.
TEST_F(RecordingView, TheSceneIsRecordedAsDisplayed) {
  const std::string rec = path("scene.mcap");
  ViewerStats stats;
  {
    Viewer v(options(rec));
    Viewer::PlayOptions p;
    p.source = Viewer::Source::Scene;
    p.width = kW;
    p.height = kH;
    p.frames = 12;
    v.play(p);
    v.wait_closed();
    stats = v.stats();
    expect_clean(v);
  }
  EXPECT_EQ(stats.shown, 12u);
  EXPECT_EQ(stats.recorded + stats.record_dropped, stats.shown);
  ASSERT_GT(stats.recorded, 0u);

  auto src = media::open_recording(rec);
  ASSERT_EQ(std::uint64_t(src->info().frame_count), stats.recorded);
  EXPECT_EQ(src->topic(), "/handoff/view");
  EXPECT_EQ(src->annotations_topic(), "/handoff/view/annotations");
  media::SceneOptions so;
  so.width = kW;
  so.height = kH;
  auto scene = media::make_scene_source(so);
  media::HostFrame got(PixelFormat::NV12, kW, kH), want(PixelFormat::NV12, kW, kH);
  std::int64_t j = 0;
  for (std::int64_t i = 0; i < src->info().frame_count; ++i) {
    ASSERT_TRUE(src->read_into(got.target()));
    bool found = false;
    for (; j < 12 && !found; ++j) {  // the next displayed scene frame with these planes
      scene->seek(j);
      ASSERT_TRUE(scene->read_into(want.target()));
      found = planes_equal(got, want);
    }
    ASSERT_TRUE(found) << "recorded frame " << i << " is no later scene frame";
    media::OverlayFrame got_o, want_o;
    ASSERT_TRUE(src->overlays_for(i, got_o)) << "frame " << i;
    ASSERT_TRUE(scene->overlays_for(j - 1, want_o));
    expect_same_boxes(got_o, want_o, "frame " + std::to_string(i));
  }
  if (stats.record_dropped == 0) {
    EXPECT_EQ(j, 12);
  }
}

// A frame's planes as a recording stores them, packed: i420's U and V
// interleaved into one nv12 chroma plane (RawImage has no planar 4:2:0).
std::vector<std::vector<std::uint8_t>> stored_planes(const Frame& f) {
  std::vector<std::vector<std::uint8_t>> out;
  for (int p = 0; p < plane_count(f.format); ++p) {
    const PlaneLayout l = plane_layout(f.format, f.width, f.height, p);
    std::vector<std::uint8_t> rows(l.row_bytes * l.height);
    for (std::uint32_t y = 0; y < l.height; ++y)
      std::memcpy(rows.data() + y * l.row_bytes,
                  static_cast<const std::uint8_t*>(f.planes[std::size_t(p)].data) + y * f.planes[std::size_t(p)].pitch,
                  l.row_bytes);
    out.push_back(std::move(rows));
  }
  if (f.format == PixelFormat::I420) {
    std::vector<std::uint8_t> uv(out[1].size() * 2);
    for (std::size_t k = 0; k < out[1].size(); ++k) {
      uv[2 * k] = out[1][k];
      uv[2 * k + 1] = out[2][k];
    }
    out.resize(1);
    out.push_back(std::move(uv));
  }
  return out;
}

// Every format is recorded as displayed, byte for byte, at an odd size (an
// odd width's 4:2:2 padding sample and 4:2:0's rounded-up chroma included):
// record, read back, same planes; i420 comes back as nv12.
TEST_F(RecordingView, EveryFormatRoundTripsThroughTheRecording) {
  constexpr std::uint32_t w = 45, h = 29;
  constexpr int n = 3;
  for (const PixelFormat f : kPixelFormats) {
    SCOPED_TRACE(std::string(to_string(f)));
    const std::string rec = path(std::string(to_string(f)) + ".mcap");
    std::vector<Frame> shown;
    ViewerStats stats;
    {
      Viewer v(options(rec));
      for (int i = 0; i < n; ++i) {
        Frame frame = allocate_host_frame(f, w, h);
        fill_test_pattern(frame, std::uint32_t(i) * 37 + 5);
        v.show(frame);
        (void)v.snapshot();
        shown.push_back(frame);
      }
      v.close();
      stats = v.stats();
      expect_clean(v);
    }
    EXPECT_EQ(stats.recorded + stats.record_dropped, std::uint64_t(n));
    EXPECT_EQ(stats.record_skipped, 0u);
    ASSERT_GT(stats.recorded, 0u);
    auto src = media::open_recording(rec);
    const PixelFormat stored = f == PixelFormat::I420 ? PixelFormat::NV12 : f;
    ASSERT_EQ(src->info().format, stored);
    ASSERT_EQ(std::uint64_t(src->info().frame_count), stats.recorded);
    media::HostFrame got(stored, w, h);
    std::size_t next = 0;
    for (std::int64_t i = 0; i < src->info().frame_count; ++i) {
      ASSERT_TRUE(src->read_into(got.target()));
      const auto planes = stored_planes(got.frame());
      bool found = false;
      for (; next < shown.size() && !found; ++next) found = stored_planes(shown[next]) == planes;
      ASSERT_TRUE(found) << "recorded frame " << i << " is no later shown frame";
    }
  }
}

// A recording holds one format and size (its first frame's): frames of
// another are left out and counted in record_skipped, not written into a
// stream its readers would refuse; the frames that fit around them are
// recorded and the display goes on.
TEST_F(RecordingView, FramesOfAnotherFormatOrSizeAreSkippedAndCounted) {
  const std::string rec = path("mixed.mcap");
  ViewerStats stats;
  {
    Viewer v(options(rec));
    v.show(pattern(0));
    (void)v.snapshot();
    v.show(allocate_host_frame(PixelFormat::RGB8, kW, kH));
    (void)v.snapshot();
    v.show(allocate_host_frame(PixelFormat::NV12, kW + 2, kH));
    (void)v.snapshot();
    v.show(pattern(1));
    (void)v.snapshot();
    v.close();
    stats = v.stats();
    expect_clean(v);
  }
  EXPECT_EQ(stats.shown, 4u);
  EXPECT_EQ(stats.record_skipped, 2u);
  EXPECT_EQ(stats.recorded + stats.record_dropped, 2u);
  auto src = media::open_recording(rec);
  EXPECT_EQ(src->info().format, PixelFormat::NV12);
  EXPECT_EQ(std::uint64_t(src->info().frame_count), stats.recorded);
  media::HostFrame got(PixelFormat::NV12, kW, kH);
  for (std::int64_t i = 0; i < src->info().frame_count; ++i) EXPECT_TRUE(src->read_into(got.target()));
}

// Frames pushed with show() are recorded as shown (each one displayed before
// the next: the snapshot waits for it).
// A recording that stops (a full disk: the file size limit here) is in
// ViewerDiagnostics::record_errors while the viewer runs, not only once it
// closed; what the file holds is counted recorded, the rest left out.
TEST_F(RecordingView, ARecordingThatStopsSaysSoWhileTheViewerRuns) {
  const std::string rec = path("full.mcap");
  handoff::test::FileSizeLimit limit(256 * 1024);
  handoff::test::LogCapture quiet;
  ViewerOptions o = options(rec);
  o.record.compression = media::mcap::Compression::None;
  Viewer v(o);
  limit.apply();
  Frame f = allocate_host_frame(PixelFormat::NV12, 640, 480);  // 4 MiB chunks: a few frames each
  for (int i = 0; i < 400 && v.diagnostics().record_errors.empty(); ++i) {
    f.index = i;
    v.show(f);
    (void)v.snapshot();
  }
  const bool stopped = handoff::test::wait_until([&] { return !v.diagnostics().record_errors.empty(); },
                                                 "record_errors while the viewer runs", std::chrono::seconds(3));
  limit.restore();
  ASSERT_TRUE(stopped) << "shown " << v.stats().shown << ", recorded " << v.stats().recorded;
  EXPECT_TRUE(v.is_open());
  EXPECT_THAT(v.diagnostics().record_errors.front(), HasSubstr("full.mcap"));
  v.close();
  const ViewerStats s = v.stats();
  EXPECT_EQ(s.recorded + s.record_dropped + s.record_skipped, s.shown);
  EXPECT_FALSE(v.diagnostics().record_errors.empty());
}

TEST_F(RecordingView, PushedFramesAreRecordedAsShown) {
  const std::string rec = path("pushed.mcap");
  ViewerStats stats;
  {
    Viewer v(options(rec));
    for (int i = 0; i < 6; ++i) {
      media::OverlayFrame o;
      o.add_box(1, 2, 30, 20, "pushed", 0.9f, 1, i);
      v.show(pattern(i), o);
      (void)v.snapshot();
    }
    v.close();
    stats = v.stats();
    expect_clean(v);
  }
  EXPECT_EQ(stats.recorded + stats.record_dropped, 6u);
  auto src = media::open_recording(rec);
  media::HostFrame got(PixelFormat::NV12, kW, kH);
  int next = 0;
  for (std::int64_t i = 0; i < src->info().frame_count; ++i) {
    ASSERT_TRUE(src->read_into(got.target()));
    bool found = false;
    for (; next < 6 && !found; ++next) {
      media::HostFrame want(PixelFormat::NV12, kW, kH);
      const Frame p = pattern(next);
      for (std::uint32_t y = 0; y < kH; ++y)
        std::memcpy(want.luma() + y * want.luma_pitch(), static_cast<const std::uint8_t*>(p.planes[0].data) + y * p.planes[0].pitch, kW);
      for (std::uint32_t y = 0; y < kH / 2; ++y)
        std::memcpy(want.chroma() + y * want.chroma_pitch(), static_cast<const std::uint8_t*>(p.planes[1].data) + y * p.planes[1].pitch, kW);
      found = planes_equal(got, want);
    }
    ASSERT_TRUE(found) << "recorded frame " << i << " is no later shown frame";
    media::OverlayFrame o;
    ASSERT_TRUE(src->overlays_for(i, o));
    ASSERT_EQ(o.objects.size(), 1u);
    EXPECT_EQ(o.objects[0].track_id, next - 1);
  }
}

// Streams side by side are recorded a topic each ("<topic>/<stream>"), each
// frame with its own overlays; the unnamed first tile on the topic itself.
TEST_F(RecordingView, EachStreamIsRecordedOnATopicOfItsOwn) {
  const std::string rec = path("streams.mcap");
  ViewerStats stats;
  {
    Viewer v(options(rec));
    for (int i = 0; i < 4; ++i) {
      media::OverlayFrame left, right;
      left.add_box(1, 2, 30, 20, "left", 0.9f, 1, i);
      right.add_box(5, 6, 40, 30, "right", 0.8f, 2, 100 + i);
      v.show(pattern(i), left);          // unnamed: the first tile
      v.show(pattern(10 + i), right, "right");
      (void)v.snapshot();
    }
    v.close();
    stats = v.stats();
    expect_clean(v);
  }
  EXPECT_EQ(stats.recorded + stats.record_dropped, 8u);
  EXPECT_EQ(stats.record_skipped, 0u);
  for (const auto& [topic, first, track] : {std::tuple{"/handoff/view", 0, 0}, std::tuple{"/handoff/view/right", 10, 100}}) {
    SCOPED_TRACE(topic);
    media::RecordingOpenOptions options;
    options.topic = topic;
    auto src = media::open_recording(rec, options);
    ASSERT_GE(src->info().frame_count, 1);
    media::HostFrame got(PixelFormat::NV12, kW, kH);
    for (std::int64_t i = 0; i < src->info().frame_count; ++i) {
      ASSERT_TRUE(src->read_into(got.target()));
      media::OverlayFrame o;
      ASSERT_TRUE(src->overlays_for(i, o));
      ASSERT_EQ(o.objects.size(), 1u);
      const int k = o.objects[0].track_id - track;  // which frame of the stream this is
      ASSERT_TRUE(k >= 0 && k < 4) << o.objects[0].track_id;
      const Frame p = pattern(first + k);
      bool same = true;
      for (std::uint32_t y = 0; y < kH && same; ++y)
        same = std::memcmp(got.luma() + y * got.luma_pitch(), static_cast<const std::uint8_t*>(p.planes[0].data) + y * p.planes[0].pitch, kW) == 0;
      EXPECT_TRUE(same) << "frame " << i << " of " << topic << " is not pattern " << first + k;
    }
  }
}

// The reference for frame k: the same frame and overlays shown by a viewer of their own.
RgbaImage reference(const Frame& frame, const media::OverlayFrame& overlays) {
  ViewerOptions o;
  o.width = 320;
  o.height = 240;
  o.display = ViewerDisplay::Headless;
  o.vsync = false;
  Viewer v(o);
  v.show(frame, overlays);
  return v.snapshot();
}

void expect_same_image(const RgbaImage& got, const RgbaImage& want, const std::string& what) {
  ASSERT_EQ(got.width(), want.width()) << what;
  ASSERT_EQ(got.height(), want.height()) << what;
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.stride() * got.height()), 0) << what;
}

class Playback : public RecordingView {
 protected:
  void SetUp() override {
    RecordingView::SetUp();
    file_ = write_patterns("p.mcap", 8);
    for (int k = 0; k < 8; ++k) {
      media::OverlayFrame o;
      o.add_box(float(k), 2, float(k) + 10, 12, "n" + std::to_string(k), 0.5f, k);
      refs_.push_back(reference(pattern(k), o));
    }
  }
  // Plays `file` to its end as fast as frames come (a Viewer of its own, closed when it returns).
  static void play_to_the_end(Viewer& v, const std::string& file) {
    Viewer::PlayOptions p;
    p.source = Viewer::Source::File;
    p.file = file;
    p.fast = true;
    v.play(p);
    v.wait_closed();
  }
  // `more` sets further PlayOptions (colour overrides, ...).
  std::unique_ptr<Viewer> paused_player(const std::string& file, const std::string& topic = {},
                                        const std::function<void(Viewer::PlayOptions&)>& more = {},
                                        const ViewerOptions& viewer = options()) {
    auto v = std::make_unique<Viewer>(viewer);
    v->set_paused(true);
    Viewer::PlayOptions p;
    p.source = Viewer::Source::File;
    p.file = file;
    p.topic = topic;
    p.loop = false;
    p.close_at_end = false;
    if (more) more(p);
    v->play(p);
    return v;
  }
  std::string file_;
  std::vector<RgbaImage> refs_;
};

// tests/data/sample.y4m (8-bit 4:2:0) plays as i420, Y4M's own planes: frame
// k on display is what a viewer shown frame k directly shows, and within a
// code of what it shows for the same frame read as nv12 (the old default).
TEST_F(RecordingView, SampleY4mPlaysAsI420AsItsFramesShownDirectly) {
  const std::string file = std::string(HANDOFF_TEST_DATA) + "/sample.y4m";
  auto player = std::make_unique<Viewer>(options());
  player->set_paused(true);
  Viewer::PlayOptions p;
  p.source = Viewer::Source::File;
  p.file = file;
  p.loop = false;
  p.close_at_end = false;
  player->play(p);
  EXPECT_EQ(player->stream().format, PixelFormat::I420);
  auto i420 = media::open_y4m(file);
  auto nv12 = media::open_y4m(file, {PixelFormat::NV12});
  const media::SourceInfo info = i420->info();
  for (std::int64_t k = 0; k < info.frame_count; ++k) {
    media::HostFrame a(PixelFormat::I420, info.width, info.height), b(PixelFormat::NV12, info.width, info.height);
    ASSERT_TRUE(i420->read_into(a.target()));
    ASSERT_TRUE(nv12->read_into(b.target()));
    player->seek(k);
    const RgbaImage shown = player->snapshot();
    expect_same_image(shown, reference(a.frame(info.colorimetry), {}), "frame " + std::to_string(k));
    const RgbaImage as_nv12 = reference(b.frame(info.colorimetry), {});
    ASSERT_EQ(shown.width(), as_nv12.width());
    int worst = 0;
    for (std::uint32_t y = 0; y < shown.height(); ++y)
      for (std::uint32_t x = 0; x < shown.stride(); ++x)
        worst = std::max(worst, std::abs(int(shown.data()[y * shown.stride() + x]) -
                                         int(as_nv12.data()[y * as_nv12.stride() + x])));
    EXPECT_LE(worst, 1) << "frame " << k;
  }
  expect_clean(*player);
}

TEST_F(Playback, SeekShowsFrameKAndStepsGoBothWays) {
  auto v = paused_player(file_);
  EXPECT_EQ(v->stream().name, file_);
  expect_same_image(v->snapshot(), refs_[0], "first frame");
  for (int k : {5, 2, 7, 0}) {
    v->seek(k);
    expect_same_image(v->snapshot(), refs_[std::size_t(k)], "after seek(" + std::to_string(k) + ")");
  }
  v->seek(4);
  v->step_back();
  expect_same_image(v->snapshot(), refs_[3], "step back from 4");
  v->step_back();
  expect_same_image(v->snapshot(), refs_[2], "step back from 3");
  v->step();
  expect_same_image(v->snapshot(), refs_[3], "step forward from 2");
  EXPECT_TRUE(v->paused());
  expect_clean(*v);
}

// A frame shown by a step or a seek while paused is a displayed frame like a
// played one: recorded and written to output_dir, in the order shown.
TEST_F(Playback, SteppedAndSoughtFramesAreRecordedAndWritten) {
  const std::string rec = path("stepped.mcap"), out = path("stepped_png");
  ViewerOptions o = options(rec);
  o.output_dir = out;
  auto v = paused_player(file_, {}, {}, o);
  (void)v->snapshot();  // frame 0, shown paused
  v->step();
  (void)v->snapshot();
  v->step();
  (void)v->snapshot();
  v->step_back();
  (void)v->snapshot();
  v->seek(5);
  (void)v->snapshot();
  v->step_back();
  (void)v->snapshot();
  v->close();
  const ViewerStats stats = v->stats();
  expect_clean(*v);
  EXPECT_EQ(stats.shown, 6u);
  EXPECT_EQ(stats.recorded, 6u);
  EXPECT_EQ(stats.record_dropped, 0u);
  EXPECT_EQ(v->diagnostics().output_written, 6u);
  for (int n = 0; n < 6; ++n) {
    char name[32];
    std::snprintf(name, sizeof name, "frame_%06d.png", n);
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(out) / name)) << name;
  }

  auto src = media::open_recording(rec);
  ASSERT_EQ(src->info().frame_count, 6);
  media::HostFrame got(PixelFormat::NV12, kW, kH);
  std::vector<int> shown;
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(src->read_into(got.target()));
    int k = 0;
    while (k < 8 && got.luma()[0] != static_cast<const std::uint8_t*>(pattern(k).planes[0].data)[0]) ++k;
    shown.push_back(k);
  }
  EXPECT_EQ(shown, (std::vector<int>{0, 1, 2, 1, 5, 4}));
}

// PlayOptions::matrix / range (handoff-view --matrix / --range) win over the
// colorimetry a recording says.
TEST_F(Playback, MatrixAndRangeOverrideTheRecordingsColorimetry) {
  auto player = paused_player(file_, {}, [](Viewer::PlayOptions& p) {
    p.matrix = ColorMatrix::BT2020;
    p.range = ColorRange::Full;
  });
  Viewer& v = *player;
  Frame f = pattern(0);
  ASSERT_NE(f.colorimetry.matrix, ColorMatrix::BT2020);
  f.colorimetry.matrix = ColorMatrix::BT2020;
  f.colorimetry.range = ColorRange::Full;
  media::OverlayFrame o;
  o.add_box(0, 2, 10, 12, "n0", 0.5f, 0);
  const RgbaImage shown = v.snapshot();
  expect_same_image(shown, reference(f, o), "frame 0 as BT.2020 full range");
  int worst = 0;  // and not as recorded
  for (std::size_t i = 0; i < shown.stride() * shown.height(); ++i)
    worst = std::max(worst, std::abs(int(shown.data()[i]) - int(refs_[0].data()[i])));
  EXPECT_GT(worst, 8);
  expect_clean(v);
}

TEST_F(Playback, FastPlaysEveryFrameToTheEnd) {
  Viewer v(options());
  play_to_the_end(v, file_);
  EXPECT_EQ(v.stats().shown, 8u);
  EXPECT_EQ(v.stats().last_index, 7);
  EXPECT_TRUE(v.finished());
  expect_clean(v);
}

// A frame that does not fit the stream (another size) is named once, counted
// in the diagnostics, and the frames after it play.
TEST_F(Playback, AMalformedFrameIsSkippedCountedAndTheRestPlay) {
  const std::string file = path("one_bad.mcap");
  {
    media::mcap::Writer w(file);
    const auto ch = w.add_channel(
        w.add_schema(media::kRawImageSchema, "protobuf", media::raw_image_descriptor_set()), "/c", "protobuf");
    std::vector<std::uint8_t> msg;
    for (int i = 0; i < 5; ++i) {
      const Frame f = i == 2 ? allocate_host_frame(PixelFormat::NV12, kW / 2, kH) : pattern(i);
      media::encode_raw_image(f, 0, msg);
      w.write(ch, std::uint32_t(i), 1'000'000'000ull + std::uint64_t(i) * 40'000'000ull, 0, msg);
    }
    w.close();
  }
  Viewer v(options());
  play_to_the_end(v, file);
  EXPECT_EQ(v.stats().shown, 4u);
  EXPECT_EQ(v.stats().last_index, 4);
  const ViewerDiagnostics d = v.diagnostics();
  EXPECT_EQ(d.frame_errors, 1u);
  EXPECT_THAT(d.first_frame_error, HasSubstr("one_bad.mcap: topic \"/c\", frame 2: Message at offset"));
  EXPECT_THAT(d.first_frame_error, HasSubstr("RawImage.width: " + std::to_string(kW / 2) + "x"));
  expect_clean(v);
}

TEST_F(Playback, SeekOutsideOrWithoutAFileIsAUsageError) {
  auto v = paused_player(file_);
  EXPECT_THROW(v->seek(-1), UsageError);
  EXPECT_THROW(v->seek(8), UsageError);
  Viewer pushed(options());
  pushed.show(pattern(0));
  (void)pushed.snapshot();
  EXPECT_THROW(pushed.seek(0), UsageError);
  EXPECT_THROW(pushed.step_back(), UsageError);
  Viewer scene_with_topic(options());
  Viewer::PlayOptions p;
  p.topic = "/cam0";  // the scene has no topics
  EXPECT_THROW(scene_with_topic.play(p), UsageError);
}

TEST_F(Playback, TopicPicksTheStreamAndAnUnknownOneNamesThem) {
  {
    media::RecordingWriter w(path("two.mcap"), {.block_when_full = true});
    for (int i = 0; i < 3; ++i) {
      w.write(pattern(i), {}, "/cam0", 100 + std::uint64_t(i));
      w.write(pattern(5 + i), {}, "/cam1", 100 + std::uint64_t(i));
    }
    w.close();
  }
  const RgbaImage cam1 = reference(pattern(5), {});
  auto v = paused_player(path("two.mcap"), "/cam1");
  expect_same_image(v->snapshot(), cam1, "/cam1 frame 0");
  Viewer bad(options());
  Viewer::PlayOptions p;
  p.source = Viewer::Source::File;
  p.file = path("two.mcap");
  p.topic = "/cam9";
  try {
    bad.play(p);
    ADD_FAILURE() << "an unknown topic played";
  } catch (const media::ParseError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("/cam9"), std::string::npos) << m;
    EXPECT_NE(m.find("/cam0"), std::string::npos) << m;
    EXPECT_NE(m.find("/cam1"), std::string::npos) << m;
  }
}

// --- handoff-view --------------------------------------------------------------------

std::vector<std::uint8_t> read_all(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::int64_t frames_played(const std::string& output) {
  std::smatch m;
  if (!std::regex_search(output, m, std::regex("handoff-view: (\\d+) frames "))) return -1;
  return std::stoll(m[1]);
}

TEST_F(RecordingView, CliRecordsAndPlaysBack) {
  const std::string rec = path("cli.mcap");
  const auto r = run_program(HANDOFF_VIEW_EXE, {"--headless", "--gl-debug", "--frames", "10", "--size", "96x64",
                                                "--record", rec, "--record-compression", "lz4"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("recorded (\\d+) frames to .*cli\\.mcap \\((\\d+) displayed")))
      << r.output;
  const std::int64_t recorded = std::stoll(m[1]);
  EXPECT_EQ(recorded + std::stoll(m[2]), 10) << r.output;
  const auto play = run_program(HANDOFF_VIEW_EXE, {"--headless", "--gl-debug", rec, "--fast"});
  ASSERT_EQ(play.exit_code, 0) << play.output;
  EXPECT_EQ(frames_played(play.output), recorded) << play.output;
  EXPECT_NE(play.output.find("recording, topic /handoff/view"), std::string::npos) << play.output;
}

// --record-codec h264: the frames go into the file as foxglove.CompressedVideo
// that plays back (decoded) frame for frame; a codec it does not know, or the
// flag without --record, is a command-line error.
TEST_F(RecordingView, CliRecordsCompressedVideo) {
  const std::string rec = path("cli_h264.mcap");
  const auto r = run_program(HANDOFF_VIEW_EXE, {"--headless", "--gl-debug", "--frames", "12", "--size", "96x64",
                                                "--record", rec, "--record-codec", "H264"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("recorded (\\d+) frames to .*cli_h264\\.mcap"))) << r.output;
  const std::int64_t recorded = std::stoll(m[1]);
  ASSERT_GT(recorded, 0) << r.output;
  auto src = media::open_recording(rec);
  ASSERT_EQ(src->image_topics().size(), 1u);
  EXPECT_EQ(src->image_topics()[0].schema, "foxglove.CompressedVideo");
  EXPECT_EQ(src->info().frame_count, recorded);
  EXPECT_EQ(src->info().format, PixelFormat::NV12);
  EXPECT_EQ(src->info().width, 96u);
  EXPECT_EQ(src->info().height, 64u);
  media::HostFrame f(PixelFormat::NV12, 96, 64);
  std::int64_t decoded = 0;
  while (src->read_into(f.target())) ++decoded;
  EXPECT_EQ(decoded, recorded);
  const auto play = run_program(HANDOFF_VIEW_EXE, {"--headless", "--gl-debug", rec, "--fast"});
  ASSERT_EQ(play.exit_code, 0) << play.output;
  EXPECT_EQ(frames_played(play.output), recorded) << play.output;

  const auto bad = run_program(HANDOFF_VIEW_EXE, {"--headless", "--frames", "1", "--record", path("x.mcap"),
                                                  "--record-codec", "vp9"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--record-codec"), std::string::npos) << bad.output;
  const auto alone = run_program(HANDOFF_VIEW_EXE, {"--headless", "--frames", "1", "--record-codec", "h264"});
  EXPECT_EQ(alone.exit_code, 2) << alone.output;
  EXPECT_NE(alone.output.find("--record-codec needs --record FILE"), std::string::npos) << alone.output;
}

// A scene h264 cannot hold (an odd width): every displayed frame is left out
// of the recording, counted and named in one warning; with no frame recorded
// handoff-view exits 1 saying so.
TEST_F(RecordingView, CliCountsTheFramesACompressedRecordingCannotHold) {
  const std::string rec = path("odd.mcap");
  const auto r = run_program(HANDOFF_VIEW_EXE, {"--headless", "--frames", "3", "--size", "63x48", "--record", rec,
                                                "--record-codec", "h264"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("recorded 0 frames to " + rec +
                                  " (0 displayed frames left out of it, 3 of another format or size or one h264 "
                                  "cannot hold)"));
  EXPECT_THAT(r.output, HasSubstr("h264 recording needs an even width and height (4:2:0), not 63x48"));
  EXPECT_EQ(count(r.output, "needs an even width"), 1u) << r.output;
  EXPECT_THAT(r.output, HasSubstr("recording: no displayed frame could be recorded as h264"));
}

TEST_F(RecordingView, CliDamagedTailPlaysToTheLastWholeFrameWithOneWarning) {
  media::RecordingOptions ro;
  ro.chunk_size = 1;  // a chunk per message
  ro.compression = media::mcap::Compression::None;
  const std::string good = write_patterns("good.mcap", 6, "/cam0", ro);
  std::vector<std::uint8_t> b = read_all(good);
  b.resize(b.size() * 3 / 4);  // the summary, the footer and the last frames' chunks gone
  std::ofstream(path("cut.mcap"), std::ios::binary).write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  const auto r = run_program(HANDOFF_VIEW_EXE, {"--headless", "--gl-debug", path("cut.mcap"), "--fast"});
  // What is whole plays; the file is damaged all the same: exit 1, the summary saying why.
  ASSERT_EQ(r.exit_code, 1) << r.output;
  const std::int64_t n = frames_played(r.output);
  EXPECT_GT(n, 0) << r.output;
  EXPECT_LT(n, 6) << r.output;
  EXPECT_EQ(count(r.output, "handoff warning"), 1u) << r.output;
  EXPECT_NE(r.output.find("1 problem(s) in the input played past; the first: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("damaged tail"), std::string::npos) << r.output;
  // --list: the topics that could be read, the warning under them, and exit 1 as playing it.
  const auto list = run_program(HANDOFF_VIEW_EXE, {path("cut.mcap"), "--list"});
  ASSERT_EQ(list.exit_code, 1) << list.output;
  EXPECT_NE(list.output.find("/cam0"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("warning: " + path("cut.mcap") + ": damaged tail"), std::string::npos) << list.output;
  EXPECT_EQ(run_program(HANDOFF_VIEW_EXE, {good, "--list"}).exit_code, 0);
  // A topic name with control bytes (an escape sequence, a newline) is listed escaped, not sent raw to the terminal.
  const std::string odd = write_patterns("odd.mcap", 2, std::string("/cam\x1b[2J\nx"));
  const auto listed = run_program(HANDOFF_VIEW_EXE, {odd, "--list"});
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("/cam\\x1b[2J\\x0ax "), std::string::npos) << listed.output;
  EXPECT_EQ(listed.output.find('\x1b'), std::string::npos);
}

// Issue 22: handoff-view records 12 scene frames at 640x360 (one zstd chunk,
// so far), and the file is cut at 60%: the frames wholly in what the zstd
// blocks written decode to play (before, none did: the chunk was dropped).
TEST_F(RecordingView, CliRecordingCutInsideItsCompressedChunkPlaysItsWholeFrames) {
  const std::string rec = path("rec.mcap");
  const auto r = run_program(HANDOFF_VIEW_EXE, {"--headless", "--frames", "12", "--size", "640x360", "--record", rec});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::uint8_t> b = read_all(rec);
  b.resize(b.size() * 6 / 10);
  std::ofstream(path("cut.mcap"), std::ios::binary).write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  std::int64_t kept = 0;
  {
    auto src = media::open_recording(path("cut.mcap"));  // logs the damaged tail
    ASSERT_EQ(src->warnings().size(), 1u);
    EXPECT_NE(src->warnings()[0].find("its records are compressed (zstd)"), std::string::npos) << src->warnings()[0];
    kept = src->info().frame_count;
  }
  EXPECT_GT(kept, 0);
  const auto play = run_program(HANDOFF_VIEW_EXE, {"--headless", "--gl-debug", path("cut.mcap"), "--fast"});
  ASSERT_EQ(play.exit_code, 1) << play.output;  // damaged: played as far as it can be, then exit 1
  EXPECT_EQ(frames_played(play.output), kept) << play.output;
  EXPECT_EQ(count(play.output, "handoff warning"), 1u) << play.output;
  EXPECT_NE(play.output.find("1 problem(s) in the input played past"), std::string::npos) << play.output;
}

TEST_F(RecordingView, CliRecordingErrors) {
  auto expect = [](const ProcessResult& r, int code, const std::string& word) {
    EXPECT_FALSE(r.timed_out) << r.output;
    EXPECT_EQ(r.exit_code, code) << r.output;
    EXPECT_NE(r.output.find(word), std::string::npos) << "'" << word << "' missing in: " << r.output;
  };
  const std::string file = write_patterns("p.mcap", 2);
  expect(run_program(HANDOFF_VIEW_EXE, {"--headless", "--topic", "/cam0"}), 2, "--topic");
  expect(run_program(HANDOFF_VIEW_EXE, {"--headless", "--record-compression", "lz4"}), 2, "--record");
  expect(run_program(HANDOFF_VIEW_EXE, {"--headless", "--record", path("x.mcap"), "--record-compression", "brotli"}),
         2, "--record-compression");
  expect(run_program(HANDOFF_VIEW_EXE, {"--headless", file, "--record", file}), 2, "is the file being played");
  expect(run_program(HANDOFF_VIEW_EXE, {"--headless", "--record", path("no/such/dir/x.mcap")}), 1, "no/such/dir/x.mcap");
  expect(run_program(HANDOFF_VIEW_EXE, {"--headless", file, "--topic", "/nope"}), 1, "image topics: /cam0");
  expect(run_program(HANDOFF_VIEW_EXE, {"--headless", file, "--topic", ""}), 2, "--topic: an empty topic name");
  expect(run_program(HANDOFF_VIEW_EXE, {"--headless", file, "--overlay-topic", ""}), 2, "--overlay-topic: an empty");
  expect(run_program(HANDOFF_VIEW_EXE, {"--headless", path("missing.mcap")}), 1, "missing.mcap");
}

// Issue 23: a frame's layers shown by a recording viewer are in the file
// (<topic>/layers/<i>), and a viewer playing it draws them as the frame and
// its layers shown directly.
TEST_F(RecordingView, LayersAreRecordedAndPlayedBackAsShown) {
  const std::string rec = path("layers.mcap");
  const media::OverlayFrame ov = handoff::test::layered_overlays(0);
  {
    Viewer v(options(rec));
    v.show(pattern(0), ov);
    (void)v.snapshot();
    v.close();
    expect_clean(v);
    ASSERT_EQ(v.stats().recorded, 1u);
  }
  auto src = media::open_recording(rec);
  media::OverlayFrame got;
  ASSERT_TRUE(src->overlays_for(0, got));
  EXPECT_EQ(handoff::test::layer_difference(got, ov), "");
  Viewer player(options());
  player.set_paused(true);
  Viewer::PlayOptions p;
  p.source = Viewer::Source::File;
  p.file = rec;
  p.loop = false;
  p.close_at_end = false;
  player.play(p);
  expect_same_image(player.snapshot(), reference(pattern(0), ov), "the played frame with its layers");
  media::OverlayFrame boxes_only = ov;
  boxes_only.layers.clear();
  const RgbaImage plain = reference(pattern(0), boxes_only);
  EXPECT_NE(std::memcmp(player.snapshot().data(), plain.data(), plain.stride() * plain.height()), 0)
      << "the layers were not drawn";
  expect_clean(player);
}

// Class ids a recording cannot hold exactly (beyond 2^24 in 32FC1): the
// frame is recorded without its layers, with one warning, and recording goes on.
TEST_F(RecordingView, LayersARecordingCannotHoldAreLeftOutAndRecordingGoesOn) {
  const std::string rec = path("wide.mcap");
  std::vector<std::int32_t> ids = {1, 20'000'000, 3, 4};
  media::OverlayFrame ov;
  media::ClassMap m;
  m.ids = handoff::test::owned_array(media::SampleType::I32, 2, 2, 1, 0, handoff::test::bytes_of(ids));
  ov.layers.push_back(m);
  handoff::test::LogCapture log;
  std::uint64_t recorded = 0;
  {
    Viewer v(options(rec));
    v.show(pattern(0), ov);
    (void)v.snapshot();
    v.show(pattern(1), ov);
    (void)v.snapshot();
    v.close();
    expect_clean(v);  // no record error: the recording went on
    recorded = v.stats().recorded;
    EXPECT_EQ(recorded + v.stats().record_dropped, 2u);
  }
  ASSERT_GE(recorded, 1u);
  EXPECT_TRUE(log.contains("recording: layers left out: layers[0].ids: id 20000000 is not exact"));
  auto src = media::open_recording(rec);
  EXPECT_EQ(std::uint64_t(src->info().frame_count), recorded);
  media::OverlayFrame got;
  EXPECT_FALSE(src->overlays_for(0, got));
}

// A frame the codec cannot hold (gray32f in h264) shown with layers is left
// out, counted as skipped and named once, and the layers are not blamed. It
// does not set the recording's format: the frames after it that h264 holds
// are recorded.
TEST_F(RecordingView, AFrameTheCodecCannotHoldIsLeftOutWithoutBlamingItsLayers) {
  ViewerOptions o = options(path("gray32f.mcap"));
  o.record.codec = media::VideoCodec::H264;
  handoff::test::LogCapture log;
  Viewer v(o);
  for (int i = 0; i < 5; ++i) {
    v.show(allocate_host_frame(i < 3 ? PixelFormat::GRAY32F : PixelFormat::NV12, kW, kH),
           handoff::test::layered_overlays(0));
    (void)v.snapshot();
  }
  v.close();
  const ViewerStats stats = v.stats();
  EXPECT_EQ(stats.recorded, 2u);
  EXPECT_EQ(stats.record_dropped, 0u);
  EXPECT_EQ(stats.record_skipped, 3u);
  EXPECT_TRUE(v.diagnostics().record_errors.empty());
  EXPECT_TRUE(log.contains("format: gray32f frames cannot be recorded as h264")) << log.text();
  EXPECT_FALSE(log.contains("layers left out")) << log.text();
  EXPECT_FALSE(log.contains("recording stopped")) << log.text();
  auto src = media::open_recording(path("gray32f.mcap"));
  EXPECT_EQ(src->info().frame_count, 2);
  EXPECT_EQ(src->info().format, PixelFormat::NV12);
}

}  // namespace
}  // namespace handoff::view::test
