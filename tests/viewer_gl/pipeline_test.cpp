// The frame path: a producer thread writes into a ring of interop buffers
// (GlBuffer + CudaGlBuffer, host-mapped here) on a GL worker sharing objects
// with the render context; fences order the writes before the uploads and the
// uploads before the next writes. KHR_debug errors on either context fail.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <vector>

#include <handoff/error.hpp>
#include <handoff/gl_context.hpp>
#include <handoff/wait.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/media/scene.hpp>
#include <handoff/media/y4m_reader.hpp>

#include "debug_messages.hpp"
#include "feeds/recording_feed.hpp"
#include "frame_pipeline.hpp"
#include "frame_renderer.hpp"
#include "interop_testing.hpp"
#include "shared_contexts.hpp"
#include "wait_support.hpp"

namespace handoff::view::test {
namespace {

class Pipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    SharedContexts c = make_headless_contexts(true);
    render_ = std::move(c.render);
    render_->make_current();
    load_gl(*render_);
    sink_ = errors_.gl_sink();
    enable_gl_debug_output(&sink_);
    GlWorkerOptions wo;
    wo.context_factory = std::move(c.worker_factory);
    wo.on_debug_message = sink_;
    worker_ = std::make_unique<GlWorker>(std::move(wo));
    handoff::testing::throw_on_gl_errors(*worker_);
  }
  void TearDown() override {
    worker_.reset();
    disable_gl_debug_output();
    render_->done_current();
    render_.reset();
    errors_.fail_on_any("KHR_debug error");
  }
  // Luma samples of the renderer's texture (NV12).
  std::vector<std::uint8_t> read_luma(const FrameRenderer& r) {
    std::vector<std::uint8_t> out(std::size_t(r.width()) * r.height());
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTextureImage(r.luma_texture(), 0, GL_RED, GL_UNSIGNED_BYTE, GLsizei(out.size()), out.data());
    return out;
  }

  std::unique_ptr<GlContext> render_;
  std::unique_ptr<GlWorker> worker_;
  std::function<void(const GlDebugMessage&)> sink_;
  handoff::test::DebugMessages errors_;
};

media::SceneOptions small_scene() {
  media::SceneOptions o;
  o.width = 96;
  o.height = 54;
  return o;
}

TEST_F(Pipeline, SceneFramesArriveInOrderWithTheProducersBytes) {
  const media::SceneOptions so = small_scene();
  FramePipeline p(*worker_, media::make_scene_source(so));
  FrameRenderer r;
  media::HostFrame ref(so.format, so.width, so.height);
  std::set<unsigned> buffers;
  for (std::int64_t i = 0; i < 12; ++i) {
    FrameSlot* s = p.next(true);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->index, i);
    EXPECT_TRUE(s->has_overlays) << "the scene carries ground-truth overlays";
    buffers.insert(s->buffer.name());
    r.upload(p.frame_of(*s));
    p.release(s);
    media::render_scene_cpu(scene_state(so, i), ref.target());
    const auto luma = read_luma(r);
    for (std::uint32_t y = 0; y < so.height; ++y)
      ASSERT_EQ(std::memcmp(&luma[std::size_t(y) * so.width], ref.luma() + y * ref.luma_pitch(), so.width), 0)
          << "frame " << i << " row " << y;
  }
  // The same three buffers over and over: nothing allocated per frame.
  EXPECT_EQ(buffers.size(), 3u);
  EXPECT_EQ(p.ring_size(), 3u);
  EXPECT_NE(p.memory_text().find("host-mapped"), std::string::npos) << p.memory_text();
}

TEST_F(Pipeline, TheSceneSeeksBackToo) {
  const media::SceneOptions so = small_scene();
  FramePipeline p(*worker_, media::make_scene_source(so), {}, true, so);
  ASSERT_TRUE(p.seekable());
  FrameRenderer r;
  media::HostFrame ref(so.format, so.width, so.height);
  for (std::int64_t want : {0, 1, 2}) {
    FrameSlot* s = p.next(true);
    ASSERT_EQ(s->index, want);
    p.release(s);
  }
  p.seek(1);
  FrameSlot* s = p.next(true);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->index, 1);
  r.upload(p.frame_of(*s));
  p.release(s);
  media::render_scene_cpu(scene_state(so, 1), ref.target());
  const auto luma = read_luma(r);
  EXPECT_EQ(std::memcmp(luma.data(), ref.luma(), so.width), 0);
}

std::filesystem::path write_clip(const std::string& name, int frames) {
  const auto path = std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()) + ".y4m");
  media::Y4mWriter w(path, PixelFormat::NV12, 8, 4, media::Rational{25, 1});
  media::HostFrame f(PixelFormat::NV12, 8, 4);
  for (int i = 0; i < frames; ++i) {
    for (std::uint32_t y = 0; y < 4; ++y) std::memset(f.luma() + y * f.luma_pitch(), 10 * (i + 1), 8);
    for (std::uint32_t y = 0; y < 2; ++y) std::memset(f.chroma() + y * f.chroma_pitch(), 128, 8);
    w.write(f);
  }
  w.close();
  return path;
}

TEST_F(Pipeline, SeekStepsBothWaysOnAFile) {
  const auto path = write_clip("handoff-pipeline-seek-", 6);
  FramePipeline p(*worker_, media::open_y4m(path), {}, false);
  FrameRenderer r;
  auto take = [&](std::int64_t want) {
    FrameSlot* s = p.next(true);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->index, want);
    r.upload(p.frame_of(*s));
    p.release(s);
    EXPECT_EQ(read_luma(r)[0], 10 * (want + 1)) << "frame " << want << "'s bytes";
  };
  take(0);
  take(1);
  p.seek(4);
  take(4);
  p.seek(2);  // back
  take(2);
  take(3);
  take(4);
  take(5);
  EXPECT_EQ(p.next(true), nullptr) << "played once: the end";
  EXPECT_TRUE(p.finished());
  std::filesystem::remove(path);
}

TEST_F(Pipeline, LoopsAFile) {
  const auto path = write_clip("handoff-pipeline-loop-", 3);
  FramePipeline p(*worker_, media::open_y4m(path), {}, true);
  for (std::int64_t i = 0; i < 7; ++i) {
    FrameSlot* s = p.next(true);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->index, i % 3);
    p.release(s);
  }
  std::filesystem::remove(path);
}

TEST_F(Pipeline, ATruncatedFrameSurfacesOnTheRenderThread) {
  const auto path = std::filesystem::temp_directory_path() / ("handoff-pipeline-trunc-" + std::to_string(::getpid()) + ".y4m");
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const std::string y4m = "YUV4MPEG2 W4 H2 F25:1\nFRAME\n" + std::string(12, 'a') + "FRAME\n" + std::string(3, 'a');
    std::fwrite(y4m.data(), 1, y4m.size(), f);
    std::fclose(f);
  }
  FramePipeline p(*worker_, media::open_y4m(path), {}, false);
  FrameSlot* s = p.next(true);
  ASSERT_NE(s, nullptr);
  p.release(s);
  try {
    while (FrameSlot* t = p.next(true)) p.release(t);
    ADD_FAILURE() << "no error for a truncated frame";
  } catch (const media::ParseError& e) {
    EXPECT_NE(std::string(e.what()).find(path.filename().string()), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

// A small seekable source of 100 frames whose frame `bad` cannot be read (a
// ParseError each time), and which the test can hold inside read_into().
class TestSource final : public media::FrameSource {
 public:
  explicit TestSource(std::int64_t bad) : bad_(bad) {
    info_ = media::SourceInfo{"test-source", PixelFormat::NV12, 8, 4, {}, media::Rational{30, 1}, 100};
  }
  const media::SourceInfo& info() const override { return info_; }
  std::int64_t position() const override { return position_; }
  void seek(std::int64_t index) override { position_ = index; }
  bool read_into(const media::FrameWriteTarget& t) override {
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return !held_; });
    }
    if (position_ >= info_.frame_count) return false;
    if (position_ == bad_) throw media::ParseError("test-source", "frame " + std::to_string(bad_), "FRAME", "bad frame");
    for (std::uint32_t y = 0; y < 4; ++y) std::memset(t.luma + y * t.luma_pitch, int(position_), 8);
    for (std::uint32_t y = 0; y < 2; ++y) std::memset(t.chroma + y * t.chroma_pitch, 128, 8);
    ++position_;
    return true;
  }
  void hold(bool held) {
    {
      std::lock_guard lock(mutex_);
      held_ = held;
    }
    cv_.notify_all();
  }

 private:
  media::SourceInfo info_;
  std::int64_t bad_;
  std::int64_t position_ = 0;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool held_ = false;
};

// Each producer error used to keep the ring slot it had taken: after three
// errors (the ring's size) no slot was left and playback stalled for good.
TEST_F(Pipeline, AProducerErrorGivesItsSlotBack) {
  auto src = std::make_unique<TestSource>(1);
  FramePipeline p(*worker_, std::move(src));
  for (int round = 0; round < 6; ++round) {
    p.seek(0);
    FrameSlot* s = p.next(true);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->index, 0);
    p.release(s);
    EXPECT_THROW(while (FrameSlot* t = p.next(true)) p.release(t), media::ParseError) << "round " << round;
    p.seek(2);  // past the bad frame: playback goes on
    s = p.next(true);
    ASSERT_NE(s, nullptr) << "round " << round;
    EXPECT_EQ(s->index, 2);
    p.release(s);
  }
}

// A producer that delivers nothing makes next(true) fail, naming it, once
// handoff::wait_limit() passed (it used to wait forever).
TEST_F(Pipeline, WaitingForAStuckProducerTimesOut) {
  auto src = std::make_unique<TestSource>(-1);
  TestSource& source = *src;
  source.hold(true);
  FramePipeline p(*worker_, std::move(src));
  try {
    handoff::test::ScopedWaitLimit limit(std::chrono::milliseconds(200));
    p.next(true);
    ADD_FAILURE() << "no WaitTimeout";
  } catch (const WaitTimeout& e) {
    EXPECT_NE(std::string(e.what()).find("frame producer of 'test-source'"), std::string::npos) << e.what();
  }
  source.hold(false);
  FrameSlot* s = p.next(true);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->index, 0);
  p.release(s);
}

TEST_F(Pipeline, RingBelowThreeIsMisuse) {
  EXPECT_THROW(FramePipeline(*worker_, media::make_scene_source(small_scene()), {.slots = 2, .interop = {}, .name = {}}), UsageError);
}

// A recording plays at its recorded times: each frame stays on display for
// the gap to the next frame's log time (FeedFrame::display_ms; the last one
// for a period at the mean rate), and the frames come in log-time order with
// their indices, looping.
TEST_F(Pipeline, RecordingFeedPacesFramesByTheirLogTimes) {
  const auto file = std::filesystem::temp_directory_path() / ("handoff-recfeed-" + std::to_string(::getpid()) + ".mcap");
  const std::uint64_t times[4] = {1'000'000'000, 1'040'000'000, 1'140'000'000, 1'150'000'000};
  {
    media::RecordingWriter w(file, {.block_when_full = true});
    for (int i = 0; i < 4; ++i) {
      Frame f = allocate_host_frame(PixelFormat::NV12, 32, 16);
      fill_test_pattern(f, std::uint32_t(i));
      w.write(f, {}, "/cam", times[i]);
    }
    w.close();
  }
  view::GlRingOptions ro;
  ro.interop.backend = MapBackend::Host;
  view::RecordingFeed feed(file.string(), "", ro, true);
  view::FeedContext context{*worker_, true, true, nullptr};
  feed.start(context);
  const double mean_ms = 1000.0 / feed.info().rate;
  const double want[4] = {40.0, 100.0, 10.0, mean_ms};
  for (int n = 0; n < 6; ++n) {
    view::FeedFrame f;
    ASSERT_TRUE(feed.next(f, true));
    EXPECT_EQ(f.frame.index, n % 4);
    EXPECT_DOUBLE_EQ(f.display_ms, want[n % 4]) << "frame " << n;
    feed.release(f);
  }
  feed.stop();
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace handoff::view::test
