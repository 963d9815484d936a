// The live wire protocol: every message round-trips, and every malformed
// datagram is refused with a ProtocolError naming the field (never a crash).
#include <handoff/host_frame.hpp>
#include <handoff/live/protocol.hpp>
#include <handoff/media/overlay.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace handoff::live {
namespace {

using ::testing::HasSubstr;

std::string field_of_failure(std::span<const std::byte> d, std::size_t fds) {
  try {
    (void)decode_message(d, fds);
  } catch (const ProtocolError& e) {
    return e.field();
  }
  ADD_FAILURE() << "decode_message accepted the datagram";
  return "";
}

FrameAnnounce sample_frame() {
  FrameAnnounce f;
  f.slot = 3;
  f.generation = 7;
  f.sequence = 1234;
  f.index = -5;
  f.timestamp = 1.25;
  f.publish_time_ns = 99999;
  f.format = PixelFormat::P010;
  f.colorimetry = {ColorMatrix::BT2020, ColorRange::Full, ChromaSiting::TopLeft};
  f.width = 33;
  f.height = 17;
  f.offsets = {0, 256 * 17};
  f.pitches = {256, 256};
  f.counters = {10, 2, 1};
  return f;
}

void set_u16(std::vector<std::byte>& d, std::size_t at, std::uint16_t v) {
  d[at] = std::byte(v & 0xff);
  d[at + 1] = std::byte(v >> 8);
}

void set_u32(std::vector<std::byte>& d, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) d[at + i] = std::byte(v >> (8 * i));
}

TEST(LiveProtocol, HelloWelcomeRejectGoodbyeRoundTrip) {
  Hello h{42, 3, memory_bit(SlotMemory::Cuda) | memory_bit(SlotMemory::Host), "viewer"};
  auto m = decode_message(encode_message(h), 0);
  const auto& h2 = std::get<Hello>(m);
  EXPECT_EQ(h2.pid, 42u);
  EXPECT_EQ(h2.max_held, 3);
  EXPECT_EQ(h2.accepts, 3);
  EXPECT_EQ(h2.client, "viewer");

  Welcome w{7, 4, 3, SlotMemory::Cuda, CudaSync::IpcEvent, "cam0", "CUDA VMM fd"};
  const auto w2 = std::get<Welcome>(decode_message(encode_message(w), 0));
  EXPECT_EQ(w2.slot_count, 4);
  EXPECT_EQ(w2.max_held, 3);
  EXPECT_EQ(w2.memory, SlotMemory::Cuda);
  EXPECT_EQ(w2.cuda_sync, CudaSync::IpcEvent);
  EXPECT_EQ(w2.name, "cam0");
  EXPECT_EQ(w2.route, "CUDA VMM fd");

  EXPECT_EQ(std::get<Reject>(decode_message(encode_message(Reject{"no"}), 0)).reason, "no");
  EXPECT_EQ(std::get<Goodbye>(decode_message(encode_message(Goodbye{"bye"}), 0)).reason, "bye");
  Release r{5, 6, 7};
  const auto r2 = std::get<Release>(decode_message(encode_message(r), 0));
  EXPECT_EQ(r2.slot, 5);
  EXPECT_EQ(r2.generation, 6u);
  EXPECT_EQ(r2.sequence, 7u);
}

TEST(LiveProtocol, LeaveRoundTripAndLimits) {
  const Leave none = std::get<Leave>(decode_message(encode_message(Leave{}), 0));
  EXPECT_TRUE(none.kept.empty());
  const Leave two = std::get<Leave>(decode_message(encode_message(Leave{{Release{1, 2, 3}, Release{63, 9, std::uint64_t{1} << 40}}}), 0));
  ASSERT_EQ(two.kept.size(), 2u);
  EXPECT_EQ(two.kept[1].slot, 63);
  EXPECT_EQ(two.kept[1].generation, 9u);
  EXPECT_EQ(two.kept[1].sequence, std::uint64_t{1} << 40);
  EXPECT_EQ(type_of(Message{Leave{}}), MessageType::Leave);
  EXPECT_EQ(to_string(MessageType::Leave), "Leave");

  EXPECT_THROW(encode_message(Leave{std::vector<Release>(kMaxSlots + 1)}), UsageError);
  auto d = encode_message(Leave{{Release{1, 2, 3}}});
  set_u16(d, kHeaderBytes, static_cast<std::uint16_t>(kMaxSlots + 1));  // a count past the limit
  EXPECT_EQ(field_of_failure(d, 0), "leave.count");
  d = encode_message(Leave{{Release{1, 2, 3}}});
  set_u16(d, kHeaderBytes, 2);  // a count past the holds that follow
  EXPECT_EQ(field_of_failure(d, 0), "leave.slot");
  d = encode_message(Leave{{Release{1, 2, 3}}});
  set_u16(d, kHeaderBytes + 2, static_cast<std::uint16_t>(kMaxSlots));  // a slot number no publisher has
  EXPECT_EQ(field_of_failure(d, 0), "leave.slot");
  EXPECT_EQ(field_of_failure(encode_message(Leave{}), 1), "descriptors");
}

TEST(LiveProtocol, SlotRoundTripAndDescriptorCount) {
  SlotAnnounce s;
  s.slot = 2;
  s.generation = 9;
  s.kind = SlotKind::CudaVmmFd;
  s.has_event = true;
  s.size = 1000;
  s.allocation_size = 2 << 20;
  s.device_uuid.bytes[0] = 0xab;
  s.ipc_event[63] = 0x11;
  const auto bytes = encode_message(s);
  const auto s2 = std::get<SlotAnnounce>(decode_message(bytes, 1));
  EXPECT_EQ(s2.kind, SlotKind::CudaVmmFd);
  EXPECT_TRUE(s2.has_event);
  EXPECT_EQ(s2.allocation_size, 2u << 20);
  EXPECT_EQ(s2.device_uuid.bytes[0], 0xab);
  EXPECT_EQ(s2.ipc_event[63], 0x11);
  EXPECT_EQ(field_of_failure(bytes, 0), "descriptors");
  EXPECT_EQ(field_of_failure(bytes, 2), "descriptors");

  s.kind = SlotKind::CudaIpcHandle;  // the handle travels in the message: no descriptor
  EXPECT_EQ(descriptors_for(s), 0u);
  EXPECT_NO_THROW(decode_message(encode_message(s), 0));
  EXPECT_EQ(field_of_failure(encode_message(s), 1), "descriptors");
}

TEST(LiveProtocol, SlotValuesAreChecked) {
  SlotAnnounce s;
  s.kind = SlotKind::HostMemfd;
  s.size = 100;
  s.allocation_size = 100;
  s.offset = 1;  // offset + size beyond the allocation
  EXPECT_EQ(field_of_failure(encode_message(s), 1), "slot.size");
  s.offset = 0;
  s.size = 0;
  EXPECT_EQ(field_of_failure(encode_message(s), 1), "slot.size");
  s.size = 100;
  s.has_event = true;  // events only on CUDA slots
  EXPECT_EQ(field_of_failure(encode_message(s), 1), "slot.flags");
  s.has_event = false;
  s.slot = kMaxSlots;
  EXPECT_EQ(field_of_failure(encode_message(s), 1), "slot.slot");
  s.slot = 0;
  s.allocation_size = kMaxSlotBytes + 1;
  s.size = 1;
  EXPECT_EQ(field_of_failure(encode_message(s), 1), "slot.allocation_size");
  auto d = encode_message(SlotAnnounce{.kind = SlotKind::HostMemfd, .size = 1, .allocation_size = 1});
  d[kHeaderBytes + 6] = std::byte{9};  // kind
  EXPECT_EQ(field_of_failure(d, 1), "slot.kind");
}

TEST(LiveProtocol, FrameRoundTrip) {
  FrameAnnounce f = sample_frame();
  f.overlays = OverlayCarrier::Inline;
  f.inline_overlays = {std::byte{1}, std::byte{2}, std::byte{3}};
  const auto g = std::get<FrameAnnounce>(decode_message(encode_message(f), 0));
  EXPECT_EQ(g.slot, 3);
  EXPECT_EQ(g.generation, 7u);
  EXPECT_EQ(g.sequence, 1234u);
  EXPECT_EQ(g.index, -5);
  EXPECT_EQ(g.timestamp, 1.25);
  EXPECT_EQ(g.publish_time_ns, 99999);
  EXPECT_EQ(g.format, PixelFormat::P010);
  EXPECT_EQ(g.colorimetry, f.colorimetry);
  EXPECT_EQ(g.width, 33u);
  EXPECT_EQ(g.offsets, f.offsets);
  EXPECT_EQ(g.pitches, f.pitches);
  EXPECT_EQ(g.counters.published, 10u);
  EXPECT_EQ(g.counters.dropped_no_slot, 2u);
  EXPECT_EQ(g.counters.skipped_for_you, 1u);
  EXPECT_EQ(g.inline_overlays, f.inline_overlays);
  // Chroma of a 33x17 P010 frame: 9 rows of 17 x 2 x 2 bytes from offset 256 * 17.
  EXPECT_EQ(g.end, 256u * 17 + 256 * 8 + 68);

  f.overlays = OverlayCarrier::Memfd;
  f.overlay_bytes = 5000;
  f.inline_overlays.clear();
  const auto h = std::get<FrameAnnounce>(decode_message(encode_message(f), 1));
  EXPECT_EQ(h.overlays, OverlayCarrier::Memfd);
  EXPECT_EQ(h.overlay_bytes, 5000u);
  EXPECT_EQ(field_of_failure(encode_message(f), 0), "descriptors");
}

TEST(LiveProtocol, FramePlanesAreChecked) {
  FrameAnnounce f = sample_frame();
  f.pitches[0] = 64;  // below the packed luma row (33 x 2 bytes)
  EXPECT_EQ(field_of_failure(encode_message(f), 0), "frame.planes[0].pitch");
  f = sample_frame();
  f.pitches[1] = 257;  // not a whole number of 2-byte samples
  EXPECT_EQ(field_of_failure(encode_message(f), 0), "frame.planes[1]");
  f = sample_frame();
  f.offsets[1] = std::numeric_limits<std::uint64_t>::max() - 1;  // would overflow (even: sample-aligned)
  EXPECT_EQ(field_of_failure(encode_message(f), 0), "frame.planes[1].offset");
  f = sample_frame();
  f.width = 0;
  EXPECT_EQ(field_of_failure(encode_message(f), 0), "frame.width");
  f = sample_frame();
  f.height = 40000;
  EXPECT_EQ(field_of_failure(encode_message(f), 0), "frame.height");
  f = sample_frame();
  f.pitches[0] = kMaxSlotBytes;  // a span far beyond any slot
  EXPECT_THAT(field_of_failure(encode_message(f), 0), HasSubstr("frame.planes"));
  f = sample_frame();
  auto d = encode_message(f);
  d[kHeaderBytes + 2 + 4 + 8 + 8 + 8 + 8] = static_cast<std::byte>(std::size(kPixelFormats));  // one past the last format
  EXPECT_EQ(field_of_failure(d, 0), "frame.format");
}

// Issue 23: i420's third plane is described and checked like the others.
TEST(LiveProtocol, I420CarriesAndChecksThreePlanes) {
  FrameAnnounce f = sample_frame();
  f.format = PixelFormat::I420;
  f.offsets = {0, 256 * 17, 256 * 26};
  f.pitches = {256, 256, 256};
  const auto g = std::get<FrameAnnounce>(decode_message(encode_message(f), 0));
  EXPECT_EQ(g.format, PixelFormat::I420);
  EXPECT_EQ(g.offsets, f.offsets);
  EXPECT_EQ(g.pitches, f.pitches);
  EXPECT_EQ(g.end, 256u * 26 + 256 * 8 + 17);  // V: 9 rows of 17 bytes
  f.pitches[2] = 16;  // below V's packed row of 17 bytes
  EXPECT_EQ(field_of_failure(encode_message(f), 0), "frame.planes[2].pitch");
  f.pitches[2] = 256;
  f.offsets[2] = kMaxSlotBytes + 1;
  EXPECT_EQ(field_of_failure(encode_message(f), 0), "frame.planes[2].offset");
}

// Planes a format does not have must be zero on the wire; each format's own
// planes are checked against its packed rows.
TEST(LiveProtocol, EveryFormatsPlanesAreChecked) {
  for (PixelFormat fmt : kPixelFormats) {
    const FrameLayout l = FrameLayout::contiguous(fmt, 33, 17, 256, true);
    FrameAnnounce f = sample_frame();
    f.format = fmt;
    f.offsets = {};
    f.pitches = {};
    for (int p = 0; p < plane_count(fmt); ++p) {
      f.offsets[p] = l.planes[p].offset;
      f.pitches[p] = l.pitch(p);
    }
    const auto g = std::get<FrameAnnounce>(decode_message(encode_message(f), 0));
    EXPECT_EQ(g.format, fmt);
    EXPECT_EQ(g.end, l.buffer_bytes() - l.pitch(plane_count(fmt) - 1) + l.plane(plane_count(fmt) - 1).row_bytes)
        << to_string(fmt);
    FrameAnnounce bad = f;
    bad.pitches[0] = l.plane(0).row_bytes - 1;
    EXPECT_EQ(field_of_failure(encode_message(bad), 0), "frame.planes[0].pitch") << to_string(fmt);
    if (plane_count(fmt) < int(kMaxPlanes)) {
      bad = f;
      bad.pitches[plane_count(fmt)] = 256;
      EXPECT_EQ(field_of_failure(encode_message(bad), 0), "frame.planes[" + std::to_string(plane_count(fmt)) + "]")
          << to_string(fmt);
    }
    if (bytes_per_sample(fmt) > 1) {
      bad = f;
      bad.pitches[0] = l.pitch(0) + 1;
      EXPECT_EQ(field_of_failure(encode_message(bad), 0), "frame.planes[0]") << to_string(fmt);
    }
  }
}

// An old peer (protocol version 3, before issue 23's layers; 2, before its
// formats) is refused by the version check, naming both versions, before any
// frame is read.
TEST(LiveProtocol, AVersion2Or3PeerIsRefusedByName) {
  for (std::uint16_t old : {2, 3}) {
    auto hello = encode_message(Hello{1, 0, kAcceptsAll, "old"});
    set_u16(hello, 4, old);
    try {
      (void)decode_message(hello, 0);
      FAIL() << "accepted a version " << old << " peer";
    } catch (const ProtocolVersionMismatch& e) {
      EXPECT_EQ(e.theirs(), old);
      EXPECT_THAT(e.what(), HasSubstr("the peer speaks version " + std::to_string(old) + ", this side version 4"));
    }
  }
}

TEST(LiveProtocol, FrameOverlayBlockIsChecked) {
  FrameAnnounce f = sample_frame();
  f.overlays = OverlayCarrier::Memfd;
  f.overlay_bytes = 0;
  EXPECT_EQ(field_of_failure(encode_message(f), 1), "frame.overlay_bytes");
  f.overlay_bytes = kMaxOverlayBytes + 1;
  EXPECT_EQ(field_of_failure(encode_message(f), 1), "frame.overlay_bytes");
  f.overlays = OverlayCarrier::Inline;
  f.inline_overlays.assign(10, std::byte{0});
  auto d = encode_message(f);
  d.push_back(std::byte{0});  // one byte more than overlay_bytes says
  set_u32(d, 8, static_cast<std::uint32_t>(d.size() - kHeaderBytes));
  EXPECT_EQ(field_of_failure(d, 0), "frame.overlay_bytes");
}

TEST(LiveProtocol, HeaderIsChecked) {
  const auto good = encode_message(Release{1, 2, 3});
  auto d = good;
  d[0] = std::byte{'X'};
  EXPECT_EQ(field_of_failure(d, 0), "header.magic");
  d = good;
  set_u16(d, 6, 99);
  EXPECT_EQ(field_of_failure(d, 0), "header.type");
  d = good;
  set_u32(d, 8, 3);
  EXPECT_EQ(field_of_failure(d, 0), "header.payload_bytes");
  d = good;
  set_u32(d, 12, 1);
  EXPECT_EQ(field_of_failure(d, 0), "header.reserved");
  d = good;
  d.push_back(std::byte{0});
  set_u32(d, 8, static_cast<std::uint32_t>(d.size() - kHeaderBytes));
  EXPECT_EQ(field_of_failure(d, 0), "release");  // trailing bytes
  EXPECT_EQ(field_of_failure(std::span(good).first(10), 0), "header");
  std::vector<std::byte> huge(kMaxMessageBytes + 1);
  EXPECT_EQ(field_of_failure(huge, 0), "header");
}

TEST(LiveProtocol, EveryTruncationIsRefused) {
  FrameAnnounce f = sample_frame();
  f.overlays = OverlayCarrier::Inline;
  f.inline_overlays.assign(40, std::byte{7});
  struct Case {
    std::vector<std::byte> bytes;
    std::size_t fds;
  };
  const std::vector<Case> cases = {
      {encode_message(Hello{1, 1, 1, "abc"}), 0},
      {encode_message(Welcome{1, 2, 1, SlotMemory::Host, CudaSync::None, "n", "r"}), 0},
      {encode_message(SlotAnnounce{.kind = SlotKind::HostMemfd, .size = 1, .allocation_size = 1}), 1},
      {encode_message(f), 0},
      {encode_message(Release{}), 0},
      {encode_message(Leave{{Release{1, 2, 3}}}), 0},
      {encode_message(Reject{"why"}), 0}};
  for (const auto& [full, fds] : cases) {
    ASSERT_NO_THROW(decode_message(full, fds));
    for (std::size_t n = 0; n < full.size(); ++n) {
      auto d = std::vector<std::byte>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
      if (n >= kHeaderBytes) set_u32(d, 8, static_cast<std::uint32_t>(n - kHeaderBytes));  // a consistent header
      EXPECT_THROW(decode_message(d, fds), ProtocolError) << "length " << n;
    }
  }
}

TEST(LiveProtocol, VersionMismatchIsNamedAndRejectsStillParse) {
  auto hello = encode_message(Hello{1, 0, kAcceptsAll, "x"});
  set_u16(hello, 4, kProtocolVersion + 1);
  try {
    (void)decode_message(hello, 0);
    FAIL() << "accepted another version";
  } catch (const ProtocolVersionMismatch& e) {
    EXPECT_EQ(e.theirs(), kProtocolVersion + 1);
    EXPECT_THAT(e.what(), HasSubstr("protocol version mismatch"));
    EXPECT_THAT(e.what(), HasSubstr("version " + std::to_string(kProtocolVersion + 1)));
  }
  auto reject = encode_message(Reject{"protocol version mismatch"});
  set_u16(reject, 4, kProtocolVersion + 1);
  const auto r = std::get<Reject>(decode_message(reject, 0));
  EXPECT_EQ(r.sender_version, kProtocolVersion + 1);
  EXPECT_EQ(r.reason, "protocol version mismatch");
}

TEST(LiveProtocol, TextIsCheckedBothWays) {
  EXPECT_THROW(encode_message(Hello{1, 0, 1, "bad\nname"}), UsageError);
  EXPECT_THROW(encode_message(Reject{std::string(kMaxTextBytes + 1, 'a')}), UsageError);
  auto d = encode_message(Hello{1, 0, 1, "abcd"});
  d.back() = std::byte{0x07};  // a control character
  EXPECT_EQ(field_of_failure(d, 0), "hello.client");
  auto w = encode_message(Welcome{1, 2, 3, SlotMemory::Host, CudaSync::None, "n", ""});
  EXPECT_EQ(field_of_failure(w, 0), "welcome.max_held");  // above slot_count
  w = encode_message(Welcome{1, 2, 1, SlotMemory::Host, CudaSync::IpcEvent, "n", ""});
  EXPECT_EQ(field_of_failure(w, 0), "welcome.cuda_sync");
  auto h = encode_message(Hello{1, 0, 1, ""});
  h[kHeaderBytes + 6] = std::byte{0x10};
  EXPECT_EQ(field_of_failure(h, 0), "hello.accepts");
}

TEST(LiveProtocol, DescribePlanesOfEveryFormat) {
  for (PixelFormat fmt : kPixelFormats) {
    const Frame fr = allocate_host_frame(fmt, 33, 17);
    FrameAnnounce a;
    a.offsets = {1, 1, 1};  // stale values of a reused announcement: cleared
    a.pitches = {1, 1, 1};
    describe_planes(fr, reinterpret_cast<std::uintptr_t>(fr.planes[0].data), a);
    EXPECT_EQ(a.format, fmt);
    for (std::size_t p = 0; p < kMaxPlanes; ++p) {
      const bool used = int(p) < plane_count(fmt);
      EXPECT_EQ(a.pitches[p], used ? fr.planes[p].pitch : 0u) << to_string(fmt) << " plane " << p;
      EXPECT_EQ(a.offsets[p],
                used ? std::uint64_t(static_cast<const std::byte*>(fr.planes[p].data) -
                                     static_cast<const std::byte*>(fr.planes[0].data))
                     : 0u)
          << to_string(fmt) << " plane " << p;
    }
  }
}

TEST(LiveProtocol, DescribePlanesOfAHostFrame) {
  alignas(256) static unsigned char buf[256 * 30];
  Frame fr;
  fr.format = PixelFormat::NV12;
  fr.width = 33;
  fr.height = 17;
  fr.planes[0] = Plane{buf + 256, 0, 256, 33, 17, 1};
  fr.planes[1] = Plane{buf + 256 * 18, 0, 256, 17, 9, 2};
  FrameAnnounce a;
  describe_planes(fr, reinterpret_cast<std::uintptr_t>(buf), a);
  EXPECT_EQ(a.offsets[0], 256u);
  EXPECT_EQ(a.offsets[1], 256u * 18);
  EXPECT_EQ(a.end, 256u * 18 + 256 * 8 + 34);
  EXPECT_THROW(describe_planes(fr, reinterpret_cast<std::uintptr_t>(buf) + 512, a), UsageError);
}

// --- overlays ------------------------------------------------------------------------

media::OverlayFrame sample_overlays() {
  media::OverlayFrame f;
  f.frame = 12;
  const auto o = f.add_box(1, 2, 30, 40, "car", 0.75f, 2, 7);
  f.add_box(5, 5, 6, 6);
  const media::Keypoint kps[] = {{1, 1, 1}, {2, 2, 0.5f}, {3, 3, 1}};
  const std::array<std::uint32_t, 2> edges[] = {{0, 1}, {1, 2}};
  f.set_keypoints(o, kps, 3, edges, 2);
  const media::Point2 pts[] = {{0, 0}, {10, 0}, {10, 10}};
  f.add_shape(pts, 3, true, static_cast<std::int32_t>(o));
  f.add_shape(pts, 2, false);
  f.add_label_text(4, 5, "hello");
  f.objects[1].has_color = true;
  f.objects[1].color = {1, 2, 3, 4};
  return f;
}

TEST(LiveOverlays, RoundTrip) {
  const media::OverlayFrame f = sample_overlays();
  std::vector<std::byte> bytes;
  encode_overlays(f, bytes);
  media::OverlayFrame g;
  decode_overlays(bytes, g);
  EXPECT_EQ(g.frame, 12);
  ASSERT_EQ(g.objects.size(), 2u);
  EXPECT_EQ(g.text(g.objects[0].label), "car");
  EXPECT_EQ(g.objects[0].score, 0.75f);
  EXPECT_EQ(g.objects[0].class_id, 2);
  EXPECT_EQ(g.objects[0].track_id, 7);
  EXPECT_EQ(g.objects[0].x1, 30.f);
  EXPECT_TRUE(std::isnan(g.objects[1].score));
  EXPECT_EQ(g.objects[1].color, (media::Color8{1, 2, 3, 4}));
  EXPECT_EQ(g.keypoints.size(), 3u);
  EXPECT_EQ(g.edges.size(), 2u);
  ASSERT_EQ(g.shapes.size(), 2u);
  EXPECT_TRUE(g.shapes[0].closed);
  EXPECT_EQ(g.shapes[0].object, 0);
  EXPECT_EQ(g.points.size(), 5u);
  ASSERT_EQ(g.texts.size(), 1u);
  EXPECT_EQ(g.text(g.texts[0].text), "hello");
  std::vector<std::byte> again;
  encode_overlays(g, again);
  EXPECT_EQ(again, bytes);
}

std::string overlay_failure(std::span<const std::byte> d) {
  media::OverlayFrame g;
  try {
    decode_overlays(d, g);
  } catch (const ProtocolError& e) {
    return e.field();
  }
  ADD_FAILURE() << "decode_overlays accepted the block";
  return "";
}

TEST(LiveOverlays, MalformedBlocksAreRefused) {
  media::OverlayFrame f = sample_overlays();
  std::vector<std::byte> b;
  f.objects[0].label.offset = 1000;
  encode_overlays(f, b);
  EXPECT_EQ(overlay_failure(b), "overlays.objects.label");
  f = sample_overlays();
  f.edges[1] = {0, 3};  // the object has 3 keypoints: 3 is out of range
  encode_overlays(f, b);
  EXPECT_EQ(overlay_failure(b), "overlays.edges");
  f = sample_overlays();
  f.shapes[1].object = 5;
  encode_overlays(f, b);
  EXPECT_EQ(overlay_failure(b), "overlays.shapes.object");
  f = sample_overlays();
  f.points[2].x = std::numeric_limits<float>::quiet_NaN();
  encode_overlays(f, b);
  EXPECT_EQ(overlay_failure(b), "overlays.points");
  f = sample_overlays();
  f.objects[0].keypoint_count = 9;
  encode_overlays(f, b);
  EXPECT_EQ(overlay_failure(b), "overlays.objects.keypoints");
  f = sample_overlays();
  f.texts[0].x = std::numeric_limits<float>::infinity();
  encode_overlays(f, b);
  EXPECT_EQ(overlay_failure(b), "overlays.texts.pos");

  encode_overlays(sample_overlays(), b);
  for (std::size_t n = 0; n < b.size(); ++n) EXPECT_FALSE(overlay_failure(std::span(b).first(n)).empty()) << n;
  auto more = b;
  more.push_back(std::byte{0});  // after the layer count (0): trailing bytes
  EXPECT_EQ(overlay_failure(more), "overlays");
  auto counts = b;
  counts[8] = std::byte{0xff};  // objects: 255 more than there are
  EXPECT_EQ(overlay_failure(counts), "overlays.counts");
}

TEST(LiveOverlays, EmptyOverlaysRoundTrip) {
  media::OverlayFrame f;
  std::vector<std::byte> b;
  encode_overlays(f, b);
  media::OverlayFrame g;
  g.add_box(0, 0, 1, 1);
  decode_overlays(b, g);
  EXPECT_TRUE(g.empty());
  EXPECT_EQ(g.frame, -1);
}

}  // namespace
}  // namespace handoff::live
