// Publisher and subscriber in separate processes (handoff_live_peer is the
// other one): bytes across the process boundary, every fault of a live
// session (a killed publisher, a killed or stopped subscriber), many
// subscribers, and 10,000 frames with descriptors and memory flat on both sides.
#include "live_fixture.hpp"
#include "live_support.hpp"
#include "peer_process.hpp"

#include <gmock/gmock.h>

#include <signal.h>

#include <sstream>

namespace handoff::live::test {
namespace {

using ::testing::HasSubstr;

constexpr std::uint32_t kW = 64, kH = 48;

// "key=value" out of a peer's report line.
long field(const std::string& line, const std::string& key) {
  const auto at = line.find(key + "=");
  if (at == std::string::npos) return -1;
  return std::stol(line.substr(at + key.size() + 1));
}

class LiveProcess : public LiveTest {};

TEST_F(LiveProcess, FramesCrossToASubscriberProcess) {
  Publisher pub(name());
  PeerProcess peer({"subscribe", name(), "--boxes", "4"});
  ASSERT_THAT(peer.expect("STATUS connected"), HasSubstr("connected"));
  for (std::int64_t i = 0; i < 20; ++i) {
    const media::OverlayFrame ov = overlays_for(i, 4);
    ASSERT_TRUE(pub.publish(pattern_frame(i % 2 ? PixelFormat::P010 : PixelFormat::NV12, kW, kH, i), ov));
    EXPECT_EQ(peer.expect("FRAME"), "FRAME " + std::to_string(i + 1) + " " + std::to_string(i) + " ok");
    settle(pub);
  }
  peer.send("quit");
  EXPECT_EQ(peer.wait_exit(), 0);
}

TEST_F(LiveProcess, FramesCrossFromAPublisherProcess) {
  PeerProcess peer({"publish", name(), "--boxes", "2", "--format", "p010"});
  ASSERT_THAT(peer.expect("READY"), HasSubstr(name() + ".sock"));
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
  EXPECT_EQ(sub.status().pid, std::uint32_t(peer.pid()));
  for (int round = 0; round < 5; ++round) {
    peer.send("publish 1");
    const LiveFrame f = sub.next(10s);
    ASSERT_TRUE(f) << "round " << round << ": " << sub.status().message;
    EXPECT_EQ(f.frame.index, round);
    EXPECT_EQ(check_pattern(f.frame), "");
    EXPECT_EQ(check_overlays(f.overlays.get(), round, 2), "");
  }
  peer.send("quit");
  EXPECT_EQ(peer.wait_exit(), 0);
  ASSERT_TRUE(sub.wait_for(LinkState::PublisherGone, 10s));
}

TEST_F(LiveProcess, AKilledPublisherLeavesTheLastFrameAndIsRejoinedWhenItReturns) {
  auto peer = std::make_unique<PeerProcess>(
      std::vector<std::string>{"publish", name(), "--frames", "1000000", "--interval-ms", "1"});
  ASSERT_THAT(peer->expect("READY"), HasSubstr("READY"));
  Subscriber sub(name());
  LiveFrame last;
  for (int i = 0; i < 10; ++i) {
    LiveFrame f = sub.next(10s);
    ASSERT_TRUE(f) << sub.status().message;
    last = std::move(f);
  }
  peer->kill(SIGKILL);  // in the middle of publishing
  EXPECT_EQ(peer->wait_exit(), -SIGKILL);
  ASSERT_TRUE(sub.wait_for(LinkState::PublisherGone, 10s)) << sub.status().message;
  EXPECT_EQ(sub.status().message, "publisher gone");
  EXPECT_EQ(check_pattern(last.frame), "") << "the last frame must survive its publisher";
  // A frame received but not taken yet is there too.
  while (LiveFrame f = sub.take()) EXPECT_EQ(check_pattern(f.frame), "");

  // The dead publisher's socket is still there; the next one replaces it.
  ASSERT_TRUE(std::filesystem::exists(socket_path(name())));
  peer = std::make_unique<PeerProcess>(std::vector<std::string>{"publish", name()});
  ASSERT_THAT(peer->expect("READY"), HasSubstr("READY"));
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
  EXPECT_EQ(sub.stats().connections, 2u);
  peer->send("publish 1");
  const LiveFrame again = sub.next(10s);
  ASSERT_TRUE(again);
  EXPECT_EQ(again.frame.index, 0);
  EXPECT_EQ(check_pattern(again.frame), "");
  EXPECT_EQ(check_pattern(last.frame), "");
}

TEST_F(LiveProcess, AKilledSubscriberGivesItsSlotsBack) {
  PublisherOptions o;
  o.slots = 4;
  Publisher pub(name(), o);
  PeerProcess peer({"subscribe", name(), "--keep-all"});
  ASSERT_THAT(peer.expect("STATUS connected"), HasSubstr("connected"));
  for (std::int64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i)));
    peer.expect("FRAME");
  }
  EXPECT_EQ(pub.stats().held_slots, 3u);
  peer.kill(SIGKILL);
  EXPECT_EQ(peer.wait_exit(), -SIGKILL);
  // Publishing into the dead peer's socket must not raise SIGPIPE here.
  for (std::int64_t i = 3; i < 10; ++i) EXPECT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i)));
  ASSERT_TRUE(eventually([&] { return pub.stats().subscribers == 0 && pub.stats().held_slots == 0; }))
      << pub.stats().held_slots;
  Subscriber sub(name());  // and serves the next one
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 10)));
  ASSERT_TRUE(sub.next(10s));
}

TEST_F(LiveProcess, AStoppedSubscriberNeverSlowsThePublisherNorTheOthers) {
  PublisherOptions o;
  o.slots = 6;
  o.max_held_per_subscriber = 2;
  Publisher pub(name(), o);
  PeerProcess stopped({"subscribe", name()});
  PeerProcess active({"subscribe", name()});
  ASSERT_THAT(stopped.expect("STATUS connected"), HasSubstr("connected"));
  ASSERT_THAT(active.expect("STATUS connected"), HasSubstr("connected"));
  ASSERT_TRUE(stopped.stop());  // a paused viewer: reads nothing, releases nothing
  for (std::int64_t i = 0; i < 50; ++i) {
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i))) << "frame " << i;
    EXPECT_EQ(active.expect("FRAME"), "FRAME " + std::to_string(i + 1) + " " + std::to_string(i) + " ok");
    settle(pub, std::min<std::size_t>(i + 1, 2));  // the stopped one keeps its first two
  }
  const PublisherStats s = pub.stats();
  EXPECT_EQ(s.dropped_no_slot, 0u);
  EXPECT_GE(s.skipped_sends, 48u);  // everything past the stopped one's 2 frames
  EXPECT_LE(s.held_slots, 3u);
  stopped.kill(SIGCONT);  // it catches up with the newest frame
  ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 50)));
  EXPECT_THAT(stopped.expect("FRAME"), HasSubstr(" ok"));
  stopped.send("quit");
  active.send("quit");
}

TEST_F(LiveProcess, EightSubscribersOnOnePublisher) {
  Publisher pub(name());
  std::vector<std::unique_ptr<PeerProcess>> peers;
  for (int k = 0; k < 8; ++k) {
    peers.push_back(std::make_unique<PeerProcess>(std::vector<std::string>{"subscribe", name(), "--boxes", "1"}));
    ASSERT_THAT(peers.back()->expect("STATUS connected"), HasSubstr("connected"));
  }
  EXPECT_EQ(pub.stats().subscribers, 8u);
  for (std::int64_t i = 0; i < 30; ++i) {
    const media::OverlayFrame ov = overlays_for(i, 1);
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i), ov));
    for (auto& p : peers) EXPECT_EQ(p->expect("FRAME"), "FRAME " + std::to_string(i + 1) + " " + std::to_string(i) + " ok");
    settle(pub);
  }
  EXPECT_EQ(pub.stats().skipped_sends, 0u);
  for (auto& p : peers) p->send("quit");
  for (auto& p : peers) EXPECT_EQ(p->wait_exit(), 0);
  EXPECT_TRUE(eventually([&] { return pub.stats().subscribers == 0 && pub.stats().held_slots == 0; }));
}

// 10,000 frames, the slot size changing every 1,000 (so slots are re-allocated
// and their descriptors replaced) and every 10th frame with overlays too large
// for a message (a sealed memfd each): descriptors and resident memory stay
// flat in both processes.
TEST_F(LiveProcess, TenThousandFramesKeepDescriptorsAndMemoryFlat) {
  constexpr int kFrames = 10000;
  Publisher pub(name());
  PeerProcess peer({"subscribe", name(), "--report-every", "1000", "--boxes", "600", "--overlay-every", "10"});
  ASSERT_THAT(peer.expect("STATUS connected"), HasSubstr("connected"));
  int fds_at_1000 = -1;
  long rss_at_1000 = -1;
  std::vector<std::string> reports;
  for (int i = 0; i < kFrames; ++i) {
    const std::uint32_t w = (i / 1000) % 2 ? 96 : 64;
    const bool with_overlays = i % 10 == 0;
    const media::OverlayFrame large = with_overlays ? overlays_for(i, 600) : media::OverlayFrame{};
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, w, kH, i), with_overlays ? large : media::OverlayFrame{}));
    // Lock step: the peer says when it has checked the frame.
    const std::string got = peer.expect("FRAME");
    ASSERT_THAT(got, HasSubstr(" ok")) << got;
    settle(pub);
    if ((i + 1) % 1000 == 0) {
      reports.push_back(peer.expect("RES"));
      if (i + 1 == 1000) {
        fds_at_1000 = open_descriptors();
        rss_at_1000 = resident_kib();
      }
    }
  }
  EXPECT_EQ(open_descriptors(), fds_at_1000) << "publisher descriptors grew";
  ASSERT_EQ(reports.size(), 10u);
  for (const auto& r : reports) EXPECT_EQ(field(r, "fds"), field(reports[0], "fds")) << r;
  if (kResidentMemoryIsMeaningful) {
    EXPECT_LT(resident_kib() - rss_at_1000, 4096) << "publisher memory grew (KiB)";
    EXPECT_LT(field(reports.back(), "rss_kib") - field(reports[0], "rss_kib"), 4096) << reports.back();
  }
  peer.send("quit");
  EXPECT_EQ(peer.wait_exit(), 0);  // (with LeakSanitizer, a leak in the peer fails its exit)
}

TEST_F(LiveProcess, ListingSeesAPublisherProcess) {
  PeerProcess peer({"publish", name()});
  ASSERT_THAT(peer.expect("READY"), HasSubstr("READY"));
  const auto list = list_publishers();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_TRUE(list[0].live);
  EXPECT_EQ(list[0].pid, std::uint32_t(peer.pid()));
  EXPECT_EQ(list[0].name, name());
}

}  // namespace
}  // namespace handoff::live::test
