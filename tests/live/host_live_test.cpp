// Publisher and Subscriber in one process (threads), host memfd slots: what
// the protocol promises, checked byte for byte, plus the bookkeeping (newest
// frame wins, held slots never reused, drops counted, no-subscriber publish).
#include "live_fixture.hpp"
#include "live_support.hpp"

#include <handoff/live/protocol.hpp>  // private: the wire protocol (overlay encoding, limits)

#include <gmock/gmock.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <filesystem>
#include <fstream>

namespace handoff::live::test {
namespace {

using ::testing::HasSubstr;

constexpr std::uint32_t kW = 66, kH = 38;  // odd chroma width on purpose: 33 chroma pairs

LiveFrame receive(Subscriber& sub) {
  LiveFrame f = sub.next(10s);
  EXPECT_TRUE(f) << "no frame arrived; status: " << sub.status().message;
  return f;
}

class HostLive : public LiveTest {};

TEST_F(HostLive, FramesAndOverlaysArriveByteForByte) {
  Publisher pub(name());
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
  for (std::int64_t i = 0; i < 5; ++i) {
    const PixelFormat format = i % 2 ? PixelFormat::P010 : PixelFormat::NV12;
    const Frame f = pattern_frame(format, kW, kH, i);
    const media::OverlayFrame ov = overlays_for(i, 3);
    settle(pub);
    ASSERT_TRUE(pub.publish(f, ov));
    const LiveFrame got = receive(sub);
    ASSERT_TRUE(got);
    EXPECT_EQ(got.frame.memory, MemoryKind::Host);
    EXPECT_EQ(got.frame.format, format);
    EXPECT_EQ(got.frame.index, i);
    EXPECT_DOUBLE_EQ(got.frame.timestamp, f.timestamp);
    EXPECT_EQ(check_pattern(got.frame), "");
    EXPECT_EQ(check_overlays(got.overlays.get(), i, 3), "");
    EXPECT_EQ(got.slot.kind, SlotKind::HostMemfd);
    EXPECT_EQ(got.sequence, std::uint64_t(i + 1));
    EXPECT_EQ(got.counters.published, std::uint64_t(i + 1));
    EXPECT_GT(got.receive_time_ns, 0);
    EXPECT_LE(got.publish_time_ns, got.receive_time_ns);
    EXPECT_NO_THROW(validate(got.frame));
  }
  const SubscriberStatus st = sub.status();
  EXPECT_EQ(st.publisher, name());
  EXPECT_EQ(st.pid, std::uint32_t(::getpid()));
  EXPECT_EQ(st.memory, SlotMemory::Host);
  EXPECT_THAT(st.message, HasSubstr("connected to '" + name() + "'"));
  EXPECT_EQ(pub.stats().subscribers, 1u);
}

// Issue 23: every pixel format, each plane byte for byte (odd sizes: an odd
// chroma width, a 4:2:2 frame whose last pair has one pixel).
TEST_F(HostLive, EveryFormatArrivesByteForByte) {
  Publisher pub(name());
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
  std::int64_t i = 0;
  for (PixelFormat format : kPixelFormats) {
    const Frame f = pattern_frame(format, kW + 1, kH + 1, i);
    settle(pub);
    ASSERT_TRUE(pub.publish(f)) << to_string(format);
    const LiveFrame got = receive(sub);
    ASSERT_TRUE(got) << to_string(format);
    EXPECT_EQ(got.frame.format, format);
    EXPECT_EQ(got.frame.colorimetry, f.colorimetry);
    EXPECT_NO_THROW(validate(got.frame)) << to_string(format);
    EXPECT_EQ(check_pattern(got.frame), "") << to_string(format);
    ++i;
  }
}

TEST_F(HostLive, LargeOverlaysTravelInASealedMemfd) {
  Publisher pub(name());
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  const media::OverlayFrame ov = overlays_for(7, 3000);  // ~250 KB: beyond a message
  std::vector<std::byte> encoded;
  encode_overlays(ov, encoded);
  ASSERT_GT(encoded.size(), kMaxInlineOverlayBytes);
  ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 7), ov));
  const LiveFrame got = receive(sub);
  EXPECT_EQ(check_overlays(got.overlays.get(), 7, 3000), "");
}

TEST_F(HostLive, WithNoSubscriberPublishOnlyCounts) {
  Publisher pub(name());
  const int fds = open_descriptors();
  for (std::int64_t i = 0; i < 100; ++i) EXPECT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i)));
  EXPECT_EQ(pub.stats().published, 100u);
  EXPECT_EQ(open_descriptors(), fds) << "a slot was allocated with nobody to send it to";
}

TEST_F(HostLive, NewestFrameWinsAndReplacedFramesAreReleased) {
  PublisherOptions o;
  o.slots = 4;
  Publisher pub(name(), o);
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  for (std::int64_t i = 0; i < 3; ++i) ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i)));
  ASSERT_TRUE(eventually([&] { return sub.stats().received == 3; }));
  EXPECT_EQ(sub.stats().replaced, 2u);
  // The two replaced frames went back to the publisher; the newest is held.
  ASSERT_TRUE(eventually([&] { return pub.stats().held_slots == 1; })) << pub.stats().held_slots;
  LiveFrame f = sub.take();
  ASSERT_TRUE(f);
  EXPECT_EQ(f.frame.index, 2);
  EXPECT_FALSE(sub.take());
  f = LiveFrame{};
  ASSERT_TRUE(eventually([&] { return pub.stats().held_slots == 0; }));
}

TEST_F(HostLive, HeldSlotsAreNotReusedAndAFullRingDropsAndCounts) {
  PublisherOptions o;
  o.slots = 3;
  o.max_held_per_subscriber = 3;
  Publisher pub(name(), o);
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  std::vector<LiveFrame> held;
  for (std::int64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i)));
    held.push_back(receive(sub));
  }
  EXPECT_FALSE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 3))) << "a held slot was reused";
  EXPECT_EQ(pub.stats().dropped_no_slot, 1u);
  for (std::size_t k = 0; k < held.size(); ++k)
    EXPECT_EQ(check_pattern(held[k].frame), "") << "frame " << k << " changed while held";
  held.erase(held.begin());  // one released
  ASSERT_TRUE(eventually([&] { return pub.stats().held_slots == 2; }));
  EXPECT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 4)));
  const LiveFrame f = receive(sub);
  EXPECT_EQ(f.frame.index, 4);
  EXPECT_EQ(f.counters.dropped_no_slot, 1u);
  for (const auto& h : held) EXPECT_EQ(check_pattern(h.frame), "");
}

TEST_F(HostLive, ASubscriberAtItsHoldLimitIsSkippedNotWaitedFor) {
  PublisherOptions o;
  o.slots = 4;
  o.max_held_per_subscriber = 2;
  Publisher pub(name(), o);
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  std::vector<LiveFrame> held;
  for (std::int64_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i)));
    held.push_back(receive(sub));
  }
  EXPECT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 2)));  // a free slot, not sent to it
  EXPECT_EQ(pub.stats().skipped_sends, 1u);
  EXPECT_FALSE(sub.next(100ms));
  held.clear();
  ASSERT_TRUE(eventually([&] { return pub.stats().held_slots == 0; }));
  ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 3)));
  const LiveFrame f = receive(sub);
  EXPECT_EQ(f.frame.index, 3);
  EXPECT_EQ(f.counters.skipped_for_you, 1u);
}

// A Release the subscriber sent before the next publish() counts for that
// publish, whether or not the publisher's serving thread has read it yet: a
// subscriber that takes each frame and lets it go never misses one, however
// busy the machine (this once lost one frame in a few hundred under load).
TEST_F(HostLive, AFrameLetGoBeforeTheNextPublishIsNeverCountedAsHeld) {
  PublisherOptions o;
  o.slots = 2;
  o.max_held_per_subscriber = 1;
  Publisher pub(name(), o);
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  for (std::int64_t i = 0; i < 300; ++i) {
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i)));
    const LiveFrame f = sub.next(10s);
    ASSERT_TRUE(f) << "frame " << i << " did not arrive; skipped sends: " << pub.stats().skipped_sends;
    ASSERT_EQ(f.frame.index, i);
  }
  EXPECT_EQ(pub.stats().skipped_sends, 0u);
  EXPECT_EQ(pub.stats().dropped_no_slot, 0u);
}

// The same for the ring: with every slot held by frames the subscriber has
// just let go, publish() finds them free, not a full ring.
TEST_F(HostLive, SlotsLetGoBeforeTheNextPublishAreFree) {
  PublisherOptions o;
  o.slots = 2;
  o.max_held_per_subscriber = 2;
  Publisher pub(name(), o);
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  std::int64_t index = 0;
  for (int round = 0; round < 150; ++round) {
    std::vector<LiveFrame> both;
    for (int k = 0; k < 2; ++k, ++index) {
      ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, index)))
          << "round " << round << ": no free slot; dropped " << pub.stats().dropped_no_slot;
      both.push_back(sub.next(10s));
      ASSERT_TRUE(both.back()) << "frame " << index << " did not arrive";
      ASSERT_EQ(both.back().frame.index, index);
    }
  }
  EXPECT_EQ(pub.stats().dropped_no_slot, 0u);
  EXPECT_EQ(pub.stats().skipped_sends, 0u);
}

TEST_F(HostLive, AcquireAndPresentWriteStraightIntoTheSlot) {
  PublisherOptions o;
  o.slots = 2;
  Publisher pub(name(), o);
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  PublishSlot s = pub.acquire(PixelFormat::P010, kW, kH, {ColorMatrix::BT2020, ColorRange::Full});
  ASSERT_TRUE(s);
  ASSERT_EQ(s.frame().memory, MemoryKind::Host);
  const Frame want = pattern_frame(PixelFormat::P010, kW, kH, 9);
  for (int p = 0; p < 2; ++p) {
    const PlaneLayout l = plane_layout(want.format, kW, kH, p);
    for (std::uint32_t y = 0; y < l.height; ++y)
      std::memcpy(static_cast<char*>(s.frame().planes[p].data) + y * s.frame().planes[p].pitch,
                  static_cast<const char*>(want.planes[p].data) + y * want.planes[p].pitch, l.row_bytes);
  }
  s.frame().index = 9;
  pub.present(std::move(s));
  EXPECT_FALSE(s);
  const LiveFrame got = receive(sub);
  EXPECT_EQ(check_pattern(got.frame), "");
  EXPECT_EQ(got.frame.colorimetry.matrix, ColorMatrix::BT2020);
  EXPECT_EQ(got.frame.colorimetry.range, ColorRange::Full);
  EXPECT_THROW(pub.present(std::move(s)), UsageError);  // presented already
}

TEST_F(HostLive, AnAcquiredSlotDroppedUnpresentedGoesBack) {
  PublisherOptions o;
  o.slots = 2;
  Publisher pub(name(), o);
  PublishSlot a = pub.acquire(PixelFormat::NV12, kW, kH);
  PublishSlot b = pub.acquire(PixelFormat::NV12, kW, kH);
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_FALSE(pub.acquire(PixelFormat::NV12, kW, kH));
  EXPECT_EQ(pub.stats().dropped_no_slot, 1u);
  a = PublishSlot{};
  EXPECT_TRUE(pub.acquire(PixelFormat::NV12, kW, kH));
}

TEST_F(HostLive, ASubscriberStartedFirstWaitsForItsPublisher) {
  Subscriber sub(name());
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(sub.status().state, LinkState::Waiting);
  EXPECT_THAT(sub.status().message, HasSubstr("waiting for publisher '" + name() + "'"));
  Publisher pub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
  ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 1)));
  EXPECT_EQ(check_pattern(receive(sub).frame), "");
}

TEST_F(HostLive, WithoutWaitANoShowIsAFailure) {
  SubscriberOptions o;
  o.wait = false;
  Subscriber sub(name(), o);
  ASSERT_TRUE(sub.wait_for(LinkState::Failed, 10s));
  EXPECT_THAT(sub.status().message, HasSubstr("no publisher at"));
  EXPECT_FALSE(sub.next(10ms));
}

// A path with something else there (a file, a folder) can never become a
// publisher's socket: a failure at once, waiting or not, saying what is there.
TEST_F(HostLive, APathThatIsNotASocketIsAFailureEvenWhenWaiting) {
  char tmpl[] = "/tmp/handoff-not-a-socket-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl, file = dir + "/file";
  std::ofstream(file) << "x";
  for (const auto& [path, what] : {std::pair{file, "is not a socket"}, std::pair{dir, "is a directory"}}) {
    Subscriber sub(path);  // wait = true
    ASSERT_TRUE(sub.wait_for(LinkState::Failed, 10s)) << sub.status().message;
    EXPECT_THAT(sub.status().message, HasSubstr(path + " " + what + ": no publisher listens there"));
  }
  std::filesystem::remove_all(dir);
}

TEST_F(HostLive, ALivePublisherOfTheSameNameIsRefused) {
  Publisher a(name());
  try {
    Publisher b(name());
    FAIL() << "a second publisher of the same name started";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("already running"));
    EXPECT_THAT(e.what(), HasSubstr("pid " + std::to_string(::getpid())));
  }
  Subscriber sub(name());  // the first one still serves
  EXPECT_TRUE(sub.wait_for(LinkState::Connected, 10s));
}

TEST_F(HostLive, AStaleSocketIsReplacedAndAnythingElseIsLeftAlone) {
  const auto path = socket_path(name(), true);
  {
    // What a crashed publisher leaves: a bound socket file nobody listens on.
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strcpy(a.sun_path, path.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::close(fd);
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  {
    Publisher pub(name());
    Subscriber sub(name());
    EXPECT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  }
  EXPECT_FALSE(std::filesystem::exists(path)) << "the publisher left its socket behind";
  std::ofstream(path) << "not a socket";
  EXPECT_THROW(Publisher again(name()), Error);
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST_F(HostLive, AStoppedPublisherSaysGoodbyeAndTheSubscriberComesBackToTheNextOne) {
  auto pub = std::make_unique<Publisher>(name());
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  ASSERT_TRUE(pub->publish(pattern_frame(PixelFormat::NV12, kW, kH, 1)));
  const LiveFrame kept = receive(sub);
  pub.reset();
  ASSERT_TRUE(sub.wait_for(LinkState::PublisherGone, 10s));
  EXPECT_THAT(sub.status().message, HasSubstr("publisher stopped"));
  EXPECT_EQ(check_pattern(kept.frame), "") << "the last frame must stay valid";
  pub = std::make_unique<Publisher>(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
  EXPECT_EQ(sub.stats().connections, 2u);
  ASSERT_TRUE(pub->publish(pattern_frame(PixelFormat::NV12, kW, kH, 2)));
  const LiveFrame again = receive(sub);
  EXPECT_EQ(again.frame.index, 2);
  EXPECT_EQ(again.sequence, 1u);  // a new publisher counts from 1
  EXPECT_EQ(check_pattern(kept.frame), "");
}

TEST_F(HostLive, ReconnectOffStopsAfterThePublisherGoes) {
  auto pub = std::make_unique<Publisher>(name());
  SubscriberOptions o;
  o.reconnect = false;
  Subscriber sub(name(), o);
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  pub.reset();
  EXPECT_TRUE(sub.wait_for(LinkState::Stopped, 10s)) << sub.status().message;
}

TEST_F(HostLive, ASizeChangeReallocatesTheSlot) {
  PublisherOptions o;
  o.slots = 3;  // 2 in flight: the frame of the last round may not be released yet
  Publisher pub(name(), o);
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  std::uint32_t generation = 0;
  for (std::int64_t i = 0; i < 6; ++i) {
    const std::uint32_t w = i < 3 ? 32 : 640, h = i < 3 ? 16 : 360;
    settle(pub);
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, w, h, i)));
    const LiveFrame f = receive(sub);
    EXPECT_EQ(f.frame.width, w);
    EXPECT_EQ(check_pattern(f.frame), "");
    if (i == 3) {
      EXPECT_GT(f.slot.generation, generation);
    }
    generation = f.slot.generation;
  }
}

TEST_F(HostLive, ListPublishersTellsLiveFromStale) {
  Publisher live(name("-live"));
  {
    const auto path = socket_path(name("-stale"), true);
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strcpy(a.sun_path, path.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::close(fd);
  }
  const auto list = list_publishers();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].name, name("-live"));
  EXPECT_TRUE(list[0].live);
  EXPECT_EQ(list[0].pid, std::uint32_t(::getpid()));
  EXPECT_EQ(list[0].memory, SlotMemory::Host);
  EXPECT_EQ(list[0].route, "host memfd");
  EXPECT_EQ(list[1].name, name("-stale"));
  EXPECT_FALSE(list[1].live);
  EXPECT_THAT(list[1].status, HasSubstr("stale"));
}

TEST_F(HostLive, AFrameMayOutliveItsSubscriber) {
  Publisher pub(name());
  LiveFrame kept;
  {
    Subscriber sub(name());
    ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 3)));
    kept = receive(sub);
  }
  EXPECT_EQ(check_pattern(kept.frame), "");
  EXPECT_EQ(pub.stats().held_slots, 1u);  // still held: the frame is
  kept = LiveFrame{};
  EXPECT_TRUE(eventually([&] { return pub.stats().subscribers == 0 && pub.stats().held_slots == 0; }));
}

// A subscriber that goes away while its application still holds a frame keeps
// that frame's slot and no other: neither the frames sent to it that nobody
// will read nor its hold limit's worth of slots (the publisher then dropped
// most frames and starved every other subscriber).
TEST_F(HostLive, ASubscriberGoneWhileItsFrameIsHeldKeepsThatSlotOnly) {
  PublisherOptions o;
  o.slots = 4;  // a subscriber may hold 3
  Publisher pub(name(), o);
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  LiveFrame kept;
  {
    Subscriber leaving(name());
    ASSERT_TRUE(leaving.wait_for(LinkState::Connected, 10s));
    settle(pub);
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, 0)));
    kept = receive(leaving);
    (void)receive(sub);
    settle(pub, 1);
    // Frames it receives and nobody takes, then the Subscriber goes.
    for (std::int64_t i = 1; i < 3; ++i) {
      ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i)));
      ASSERT_TRUE(eventually([&] { return leaving.stats().received == std::uint64_t(i + 1); }));
      (void)receive(sub);
    }
  }
  ASSERT_TRUE(eventually([&] { return pub.stats().subscribers == 1; })) << "the departed subscriber still counts";
  for (std::int64_t i = 3; i < 23; ++i) {
    settle(pub, 1);  // `kept` only
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, kW, kH, i))) << "frame " << i << ": no free slot";
    EXPECT_EQ(receive(sub).frame.index, i);
  }
  const PublisherStats s = pub.stats();
  EXPECT_EQ(s.dropped_no_slot, 0u);
  EXPECT_EQ(s.skipped_sends, 0u) << "frames were still sent to the departed subscriber";
  EXPECT_EQ(check_pattern(kept.frame), "") << "the kept frame's slot was reused";
  kept = LiveFrame{};
  EXPECT_TRUE(eventually([&] { return pub.stats().held_frames == 0; }));
}

TEST_F(HostLive, PublishRefusesFramesItCannotCopy) {
  Publisher pub(name());
  Frame f = pattern_frame(PixelFormat::NV12, kW, kH, 0);
  f.memory = MemoryKind::GlBuffer;
  f.gl_buffer = 1;
  f.planes[0].data = f.planes[1].data = nullptr;
  f.planes[1].offset = f.planes[0].pitch * kH;
  EXPECT_THROW(pub.publish(f), UsageError);
  Frame bad = pattern_frame(PixelFormat::NV12, kW, kH, 0);
  bad.planes[0].pitch = 3;
  EXPECT_THROW(pub.publish(bad), InvalidFrame);
}

// --- the socket folder and names ------------------------------------------------------

TEST_F(HostLive, SocketFolderIsCreatedPrivateAndCheckedOtherwise) {
  const auto dir = socket_dir(true);
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  try {
    Publisher pub(name());
    FAIL() << "a publisher used a folder open to others";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("open to group or others"));
  }
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  EXPECT_NO_THROW(Publisher ok(name()));
}

TEST_F(HostLive, WithoutXdgRuntimeDirANameIsAnErrorButAPathWorks) {
  const std::string dir = runtime().string();
  ::unsetenv("XDG_RUNTIME_DIR");
  try {
    Publisher pub(name());
    FAIL() << "no XDG_RUNTIME_DIR and no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("XDG_RUNTIME_DIR is not set"));
  }
  const std::string path = dir + "/direct.sock";
  Publisher pub(path);
  Subscriber sub(path);
  EXPECT_TRUE(sub.wait_for(LinkState::Connected, 10s));
  EXPECT_EQ(pub.name(), "direct");
  ::setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
}

TEST(LiveNames, NamesAndPaths) {
  EXPECT_TRUE(is_publisher_name("cam0"));
  EXPECT_TRUE(is_publisher_name("a.b_c-d"));
  EXPECT_FALSE(is_publisher_name(""));
  EXPECT_FALSE(is_publisher_name(".hidden"));
  EXPECT_FALSE(is_publisher_name("a b"));
  EXPECT_FALSE(is_publisher_name(std::string(65, 'a')));
  EXPECT_THROW(socket_path("bad name"), UsageError);
  EXPECT_EQ(socket_path("/x/y.sock"), std::filesystem::path("/x/y.sock"));
  EXPECT_EQ(name_from_path("/x/cam1.sock"), "cam1");
  EXPECT_THROW(Publisher p("/tmp/" + std::string(120, 'x') + ".sock"), UsageError);
}

TEST(LiveNames, PeersAreTrustedBySameUserOrTheAllowedGroup) {
  const unsigned me = ::geteuid();
  EXPECT_TRUE(peer_trusted(me, 12345, std::nullopt));
  EXPECT_FALSE(peer_trusted(me + 1, 12345, std::nullopt));
  EXPECT_TRUE(peer_trusted(me + 1, 12345, 12345u));
  EXPECT_FALSE(peer_trusted(me + 1, 12346, 12345u));
}

}  // namespace
}  // namespace handoff::live::test
