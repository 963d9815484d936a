// handoff::Viewer as an application uses it: frames shown from its own
// threads, checked through snapshot() against the colour reference; overlays;
// the newest frame winning with drops counted; closing; bad frames; frames
// changing size and format; acquire / present; several viewers; memory.
//
// Built twice: headless (EGL) in handoff_viewer_gl_tests, and in a window
// (Xvfb) in handoff_viewer_window_tests (HANDOFF_TEST_WINDOW=1). GL debug
// contexts are on and any KHR_debug error fails the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <glad/gl.h>

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include <handoff/frame_validate.hpp>
#include <handoff/gl_buffer.hpp>
#include <handoff/gl_worker.hpp>
#include <handoff/viewer.hpp>

#include "viewer_display_test.hpp"
#include <handoff/wait.hpp>

#include "snapshot_checks.hpp"
#include "interop_testing.hpp"
#include "viewer_frames.hpp"
#include "wait_support.hpp"

namespace handoff::view::test {
namespace {

class ViewerApi : public ViewerDisplayTest {
 protected:
  static ViewerOptions options(const std::string& title = "test") { return test_view_options(title); }
  static void expect_no_gl_errors(const Viewer& v) {
    const ViewerDiagnostics d = v.diagnostics();
    EXPECT_EQ(d.gl_errors, 0u) << d.first_gl_error;
  }
};

// The four quadrants' centres against the float64 reference (within 1 code).
void expect_quadrants(const RgbaImage& img, PixelFormat f, Colorimetry c) {
  const auto q = quadrant_colours(f, c);
  const std::uint32_t w = img.width(), h = img.height();
  const std::uint32_t xs[2] = {w / 4, 3 * w / 4}, ys[2] = {h / 4, 3 * h / 4};
  for (int i = 0; i < 4; ++i)
    expect_rgb_near(img, xs[i % 2], ys[i / 2], expected_rgb(q[std::size_t(i)], f, c), 1,
                    std::string(to_string(f)) + " quadrant " + std::to_string(i));
}

TEST_F(ViewerApi, ShownPixelsEqualTheColourReferenceNv12AndP010) {
  Viewer v(options());
  const Colorimetry bt709{ColorMatrix::BT709, ColorRange::Limited, ChromaSiting::Left};
  const Colorimetry bt2020{ColorMatrix::BT2020, ColorRange::Full, ChromaSiting::Left};
  v.show(quadrant_frame(PixelFormat::NV12, 96, 64, bt709));
  RgbaImage img = v.snapshot();
  ASSERT_EQ(img.width(), 96u);
  ASSERT_EQ(img.height(), 64u);
  expect_quadrants(img, PixelFormat::NV12, bt709);
  v.show(quadrant_frame(PixelFormat::P010, 96, 64, bt2020));
  img = v.snapshot();
  expect_quadrants(img, PixelFormat::P010, bt2020);
  const StreamInfo s = v.stream();
  EXPECT_EQ(s.format, PixelFormat::P010);
  EXPECT_EQ(s.name, "application");
  expect_no_gl_errors(v);
}

TEST_F(ViewerApi, OverlaysAreDrawnWhereTheyBelong) {
  Viewer v(options());
  const Colorimetry c{};
  const Yuv grey{126, 128, 128};
  media::OverlayFrame boxes;
  boxes.add_box(20, 10, 60, 40);  // no label, no class: a white outline
  v.show(solid_frame(PixelFormat::NV12, 96, 64, grey), boxes);
  const RgbaImage img = v.snapshot();
  const auto g = expected_rgb(grey, PixelFormat::NV12, c);
  expect_box_edge(img, 40, 10, false, {255, 255, 255}, g, "the box's top edge");
  expect_box_edge(img, 20, 25, true, {255, 255, 255}, g, "its left edge");
  expect_box_edge(img, 59, 25, true, {255, 255, 255}, g, "its right edge");
  expect_box_edge(img, 40, 39, false, {255, 255, 255}, g, "its bottom edge");
  expect_rgb_near(img, 40, 25, g, 1, "inside the box");
  expect_rgb_near(img, 80, 50, g, 1, "outside it");
  // Hidden overlays leave the frame alone.
  ViewerOptions o = options();
  o.show_overlays = false;
  Viewer hidden(o);
  hidden.show(solid_frame(PixelFormat::NV12, 96, 64, grey), boxes);
  expect_rgb_near(hidden.snapshot(), 40, 10, g, 1, "the box's edge, overlays hidden");
  expect_no_gl_errors(v);
}

TEST_F(ViewerApi, ShowFromFourThreadsAtOnce) {
  Viewer v(options());
  constexpr int kThreads = 4, kFrames = 40;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        const Frame f = solid_frame(PixelFormat::NV12, 64 + 16 * t, 48, Yuv{40 + 40 * t, 128, 128});
        for (int i = 0; i < kFrames; ++i) {
          Frame g = f;
          g.index = t * 1000 + i;
          v.show(g);
        }
      } catch (const std::exception& e) {
        ++failures;
        ADD_FAILURE() << "thread " << t << ": " << e.what();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  const RgbaImage img = v.snapshot();  // the newest frame is displayed
  const ViewerStats s = v.stats();
  EXPECT_EQ(s.submitted, std::uint64_t(kThreads * kFrames));
  EXPECT_EQ(s.shown + s.dropped, s.submitted) << "every frame handed in was shown or dropped";
  EXPECT_GE(s.shown, 1u);
  // What is displayed is one thread's last frame, at that thread's size.
  const int t = int(s.last_index / 1000);
  EXPECT_EQ(s.last_index % 1000, kFrames - 1);
  EXPECT_EQ(img.width(), std::uint32_t(64 + 16 * t));
  expect_no_gl_errors(v);
}

// A producer much faster than the display: while the display is paused the
// producer never waits, the newest frame waits and the ones it replaces are
// dropped; on resume the newest is what is shown. The latency figures are
// checked against what the test arranged, not against how fast this machine
// is: frame 100 is held (paused) until the clock has moved 2 ms past its
// show(), and no frame can have waited longer than the test has run.
TEST_F(ViewerApi, AFasterProducerSeesTheNewestShownAndDropsCounted) {
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
  const Clock::time_point began = Clock::now();  // before any frame entered show()
  Viewer v(options());
  v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{50, 128, 128}, 0));
  (void)v.snapshot();  // frame 0 is on display
  v.set_paused(true);
  EXPECT_TRUE(v.paused());
  for (int i = 1; i <= 100; ++i) v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{50 + i, 128, 128}, i));
  const Clock::time_point after_100 = Clock::now();  // frame 100 entered show() before this
  ViewerStats s = v.stats();
  EXPECT_EQ(s.submitted, 101u);
  EXPECT_EQ(s.shown, 1u) << "paused: nothing new displayed";
  EXPECT_EQ(s.dropped, 99u) << "frames 1..99 were replaced by newer ones";
  EXPECT_EQ(s.last_index, 0);
  while (Clock::now() < after_100 + std::chrono::milliseconds(2)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  v.set_paused(false);
  const RgbaImage img = v.snapshot();
  const double envelope_ms = ms_since(began);
  s = v.stats();
  // Two frames displayed (0 and 100): p99 of two is the larger, at least frame 100's.
  EXPECT_GE(s.latency_p99_ms, 2.0) << "frame 100 waited, paused, 2 ms between show() and display";
  EXPECT_LE(s.latency_p99_ms, envelope_ms) << "a frame waited longer than the test has run";
  EXPECT_EQ(s.shown, 2u);
  EXPECT_EQ(s.dropped, 99u);
  EXPECT_EQ(s.last_index, 100) << "the newest frame";
  expect_rgb_near(img, 10, 10, expected_rgb(Yuv{150, 128, 128}, PixelFormat::NV12, {}), 1, "frame 100");
  // And unpaused, as fast as it can: every frame is shown or dropped, the last one shown.
  for (int i = 101; i <= 400; ++i) v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{16 + i % 200, 128, 128}, i));
  (void)v.snapshot();
  s = v.stats();
  EXPECT_EQ(s.submitted, 401u);
  EXPECT_EQ(s.shown + s.dropped, s.submitted);
  EXPECT_EQ(s.last_index, 400);
  EXPECT_LE(s.latency_p99_ms, ms_since(began)) << "a frame waited longer than the test has run";
  EXPECT_GE(s.latency_p99_ms, s.latency_p50_ms);
  expect_no_gl_errors(v);
}

TEST_F(ViewerApi, StepShowsOneFrameAndStaysPaused) {
  Viewer v(options());
  v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{60, 128, 128}, 0));
  (void)v.snapshot();
  v.set_paused(true);
  v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{90, 128, 128}, 1));
  EXPECT_EQ(v.steps(), 0u);
  v.step();
  EXPECT_EQ(v.steps(), 1u);
  EXPECT_TRUE(v.paused());
  (void)v.snapshot();
  EXPECT_EQ(v.stats().last_index, 1);
  v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{120, 128, 128}, 2));
  const RgbaImage img = v.snapshot();  // paused: what is on display
  EXPECT_EQ(v.stats().last_index, 1) << "still paused after the step";
  expect_rgb_near(img, 5, 5, expected_rgb(Yuv{90, 128, 128}, PixelFormat::NV12, {}), 1, "frame 1");
}

// PausedShow::Block: show() waits while paused; a step lets one frame through.
TEST_F(ViewerApi, BlockingShowWaitsForStepOrResume) {
  ViewerOptions o = options();
  o.paused_show = PausedShow::Block;
  Viewer v(o);
  v.set_paused(true);
  std::atomic<int> returned{0};
  std::thread producer([&] {
    for (int i = 0; i < 3; ++i) {
      v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{60 + i, 128, 128}, i));
      ++returned;
    }
  });
  v.step();
  handoff::test::wait_until([&] { return returned.load() >= 1; }, "the stepped frame to go through");
  EXPECT_EQ(returned.load(), 1) << "one step, one frame through";
  v.set_paused(false);
  producer.join();
  EXPECT_EQ(returned.load(), 3);
}

TEST_F(ViewerApi, ShowAfterCloseRaisesViewerClosed) {
  Viewer v(options());
  v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{80, 128, 128}));
  EXPECT_TRUE(v.is_open());
  v.close();
  EXPECT_FALSE(v.is_open());
  EXPECT_THROW(v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{80, 128, 128})), ViewerClosed);
  EXPECT_THROW(v.acquire(PixelFormat::NV12, 64, 48), ViewerClosed);
  EXPECT_THROW(v.snapshot(), ViewerClosed);
  v.close();  // idempotent
  EXPECT_TRUE(v.wait_closed_for(std::chrono::milliseconds(0)));
  v.wait_closed();
  expect_no_gl_errors(v);
}

TEST_F(ViewerApi, FramesChangeSizeAndFormatMidStream) {
  Viewer v(options());
  struct Case {
    PixelFormat f;
    std::uint32_t w, h;
    Colorimetry c;
  };
  const Case cases[] = {{PixelFormat::NV12, 64, 48, {}},
                        {PixelFormat::P010, 97, 33, {ColorMatrix::BT2020, ColorRange::Limited, ChromaSiting::Left}},
                        {PixelFormat::NV12, 1920, 1080, {ColorMatrix::BT601, ColorRange::Full, ChromaSiting::Left}},
                        {PixelFormat::P010, 16, 16, {}},
                        {PixelFormat::NV12, 1921, 1081, {}}};
  for (const Case& k : cases) {
    v.show(quadrant_frame(k.f, k.w, k.h, k.c));
    const RgbaImage img = v.snapshot();
    ASSERT_EQ(img.width(), k.w);
    ASSERT_EQ(img.height(), k.h);
    expect_quadrants(img, k.f, k.c);
    const StreamInfo s = v.stream();
    EXPECT_EQ(s.width, k.w);
    EXPECT_EQ(s.format, k.f);
  }
  expect_no_gl_errors(v);
}

TEST_F(ViewerApi, BadFramesAreRefusedNamingTheField) {
  Viewer v(options());
  const Frame good = solid_frame(PixelFormat::NV12, 64, 48, Yuv{80, 128, 128});
  Frame f = good;
  f.width = 0;
  expect_invalid(v, f, "width");
  f = good;
  f.planes[0].data = nullptr;
  expect_invalid(v, f, "planes[0] (luma).data");
  f = good;
  f.planes[1].pitch = 10;
  expect_invalid(v, f, "planes[1] (chroma).pitch");
  f = good;
  f.memory = MemoryKind::Vulkan;
  f.planes[0].data = f.planes[1].data = nullptr;
  f.planes[1].offset = 64 * 48;
  expect_invalid(v, f, "memory");
  f = good;
  f.memory = MemoryKind::Cuda;
  f.device = 1;  // the viewer's CUDA device is 0: refused before any CUDA call
  expect_invalid(v, f, "device");
  EXPECT_THROW(v.acquire(PixelFormat::NV12, 0, 10), InvalidFrame);
  // Nothing was taken: the viewer still works.
  v.show(good);
  EXPECT_EQ(v.snapshot().width(), 64u);
  EXPECT_EQ(v.stats().submitted, 1u);
}

// A frame above the display's GL_MAX_TEXTURE_SIZE is refused by show() and
// acquire() on the caller's thread, naming the side and the limit; the
// display never sees it, and every stream goes on.
TEST_F(ViewerApi, FramesAboveTheGlTextureLimitAreRefusedAndTheViewerGoesOn) {
  Viewer v(options());
  const std::uint32_t max = v.gl_worker()->run([] {
    GLint m = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &m);
    return std::uint32_t(m);
  });
  if (max + 2 > kMaxFrameDimension) GTEST_SKIP() << "this GL's textures take every frame size (" << max << ")";
  const Frame good = solid_frame(PixelFormat::NV12, 64, 48, Yuv{80, 128, 128});
  v.show(good);
  ASSERT_EQ(v.snapshot().width(), 64u);
  const std::string limit = "GL_MAX_TEXTURE_SIZE is " + std::to_string(max);
  const Frame wide = solid_frame(PixelFormat::NV12, max + 2, 2, Yuv{80, 128, 128});
  const Frame tall = solid_frame(PixelFormat::NV12, 2, max + 2, Yuv{80, 128, 128});
  for (const auto& [f, field] : {std::pair{&wide, "width"}, std::pair{&tall, "height"}}) {
    for (const std::string stream : {"", "other"}) {
      try {
        v.show(*f, {}, stream);
        ADD_FAILURE() << "show() took a frame the display cannot hold";
      } catch (const InvalidFrame& e) {
        EXPECT_EQ(e.field(), field) << e.what();
        EXPECT_THAT(e.what(), ::testing::HasSubstr(limit));
      }
    }
  }
  try {
    (void)v.acquire(PixelFormat::GRAY8, max + 1, 16);
    ADD_FAILURE() << "acquire() took a frame the display cannot hold";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "width") << e.what();
    EXPECT_THAT(e.what(), ::testing::HasSubstr(limit));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a display that took one would stop meanwhile
  ASSERT_TRUE(v.is_open());
  v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{80, 128, 128}, 7));
  EXPECT_EQ(v.snapshot().width(), 64u);
  EXPECT_EQ(v.stats().last_index, 7);
  v.show(good, {}, "other");
  EXPECT_EQ(v.tiles().size(), 2u);
  expect_no_gl_errors(v);
}

#if !HANDOFF_TEST_WINDOW  // a window's framebuffer is the window system's: the headless binary only
// A headless view is a texture: one larger than the GL makes is refused when
// the viewer is made, naming the limit (it used to stop the display at its
// first frame).
TEST_F(ViewerApi, AHeadlessViewAboveTheGlTextureLimitIsRefusedAtConstruction) {
  std::uint32_t max = 0;
  {
    Viewer v(options());
    max = v.gl_worker()->run([] {
      GLint m = 0;
      glGetIntegerv(GL_MAX_TEXTURE_SIZE, &m);
      return std::uint32_t(m);
    });
  }
  if (max + 1 > kMaxFrameDimension) GTEST_SKIP() << "this GL's textures take every view size (" << max << ")";
  ViewerOptions o = options();
  o.width = int(max) + 1;
  o.height = 64;
  try {
    Viewer v(o);
    ADD_FAILURE() << "a " << o.width << "x64 headless view was made";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("GL_MAX_TEXTURE_SIZE is " + std::to_string(max))) << e.what();
  }
}
#endif

// A host frame's planes written into a GL buffer of the viewer's share group:
// luma at `offset`, chroma after it, rows `pitch` bytes apart (0: packed).
Frame gl_buffer_frame(GlWorker& worker, const Frame& host, std::size_t offset, std::size_t pitch, GlBuffer& out) {
  const std::size_t bps = host.format == PixelFormat::P010 ? 2 : 1;
  const std::size_t rows[2] = {host.planes[0].height, host.planes[1].height};
  const std::size_t row_bytes[2] = {host.planes[0].width * bps, host.planes[1].width * 2 * bps};
  const std::size_t pitches[2] = {pitch ? pitch : row_bytes[0], pitch ? pitch : row_bytes[1]};
  const std::size_t chroma_offset = offset + pitches[0] * rows[0];
  std::vector<std::byte> bytes(chroma_offset + pitches[1] * rows[1], std::byte{0x5a});
  const std::size_t offsets[2] = {offset, chroma_offset};
  for (int p = 0; p < 2; ++p)
    for (std::size_t r = 0; r < rows[p]; ++r)
      std::memcpy(bytes.data() + offsets[p] + r * pitches[p],
                  static_cast<const std::byte*>(host.planes[std::size_t(p)].data) + r * host.planes[std::size_t(p)].pitch,
                  row_bytes[p]);
  out = GlBuffer(worker, bytes.size());
  out.write(0, bytes);
  Frame f = host;
  f.memory = MemoryKind::GlBuffer;
  f.gl_buffer = out.name();
  f.owner = out.keep_alive();
  for (int p = 0; p < 2; ++p) {
    f.planes[std::size_t(p)].data = nullptr;
    f.planes[std::size_t(p)].offset = offsets[p];
    f.planes[std::size_t(p)].pitch = pitches[p];
  }
  return f;
}

// GL-buffer frames (a buffer made on Viewer::gl_worker()) are copied GPU-side
// and shown like the same frame from host memory, packed or pitched (row by
// row), NV12 and P010; the caller's buffer is its own again on return.
TEST_F(ViewerApi, GlBufferFramesShowLikeTheirHostFrames) {
  Viewer v(options());
  const std::shared_ptr<GlWorker> worker = v.gl_worker();
  ASSERT_TRUE(worker);
  const Colorimetry bt709{ColorMatrix::BT709, ColorRange::Limited, ChromaSiting::Left};
  const Colorimetry bt2020{ColorMatrix::BT2020, ColorRange::Full, ChromaSiting::Left};
  for (const auto& [format, c] : {std::pair{PixelFormat::NV12, bt709}, std::pair{PixelFormat::P010, bt2020}}) {
    const Frame host = quadrant_frame(format, 96, 64, c);
    v.show(host);
    const RgbaImage want = v.snapshot();
    for (const std::size_t pitch : {std::size_t(0), std::size_t(512)}) {
      for (int k = 0; k < 4; ++k) {  // every ring buffer holds another frame first
        v.show(solid_frame(format, 96, 64, Yuv{30 + 40 * k, 60, 200}));
        v.snapshot();
      }
      GlBuffer buffer;
      const Frame f = gl_buffer_frame(*worker, host, 4096, pitch, buffer);
      v.show(f);
      buffer.write(0, std::vector<std::byte>(buffer.size(), std::byte{0}));  // the caller's again: the copy is done
      const RgbaImage got = v.snapshot();
      ASSERT_EQ(got.width(), want.width());
      ASSERT_EQ(got.height(), want.height());
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), std::size_t(want.stride()) * want.height()))
          << to_string(format) << " GL-buffer frame, pitch " << pitch;
      expect_quadrants(got, format, c);
    }
  }
  EXPECT_EQ(v.stats().submitted, 2u + 2u * 2u * 5u);
  expect_no_gl_errors(v);
}

TEST_F(ViewerApi, BadGlBufferFramesAreRefusedNamingTheField) {
  Viewer v(options());
  const std::shared_ptr<GlWorker> worker = v.gl_worker();
  const Frame host = solid_frame(PixelFormat::NV12, 64, 48, Yuv{80, 128, 128});
  GlBuffer buffer;
  const Frame good = gl_buffer_frame(*worker, host, 0, 0, buffer);
  Frame f = good;
  f.gl_buffer = buffer.name() + 1000;  // no such buffer in the viewer's share group
  expect_invalid(v, f, "gl_buffer");
  f = good;
  f.planes[1].offset = buffer.size() - 100;  // chroma runs past the buffer's end
  expect_invalid(v, f, "planes[1] (chroma).offset");
  f = good;
  f.planes[0].offset = std::size_t(1) << 62;
  expect_invalid(v, f, "planes[0] (luma).offset");
  // A buffer mapped (not persistently) cannot be copied from: refused, not a GL error.
  worker->run([&] { ASSERT_NE(glMapNamedBufferRange(buffer.name(), 0, 16, GL_MAP_READ_BIT), nullptr); });
  expect_invalid(v, good, "gl_buffer");
  worker->run([&] { glUnmapNamedBuffer(buffer.name()); });
  v.show(good);  // nothing was taken: the viewer still works
  EXPECT_EQ(v.snapshot().width(), 64u);
  EXPECT_EQ(v.stats().submitted, 1u);
  expect_no_gl_errors(v);
}

TEST_F(ViewerApi, AcquireAndPresentWriteStraightIntoTheRing) {
  Viewer v(options());
  const Colorimetry c{ColorMatrix::BT709, ColorRange::Limited, ChromaSiting::Left};
  for (int round = 0; round < 5; ++round) {
    ViewerFrame slot = v.acquire(PixelFormat::NV12, 80, 60, c);
    ASSERT_TRUE(slot);
    Frame& f = slot.frame();
    EXPECT_EQ(f.memory, MemoryKind::Host) << "no CUDA here: host-mapped buffers";
    EXPECT_NO_THROW(validate(f));
    const auto q = quadrant_colours(PixelFormat::NV12, c);
    fill_frame(f, [&](std::uint32_t x, std::uint32_t y) { return q[std::size_t(quadrant(x, y, 80, 60))]; });
    f.index = round;
    v.present(std::move(slot));
    EXPECT_FALSE(slot);
    const RgbaImage img = v.snapshot();
    expect_quadrants(img, PixelFormat::NV12, c);
    EXPECT_EQ(v.stats().last_index, round);
  }
  // A buffer dropped without present() goes back: many more acquires than buffers.
  for (int i = 0; i < 10; ++i) (void)v.acquire(PixelFormat::P010, 32, 32);
  ViewerFrame a = v.acquire(PixelFormat::NV12, 32, 32);
  a.frame().width = 30;
  EXPECT_THROW(v.present(std::move(a)), UsageError);
  EXPECT_THROW(v.present(ViewerFrame{}), UsageError);
  Viewer other(options("other"));
  ViewerFrame b = v.acquire(PixelFormat::NV12, 32, 32);
  EXPECT_THROW(other.present(std::move(b)), UsageError);
  expect_no_gl_errors(v);
}

TEST_F(ViewerApi, AnAcquiredBufferOutlivesItsViewer) {
  auto v = std::make_unique<Viewer>(options());
  ViewerFrame slot = v->acquire(PixelFormat::NV12, 64, 48);
  v->close();
  // Still mapped and writable after the close.
  std::memset(slot.frame().planes[0].data, 77, slot.frame().planes[0].pitch * 48);
  EXPECT_THROW(v->present(std::move(slot)), ViewerClosed);
  v.reset();
}

TEST_F(ViewerApi, SeveralViewersInOneProcess) {
  Viewer a(options("a")), b(options("b"));
  a.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{60, 90, 160}));
  b.show(solid_frame(PixelFormat::P010, 40, 30, Yuv{700, 400, 600}));
  const RgbaImage ia = a.snapshot(), ib = b.snapshot();
  EXPECT_EQ(ia.width(), 64u);
  EXPECT_EQ(ib.width(), 40u);
  expect_rgb_near(ia, 8, 8, expected_rgb(Yuv{60, 90, 160}, PixelFormat::NV12, {}), 1, "viewer a");
  expect_rgb_near(ib, 8, 8, expected_rgb(Yuv{700, 400, 600}, PixelFormat::P010, {}), 1, "viewer b");
  a.close();
  b.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{60, 128, 128}));  // b goes on
  EXPECT_EQ(b.snapshot().height(), 48u);
}

// Each viewer draws its overlays with Dear ImGui on its own display thread
// (ImGui's current context is one process-wide variable: the viewer holds a
// lock around every use; TSan runs this).
TEST_F(ViewerApi, SeveralViewersDrawOverlaysAtOnce) {
  Viewer a(options("a")), b(options("b"));
  auto produce = [](Viewer& v, int seed) {
    media::OverlayFrame boxes;
    for (int i = 0; i < 20; ++i) boxes.add_box(float(i * 3), 5, float(i * 3 + 10), 30, "obj", 0.5f, i, seed);
    for (int i = 0; i < 60; ++i) v.show(solid_frame(PixelFormat::NV12, 96, 64, Yuv{40 + seed, 128, 128}, i), boxes);
  };
  std::thread ta([&] { produce(a, 0); }), tb([&] { produce(b, 100); });
  ta.join();
  tb.join();
  EXPECT_EQ(a.snapshot().width(), 96u);
  EXPECT_EQ(b.snapshot().width(), 96u);
  (void)a.snapshot(SnapshotKind::View);
  (void)b.snapshot(SnapshotKind::View);
  EXPECT_EQ(a.stats().last_index, 59);
  EXPECT_EQ(b.stats().last_index, 59);
  expect_no_gl_errors(a);
  expect_no_gl_errors(b);
}

TEST_F(ViewerApi, ViewSnapshotHasTheViewsSize) {
  Viewer v(options());
  v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{100, 128, 128}));
  const RgbaImage view = v.snapshot(SnapshotKind::View);
  EXPECT_EQ(view.width(), 320u);
  EXPECT_EQ(view.height(), 240u);
}

// The two colour paths (ViewerConvert) show the same view: in a window the
// CPU path's pixels reach the back buffer (in its own byte and row order),
// headless an FBO. Both frame snapshots equal the reference at the quadrants'
// centres; the views agree within 1 code wherever the shader's view is flat
// (at the quadrants' edges llvmpipe's 8-bit chroma filter strays by a few
// codes), and the corner outside the frame is the background in both.
TEST_F(ViewerApi, BothColourPathsShowTheSameView) {
  const Colorimetry c{ColorMatrix::BT601, ColorRange::Full, ChromaSiting::Center};
  RgbaImage views[2];
  for (ViewerConvert path : {ViewerConvert::Gpu, ViewerConvert::Cpu}) {
    ViewerOptions o = options(path == ViewerConvert::Cpu ? "cpu" : "gpu");
    o.show_ui = false;
    o.convert = path;
    Viewer v(o);
    v.show(quadrant_frame(PixelFormat::P010, 96, 64, c));
    expect_quadrants(v.snapshot(), PixelFormat::P010, c);
    views[path == ViewerConvert::Cpu ? 1 : 0] = v.snapshot(SnapshotKind::View);
    EXPECT_EQ(v.stream().convert.rfind(path == ViewerConvert::Cpu ? "cpu" : "gpu", 0), 0u) << v.stream().convert;
    expect_no_gl_errors(v);
  }
  const RgbaImage& gpu = views[0];
  const RgbaImage& cpu = views[1];
  ASSERT_EQ(cpu.width(), gpu.width());
  ASSERT_EQ(cpu.height(), gpu.height());
  const auto same = [](const std::uint8_t* a, const std::uint8_t* b) {
    return std::abs(int(a[0]) - int(b[0])) <= 1 && std::abs(int(a[1]) - int(b[1])) <= 1 &&
           std::abs(int(a[2]) - int(b[2])) <= 1;
  };
  const std::uint32_t w = gpu.width(), h = gpu.height();
  std::size_t compared = 0;
  for (std::uint32_t y = 4; y + 4 < h; ++y)
    for (std::uint32_t x = 4; x + 4 < w; ++x) {
      bool flat = true;
      for (std::uint32_t dy = y - 4; flat && dy <= y + 4; ++dy)
        for (std::uint32_t dx = x - 4; flat && dx <= x + 4; ++dx) flat = same(gpu.pixel(dx, dy), gpu.pixel(x, y));
      if (!flat) continue;
      ASSERT_TRUE(same(cpu.pixel(x, y), gpu.pixel(x, y)))
          << "at (" << x << ", " << y << "): cpu " << int(cpu.pixel(x, y)[0]) << " " << int(cpu.pixel(x, y)[1]) << " "
          << int(cpu.pixel(x, y)[2]) << ", gpu " << int(gpu.pixel(x, y)[0]) << " " << int(gpu.pixel(x, y)[1]) << " "
          << int(gpu.pixel(x, y)[2]);
      ++compared;
    }
  EXPECT_GT(compared, std::size_t(w) * h / 2);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(cpu.pixel(w - 1, h - 1)[k], gpu.pixel(w - 1, h - 1)[k]) << "the background, channel " << k;
    EXPECT_LT(int(cpu.pixel(w - 1, h - 1)[k]), 40) << "the background is dark, channel " << k;
  }
}

TEST_F(ViewerApi, SnapshotsExportThroughDlpack) {
  Viewer v(options());
  v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{100, 128, 128}));
  const RgbaImage img = v.snapshot();
  DLManagedTensorVersioned* t = img.to_dlpack_versioned();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->version.major, 1u);
  EXPECT_NE(t->flags & kDLPackFlagReadOnly, 0u);
  const DLTensor& d = t->dl_tensor;
  ASSERT_EQ(d.ndim, 3);
  EXPECT_EQ(d.shape[0], 48);
  EXPECT_EQ(d.shape[1], 64);
  EXPECT_EQ(d.shape[2], 4);
  EXPECT_EQ(d.strides[0], 64 * 4);
  EXPECT_EQ(d.strides[1], 4);
  EXPECT_EQ(d.strides[2], 1);
  EXPECT_EQ(d.dtype.code, kDLUInt);
  EXPECT_EQ(d.dtype.bits, 8);
  EXPECT_EQ(d.device.device_type, kDLCPU);
  EXPECT_EQ(static_cast<const std::uint8_t*>(d.data)[0], img.data()[0]);
  t->deleter(t);
  DLManagedTensor* legacy = img.to_dlpack();
  EXPECT_EQ(legacy->dl_tensor.shape[0], 48);
  legacy->deleter(legacy);
}

TEST_F(ViewerApi, PlaysTheSceneUntilItsFrameLimit) {
  Viewer v(options());
  Viewer::PlayOptions p;
  p.width = 160;
  p.height = 90;
  p.frames = 5;
  p.close_at_end = false;
  v.play(p);
  ASSERT_TRUE(handoff::test::wait_until([&] { return v.finished(); }, "the viewer to finish 5 frames"));
  EXPECT_TRUE(v.is_open()) << "close_at_end = false";
  const ViewerStats s = v.stats();
  EXPECT_EQ(s.shown, 5u);
  EXPECT_EQ(s.dropped, 0u);
  EXPECT_EQ(v.stream().name, "scene");
  const RgbaImage img = v.snapshot();
  EXPECT_EQ(img.width(), 160u);
  EXPECT_THROW(v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{80, 128, 128})), UsageError);
  EXPECT_THROW(v.play(p), UsageError) << "one source per viewer";
}

TEST_F(ViewerApi, PlayRefusesBadInputAndTheViewerGoesOn) {
  Viewer v(options());
  Viewer::PlayOptions p;
  p.source = Viewer::Source::File;
  p.file = "/nonexistent/clip.y4m";
  try {
    v.play(p);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/clip.y4m"), std::string::npos) << e.what();
  }
  v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{80, 128, 128}));  // the application's frames still work
  EXPECT_EQ(v.snapshot().width(), 64u);
  EXPECT_THROW(v.play(Viewer::PlayOptions{}), UsageError) << "frames were shown";
}

// What PlayOptions and ViewerOptions cannot mean is a UsageError naming the
// option before anything is opened or written; the viewer goes on.
// A call that runs on the display thread (tiles, focus, pause, step, seek)
// racing close() is ViewerClosed, not a WaitTimeout at the wait limit: the
// display dropping the queued task now fails its caller's future at once.
TEST_F(ViewerApi, DisplayCallsRacingCloseAreViewerClosed) {
  for (int round = 0; round < 5; ++round) {
    Viewer v(options());
    v.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{80, 128, 128}));
    std::atomic<bool> started{false};
    std::string outcome;
    std::thread poller([&] {
      for (;;) {
        try {
          (void)v.tiles();
          v.set_paused(false);
        } catch (const ViewerClosed&) {
          outcome = "closed";
          return;
        } catch (const WaitTimeout& e) {
          outcome = std::string("timed out: ") + e.what();
          return;
        }
        started.store(true);
      }
    });
    while (!started.load()) std::this_thread::yield();
    v.close();
    poller.join();
    EXPECT_EQ(outcome, "closed") << "round " << round;
  }
}

TEST_F(ViewerApi, PlayRefusesOptionsThatCannotBeMet) {
  const std::string dir = ::testing::TempDir() + "handoff-play-options-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string clip = dir + "/clip.y4m", y4m = "YUV4MPEG2 W4 H2 F30:1 C420jpeg\nFRAME\n" + std::string(12, '\x80');
  std::ofstream(clip, std::ios::binary) << y4m;
  auto refusal = [](Viewer& v, const Viewer::PlayOptions& p) -> std::string {
    try {
      v.play(p);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "(accepted)";
  };
  auto expect_contains = [](const std::string& text, const std::string& part) {
    EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' missing in: " << text;
  };
  Viewer::PlayOptions file;
  file.source = Viewer::Source::File;
  file.file = clip;
  {
    ViewerOptions o = options();
    o.screenshot = dir + "/./clip.y4m";  // the same file by another name
    Viewer v(o);
    expect_contains(refusal(v, file),
                    "ViewerOptions::screenshot '" + o.screenshot + "' is PlayOptions::file; it would be overwritten");
    Viewer::PlayOptions with_overlays = file;
    with_overlays.overlays = dir + "/boxes.jsonl";
    ViewerOptions r = options();
    r.record.path = with_overlays.overlays;
    Viewer w(r);
    expect_contains(refusal(w, with_overlays),
                    "ViewerOptions::record.path '" + r.record.path + "' is PlayOptions::overlays");
  }
  Viewer v(options());
  Viewer::PlayOptions p = file;
  p.frames = 0;
  expect_contains(refusal(v, p), "PlayOptions::frames is 0; 1 or more, or -1");
  p.frames = -2;
  expect_contains(refusal(v, p), "PlayOptions::frames is -2");
  p = file;
  p.bench_boxes = Viewer::kMaxBenchBoxes + 1;
  expect_contains(refusal(v, p), "PlayOptions::bench_boxes is 1000001; at most 1000000");
  {
    Viewer shown(options("shown"));
    EXPECT_THROW(shown.show(solid_frame(PixelFormat::NV12, 64, 48, Yuv{80, 128, 128}), {}, "a\nb"), UsageError);
  }
  ViewerOptions titled = options();
  titled.title = std::string("x\0y", 3);
  EXPECT_THROW(Viewer{titled}, UsageError);
  // None of it opened or wrote anything: the file plays, untouched.
  p = file;
  p.frames = 1;
  p.close_at_end = false;
  v.play(p);
  ASSERT_TRUE(handoff::test::wait_until([&] { return v.finished(); }, "the clip's frame"));
  std::ifstream in(clip, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), y4m);
  std::filesystem::remove_all(dir);
}

std::size_t resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6));
  return 0;
}

TEST_F(ViewerApi, TenThousandShowsKeepMemoryFlat) {
  Viewer v(options());
  Frame f = solid_frame(PixelFormat::NV12, 160, 90, Yuv{100, 128, 128});
  media::OverlayFrame boxes;
  boxes.add_box(10, 10, 50, 50, "car", 0.9f, 2, 7);
  for (int i = 0; i < 500; ++i) v.show(f, boxes);  // warm: buffers, textures, caches
  (void)v.snapshot();
  const std::size_t before = resident_kib();
  const std::size_t frames_before = handoff::testing::live_frames();
  for (int i = 0; i < 10000; ++i) {
    f.index = i;
    v.show(f, boxes);
  }
  (void)v.snapshot();
  const std::size_t after = resident_kib();
  EXPECT_EQ(handoff::testing::live_frames(), frames_before);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  // The sanitizers' own memory (shadow, histories, ASan's quarantine of freed
  // blocks) grows with the work done; their builds check for leaks instead.
  (void)before;
  (void)after;
#else
  EXPECT_LT(after, before + 4096) << "resident memory grew from " << before << " KiB to " << after << " KiB";
#endif
  EXPECT_EQ(v.stats().submitted, 10500u);
  expect_no_gl_errors(v);
}

}  // namespace
}  // namespace handoff::view::test
