// sensor_msgs/msg/CompressedImage (issue 24): JPEG and PNG decoded into
// rgb8 / gray8 / gray16 frames; the format string names the codec; corrupt
// data is a ParseError naming the field, and while playing a bag a frame
// whose picture does not decode is shown black with a warning naming the
// topic, frame and field, the rest playing on. list_recording_topics names
// every topic with whether it is shown and why not.
// Test data is made here: JPEG with libjpeg's encoder, PNG with a small
// writer of its own (zlib, written from the PNG specification).
#include <handoff/media/error.hpp>
#include <handoff/media/image_codec.hpp>
#include <handoff/media/recording.hpp>

#include "cdr_test_util.hpp"
#include "test_util.hpp"

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.pb.h>

#include <cstdio>
#include <cstring>
#include <tuple>
#include <jpeglib.h>
#include <zlib.h>

namespace handoff::media {
namespace {

using test::TempDir;
using ::testing::HasSubstr;

// A smooth w x h picture of `channels` 8-bit samples (JPEG keeps it within a few codes).
std::vector<std::uint8_t> smooth(std::uint32_t w, std::uint32_t h, int channels, int k = 0) {
  std::vector<std::uint8_t> p(std::size_t(w) * h * channels);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x)
      for (int c = 0; c < channels; ++c)
        p[(std::size_t(y) * w + x) * channels + c] = std::uint8_t(c == 0 ? x * 255 / (w - 1) : c == 1 ? y * 255 / (h - 1) : 60 + 20 * k + c);
  return p;
}

std::vector<std::uint8_t> encode_jpeg(const std::vector<std::uint8_t>& pixels, std::uint32_t w, std::uint32_t h, int channels) {
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &out, &size);
  c.image_width = w;
  c.image_height = h;
  c.input_components = channels;
  c.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 95, TRUE);
  for (int i = 0; i < c.num_components; ++i) c.comp_info[i].h_samp_factor = c.comp_info[i].v_samp_factor = 1;  // 4:4:4
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < h) {
    JSAMPROW row = const_cast<std::uint8_t*>(pixels.data()) + std::size_t(c.next_scanline) * w * channels;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::vector<std::uint8_t> v(out, out + size);
  std::free(out);
  return v;
}

void put_be32(std::vector<std::uint8_t>& v, std::uint32_t x) {
  for (int s = 24; s >= 0; s -= 8) v.push_back(std::uint8_t(x >> s));
}
void png_chunk(std::vector<std::uint8_t>& png, const char* type, const std::vector<std::uint8_t>& data) {
  put_be32(png, std::uint32_t(data.size()));
  const std::size_t start = png.size();
  png.insert(png.end(), type, type + 4);
  png.insert(png.end(), data.begin(), data.end());
  put_be32(png, std::uint32_t(crc32(0, png.data() + start, uInt(png.size() - start))));
}

// A PNG of `rows` (each row's bytes as the PNG holds them: samples big-endian),
// colour type 0 (gray), 2 (RGB) or 6 (RGBA), filter 0 on every row.
std::vector<std::uint8_t> encode_png(std::uint32_t w, std::uint32_t h, int depth, int color_type,
                                     const std::vector<std::uint8_t>& rows) {
  std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<std::uint8_t> ihdr;
  put_be32(ihdr, w);
  put_be32(ihdr, h);
  for (int b : {depth, color_type, 0, 0, 0}) ihdr.push_back(std::uint8_t(b));
  png_chunk(png, "IHDR", ihdr);
  const std::size_t row = rows.size() / std::max<std::uint32_t>(h, 1);
  std::vector<std::uint8_t> raw;
  for (std::uint32_t y = 0; y < h; ++y) {
    raw.push_back(0);
    raw.insert(raw.end(), rows.begin() + std::ptrdiff_t(y * row), rows.begin() + std::ptrdiff_t((y + 1) * row));
  }
  std::vector<std::uint8_t> z(compressBound(uLong(raw.size())));
  uLongf zn = uLongf(z.size());
  compress2(z.data(), &zn, raw.data(), uLong(raw.size()), 6);
  z.resize(zn);
  png_chunk(png, "IDAT", z);
  png_chunk(png, "IEND", {});
  return png;
}

const MessagePlace kWhere{"test.mcap", [] { return std::string("frame 4"); }};

DecodedPicture decode(ImageCodec codec, const std::vector<std::uint8_t>& data) {
  DecodedPicture p;
  decode_picture(codec, data, p, kWhere, "CompressedImage.data");
  return p;
}

std::string decode_error(ImageCodec codec, const std::vector<std::uint8_t>& data) {
  try {
    decode(codec, data);
  } catch (const ParseError& e) {
    EXPECT_EQ(e.field(), "CompressedImage.data");
    EXPECT_EQ(e.location(), "frame 4");
    return e.what();
  }
  ADD_FAILURE() << "no ParseError";
  return {};
}

int max_difference(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  EXPECT_EQ(a.size(), b.size());
  int d = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) d = std::max(d, std::abs(int(a[i]) - int(b[i])));
  return d;
}

TEST(ImageCodec, FormatStringsNameTheCodec) {
  EXPECT_EQ(image_codec("jpeg"), ImageCodec::Jpeg);
  EXPECT_EQ(image_codec("JPEG"), ImageCodec::Jpeg);
  EXPECT_EQ(image_codec("rgb8; jpeg compressed bgr8"), ImageCodec::Jpeg);
  EXPECT_EQ(image_codec("png"), ImageCodec::Png);
  EXPECT_EQ(image_codec("mono16; png compressed mono16"), ImageCodec::Png);
  EXPECT_EQ(image_codec("16UC1; compressedDepth png"), std::nullopt);  // a depth header before the PNG
  EXPECT_EQ(image_codec("h264"), std::nullopt);
  EXPECT_EQ(image_codec(""), std::nullopt);
  EXPECT_EQ(image_codec("rgb8;"), std::nullopt);
}

TEST(ImageCodec, JpegDecodesToRgb8AndGray8WithinCompressionError) {
  const std::uint32_t w = 40, h = 24;
  const auto rgb = smooth(w, h, 3);
  const DecodedPicture p = decode(ImageCodec::Jpeg, encode_jpeg(rgb, w, h, 3));
  EXPECT_EQ(p.format, PixelFormat::RGB8);
  EXPECT_EQ(p.width, w);
  EXPECT_EQ(p.height, h);
  EXPECT_EQ(p.stride, w * 3);
  EXPECT_EQ(p.encoding(), "rgb8");
  EXPECT_LE(max_difference(p.pixels, rgb), 12);
  const auto gray = smooth(w, h, 1);
  const DecodedPicture g = decode(ImageCodec::Jpeg, encode_jpeg(gray, w, h, 1));
  EXPECT_EQ(g.format, PixelFormat::GRAY8);
  EXPECT_EQ(g.encoding(), "mono8");
  EXPECT_LE(max_difference(g.pixels, gray), 12);
}

TEST(ImageCodec, PngDecodesExactly) {
  const std::uint32_t w = 7, h = 5;
  const auto rgb = smooth(w, h, 3);
  DecodedPicture p = decode(ImageCodec::Png, encode_png(w, h, 8, 2, rgb));
  EXPECT_EQ(p.format, PixelFormat::RGB8);
  EXPECT_EQ(p.pixels, rgb);
  // RGBA: alpha dropped.
  const auto rgba = smooth(w, h, 4);
  p = decode(ImageCodec::Png, encode_png(w, h, 8, 6, rgba));
  EXPECT_EQ(p.format, PixelFormat::RGB8);
  for (std::size_t i = 0; i < std::size_t(w) * h; ++i)
    ASSERT_EQ(std::memcmp(&p.pixels[i * 3], &rgba[i * 4], 3), 0) << "pixel " << i;
  const auto gray = smooth(w, h, 1);
  p = decode(ImageCodec::Png, encode_png(w, h, 8, 0, gray));
  EXPECT_EQ(p.format, PixelFormat::GRAY8);
  EXPECT_EQ(p.pixels, gray);
  // 16-bit gray: big-endian in the PNG, host order out.
  std::vector<std::uint8_t> be(std::size_t(w) * h * 2);
  std::vector<std::uint16_t> want(std::size_t(w) * h);
  for (std::size_t i = 0; i < want.size(); ++i) {
    want[i] = std::uint16_t(i * 4099 + 7);
    be[2 * i] = std::uint8_t(want[i] >> 8);
    be[2 * i + 1] = std::uint8_t(want[i]);
  }
  p = decode(ImageCodec::Png, encode_png(w, h, 16, 0, be));
  EXPECT_EQ(p.format, PixelFormat::GRAY16);
  EXPECT_EQ(p.encoding(), "mono16");
  EXPECT_EQ(p.stride, w * 2);
  ASSERT_EQ(p.pixels.size(), want.size() * 2);
  EXPECT_EQ(std::memcmp(p.pixels.data(), want.data(), p.pixels.size()), 0);
}

TEST(ImageCodec, MalformedDataIsAParseErrorNamingTheField) {
  const auto jpeg = encode_jpeg(smooth(32, 16, 3), 32, 16, 3);
  EXPECT_THAT(decode_error(ImageCodec::Jpeg, {}), HasSubstr("test.mcap: frame 4: CompressedImage.data: corrupt JPEG"));
  EXPECT_THAT(decode_error(ImageCodec::Jpeg, {jpeg.begin(), jpeg.begin() + std::ptrdiff_t(jpeg.size() / 2)}),
              HasSubstr("corrupt JPEG"));
  EXPECT_THAT(decode_error(ImageCodec::Jpeg, std::vector<std::uint8_t>(100, 0x5A)), HasSubstr("corrupt JPEG"));
  auto bad_marker = jpeg;
  bad_marker[jpeg.size() / 2] ^= 0xFF;
  bad_marker[jpeg.size() / 2 + 1] = 0xFF;
  bad_marker[jpeg.size() / 2 + 2] = 0xD9;  // an early EOI inside the scan
  EXPECT_THAT(decode_error(ImageCodec::Jpeg, bad_marker), HasSubstr("corrupt JPEG"));

  const auto png = encode_png(4, 4, 8, 2, smooth(4, 4, 3));
  EXPECT_THAT(decode_error(ImageCodec::Png, {}), HasSubstr("corrupt PNG"));
  EXPECT_THAT(decode_error(ImageCodec::Png, {png.begin(), png.end() - 20}), HasSubstr("corrupt PNG"));
  auto bad_crc = png;
  bad_crc[29] ^= 1;  // IHDR's CRC
  EXPECT_THAT(decode_error(ImageCodec::Png, bad_crc), HasSubstr("corrupt PNG"));
  EXPECT_THAT(decode_error(ImageCodec::Png, jpeg), HasSubstr("corrupt PNG"));  // a JPEG said to be PNG
  // A header asking for more than handoff decodes: refused before any allocation.
  EXPECT_THAT(decode_error(ImageCodec::Png, encode_png(40000, 1, 8, 0, {})),
              HasSubstr("PNG image width 40000 exceeds the maximum 32768"));
  EXPECT_THAT(decode_error(ImageCodec::Png, encode_png(16384, 16384, 8, 0, {})), HasSubstr("pixels handoff decodes"));
}

// --- In a bag -------------------------------------------------------------------------

constexpr std::string_view kTopic = "/cam/image_raw/compressed";

std::vector<std::uint8_t> compressed_message(int k, std::string_view format, const std::vector<std::uint8_t>& data) {
  test::CdrWriter w;
  w.i32(100 + k).u32(0).string("cam").string(format).u32(std::uint32_t(data.size())).raw(data);
  return w.bytes();
}

std::span<const std::uint8_t> text_bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// An MCAP bag: one CompressedImage per entry of `data` on kTopic (empty
// schema text: the built-in definition), plus a std_msgs/String topic.
std::filesystem::path write_bag(const TempDir& dir, const std::vector<std::vector<std::uint8_t>>& data,
                                std::string_view format = "rgb8; jpeg compressed bgr8") {
  const auto path = dir / "bag.mcap";
  mcap::Writer wr(path);
  const auto schema = wr.add_schema("sensor_msgs/msg/CompressedImage", "ros2msg", {});
  const auto ch = wr.add_channel(schema, std::string(kTopic), "cdr");
  for (std::size_t k = 0; k < data.size(); ++k)
    wr.write(ch, std::uint32_t(k), 100'000'000ull * (k + 1), 0, compressed_message(int(k), format, data[k]));
  const auto text = wr.add_schema("std_msgs/msg/String", "ros2msg", text_bytes("string data\n"));
  const auto chat = wr.add_channel(text, "/chatter", "cdr");
  test::CdrWriter s;
  s.string("hello");
  wr.write(chat, 0, 1, 0, s.bytes());
  wr.close();
  return path;
}

TEST(RosCompressed, JpegTopicPlaysACorruptFrameBlackAndTheRestOn) {
  TempDir dir;
  const std::uint32_t w = 32, h = 16;
  std::vector<std::vector<std::uint8_t>> pictures, data;
  for (int k = 0; k < 4; ++k) {
    pictures.push_back(smooth(w, h, 3, k));
    data.push_back(encode_jpeg(pictures.back(), w, h, 3));
  }
  data[1].resize(data[1].size() / 2);                        // cut short
  data[2] = encode_jpeg(smooth(16, 16, 3), 16, 16, 3);       // another size
  auto src = open_recording(write_bag(dir, data));
  EXPECT_EQ(src->info().format, PixelFormat::RGB8);
  EXPECT_EQ(src->info().width, w);
  EXPECT_EQ(src->info().height, h);
  EXPECT_EQ(src->info().frame_count, 4);
  EXPECT_EQ(src->topic(), kTopic);
  HostFrame out(PixelFormat::RGB8, w, h);
  auto frame = [&] {
    std::vector<std::uint8_t> v;
    for (std::uint32_t y = 0; y < h; ++y) v.insert(v.end(), out.luma() + y * out.luma_pitch(), out.luma() + y * out.luma_pitch() + w * 3);
    return v;
  };
  for (int k = 0; k < 4; ++k) {
    std::memset(out.luma(), 0x77, out.luma_pitch() * h);
    ASSERT_TRUE(src->read_into(out.target())) << k;
    if (k == 0 || k == 3) EXPECT_LE(max_difference(frame(), pictures[std::size_t(k)]), 12) << k;
    else EXPECT_EQ(frame(), std::vector<std::uint8_t>(w * h * 3, 0)) << k;  // black
  }
  EXPECT_FALSE(src->read_into(out.target()));
  ASSERT_EQ(src->warnings().size(), 2u);
  EXPECT_THAT(src->warnings()[0], HasSubstr("topic \"/cam/image_raw/compressed\", frame 1: "));
  EXPECT_THAT(src->warnings()[0], HasSubstr("frame 1"));
  EXPECT_THAT(src->warnings()[0], HasSubstr("CompressedImage.data: corrupt JPEG"));
  EXPECT_THAT(src->warnings()[1], HasSubstr("frame 2"));
  EXPECT_THAT(src->warnings()[1], HasSubstr("CompressedImage.width"));
  // Seeking back plays the good frame again.
  src->seek(3);
  ASSERT_TRUE(src->read_into(out.target()));
  EXPECT_LE(max_difference(frame(), pictures[3]), 12);
}

TEST(RosCompressed, AVideoMessageInAPictureTopicIsNamedAndShownBlack) {
  // The first message makes the topic pictures; an h264 one later is not decoded as video.
  TempDir dir;
  const auto path = dir / "mixed.mcap";
  const auto jpeg = encode_jpeg(smooth(8, 8, 3), 8, 8, 3);
  {
    mcap::Writer wr(path);
    const auto ch = wr.add_channel(wr.add_schema("sensor_msgs/msg/CompressedImage", "ros2msg", {}), std::string(kTopic), "cdr");
    wr.write(ch, 0, 1, 0, compressed_message(0, "jpeg", jpeg));
    wr.write(ch, 1, 2, 0, compressed_message(1, "h264", {0, 0, 0, 1, 0x65, 0x88}));
    wr.write(ch, 2, 3, 0, compressed_message(2, "jpeg", jpeg));
    wr.close();
  }
  auto src = open_recording(path);
  EXPECT_EQ(src->info().format, PixelFormat::RGB8);
  HostFrame out(PixelFormat::RGB8, 8, 8);
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(src->read_into(out.target())) << k;
  ASSERT_EQ(src->warnings().size(), 1u);
  EXPECT_THAT(src->warnings()[0], HasSubstr("frame 1"));
  EXPECT_THAT(src->warnings()[0], HasSubstr("CompressedImage.format: \"h264\" is video, but the topic's first message is a picture"));
}

TEST(RosCompressed, PngGray16TopicPlaysExactly) {
  TempDir dir;
  std::vector<std::uint8_t> be(6 * 4 * 2);
  for (std::size_t i = 0; i < be.size(); ++i) be[i] = std::uint8_t(i * 37 + 1);
  auto src = open_recording(write_bag(dir, {encode_png(6, 4, 16, 0, be)}, "mono16; png compressed mono16"));
  EXPECT_EQ(src->info().format, PixelFormat::GRAY16);
  HostFrame out(PixelFormat::GRAY16, 6, 4);
  ASSERT_TRUE(src->read_into(out.target()));
  for (std::size_t i = 0; i < 24; ++i) {
    const std::uint16_t got = reinterpret_cast<const std::uint16_t*>(out.luma() + (i / 6) * out.luma_pitch())[i % 6];
    ASSERT_EQ(got, std::uint16_t(be[2 * i] << 8 | be[2 * i + 1])) << i;
  }
}

TEST(RosCompressed, FirstFrameThatDoesNotDecodeOrAnUnknownFormatIsAnErrorAtOpen) {
  TempDir dir;
  try {
    open_recording(write_bag(dir, {std::vector<std::uint8_t>(50, 1)}));
    ADD_FAILURE() << "no ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.field(), "CompressedImage.data");
    EXPECT_THAT(e.location(), HasSubstr("frame 0"));
  }
  try {
    open_recording(write_bag(dir, {{0, 0, 0, 1}}, "vp9"));
    ADD_FAILURE() << "no ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.field(), "CompressedImage.format");
    EXPECT_THAT(e.what(), HasSubstr("unsupported format \"vp9\" (handoff decodes jpeg and png pictures, h264 and h265 video)"));
  }
}

TEST(RecordingTopics, ListsEveryTopicWithWhyItIsNotShown) {
  TempDir dir;
  const auto jpeg = encode_jpeg(smooth(8, 8, 3), 8, 8, 3);
  auto topics = list_recording_topics(write_bag(dir, {jpeg, jpeg, jpeg}));
  ASSERT_EQ(topics.size(), 2u);
  EXPECT_EQ(topics[0].topic, kTopic);  // sorted by name
  EXPECT_EQ(topics[0].type, "sensor_msgs/msg/CompressedImage");
  EXPECT_EQ(topics[0].encoding, "cdr");
  EXPECT_EQ(topics[0].messages, 3u);
  EXPECT_DOUBLE_EQ(topics[0].rate, 10.0);  // 100 ms apart
  EXPECT_EQ(topics[0].kind, RecordingTopicListing::Kind::Image);
  EXPECT_EQ(topics[0].note, "rgb8; jpeg compressed bgr8");
  EXPECT_EQ(topics[1].topic, "/chatter");
  EXPECT_EQ(topics[1].messages, 1u);
  EXPECT_EQ(topics[1].rate, 0.0);
  EXPECT_EQ(topics[1].kind, RecordingTopicListing::Kind::NotShown);
  EXPECT_THAT(topics[1].note, HasSubstr("type \"std_msgs/msg/String\" is not an image type"));
  // A format handoff does not decode, and a first message cut short: named, not shown.
  topics = list_recording_topics(write_bag(dir, {jpeg}, "vp9"));
  EXPECT_EQ(topics[0].kind, RecordingTopicListing::Kind::NotShown);
  EXPECT_THAT(topics[0].note, HasSubstr("unsupported format \"vp9\" (handoff decodes jpeg, png, h264 and h265)"));
  {
    const auto path = dir / "cut.mcap";
    mcap::Writer wr(path);
    const auto ch = wr.add_channel(wr.add_schema("sensor_msgs/msg/CompressedImage", "ros2msg", {}), "/c", "cdr");
    auto m = compressed_message(0, "jpeg", jpeg);
    m.resize(30);
    wr.write(ch, 0, 1, 0, m);
    wr.close();
    topics = list_recording_topics(path);
    ASSERT_EQ(topics.size(), 1u);
    EXPECT_EQ(topics[0].kind, RecordingTopicListing::Kind::NotShown);
    EXPECT_THAT(topics[0].note, HasSubstr("topic /c: message 0"));
    EXPECT_THAT(topics[0].note, HasSubstr("CompressedImage."));
  }
}

// --- foxglove.CompressedImage ----------------------------------------------------------

void put_varint(std::vector<std::uint8_t>& v, std::uint64_t x) {
  for (; x >= 0x80; x >>= 7) v.push_back(std::uint8_t(x | 0x80));
  v.push_back(std::uint8_t(x));
}
void put_bytes(std::vector<std::uint8_t>& v, int field, std::span<const std::uint8_t> b) {
  put_varint(v, std::uint64_t(field) << 3 | 2);
  put_varint(v, b.size());
  v.insert(v.end(), b.begin(), b.end());
}

// Protobuf wire bytes of a foxglove.CompressedImage, written by hand.
std::vector<std::uint8_t> foxglove_message(std::uint64_t sec, std::string_view format, const std::vector<std::uint8_t>& data) {
  std::vector<std::uint8_t> ts = {0x08};
  put_varint(ts, sec);
  ts.push_back(0x10);
  put_varint(ts, 7);
  std::vector<std::uint8_t> m;
  put_bytes(m, 1, ts);
  put_bytes(m, 4, text_bytes("cam"));  // frame_id: skipped
  put_bytes(m, 2, data);
  put_bytes(m, 3, text_bytes(format));
  return m;
}

TEST(FoxgloveCompressed, ParsesTheMessageAndRefusesMalformedOnes) {
  const std::vector<std::uint8_t> data = {1, 2, 3, 4, 5};
  const auto m = foxglove_message(12, "png", data);
  const CompressedImageView v = parse_compressed_image(m, kWhere);
  EXPECT_TRUE(v.has_timestamp);
  EXPECT_EQ(v.timestamp_ns, 12'000'000'007u);
  EXPECT_EQ(v.format, "png");
  EXPECT_TRUE(std::equal(v.data.begin(), v.data.end(), data.begin(), data.end()));
  // Cut short anywhere but between fields (after timestamp, frame_id, data: a valid shorter message).
  ASSERT_EQ(m.size(), 23u);
  for (std::size_t cut = 1; cut < m.size(); ++cut) {
    const bool between = cut == 6 || cut == 11 || cut == 18;
    try {
      (void)parse_compressed_image(std::span(m).first(cut), kWhere);
      EXPECT_TRUE(between) << "cut at " << cut << " parsed";
    } catch (const ParseError& e) {
      EXPECT_FALSE(between) << cut;
      EXPECT_EQ(e.field(), "CompressedImage") << cut;
    }
  }
  std::vector<std::uint8_t> past = {0x12, 0x7F, 1, 2};  // data says 127 bytes, 2 there
  EXPECT_THROW(parse_compressed_image(past, kWhere), ParseError);
  DecodedPicture picture;
  try {
    decode_compressed_image(parse_compressed_image(foxglove_message(1, "webp", data), kWhere), picture, kWhere);
    ADD_FAILURE() << "no ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.field(), "CompressedImage.format");
    EXPECT_THAT(e.what(), HasSubstr("unsupported format \"webp\""));
  }
}

// A FileDescriptorSet defining foxglove.CompressedImage (the fields handoff checks).
std::string compressed_image_descriptor() {
  using google::protobuf::FieldDescriptorProto;
  google::protobuf::FileDescriptorSet set;
  auto* file = set.add_file();
  file->set_name("foxglove/CompressedImage.proto");
  file->set_package("foxglove");
  auto* msg = file->add_message_type();
  msg->set_name("CompressedImage");
  const std::tuple<const char*, int, FieldDescriptorProto::Type> fields[] = {
      {"timestamp", 1, FieldDescriptorProto::TYPE_MESSAGE}, {"frame_id", 4, FieldDescriptorProto::TYPE_STRING},
      {"data", 2, FieldDescriptorProto::TYPE_BYTES}, {"format", 3, FieldDescriptorProto::TYPE_STRING}};
  for (const auto& [name, number, type] : fields) {
    auto* f = msg->add_field();
    f->set_name(name);
    f->set_number(number);
    f->set_type(type);
    if (type == FieldDescriptorProto::TYPE_MESSAGE) f->set_type_name(".google.protobuf.Timestamp");
  }
  return set.SerializeAsString();
}

TEST(FoxgloveCompressed, TopicPlaysAndIsListed) {
  TempDir dir;
  const std::uint32_t w = 16, h = 8;
  const auto gray = smooth(w, h, 1);
  const auto path = dir / "fox.mcap";
  {
    mcap::Writer wr(path);
    const std::string desc = compressed_image_descriptor();
    const auto ch = wr.add_channel(wr.add_schema("foxglove.CompressedImage", "protobuf", text_bytes(desc)), "/cam", "protobuf");
    wr.write(ch, 0, 1000, 0, foxglove_message(1, "png", encode_png(w, h, 8, 0, gray)));
    wr.write(ch, 1, 2000, 0, foxglove_message(2, "png", {0x89, 'P', 'N', 'G'}));  // corrupt
    wr.write(ch, 2, 3000, 0, foxglove_message(3, "jpeg", encode_jpeg(gray, w, h, 1)));
    wr.close();
  }
  auto src = open_recording(path);
  EXPECT_EQ(src->info().format, PixelFormat::GRAY8);
  EXPECT_EQ(src->info().width, w);
  HostFrame out(PixelFormat::GRAY8, w, h);
  std::vector<std::uint8_t> got(w * h);
  auto copy_out = [&] {
    for (std::uint32_t y = 0; y < h; ++y) std::memcpy(&got[y * w], out.luma() + y * out.luma_pitch(), w);
  };
  ASSERT_TRUE(src->read_into(out.target()));
  copy_out();
  EXPECT_EQ(got, gray);
  ASSERT_TRUE(src->read_into(out.target()));
  copy_out();
  EXPECT_EQ(got, std::vector<std::uint8_t>(w * h, 0));
  ASSERT_TRUE(src->read_into(out.target()));
  copy_out();
  EXPECT_LE(max_difference(got, gray), 12);
  ASSERT_EQ(src->warnings().size(), 1u);
  EXPECT_THAT(src->warnings()[0], HasSubstr("frame 1"));
  EXPECT_THAT(src->warnings()[0], HasSubstr("CompressedImage.data: corrupt PNG"));
  const auto topics = list_recording_topics(path);
  ASSERT_EQ(topics.size(), 1u);
  EXPECT_EQ(topics[0].kind, RecordingTopicListing::Kind::Image);
  EXPECT_EQ(topics[0].note, "png");
  EXPECT_EQ(topics[0].messages, 3u);
}

// --list decodes a topic's first picture as opening does: one that does not
// decode (ROS 2 or Foxglove message alike) makes the topic not shown, with
// opening's error, though later pictures decode.
TEST(RecordingTopics, AFirstPictureThatDoesNotDecodeIsNotShown) {
  TempDir dir;
  const auto jpeg = encode_jpeg(smooth(8, 8, 3), 8, 8, 3);
  const std::vector<std::uint8_t> garbage = {0xFF, 0xD8, 0xFF, 0xE0, 'g', 'a', 'r', 'b', 'a', 'g', 'e'};
  const auto ros = write_bag(dir, {garbage, jpeg, jpeg}, "jpeg");
  const auto fox = dir / "fox.mcap";
  {
    mcap::Writer wr(fox);
    const std::string desc = compressed_image_descriptor();
    const auto ch = wr.add_channel(wr.add_schema("foxglove.CompressedImage", "protobuf", text_bytes(desc)), "/cam", "protobuf");
    wr.write(ch, 0, 1000, 0, foxglove_message(1, "png", {0x89, 'P', 'N', 'G'}));
    wr.write(ch, 1, 2000, 0, foxglove_message(2, "jpeg", jpeg));
    wr.close();
  }
  for (const auto& [path, topic, why] : {std::tuple{ros, std::string(kTopic), "CompressedImage.data: corrupt JPEG"},
                                         std::tuple{fox, std::string("/cam"), "CompressedImage.data: corrupt PNG"}}) {
    const auto topics = list_recording_topics(path);
    const auto l = std::find_if(topics.begin(), topics.end(), [&](const auto& x) { return x.topic == topic; });
    ASSERT_NE(l, topics.end());
    EXPECT_EQ(l->kind, RecordingTopicListing::Kind::NotShown) << topic;
    EXPECT_THAT(l->note, HasSubstr("topic " + topic + ": message 0: " + why));
    EXPECT_THAT(test::message_of<ParseError>([&] { (void)open_recording(path); }), HasSubstr(why));
  }
}

}  // namespace
}  // namespace handoff::media
