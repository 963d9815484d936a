// The viewing side of live attach: headless handoff::Viewers (EGL, llvmpipe)
// attached to publishers in other processes (handoff_live_peer), their
// snapshots compared with a viewer shown the same frame directly; the faults
// as the viewer sees them; handoff-view --attach / --list as a user runs them.
// Every viewer runs with GL debug output; any KHR_debug error fails the test.
#include "live_fixture.hpp"
#include "live_support.hpp"
#include "peer_process.hpp"
#include "process.hpp"  // tests/viewer_gl: run_program / run_viewer

#include <handoff/media/png.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/viewer.hpp>

#if HANDOFF_HAVE_VULKAN
#include "vk_fixture.hpp"
#endif

#include <gmock/gmock.h>

#include <signal.h>
#include <layer_samples.hpp>

#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace handoff::live::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using view::test::run_program;
using view::test::run_viewer;

constexpr std::uint32_t kW = 64, kH = 48;

ViewerOptions headless(const std::string& title = "attached") {
  ViewerOptions o;
  o.title = title;
  o.width = 160;
  o.height = 120;
  o.display = ViewerDisplay::Headless;
  o.gl_debug = true;
  o.on_notice = [](std::string_view) {};
  return o;
}

// What a viewer shows for frame `index` of the peer's pattern, handed in directly.
RgbaImage reference(PixelFormat format, std::int64_t index) {
  Viewer v(headless("reference"));
  v.show(pattern_frame(format, kW, kH, index));
  return v.snapshot();
}

::testing::AssertionResult same_image(const RgbaImage& a, const RgbaImage& b) {
  if (a.width() != b.width() || a.height() != b.height())
    return ::testing::AssertionFailure() << a.width() << "x" << a.height() << " vs " << b.width() << "x" << b.height();
  if (a.empty()) return ::testing::AssertionFailure() << "empty images";
  if (std::memcmp(a.data(), b.data(), a.stride() * a.height()) != 0)
    return ::testing::AssertionFailure() << "pixels differ";
  return ::testing::AssertionSuccess();
}

std::string state_of(const Viewer& v) {
  const auto s = v.attach_status();
  return s ? s->state : "(not attached)";
}

bool reaches_state(const Viewer& v, const std::string& state) {
  return eventually([&] { return state_of(v) == state; });
}

bool shows_index(const Viewer& v, std::int64_t index) {
  return eventually([&] { return v.stats().last_index == index; });
}

void expect_no_gl_errors(const Viewer& v) {
  const ViewerDiagnostics d = v.diagnostics();
  EXPECT_EQ(d.gl_errors, 0u) << d.first_gl_error;
}

class ViewAttach : public LiveTest {
 protected:
  // A viewer attached first (it waits), a peer publishing `format` frames in
  // `memory` slots, `frames` of them once the viewer is connected; the viewer
  // must then show exactly what a viewer shown the last frame directly shows.
  void pixels_match(PixelFormat format, const std::string& memory) {
    Viewer v(headless());
    v.attach(name());
    EXPECT_EQ(state_of(v), "waiting");
    PeerProcess pub({"publish", name(), "--memory", memory, "--format", std::string(to_string(format)),
                     "--size", std::to_string(kW) + "x" + std::to_string(kH)});
    ASSERT_THAT(pub.expect("READY"), HasSubstr(name()));
    ASSERT_TRUE(reaches_state(v, "live")) << v.attach_status()->message;
    pub.send("publish 3");
    ASSERT_TRUE(shows_index(v, 2)) << v.stats().last_index;
    EXPECT_TRUE(same_image(v.snapshot(), reference(format, 2)));
    EXPECT_EQ(v.stream().width, kW);
    EXPECT_EQ(v.stream().format, format);
    EXPECT_GE(v.attach_status()->received, 1u);
    EXPECT_THAT(v.stream().memory, HasSubstr(memory == "vulkan" ? "Vulkan slots imported into GL" : "host memfd"));
    expect_no_gl_errors(v);
  }
};

TEST_F(ViewAttach, HostSlotsNv12PixelsEqualTheFrameShownDirectly) { pixels_match(PixelFormat::NV12, "host"); }
TEST_F(ViewAttach, HostSlotsP010PixelsEqualTheFrameShownDirectly) { pixels_match(PixelFormat::P010, "host"); }
// Issue 23's families, published by another process and drawn by the viewer
// (the renderer's branch) exactly as a viewer shown the frame directly draws it.
TEST_F(ViewAttach, HostSlotsOfEachNewFamilyEqualTheFrameShownDirectly) {
  for (PixelFormat f : {PixelFormat::I420, PixelFormat::YUYV, PixelFormat::UYVY, PixelFormat::RGB8, PixelFormat::BGRA8,
                        PixelFormat::GRAY8, PixelFormat::GRAY16}) {
    SCOPED_TRACE(std::string(to_string(f)));
    pixels_match(f, "host");
  }
}

// Issue 23: a frame's layers published with it are drawn by the attached
// viewer exactly as by a viewer shown the frame and its layers directly.
TEST_F(ViewAttach, PublishedLayersAreDrawnAsWhenShownDirectly) {
  Publisher pub(name());
  Viewer v(headless());
  v.attach(name());
  ASSERT_TRUE(reaches_state(v, "live")) << v.attach_status()->message;
  const Frame f = pattern_frame(PixelFormat::NV12, kW, kH, 5);
  const media::OverlayFrame ov = handoff::test::layered_overlays(5);
  settle(pub);
  ASSERT_TRUE(pub.publish(f, ov));
  ASSERT_TRUE(shows_index(v, 5)) << v.stats().last_index;
  Viewer direct(headless("reference"));
  direct.show(f, ov);
  const RgbaImage attached = v.snapshot();
  EXPECT_TRUE(same_image(attached, direct.snapshot()));
  media::OverlayFrame boxes_only = ov;
  boxes_only.layers.clear();
  Viewer plain(headless("boxes only"));
  plain.show(f, boxes_only);
  EXPECT_FALSE(same_image(attached, plain.snapshot())) << "the layers were not drawn";
  expect_no_gl_errors(v);
}

TEST_F(ViewAttach, VulkanSlotsAreImportedIntoGl) {
#if HANDOFF_HAVE_VULKAN
  std::string why;
  if (!handoff::test::have_vulkan_device(&why)) GTEST_SKIP() << "no Vulkan device: " << why;
  for (PixelFormat f : {PixelFormat::NV12, PixelFormat::P010}) {
    SCOPED_TRACE(std::string(to_string(f)));
    pixels_match(f, "vulkan");
  }
#else
  GTEST_SKIP() << "built without Vulkan";
#endif
}

// Vulkan slots take every format host and CUDA slots take (each plane at its
// place in the slot's FrameLayout). A publisher in this process on a lavapipe
// context with the validation layer on (any message fails) publishes a frame
// of each family: packed RGB, grey (8, 16 bit, float), 4:2:2 packed, i420's
// three planes; a viewer attached to it imports the slot into GL and shows
// exactly what a viewer shown the frame directly shows.
TEST_F(ViewAttach, VulkanSlotsOfEveryFamilyEqualTheFrameShownDirectlyUnderValidation) {
#if HANDOFF_HAVE_VULKAN
  std::string why;
  if (!handoff::test::have_vulkan_device(&why)) GTEST_SKIP() << "no Vulkan device: " << why;
  handoff::test::DebugMessages log;
  {
    auto vk = handoff::test::make_validated_context(log);
    ASSERT_TRUE(vk->validation_enabled()) << "the validation layer must be on in tests";
    PublisherOptions o;
    o.memory = SlotMemory::Vulkan;
    o.vulkan = vk.get();
    for (PixelFormat f : {PixelFormat::RGB8, PixelFormat::BGR8, PixelFormat::RGBA8, PixelFormat::BGRA8,
                          PixelFormat::GRAY8, PixelFormat::GRAY16, PixelFormat::GRAY32F, PixelFormat::YUYV,
                          PixelFormat::UYVY, PixelFormat::I420}) {
      SCOPED_TRACE(std::string(to_string(f)));
      const std::string n = name("-" + std::string(to_string(f)));
      Publisher pub(n, o);
      Viewer v(headless());
      v.attach(n);
      ASSERT_TRUE(reaches_state(v, "live")) << v.attach_status()->message;
      // One frame: gray32f's automatic range then matches the reference's.
      ASSERT_TRUE(pub.publish(pattern_frame(f, kW, kH, 1)));
      ASSERT_TRUE(shows_index(v, 1)) << v.stats().last_index;
      EXPECT_TRUE(same_image(v.snapshot(), reference(f, 1)));
      EXPECT_EQ(v.stream().format, f);
      EXPECT_THAT(v.stream().memory, HasSubstr("Vulkan slots imported into GL"));
      expect_no_gl_errors(v);
    }
  }
  log.fail_on_any("Vulkan validation message during the test or at device destruction");
#else
  GTEST_SKIP() << "built without Vulkan";
#endif
}

TEST_F(ViewAttach, ABadNameIsAUsageErrorAndShowAfterAttachIsRefused) {
  Viewer v(headless());
  EXPECT_THROW(v.attach("no spaces allowed"), UsageError);
  EXPECT_THROW(v.attach(".hidden"), UsageError);
  EXPECT_FALSE(v.attach_status());
  v.attach(name());
  EXPECT_THROW(v.attach(name()), UsageError);
  EXPECT_THROW(v.show(pattern_frame(PixelFormat::NV12, kW, kH, 0)), UsageError);
  Viewer shown(headless("shown"));
  shown.show(pattern_frame(PixelFormat::NV12, kW, kH, 0));
  EXPECT_THROW(shown.attach(name()), UsageError);
}

TEST_F(ViewAttach, SigkilledPublisherLeavesTheLastFrameThenANewOneIsShown) {
  Viewer v(headless());
  v.attach(name());
  RgbaImage before;
  {
    PeerProcess first({"publish", name(), "--size", "64x48"});
    first.expect("READY");
    ASSERT_TRUE(reaches_state(v, "live"));
    first.send("publish 2");
    ASSERT_TRUE(shows_index(v, 1));
    before = v.snapshot();
    first.kill(SIGKILL);
    ASSERT_TRUE(first.wait_exit().has_value());
  }
  ASSERT_TRUE(reaches_state(v, "gone")) << state_of(v);
  EXPECT_TRUE(v.is_open());
  EXPECT_TRUE(same_image(v.snapshot(), before)) << "the last frame stays on display";
  EXPECT_TRUE(same_image(before, reference(PixelFormat::NV12, 1)));
  // A publisher of the same name replaces the stale socket; the viewer reconnects.
  // Spaced: a burst faster than the viewer's releases come back would rightly
  // be skipped for it beyond its hold limit (slots - 1).
  PeerProcess second({"publish", name(), "--size", "64x48", "--interval-ms", "10"});
  second.expect("READY");
  ASSERT_TRUE(eventually([&] { return state_of(v) == "live" && v.attach_status()->connections == 2; }))
      << v.attach_status()->message;
  second.send("publish 5");
  ASSERT_TRUE(shows_index(v, 4)) << "showing " << v.stats().last_index << "; received "
                                 << v.attach_status()->received << ", " << v.attach_status()->message;
  EXPECT_TRUE(same_image(v.snapshot(), reference(PixelFormat::NV12, 4)));
  EXPECT_EQ(v.attach_status()->pid, std::uint32_t(second.pid()));
  expect_no_gl_errors(v);
}

// A published frame above the viewer's GL_MAX_TEXTURE_SIZE is left out,
// counted and named once; the viewer shows the frames around it.
TEST_F(ViewAttach, AFrameAboveTheGlTextureLimitIsLeftOutAndTheViewerGoesOn) {
  Viewer v(headless());
  v.attach(name());
  Publisher pub(name());
  ASSERT_TRUE(reaches_state(v, "live")) << v.attach_status()->message;
  ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 0)));
  ASSERT_TRUE(shows_index(v, 0));
  ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, 16386, 2, 1)));  // 16384 on llvmpipe
  ASSERT_TRUE(eventually([&] { return v.attach_status()->received >= 2; }));
  ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 2)));
  ASSERT_TRUE(shows_index(v, 2)) << v.stats().last_index;
  if (v.stream().width == 16386 || v.diagnostics().frame_errors == 0)
    GTEST_SKIP() << "this GL's textures take 16386 texels: no frame here is too wide for it";
  EXPECT_TRUE(v.is_open());
  EXPECT_TRUE(same_image(v.snapshot(), reference(PixelFormat::NV12, 2)));
  const ViewerDiagnostics d = v.diagnostics();
  EXPECT_EQ(d.frame_errors, 1u);
  EXPECT_THAT(d.first_frame_error, HasSubstr("frame 1: width: a 16386x2 frame"));
  EXPECT_THAT(d.first_frame_error, HasSubstr("GL_MAX_TEXTURE_SIZE"));
  expect_no_gl_errors(v);
}

TEST_F(ViewAttach, EightViewersOnOnePublisher) {
  std::vector<std::unique_ptr<Viewer>> viewers;
  for (int i = 0; i < 8; ++i) {
    viewers.push_back(std::make_unique<Viewer>(headless("viewer " + std::to_string(i))));
    viewers.back()->attach(name());
  }
  PeerProcess pub({"publish", name(), "--size", "64x48", "--slots", "4"});
  pub.expect("READY");
  for (auto& v : viewers) ASSERT_TRUE(reaches_state(*v, "live"));
  pub.send("publish 3");
  const RgbaImage want = reference(PixelFormat::NV12, 2);
  for (auto& v : viewers) {
    ASSERT_TRUE(shows_index(*v, 2)) << v->stats().last_index;
    EXPECT_TRUE(same_image(v->snapshot(), want));
    expect_no_gl_errors(*v);
  }
  pub.send("stats");
  EXPECT_THAT(pub.expect("STATS"), HasSubstr("subscribers=8"));
}

// --- handoff-view as a program -------------------------------------------------------------------

// handoff-view started in the background; killed and reaped by the destructor.
class ViewerProcess {
 public:
  explicit ViewerProcess(const std::vector<std::string>& args) {
    std::vector<std::string> full{HANDOFF_VIEW_EXE};
    full.insert(full.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : full) argv.push_back(s.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) pid_ = -1;
  }
  ~ViewerProcess() { kill_and_reap(); }
  void kill_and_reap() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }
  // Waits for the process to end: its exit status, or 128 + the signal that ended it.
  int wait_exit() {
    int status = 0;
    if (pid_ <= 0 || ::waitpid(pid_, &status, 0) != pid_) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
};

// Publishes the pattern every few milliseconds until stopped.
class PublishingThread {
 public:
  explicit PublishingThread(Publisher& pub, PixelFormat format = PixelFormat::NV12, std::uint32_t w = kW,
                            std::uint32_t h = kH)
      : thread_([this, &pub, format, w, h] {
      for (std::int64_t i = 0; !stop_.load(); ++i) {
        pub.publish(pattern_frame(format, w, h, i));
        std::this_thread::sleep_for(5ms);
      }
    }) {}
  ~PublishingThread() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A headless --attach --record waits for its publisher for ever: a signal is
// how it is stopped. SIGINT / SIGTERM close it as Q does: the recording gets
// its summary and footer (before, it died with the file unfinished), the
// summary lines are printed, and the exit status is the shell's 128 + signal.
TEST_F(ViewAttach, ASignalClosesTheViewerAndFinishesItsRecording) {
  for (const int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(strsignal(sig));
    Publisher pub(name());
    PublishingThread feeding(pub);
    char tmpl[] = "/tmp/handoff-signal-record-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string file = std::string(tmpl) + "/rec.mcap";
    ViewerProcess view({"--attach", name(), "--headless", "--quiet", "--record", file});
    ASSERT_GT(view.pid(), 0);
    ASSERT_TRUE(eventually([&] { return pub.stats().subscribers == 1; }, 30s));
    ASSERT_TRUE(eventually([&] {
      std::error_code ec;
      return std::filesystem::file_size(file, ec) > 4096;  // frames are being written
    }, 30s));
    ::kill(view.pid(), sig);
    EXPECT_EQ(view.wait_exit(), 128 + sig);
    auto rec = media::open_recording(file);
    EXPECT_TRUE(rec->warnings().empty()) << rec->warnings().front();  // a summary, not a scanned cut file
    EXPECT_GT(rec->info().frame_count, 0);
    std::error_code ec;
    std::filesystem::remove_all(tmpl, ec);
  }
}

TEST_F(ViewAttach, KillingAViewerProcessLeavesThePublisherGoing) {
  Publisher pub(name());
  ViewerProcess view({"--attach", name(), "--headless", "--quiet"});
  ASSERT_GT(view.pid(), 0);
  ASSERT_TRUE(eventually([&] { return pub.stats().subscribers == 1; }, 30s));
  Subscriber other(name());
  ASSERT_TRUE(other.wait_for(LinkState::Connected, 10s));
  for (int i = 0; i < 20; ++i) pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i));
  view.kill_and_reap();
  ASSERT_TRUE(eventually([&] { return pub.stats().subscribers == 1; })) << "the killed viewer is dropped";
  (void)other.take();
  EXPECT_TRUE(eventually([&] { return pub.stats().held_frames == 0; })) << "its slots came back";
  EXPECT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 99)));
  const LiveFrame f = other.next(10s);
  ASSERT_TRUE(f);
  EXPECT_EQ(f.frame.index, 99);
  EXPECT_EQ(check_pattern(f.frame), "");
}

// The pixels of `image` in [x0, x0 + w) x [0, h), as an image of their own.
RgbaImage crop(const RgbaImage& image, std::uint32_t x0, std::uint32_t w, std::uint32_t h) {
  if (image.width() < x0 + w || image.height() < h) return RgbaImage();
  std::vector<std::uint8_t> px(std::size_t(w) * h * 4);
  for (std::uint32_t y = 0; y < h; ++y) std::memcpy(&px[std::size_t(y) * w * 4], image.pixel(x0, y), std::size_t(w) * 4);
  return RgbaImage(w, h, std::move(px));
}

// attach() twice: each publisher in a tile of its own, side by side, each
// showing its newest frame exactly as a viewer shown it directly does.
TEST_F(ViewAttach, TwoPublishersSideBySide) {
  ViewerOptions o = headless();
  o.width = 320;  // wide: the two tiles side by side
  Viewer v(o);
  Publisher left(name("-l")), right(name("-r"));
  v.attach(name("-l"));
  v.attach(name("-r"));
  EXPECT_THROW(v.attach(name("-r")), UsageError) << "attached to it already";
  ASSERT_TRUE(eventually([&] {
    const std::vector<AttachStatus> all = v.attach_statuses();
    return all.size() == 2 && all[0].state == "live" && all[1].state == "live";
  }));
  EXPECT_EQ(v.attach_status()->publisher, name("-l"));
  ASSERT_TRUE(left.publish(pattern_frame(PixelFormat::NV12, kW, kH, 4)));
  ASSERT_TRUE(right.publish(pattern_frame(PixelFormat::RGB8, kW, kH, 7)));
  const RgbaImage want_l = reference(PixelFormat::NV12, 4), want_r = reference(PixelFormat::RGB8, 7);
  RgbaImage shot;
  EXPECT_TRUE(eventually([&] {
    shot = v.snapshot();
    return shot.width() == 2 * kW && same_image(crop(shot, 0, kW, kH), want_l) &&
           same_image(crop(shot, kW, kW, kH), want_r);
  })) << shot.width() << "x" << shot.height();
  expect_no_gl_errors(v);
}

// handoff-view --attach A --attach B: the composed frames (--output) hold both.
TEST_F(ViewAttach, TheCommandLineAttachesTwoPublishersInAGrid) {
  Publisher a(name("-a")), b(name("-b"));
  PublishingThread feeding_a(a), feeding_b(b);
  char tmpl[] = "/tmp/handoff-attach-grid-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string out = std::string(tmpl) + "/out";
  const auto r = run_viewer({"--attach", name("-a"), "--attach", name("-b"), "--headless", "--frames", "6",
                             "--window", "320x120", "--output", out},
                            {}, {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const media::Image8 last = media::read_png(std::filesystem::path(out) / "frame_000005.png", 4);
  EXPECT_EQ(last.width, 2 * kW) << r.output;
  EXPECT_EQ(last.height, kH);
  const auto twice = run_viewer({"--attach", name("-a"), "--attach", name("-a"), "--headless"}, {}, {}, 30);
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_THAT(twice.output, HasSubstr("named twice"));
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
}

TEST_F(ViewAttach, TheCommandLineAttachesAndEndsAfterFrames) {
  Publisher pub(name());
  PublishingThread feeding(pub);
  const auto r = run_viewer({"--attach", name(), "--headless", "--frames", "5"}, {}, {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("attached: connected to '" + name() + "'"));
  EXPECT_THAT(r.output, HasSubstr("5 frames 64x48"));
}

// Frames the display cannot take (wider than this GL's textures) stop it on an
// error about the input: exit 1 naming it, not the 2 of a bad command line.
// Frames too large for the GL among good ones: the viewer skips them and
// plays on (it used to stop at the first with an error), and the run
// exits 1 naming them, as for a file's malformed frames.
TEST_F(ViewAttach, FramesTooLargeForThisGlAreSkippedAndTheRunExits1NamingThem) {
  Publisher pub(name());
  std::atomic<bool> stop{false};
  std::thread feeding([&] {
    for (std::int64_t i = 0; !stop.load(); ++i) {
      const bool wide = i % 4 == 1;
      (void)pub.publish(wide ? pattern_frame(PixelFormat::GRAY8, 32768, 2, i) : pattern_frame(PixelFormat::GRAY8, kW, kH, i));
      std::this_thread::sleep_for(5ms);
    }
  });
  const auto r = run_viewer({"--attach", name(), "--headless", "--frames", "20"}, {}, {}, 60);
  stop.store(true);
  feeding.join();
  if (r.exit_code == 0) GTEST_SKIP() << "this GL's textures take 32768 texels: no frame is too wide for it";
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("handoff-view: 20 frames"));
  EXPECT_THAT(r.output, HasSubstr("malformed frame(s) skipped; the first: attach '" + name() + "': frame "));
  EXPECT_THAT(r.output, HasSubstr("width: a 32768x2 frame is wider than the viewer can show"));
  EXPECT_THAT(r.output, Not(HasSubstr("handoff-view: error: ")));
}

// A path that can never be a publisher's socket ends the viewer at once with
// exit 1 and the reason said once (it was said four times: the subscriber's
// log, two notices and the error).
TEST_F(ViewAttach, APathThatIsNotASocketExits1SayingWhyOnce) {
  const std::filesystem::path file = std::filesystem::path(::testing::TempDir()) / (name() + ".notsock");
  std::ofstream(file) << "not a socket";
  const auto r = run_viewer({"--attach", file.string(), "--headless", "--frames", "1"}, {}, {}, 30);
  std::filesystem::remove(file);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("handoff-view: error: attach '"));
  const std::string why = "is not a socket";
  std::size_t said = 0;
  for (std::size_t at = r.output.find(why); at != std::string::npos; at = r.output.find(why, at + 1)) ++said;
  EXPECT_EQ(said, 1u) << r.output;
}

TEST_F(ViewAttach, ListShowsLivePublishersAndSaysWhenThereAreNone) {
  const auto none = run_viewer({"--list"}, {}, {}, 30);
  EXPECT_EQ(none.exit_code, 0) << none.output;
  EXPECT_THAT(none.output, HasSubstr("no publishers in"));
  Publisher pub(name());
  PublishingThread feeding(pub);
  const auto r = run_viewer({"--list"}, {}, {}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr(name()));
  EXPECT_THAT(r.output, HasSubstr("pid " + std::to_string(::getpid())));
  EXPECT_THAT(r.output, HasSubstr("live"));
  EXPECT_THAT(r.output, HasSubstr("nv12 64x48"));
  EXPECT_THAT(r.output, HasSubstr(" fps"));
}

// Named publishers live in $XDG_RUNTIME_DIR/handoff: without it there are
// none, said as such (it was exit 1 with advice to give a socket path, which
// --list cannot take).
TEST_F(ViewAttach, ListWithoutXdgRuntimeDirSaysThereAreNone) {
  const auto r = run_viewer({"--list"}, {"XDG_RUNTIME_DIR"}, {}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no publishers: XDG_RUNTIME_DIR is not set"));
}

TEST_F(ViewAttach, BadAttachArgumentsExitTwoWithAClearMessage) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--attach", "has space"},
                                               std::vector<std::string>{"--attach", ".hidden"},
                                               std::vector<std::string>{"--attach", "cam0", "--source", "vulkan"},
                                               std::vector<std::string>{"--attach", "cam0", "clip.y4m"},
                                               std::vector<std::string>{"--attach"}}) {
    const auto r = run_viewer(args, {}, {}, 30);
    EXPECT_EQ(r.exit_code, 2) << args[1] << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("--attach")) << r.output;
  }
  // A name needs XDG_RUNTIME_DIR: a clear error, not a hang.
  const auto r = run_viewer({"--attach", "cam0", "--headless"}, {"XDG_RUNTIME_DIR"}, {}, 30);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("XDG_RUNTIME_DIR"));
}

}  // namespace
}  // namespace handoff::live::test
