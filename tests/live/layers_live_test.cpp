// Dense layers over live attach: the overlay block's layer section (settings
// and packed samples, docs/live.md "Layers") round trip, its malformed forms
// refused by name, and a publisher -> subscriber round trip inline and
// through a sealed memfd.
#include "live_fixture.hpp"
#include "live_support.hpp"

#include <handoff/live/protocol.hpp>  // private: the wire protocol

#include <layer_samples.hpp>

#include <gmock/gmock.h>

#include <cstring>

namespace handoff::live::test {
namespace {

using handoff::test::layer_difference;
using handoff::test::layered_overlays;
using handoff::test::owned_array;
using ::testing::HasSubstr;

std::string layer_failure(std::span<const std::byte> d) {
  media::OverlayFrame g;
  try {
    decode_overlays(d, g);
  } catch (const ProtocolError& e) {
    return e.field();
  }
  ADD_FAILURE() << "decode_overlays accepted the block";
  return "";
}

// Where layer 0 starts in the block of `f` (its vector overlays, then the layer count).
std::size_t first_layer_at(media::OverlayFrame f) {
  f.layers.clear();
  std::vector<std::byte> b;
  encode_overlays(f, b);
  return b.size();
}

TEST(LiveLayers, RoundTripConvertsAsTheViewerDoes) {
  const media::OverlayFrame f = layered_overlays();
  std::vector<std::byte> bytes;
  encode_overlays(f, bytes);
  media::OverlayFrame g;
  decode_overlays(bytes, g);
  EXPECT_EQ(layer_difference(g, f), "");
  EXPECT_EQ(g.objects.size(), 2u);
  const auto& m = std::get<media::ClassMap>(g.layers[0]);
  EXPECT_EQ(m.ids.type, media::SampleType::U16);
  EXPECT_EQ(m.names.at(300), "car \"big\"");
  EXPECT_EQ(m.colors.at(1), (media::Color8{200, 10, 10, 255}));
  EXPECT_EQ(std::get<media::ScalarMap>(g.layers[1]).values.type, media::SampleType::F32);  // f64 -> f32
  const auto& k = std::get<media::InstanceMasks>(g.layers[2]);
  EXPECT_EQ(k.masks.type, media::SampleType::U8);
  EXPECT_EQ(k.masks.count, 2u);
  std::vector<std::byte> again;
  encode_overlays(g, again);
  EXPECT_EQ(again, bytes);  // one encoding: decoded layers encode back to the same bytes
}

// No masks for a frame without detections travel as no masks.
TEST(LiveLayers, NoMasksRoundTrip) {
  media::OverlayFrame f;
  media::InstanceMasks none;
  none.masks.type = media::SampleType::Bool;
  none.masks.width = 8;
  none.masks.height = 6;
  none.masks.count = 0;
  f.layers.push_back(none);
  std::vector<std::byte> bytes;
  encode_overlays(f, bytes);
  media::OverlayFrame g;
  decode_overlays(bytes, g);
  ASSERT_EQ(g.layers.size(), 1u);
  const auto& k = std::get<media::InstanceMasks>(g.layers[0]);
  EXPECT_EQ(k.masks.count, 0u);
  EXPECT_EQ(k.masks.width, 8u);
  EXPECT_NO_THROW(media::validate_layers(g, 0));
}

TEST(LiveLayers, WideIdsKeepTheirLow32Bits) {
  media::OverlayFrame f;
  std::vector<std::int64_t> ids = {-1, 5, (std::int64_t(7) << 32) | 9, 0};
  media::ClassMap m;
  m.ids = owned_array(media::SampleType::I64, 2, 2, 1, 0, handoff::test::bytes_of(ids));
  f.layers.push_back(m);
  std::vector<std::byte> b;
  encode_overlays(f, b);
  media::OverlayFrame g;
  decode_overlays(b, g);
  const auto& a = std::get<media::ClassMap>(g.layers[0]).ids;
  ASSERT_EQ(a.type, media::SampleType::I32);
  std::int32_t v[4];
  std::memcpy(v, a.data, sizeof v);
  EXPECT_EQ(v[0], -1);
  EXPECT_EQ(v[2], 9);
}

TEST(LiveLayers, MalformedLayersAreRefusedByName) {
  const media::OverlayFrame f = layered_overlays();
  const std::size_t at = first_layer_at(f);
  std::vector<std::byte> b;
  encode_overlays(f, b);
  auto patched = [&](std::size_t offset, std::uint8_t v) {
    auto c = b;
    c[offset] = std::byte{v};
    return c;
  };
  EXPECT_EQ(layer_failure(patched(at - 4, 65)), "overlays.layers");                   // 65 layers
  EXPECT_EQ(layer_failure(patched(at - 4, 4)), "overlays.layers[3].kind");            // one more than there are
  EXPECT_EQ(layer_failure(patched(at, 7)), "overlays.layers[0].kind");                // unknown kind
  EXPECT_EQ(layer_failure(patched(at + 1, std::uint8_t(media::SampleType::F32))), "overlays.layers[0].type");
  EXPECT_EQ(layer_failure(patched(at + 1, 200)), "overlays.layers[0].type");
  EXPECT_EQ(layer_failure(patched(at + 2, 21)), "overlays.layers[0].samples");        // width 21: sizes past the data
  EXPECT_EQ(layer_failure(patched(at + 5, 1)), "overlays.layers[0].width");           // width above 32768
  EXPECT_EQ(layer_failure(patched(at + 10, 2)), "overlays.layers[0].samples");        // count 2
  EXPECT_EQ(layer_failure(patched(at + 17, 0x7f)), "overlays.layers[0].opacity");     // opacity NaN (validate_layers)
  EXPECT_EQ(layer_failure(patched(at + 18, 2)), "overlays.layers[0].has_target");
  // The colour ids must increase: the second colour's id patched to the first's.
  const std::size_t colors = at + 19 + 16 + 4;
  auto c = b;
  std::memcpy(&c[colors + 12], &c[colors], 8);
  EXPECT_EQ(layer_failure(c), "overlays.layers[0].colors");
  // Truncated anywhere in the layers: refused.
  for (std::size_t n = at; n < b.size(); n += 7) EXPECT_FALSE(layer_failure(std::span(b).first(n)).empty()) << n;
  auto more = b;
  more.push_back(std::byte{0});
  EXPECT_FALSE(layer_failure(more).empty());

  // Masks must match the boxes, and be 0 / 1.
  media::OverlayFrame one_box = f;
  one_box.objects.pop_back();
  std::vector<std::byte> d;
  encode_overlays(f, d);
  one_box.layers.clear();
  std::vector<std::byte> head;
  encode_overlays(one_box, head);
  // The same layers after one box's overlays: 2 masks for 1 box.
  std::vector<std::byte> mixed(head.begin(), head.end() - 4);
  mixed.insert(mixed.end(), d.begin() + std::ptrdiff_t(at - 4), d.end());
  EXPECT_EQ(layer_failure(mixed), "overlays.layers[2].masks.count");
  auto two = b;
  two[b.size() - 1] = std::byte{2};
  EXPECT_EQ(layer_failure(two), "overlays.layers[2].samples");
}

TEST(LiveLayers, ABadLayerIsAnInvalidFrameWhenPublished) {
  Frame frame = pattern_frame(PixelFormat::NV12, 32, 16, 0);
  media::OverlayFrame f = layered_overlays();
  std::get<media::ScalarMap>(f.layers[1]).range = std::array<double, 2>{3, 3};
  std::vector<std::byte> b;
  try {
    encode_overlays(f, b);
    FAIL() << "encoded a scalar map with range (3, 3)";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "layers[1].range");
  }
  f = layered_overlays();
  std::get<media::ClassMap>(f.layers[0]).names[2] = "tab\there";
  EXPECT_THROW(encode_overlays(f, b), InvalidFrame);
}

class LiveLayersAttach : public LiveTest {};

TEST_F(LiveLayersAttach, PublishedLayersArriveWithTheFrame) {
  Publisher pub(name());
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
  media::OverlayFrame small = layered_overlays(1);
  // A 256 x 256 f32 scalar map: 256 KiB, past a datagram, through the memfd.
  media::OverlayFrame big = layered_overlays(2);
  std::vector<float> values(256 * 256);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = float(i % 977) * 0.25f;
  std::get<media::ScalarMap>(big.layers[1]).values =
      owned_array(media::SampleType::F32, 256, 256, 1, 0, handoff::test::bytes_of(values));
  std::int64_t index = 0;
  for (const media::OverlayFrame* ov : {&small, &big}) {
    settle(pub);
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, 32, 16, index), *ov));
    const LiveFrame got = sub.next(10s);
    ASSERT_TRUE(got) << sub.status().message;
    ASSERT_TRUE(got.overlays);
    EXPECT_EQ(got.overlays->objects.size(), 2u);
    EXPECT_EQ(layer_difference(*got.overlays, *ov), "") << "frame " << index;
    ++index;
  }
  // Layers alone (no boxes, no masks) are sent too.
  media::OverlayFrame only;
  only.layers.push_back(small.layers[0]);
  settle(pub);
  ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, 32, 16, 9), only));
  const LiveFrame got = sub.next(10s);
  ASSERT_TRUE(got && got.overlays);
  EXPECT_EQ(layer_difference(*got.overlays, only), "");
}

TEST_F(LiveLayersAttach, BadLayersAreRefusedBeforeASlotIsTaken) {
  Publisher pub(name());
  Subscriber sub(name());
  ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s)) << sub.status().message;
  settle(pub);
  media::OverlayFrame f = layered_overlays();
  f.objects.pop_back();  // 2 masks, 1 box
  try {
    pub.publish(pattern_frame(PixelFormat::NV12, 32, 16, 0), f);
    FAIL() << "published masks that do not match the boxes";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "layers[2].masks.count");
  }
  media::OverlayFrame cuda = layered_overlays();
  std::get<media::ClassMap>(cuda.layers[0]).ids.memory = MemoryKind::Cuda;  // with no device nor context
  try {
    pub.publish(pattern_frame(PixelFormat::NV12, 32, 16, 0), cuda);
    FAIL() << "published a CUDA layer without its device";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "layers[0].ids.device");
  }
  std::get<media::ClassMap>(cuda.layers[0]).ids.device = 0;
  try {
    pub.publish(pattern_frame(PixelFormat::NV12, 32, 16, 0), cuda);
    FAIL() << "published a CUDA layer without its context";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "layers[0].ids.cuda_context");
  }
  // The slot ring is whole: the next frame goes out.
  ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, 32, 16, 1), layered_overlays()));
  const LiveFrame got = sub.next(10s);
  ASSERT_TRUE(got);
  EXPECT_EQ(got.frame.index, 1);
}

}  // namespace
}  // namespace handoff::live::test
