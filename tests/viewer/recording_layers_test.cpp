// Dense layers in recordings: each layer a foxglove.RawImage on
// "<topic>/layers/<i>" with its settings in the channel metadata, written by
// RecordingWriter and read back by the recording source matched by
// timestamp; as Foxglove sees them (RawImage, encoding, size); settings that
// change start a new channel; malformed layer channels are left out with a
// warning naming the topic and the field, and the rest plays on.
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>

#include <foxglove/RawImage.pb.h>

#include "layer_samples.hpp"
#include "log_capture.hpp"
#include "recording_test_util.hpp"
#include "test_util.hpp"

#include <gmock/gmock.h>

namespace handoff::media {
namespace {

using handoff::test::layer_difference;
using handoff::test::layered_overlays;
using handoff::test::owned_array;
using test::TempDir;
using ::testing::HasSubstr;

// The messages on `topic` in `path`, each parsed as Foxglove parses a RawImage.
std::vector<foxglove::RawImage> raw_images(const std::filesystem::path& path, const std::string& topic) {
  auto r = mcap::Reader::open(path);
  std::vector<foxglove::RawImage> out;
  for (const auto& [id, ch] : r->channels()) {
    if (ch.topic != topic) continue;
    for (const auto& ref : r->messages(id)) {
      const mcap::MessageView m = r->read(ref);
      foxglove::RawImage img;
      EXPECT_TRUE(img.ParseFromArray(m.data.data(), int(m.data.size())));
      out.push_back(img);
    }
  }
  return out;
}

TEST(RecordingLayers, LayersRoundTripThroughTheWriter) {
  TempDir dir;
  OverlayFrame changed = layered_overlays(3);
  std::get<ClassMap>(changed.layers[0]).opacity = 0.9f;  // new settings: a new channel on layers/0
  {
    RecordingWriter w(dir / "r.mcap", {.block_when_full = true});
    ASSERT_TRUE(w.write(test::pattern_frame(PixelFormat::NV12, 64, 48, 0), layered_overlays(0), "/cam", 1'000'000));
    ASSERT_TRUE(w.write(test::pattern_frame(PixelFormat::NV12, 64, 48, 1), OverlayFrame{}, "/cam", 2'000'000));
    ASSERT_TRUE(w.write(test::pattern_frame(PixelFormat::NV12, 64, 48, 2), layered_overlays(2), "/cam", 3'000'000));
    ASSERT_TRUE(w.write(test::pattern_frame(PixelFormat::NV12, 64, 48, 3), changed, "/cam", 4'000'000));
    w.close();
  }
  auto src = open_recording(dir / "r.mcap");
  EXPECT_EQ(src->topic(), "/cam");  // the image topic, not a layer topic
  EXPECT_EQ(src->info().frame_count, 4);
  OverlayFrame ov;
  ASSERT_TRUE(src->overlays_for(0, ov));
  EXPECT_EQ(ov.objects.size(), 2u);
  EXPECT_EQ(layer_difference(ov, layered_overlays(0)), "");
  EXPECT_FALSE(src->overlays_for(1, ov));
  EXPECT_TRUE(ov.layers.empty());
  ASSERT_TRUE(src->overlays_for(3, ov));
  EXPECT_EQ(layer_difference(ov, changed), "");
  ASSERT_TRUE(src->overlays_for(2, ov));  // back: the first settings again
  EXPECT_EQ(std::get<ClassMap>(ov.layers[0]).opacity, 0.4f);

  auto r = mcap::Reader::open(dir / "r.mcap");
  std::size_t layer0_channels = 0;
  for (const auto& [id, ch] : r->channels())
    if (ch.topic == "/cam/layers/0") ++layer0_channels;
  EXPECT_EQ(layer0_channels, 2u);
}

TEST(RecordingLayers, FoxgloveSeesEachLayerAsAnImage) {
  TempDir dir;
  {
    RecordingWriter w(dir / "r.mcap", {.block_when_full = true});
    ASSERT_TRUE(w.write(test::pattern_frame(PixelFormat::NV12, 64, 48, 0), layered_overlays(), "/cam", 5'000'000));
    w.close();
  }
  const auto ids = raw_images(dir / "r.mcap", "/cam/layers/0");
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids[0].encoding(), "mono16");
  EXPECT_EQ(ids[0].width(), 20u);
  EXPECT_EQ(ids[0].height(), 10u);
  EXPECT_EQ(ids[0].step(), 40u);
  EXPECT_EQ(ids[0].timestamp().nanos(), 5'000'000);
  std::uint16_t first;
  std::memcpy(&first, ids[0].data().data(), 2);
  EXPECT_EQ(first, 300);
  const auto values = raw_images(dir / "r.mcap", "/cam/layers/1");
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].encoding(), "32FC1");
  EXPECT_EQ(values[0].step(), 16u * 4);
  const auto masks = raw_images(dir / "r.mcap", "/cam/layers/2");
  ASSERT_EQ(masks.size(), 1u);
  EXPECT_EQ(masks[0].encoding(), "mono8");
  EXPECT_EQ(masks[0].height(), 12u);  // two 6-row masks, one above the other
  EXPECT_EQ(std::uint8_t(masks[0].data()[0]), 255);
  auto r = mcap::Reader::open(dir / "r.mcap");
  for (const auto& [id, ch] : r->channels()) {
    if (ch.topic != "/cam/layers/1") continue;
    ASSERT_EQ(ch.metadata.size(), 1u);
    EXPECT_EQ(ch.metadata[0].first, "handoff.layer");
    EXPECT_EQ(ch.metadata[0].second,
              R"({"kind":"scalar_map","colormap":"viridis","range":[-4,8],"opacity":0.699999988})");
  }
}

TEST(RecordingLayers, ThirtyTwoBitIdsAreExactUpTo2To24) {
  TempDir dir;
  OverlayFrame f;
  std::vector<std::int32_t> ids = {-5, 70000, 16777216, 0};
  ClassMap m;
  m.ids = owned_array(SampleType::I32, 2, 2, 1, 0, handoff::test::bytes_of(ids));
  f.layers.push_back(m);
  {
    RecordingWriter w(dir / "r.mcap", {.block_when_full = true});
    ASSERT_TRUE(w.write(test::pattern_frame(PixelFormat::NV12, 8, 8, 0), f, "/c", 1));
    ids[1] = 16777217;
    OverlayFrame wide;
    m.ids = owned_array(SampleType::I32, 2, 2, 1, 0, handoff::test::bytes_of(ids));
    wide.layers.push_back(m);
    try {
      w.write(test::pattern_frame(PixelFormat::NV12, 8, 8, 1), wide, "/c", 2);
      ADD_FAILURE() << "recorded an id beyond 2^24";
    } catch (const InvalidFrame& e) {
      EXPECT_EQ(e.field(), "layers[0].ids");
    }
    w.close();
    EXPECT_EQ(w.stats().frames_written, 1u);
  }
  EXPECT_EQ(raw_images(dir / "r.mcap", "/c/layers/0").at(0).encoding(), "32FC1");
  auto src = open_recording(dir / "r.mcap");
  OverlayFrame got;
  ASSERT_TRUE(src->overlays_for(0, got));
  EXPECT_EQ(layer_difference(got, f), "");
}

// A recording with one good layer topic and bad ones, written by hand.
std::filesystem::path bad_layers(const TempDir& dir) {
  const auto path = dir / "bad.mcap";
  mcap::Writer w(path);
  const auto schema = w.add_schema(kRawImageSchema, "protobuf", raw_image_descriptor_set());
  const auto image = w.add_channel(schema, "/cam", "protobuf");
  std::vector<std::uint8_t> bytes;
  encode_raw_image(test::pattern_frame(PixelFormat::NV12, 16, 8, 0), 10, bytes);
  w.write(image, 0, 10, 10, bytes);
  encode_raw_image(test::pattern_frame(PixelFormat::NV12, 16, 8, 1), 20, bytes);
  w.write(image, 1, 20, 20, bytes);
  std::vector<std::uint8_t> mono8;
  encode_raw_image(test::pattern_frame(PixelFormat::GRAY8, 4, 4, 2), 10, mono8);
  const std::pair<const char*, const char*> layers[] = {
      {"/cam/layers/0", R"({"kind":"class_map","ids":"u8","names":{"3":"three"}})"},
      {"/cam/layers/1", R"({"kind":"class_map","ids":"u8",)"},                  // bad JSON
      {"/cam/layers/2", R"({"kind":"blob"})"},                                  // unknown kind
      {"/cam/layers/3", R"({"kind":"class_map","ids":"u16"})"},                 // mono8 is not u16 ids
      {"/cam/layers/4", R"({"kind":"instance_masks","mask_height":2})"},       // 2 masks, no boxes
      {"/cam/layers/5", R"({"kind":"scalar_map","colormap":"rainbow"})"},       // mono8 and a bad colormap
      {"/cam/layers/6", R"({"kind":"class_map","ids":"u8","opacity":7})"},      // opacity outside 0..1
  };
  for (auto [topic, settings] : layers) {
    const auto ch = w.add_channel(schema, topic, "protobuf", {{"handoff.layer", settings}});
    w.write(ch, 0, 10, 10, mono8);
  }
  w.close();
  return path;
}

TEST(RecordingLayers, MalformedLayersAreLeftOutByNameAndTheRestPlays) {
  TempDir dir;
  handoff::test::LogCapture log;
  auto src = open_recording(bad_layers(dir));
  EXPECT_EQ(src->info().frame_count, 2);
  OverlayFrame ov;
  ASSERT_TRUE(src->overlays_for(0, ov));
  ASSERT_EQ(ov.layers.size(), 1u);  // layers/0 only
  EXPECT_EQ(std::get<ClassMap>(ov.layers[0]).names.at(3), "three");
  EXPECT_TRUE(log.contains("\"/cam/layers/1\"") && log.contains("handoff.layer: the layer's channel metadata is not"));
  EXPECT_TRUE(log.contains("handoff.layer.kind: \"blob\" is not"));
  EXPECT_TRUE(log.contains("\"/cam/layers/3\"") && log.contains("RawImage.encoding: \"mono8\" where a class_map of u16"));
  EXPECT_TRUE(log.contains("layers[4].masks.count: 2 masks for 0 boxes"));
  EXPECT_TRUE(log.contains("\"/cam/layers/5\"") && log.contains("RawImage.encoding"));
  EXPECT_TRUE(log.contains("layers[6].opacity"));
  // Once each: asking again logs nothing new; the next frame has no layers and plays.
  const std::size_t lines = log.texts().size();
  ASSERT_TRUE(src->overlays_for(0, ov));
  EXPECT_EQ(log.texts().size(), lines);
  EXPECT_FALSE(src->overlays_for(1, ov));
  HostFrame fr(PixelFormat::NV12, 16, 8, 16);
  EXPECT_TRUE(src->read_into(fr.target()));
  EXPECT_TRUE(src->read_into(fr.target()));
}

TEST(RecordingLayers, DecodingChecksEncodingSizesAndSettings) {
  std::vector<std::uint8_t> mono16;
  encode_raw_image(test::pattern_frame(PixelFormat::GRAY16, 4, 6, 1), 1, mono16);
  const RawImageView image = parse_raw_image(mono16, {"f", [] { return std::string("m"); }});
  auto field = [&](std::string_view settings) -> std::string {
    try {
      (void)decode_layer_message(image, settings, "f", "m");
    } catch (const ParseError& e) {
      return e.field();
    }
    return "";
  };
  EXPECT_EQ(field(R"({"kind":"class_map","ids":"u16"})"), "");
  EXPECT_EQ(field(R"({"kind":"class_map","ids":"u64"})"), "handoff.layer.ids");
  EXPECT_EQ(field(R"({"kind":"class_map"})"), "handoff.layer.ids");
  EXPECT_EQ(field(R"({"kind":"class_map","ids":"i16","colors":{"x":"#fff"}})"), "handoff.layer.colors");
  EXPECT_EQ(field(R"({"kind":"class_map","ids":"i16","colors":{"1":"blue"}})"), "handoff.layer.colors");
  EXPECT_EQ(field(R"({"kind":"class_map","ids":"i16","target":[1,2]})"), "handoff.layer.target");
  EXPECT_EQ(field(R"({"kind":"scalar_map"})"), "RawImage.encoding");
  EXPECT_EQ(field(R"({"kind":"instance_masks","mask_height":3})"), "RawImage.encoding");
  EXPECT_EQ(field(R"([1,2])"), "handoff.layer");
  EXPECT_EQ(field(R"({"kind":3})"), "handoff.layer.kind");
  // Data shorter than its rows.
  RawImageView cut = image;
  cut.data = cut.data.first(cut.data.size() - 1);
  try {
    (void)decode_layer_message(cut, R"({"kind":"class_map","ids":"u16"})", "f", "m");
    ADD_FAILURE() << "decoded a cut image";
  } catch (const ParseError& e) {
    EXPECT_THAT(e.field(), HasSubstr("RawImage"));
  }
}

}  // namespace
}  // namespace handoff::media
