// handoff-view driven from the outside: a real window under Xvfb writing a
// screenshot, the headless fallback when there is no display, PNG output at
// the frame's size, and bad input ending with a message and a non-zero exit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <handoff/frame.hpp>
#include <handoff/media/png.hpp>

#include "process.hpp"
#include "scratch_dir.hpp"

namespace handoff::view::test {
namespace {

namespace fs = std::filesystem;

class ViewerApp : public ScratchDirTest {
 protected:
  ViewerApp() : ScratchDirTest("handoff-view-test-") {}
};

std::size_t count_pngs(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".png") ++n;
  return n;
}

bool has_display() {
  const char* d = std::getenv("DISPLAY");
  return d && *d;
}

TEST_F(ViewerApp, WindowUnderXvfbWritesScreenshot) {
  if (!has_display()) GTEST_SKIP() << "no DISPLAY: the window test runs under xvfb-run (scripts/test)";
  // Mesa's GLX path leaks ~5 KB at exit (driconf strings, per-context
  // blocks); a ten-line GLFW program that opens and closes a GL window shows
  // the same LeakSanitizer report. Leak checking stays on for the headless
  // runs, which drive the same viewer code through EGL.
  std::string asan = "ASAN_OPTIONS=detect_leaks=0";
  if (const char* a = std::getenv("ASAN_OPTIONS"); a && *a) asan = std::string("ASAN_OPTIONS=") + a + ":detect_leaks=0";
  const auto r = run_viewer({"--frames", "5", "--window", "320x240", "--screenshot", path("shot.png")}, {}, {asan});
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("headless"), std::string::npos) << "a window was expected: " << r.output;
  const media::Image8 img = media::read_png(path("shot.png"), 3);
  EXPECT_EQ(img.width, 320u);
  EXPECT_EQ(img.height, 240u);
  // Not one flat colour: the frame and the UI are in it.
  std::size_t differing = 0;
  for (std::size_t i = 3; i < img.pixels.size(); i += 3)
    if (img.pixels[i] != img.pixels[0]) ++differing;
  EXPECT_GT(differing, img.pixels.size() / 3 / 10);
}

// SIGTERM closes the viewer as Q does; its notice speaks of finishing a
// recording only when there is one (timeout(1) sends it once the viewer plays).
TEST_F(ViewerApp, ASignalsNoticeMentionsARecordingOnlyWhenThereIsOne) {
  const std::vector<std::string> play{"-s", "TERM", "4", HANDOFF_VIEW_EXE, "--headless", "--size", "64x64",
                                      "--frames", "1000000"};
  const ProcessResult plain = run_program("/usr/bin/timeout", play);
  EXPECT_NE(plain.output.find("Terminated: closing (again to stop at once)"), std::string::npos) << plain.output;
  EXPECT_EQ(plain.output.find("recording"), std::string::npos) << plain.output;
  std::vector<std::string> recording = play;
  recording.insert(recording.end(), {"--record", path("signal.mcap")});
  const ProcessResult rec = run_program("/usr/bin/timeout", recording);
  EXPECT_NE(rec.output.find("Terminated: closing (the recording is finished first; again to stop at once)"),
            std::string::npos)
      << rec.output;
}

TEST_F(ViewerApp, NoDisplayFallsBackToHeadlessAndWritesFramesAtFrameSize) {
  const auto r = run_viewer({"--frames", "4", "--size", "160x90", "--output", path("frames")}, {"DISPLAY", "WAYLAND_DISPLAY"});
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("no display"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("headless"), std::string::npos) << r.output;
  EXPECT_EQ(count_pngs(path("frames")), 4u);
  const media::Image8 img = media::read_png(path("frames") + "/frame_000000.png", 3);
  EXPECT_EQ(img.width, 160u);
  EXPECT_EQ(img.height, 90u);
}

TEST_F(ViewerApp, OutputIncludesOverlaysUnlessHidden) {
  const auto a = run_viewer({"--headless", "--frames", "1", "--size", "160x90", "--output", path("with")});
  const auto b = run_viewer({"--headless", "--frames", "1", "--size", "160x90", "--hide-overlays", "--output", path("without")});
  ASSERT_EQ(a.exit_code, 0) << a.output;
  ASSERT_EQ(b.exit_code, 0) << b.output;
  const media::Image8 x = media::read_png(path("with") + "/frame_000000.png", 3);
  const media::Image8 y = media::read_png(path("without") + "/frame_000000.png", 3);
  ASSERT_EQ(x.pixels.size(), y.pixels.size());
  std::size_t diff = 0;
  for (std::size_t i = 0; i < x.pixels.size(); ++i) diff += x.pixels[i] != y.pixels[i];
  EXPECT_GT(diff, 100u) << "the scene's ground-truth overlays are drawn into --output frames";
}

// The same run with the panel hidden (--hide-ui) is the screenshot without
// the UI: the two differ exactly where the panel is, whose top-left corner
// the UI places at (8, 8) (viewer/view/src/ui.cpp), and nowhere else.
TEST_F(ViewerApp, HeadlessScreenshotIncludesUi) {
  const std::vector<std::string> common{"--headless", "--frames", "2", "--size", "160x90", "--window", "400x300"};
  auto with_ui = common, without_ui = common;
  with_ui.insert(with_ui.end(), {"--screenshot", path("ui.png")});
  without_ui.insert(without_ui.end(), {"--screenshot", path("bare.png"), "--hide-ui"});
  for (const auto& args : {with_ui, without_ui}) {
    const auto r = run_viewer(args);
    ASSERT_FALSE(r.timed_out) << r.output;
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  const media::Image8 img = media::read_png(path("ui.png"), 3);
  const media::Image8 bare = media::read_png(path("bare.png"), 3);
  EXPECT_EQ(img.width, 400u);
  EXPECT_EQ(img.height, 300u);
  ASSERT_EQ(img.pixels.size(), bare.pixels.size());
  // The bounding box of the pixels the UI changed.
  std::uint32_t x0 = img.width, y0 = img.height, x1 = 0, y1 = 0;
  std::size_t changed = 0;
  for (std::uint32_t y = 0; y < img.height; ++y)
    for (std::uint32_t x = 0; x < img.width; ++x) {
      const std::size_t i = std::size_t(y) * img.stride() + std::size_t(x) * 3;
      if (img.pixels[i] == bare.pixels[i] && img.pixels[i + 1] == bare.pixels[i + 1] && img.pixels[i + 2] == bare.pixels[i + 2])
        continue;
      ++changed;
      x0 = std::min(x0, x), y0 = std::min(y0, y), x1 = std::max(x1, x), y1 = std::max(y1, y);
    }
  ASSERT_GT(changed, 0u) << "the screenshot has no UI in it";
  EXPECT_EQ(x0, 8u) << "the panel's left edge";
  EXPECT_EQ(y0, 8u) << "the panel's top edge";
  // A panel, not specks: wide enough for its text, and most of its box covered.
  EXPECT_GE(x1 - x0 + 1, 200u) << "panel width";
  EXPECT_GE(y1 - y0 + 1, 100u) << "panel height";
  EXPECT_GT(changed, std::size_t(x1 - x0 + 1) * (y1 - y0 + 1) * 9 / 10) << "the panel's box is mostly unchanged";
}

TEST_F(ViewerApp, Y4mFilePlaysOnce) {
  // 2 frames, 4x2, 8-bit 4:2:0 (C420jpeg): Y 8 bytes, U 2, V 2 per frame.
  std::string y4m = "YUV4MPEG2 W4 H2 F25:1 C420jpeg\n";
  for (int f = 0; f < 2; ++f) y4m += "FRAME\n" + std::string(8, char(100 + f)) + std::string(4, char(128));
  write_file("clip.y4m", y4m);
  const auto r = run_viewer({"--headless", path("clip.y4m"), "--output", path("out")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_pngs(path("out")), 2u) << r.output;
}

// --- bad input ---------------------------------------------------------------------

void expect_failure(const ProcessResult& r, std::initializer_list<std::string> words) {
  EXPECT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.exit_code, -1) << "crashed: " << r.output;
  for (const auto& w : words) EXPECT_NE(r.output.find(w), std::string::npos) << "'" << w << "' missing in: " << r.output;
}

TEST_F(ViewerApp, MissingFileIsNamed) {
  expect_failure(run_viewer({"--headless", path("nope.y4m")}), {"nope.y4m", "no such file"});
}

TEST_F(ViewerApp, ADirectoryIsNotAVideo) {
  expect_failure(run_viewer({"--headless", dir_.string()}), {"directory"});
}

// file: where: field: problem (media::ParseError), the field being the header's W.
TEST_F(ViewerApp, MalformedY4mHeaderNamesFileAndField) {
  write_file("bad.y4m", "YUV4MPEG2 W0 H10 F30:1\nFRAME\n");
  expect_failure(run_viewer({"--headless", path("bad.y4m")}), {"bad.y4m: header: W: "});
}

// 4x2 4:2:0 frames are 12 bytes: frame 0 is whole, frame 1 (0-based) has 5.
TEST_F(ViewerApp, TruncatedY4mFrameNamesTheFrame) {
  std::string y4m = "YUV4MPEG2 W4 H2 F25:1\nFRAME\n" + std::string(12, char(90)) + "FRAME\n" + std::string(5, char(90));
  write_file("short.y4m", y4m);
  expect_failure(run_viewer({"--headless", path("short.y4m"), "--frames", "5"}),
                 {"short.y4m: frame 1: ", "truncated: 5 of 12 bytes"});
}

// A file with nothing to show is an error naming it (exit 1), not "0 frames" and exit 0.
TEST_F(ViewerApp, Y4mWithAHeaderAndNoFramesExits1NamingTheFile) {
  write_file("header_only.y4m", "YUV4MPEG2 W4 H2 F25:1 C420jpeg\n");
  const auto r = run_viewer({"--headless", path("header_only.y4m")});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_failure(r, {"header_only.y4m", "the file has a header and no frames"});
}

TEST_F(ViewerApp, RawFileOf0BytesExits1NamingTheFile) {
  write_file("empty.nv12", "");
  const auto r = run_viewer({"--headless", path("empty.nv12"), "--size", "4x4", "--format", "nv12"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_failure(r, {"empty.nv12", "the file is empty (0 bytes)"});
}

// Raw files of every format play (their frames go through the frame
// pipeline's ring, every plane of the format written), two frames each.
TEST_F(ViewerApp, RawFilesOfEveryFormatPlay) {
  for (PixelFormat format : kPixelFormats) {
    const std::string name = std::string(to_string(format));
    const FrameLayout l = FrameLayout::packed(format, 8, 6);
    std::size_t frame_bytes = 0;
    for (int i = 0; i < plane_count(format); ++i) frame_bytes += l.buffer_bytes(std::size_t(i));
    write_file("clip." + name, std::string(2 * frame_bytes, char(60)));
    const auto r = run_viewer({"--headless", path("clip." + name), "--size", "8x6", "--format", name, "--frames", "2",
                               "--no-loop", "--output", path("out_" + name)});
    ASSERT_FALSE(r.timed_out) << name << ": " << r.output;
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.output;
    EXPECT_EQ(count_pngs(path("out_" + name)), 2u) << name << ": " << r.output;
  }
}

TEST_F(ViewerApp, RawWithoutSizeSaysSo) {
  write_file("clip.nv12", std::string(24, '\0'));
  expect_failure(run_viewer({"--headless", path("clip.nv12")}), {"clip.nv12", "--size"});
}

TEST_F(ViewerApp, RawOfWrongLengthNamesSizes) {
  write_file("clip.nv12", std::string(25, '\0'));  // 4x4 NV12 frames are 24 bytes
  expect_failure(run_viewer({"--headless", path("clip.nv12"), "--size", "4x4", "--format", "nv12"}),
                 {"clip.nv12", "file size 25 bytes", "4x4", "(24 bytes each)"});
}

TEST_F(ViewerApp, BadSizeTextIsNamed) {
  write_file("clip.nv12", std::string(24, '\0'));
  expect_failure(run_viewer({"--headless", path("clip.nv12"), "--size", "4by4"}), {"4by4"});
}

TEST_F(ViewerApp, BadOptionValuesAreRefused) {
  expect_failure(run_viewer({"--headless", "--format", "yuv444"}), {"--format"});
  expect_failure(run_viewer({"--headless", "--matrix", "bt999"}), {"--matrix"});
  expect_failure(run_viewer({"--headless", "--range", "half"}), {"--range"});
}

TEST_F(ViewerApp, MissingOverlayFileIsNamed) {
  expect_failure(run_viewer({"--headless", "--frames", "1", "--overlays", path("none.jsonl")}), {"none.jsonl"});
}

TEST_F(ViewerApp, BadOverlayLineIsReportedOnceAndPlaybackGoesOn) {
  write_file("o.jsonl",
             "{\"frame\": 0, \"objects\": [{\"box\": [1, 1, 10, 10], \"label\": \"ok\"}]}\n"
             "{\"frame\": 1, \"objects\": [{\"box\": [1, 2, \"x\", 4]}]}\n"
             "{\"frame\": 2, \"objects\": []}\n");
  const auto r = run_viewer({"--headless", "--frames", "3", "--size", "64x48", "--overlays", path("o.jsonl"),
                             "--output", path("out")});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;  // every frame played, the bad line counted: exit 1
  EXPECT_EQ(count_pngs(path("out")), 3u) << r.output;
  EXPECT_NE(r.output.find("1 problem(s) in the input played past; the first: "), std::string::npos) << r.output;
  // Reported once, naming the file, line 2 and the field.
  EXPECT_NE(r.output.find("o.jsonl"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("box"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("line 2"), std::string::npos) << r.output;
  // Logged once (not per frame it would have drawn on); the summary names it again.
  const std::string needle = "handoff warning: overlays: skipped";
  const auto first = r.output.find(needle);
  EXPECT_NE(first, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(needle, first + 1), std::string::npos) << "reported more than once: " << r.output;
}

}  // namespace
}  // namespace handoff::view::test
