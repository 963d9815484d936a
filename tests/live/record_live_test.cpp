// PublisherOptions::record: what a Publisher publishes (publish() with or
// without subscribers, acquire() / present()) lands in an MCAP file, byte for
// byte with its overlays, and an unusable path fails the constructor cleanly.
#include "live_fixture.hpp"
#include "live_support.hpp"

#include <handoff/host_frame.hpp>
#include <handoff/media/recording.hpp>

#include <cstring>
#include <thread>

#include <file_size_limit.hpp>
#include <log_capture.hpp>

namespace handoff::live::test {
namespace {

constexpr std::uint32_t kW = 66, kH = 38;

class RecordLive : public LiveTest {};

// Issue 23: a publisher records frames of the new formats with their own
// encodings (rgb8, mono16, yuyv, 32FC1), read back byte for byte.
TEST_F(RecordLive, NewFormatsAreRecordedAsTheyArePublished) {
  for (PixelFormat fmt : {PixelFormat::RGB8, PixelFormat::GRAY16, PixelFormat::YUYV, PixelFormat::GRAY32F}) {
    SCOPED_TRACE(std::string(to_string(fmt)));
    const auto file = runtime() / (std::string(to_string(fmt)) + ".mcap");
    PublisherStats stats;
    {
      PublisherOptions po;
      po.record.path = file.string();
      Publisher pub(name() + std::string(to_string(fmt)), po);
      ASSERT_TRUE(pub.publish(pattern_frame(fmt, kW + 1, kH, 3)));
      stats = pub.stats();
    }
    auto src = media::open_recording(file);
    ASSERT_EQ(src->info().frame_count, 1);
    EXPECT_EQ(src->info().format, fmt);
    media::HostFrame got(fmt, kW + 1, kH);
    ASSERT_TRUE(src->read_into(got.target()));
    Frame f = got.frame();
    f.index = 3;
    EXPECT_EQ(check_pattern(f), "");
  }
}

TEST_F(RecordLive, WhatIsPublishedIsRecorded) {
  const auto file = runtime() / "pub.mcap";
  PublisherStats stats;
  {
    PublisherOptions po;
    po.record.path = file.string();
    po.record.compression = media::mcap::Compression::Lz4;
    Publisher pub(name(), po);
    for (std::int64_t i = 0; i < 2; ++i) {  // nobody subscribed yet: recorded all the same
      const media::OverlayFrame ov = overlays_for(i, 2);
      ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i), ov));
    }
    Subscriber sub(name());
    ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
    for (std::int64_t i = 2; i < 5; ++i) {
      settle(pub);
      const media::OverlayFrame ov = overlays_for(i, 2);
      ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i), ov));
      ASSERT_TRUE(sub.next(10s)) << sub.status().message;
    }
    settle(pub);
    PublishSlot slot = pub.acquire(PixelFormat::NV12, kW, kH);
    ASSERT_TRUE(slot);
    const Frame want = pattern_frame(PixelFormat::NV12, kW, kH, 5);
    for (int p = 0; p < 2; ++p)
      for (std::uint32_t y = 0; y < want.planes[p].height; ++y)
        std::memcpy(static_cast<std::uint8_t*>(slot.frame().planes[p].data) + y * slot.frame().planes[p].pitch,
                    static_cast<const std::uint8_t*>(want.planes[p].data) + y * want.planes[p].pitch,
                    want.planes[p].width * want.planes[p].components);
    const media::OverlayFrame ov = overlays_for(5, 2);
    pub.present(std::move(slot), ov);
    ASSERT_TRUE(sub.next(10s)) << sub.status().message;
    stats = pub.stats();
  }  // the destructor finishes the file
  EXPECT_EQ(stats.recorded + stats.record_dropped, 6u);
  EXPECT_EQ(stats.record_skipped, 0u);
  EXPECT_EQ(stats.record_error, "");
  ASSERT_GT(stats.recorded, 0u);

  auto src = media::open_recording(file);
  EXPECT_EQ(src->topic(), "/" + name());
  ASSERT_EQ(std::uint64_t(src->info().frame_count), stats.recorded);
  media::HostFrame got(PixelFormat::NV12, kW, kH);
  std::int64_t last = -1;
  for (std::int64_t i = 0; i < src->info().frame_count; ++i) {
    ASSERT_TRUE(src->read_into(got.target()));
    media::OverlayFrame o;
    ASSERT_TRUE(src->overlays_for(i, o)) << "frame " << i;
    ASSERT_FALSE(o.objects.empty());
    const std::int64_t index = o.objects[0].track_id;  // overlays_for() puts the frame index there
    EXPECT_GT(index, last) << "frame " << i;
    last = index;
    Frame f = got.frame();
    f.index = index;
    EXPECT_EQ(check_pattern(f), "") << "recorded frame " << i << " (published frame " << index << ")";
    o.frame = index;  // the frame number is the overlay line's, which a recording does not keep
    EXPECT_EQ(check_overlays(&o, index, 2), "") << "frame " << i;
  }
}

// A disk that fills mid-recording (the file size limit here): every frame
// published is counted once, recorded (in the file), dropped (queued or
// published after the recording stopped) or skipped.
TEST_F(RecordLive, AfterTheRecordingStopsEveryPublishedFrameIsCounted) {
  const auto file = runtime() / "full.mcap";
  handoff::test::FileSizeLimit limit(128 * 1024);
  handoff::test::LogCapture quiet;
  PublisherStats stats;
  {
    PublisherOptions po;
    po.record.path = file.string();
    po.record.compression = media::mcap::Compression::None;
    Publisher pub(name(), po);
    limit.apply();
    for (std::int64_t i = 0; i < 300; ++i) {
      (void)pub.publish(pattern_frame(PixelFormat::NV12, 320, 240, i));
      if (i % 20 == 0) std::this_thread::sleep_for(5ms);  // the writer thread writes (and fails) meanwhile
    }
    std::this_thread::sleep_for(100ms);
    stats = pub.stats();
  }
  limit.restore();
  ASSERT_NE(stats.record_error, "") << "the size limit stopped nothing";
  EXPECT_EQ(stats.published, 300u);
  EXPECT_EQ(stats.recorded + stats.record_dropped + stats.record_skipped, stats.published)
      << "recorded " << stats.recorded << ", dropped " << stats.record_dropped;
  EXPECT_GT(stats.record_dropped, 0u);
}

TEST_F(RecordLive, AnUnusablePathFailsTheConstructorAndLeavesNoSocket) {
  PublisherOptions po;
  po.record.path = (runtime() / "no" / "such" / "dir.mcap").string();
  try {
    Publisher pub(name(), po);
    ADD_FAILURE() << "a publisher recorded to a missing directory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir.mcap"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(socket_path(name())));
}

}  // namespace
}  // namespace handoff::live::test
