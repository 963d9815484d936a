// sensor_msgs/msg/Image (CDR) -> frames (issue 24): every encoding handoff
// shows, rows padded past the packed row (step), big-endian 16-bit and float
// samples, and images whose encoding does not fit step / data.
#include <handoff/media/ros_image.hpp>

#include "cdr_test_util.hpp"

#include <gmock/gmock.h>

#include <cstring>

namespace handoff::media::ros {
namespace {

using ::testing::HasSubstr;

const MessagePlace kWhere{"bag.mcap", [] { return std::string("frame 2"); }};

struct Case {
  const char* encoding;
  PixelFormat format;
  std::uint32_t width, height;
};

// Rows of `row_bytes` bytes (a pattern per row and byte), each padded with 0xEE to `step`.
std::vector<std::uint8_t> padded_rows(std::size_t rows, std::size_t row_bytes, std::size_t step) {
  std::vector<std::uint8_t> d(rows * step, 0xEE);
  for (std::size_t y = 0; y < rows; ++y)
    for (std::size_t x = 0; x < row_bytes; ++x) d[y * step + x] = std::uint8_t(y * 31 + x * 7 + 1);
  return d;
}

class RosImageFormats : public ::testing::TestWithParam<Case> {};

TEST_P(RosImageFormats, PaddedRowsCopyIntoTheFrame) {
  const Case c = GetParam();
  ASSERT_EQ(image_format(c.encoding), c.format);
  const PlaneLayout luma = plane_layout(c.format, c.width, c.height, 0);
  const bool nv12 = c.format == PixelFormat::NV12;
  const std::size_t step = luma.row_bytes + 5;
  const std::size_t rows = c.height + (nv12 ? (c.height + 1) / 2 : 0);
  const auto data = padded_rows(rows, luma.row_bytes, step);
  for (bool be : {false, true}) {
    const auto bytes = test::cdr_image(be, 3, 4, "cam", c.height, c.width, c.encoding, 0, std::uint32_t(step), data);
    const auto m = CdrMessage::decode(MessageDefinition::builtin("sensor_msgs/msg/Image"), bytes);
    const ImageView v = image_view(m);
    EXPECT_EQ(v.image.timestamp_ns, 3'000'000'004u);
    HostFrame frame(c.format, c.width, c.height);
    copy_image(v, c.format, c.width, c.height, frame.target(), kWhere);
    for (std::uint32_t y = 0; y < c.height; ++y) {
      ASSERT_EQ(std::memcmp(frame.luma() + y * frame.luma_pitch(), data.data() + y * step, luma.row_bytes), 0) << y;
    }
    if (nv12) {
      const std::size_t chroma_row = plane_layout(c.format, c.width, c.height, 1).row_bytes;
      for (std::uint32_t y = 0; y < (c.height + 1) / 2; ++y) {
        ASSERT_EQ(std::memcmp(frame.chroma() + y * frame.chroma_pitch(), data.data() + (c.height + y) * step, chroma_row), 0);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Encodings, RosImageFormats,
    ::testing::Values(Case{"rgb8", PixelFormat::RGB8, 5, 3}, Case{"bgr8", PixelFormat::BGR8, 4, 2},
                      Case{"rgba8", PixelFormat::RGBA8, 3, 3}, Case{"bgra8", PixelFormat::BGRA8, 2, 2},
                      Case{"mono8", PixelFormat::GRAY8, 7, 3}, Case{"8UC1", PixelFormat::GRAY8, 3, 1},
                      Case{"mono16", PixelFormat::GRAY16, 5, 2}, Case{"16UC1", PixelFormat::GRAY16, 3, 3},
                      Case{"32FC1", PixelFormat::GRAY32F, 3, 2}, Case{"yuv422", PixelFormat::UYVY, 4, 2},
                      Case{"uyvy", PixelFormat::UYVY, 6, 1}, Case{"yuv422_yuy2", PixelFormat::YUYV, 4, 3},
                      Case{"yuyv", PixelFormat::YUYV, 2, 2}, Case{"nv12", PixelFormat::NV12, 6, 4}),
    [](const auto& i) { return std::string(i.param.encoding); });

TEST(RosImage, BigEndianSamplesAreSwapped) {
  // 16UC1 0x1234 and 32FC1 1.5f stored big-endian (is_bigendian = 1) read as those values.
  const std::vector<std::uint8_t> be16{0x12, 0x34, 0xAB, 0xCD, 0, 0};  // 2 pixels + 2 bytes of padding
  auto m16 = test::cdr_image(false, 0, 0, "", 1, 2, "16UC1", 1, 6, be16);
  const auto d = MessageDefinition::builtin("sensor_msgs/Image");
  HostFrame f16(PixelFormat::GRAY16, 2, 1);
  copy_image(image_view(CdrMessage::decode(d, m16)), PixelFormat::GRAY16, 2, 1, f16.target(), kWhere);
  std::uint16_t px[2];
  std::memcpy(px, f16.luma(), 4);
  EXPECT_EQ(px[0], 0x1234);
  EXPECT_EQ(px[1], 0xABCD);
  // The same bytes marked little-endian are taken as they are.
  auto le16 = test::cdr_image(true, 0, 0, "", 1, 2, "mono16", 0, 4, {0x34, 0x12, 0xCD, 0xAB});
  copy_image(image_view(CdrMessage::decode(d, le16)), PixelFormat::GRAY16, 2, 1, f16.target(), kWhere);
  std::memcpy(px, f16.luma(), 4);
  EXPECT_EQ(px[0], 0x1234);
  EXPECT_EQ(px[1], 0xABCD);
  std::uint8_t f[4];
  const float value = 1.5f;
  std::memcpy(f, &value, 4);
  auto m32 = test::cdr_image(false, 0, 0, "", 1, 1, "32FC1", 1, 4, {f[3], f[2], f[1], f[0]});
  HostFrame f32(PixelFormat::GRAY32F, 1, 1);
  copy_image(image_view(CdrMessage::decode(d, m32)), PixelFormat::GRAY32F, 1, 1, f32.target(), kWhere);
  float got = 0;
  std::memcpy(&got, f32.luma(), 4);
  EXPECT_EQ(got, 1.5f);
}

std::string error_of(const std::vector<std::uint8_t>& bytes, PixelFormat format, std::uint32_t w, std::uint32_t h) {
  try {
    const auto m = CdrMessage::decode(MessageDefinition::builtin("sensor_msgs/Image"), bytes);
    HostFrame frame(format, w, h);
    copy_image(image_view(m), format, w, h, frame.target(), kWhere);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

TEST(RosImage, EncodingThatDoesNotFitIsAnErrorNamingTheField) {
  EXPECT_THAT(error_of(test::cdr_image(false, 0, 0, "", 2, 4, "rgb8", 0, 11, std::vector<std::uint8_t>(24)),
                       PixelFormat::RGB8, 4, 2),
              HasSubstr("bag.mcap: frame 2: Image.step: 11 is below the 12-byte rows of a rgb8 image 4 wide"));
  EXPECT_THAT(error_of(test::cdr_image(false, 0, 0, "", 2, 4, "rgb8", 0, 12, std::vector<std::uint8_t>(23)),
                       PixelFormat::RGB8, 4, 2),
              HasSubstr("Image.data: 23 bytes, shorter than step * height = 12 * 2 = 24"));
  EXPECT_THAT(error_of(test::cdr_image(false, 0, 0, "", 4, 4, "nv12", 0, 4, std::vector<std::uint8_t>(16)),
                       PixelFormat::NV12, 4, 4),
              HasSubstr("Image.data: 16 bytes, shorter than step * (height + ceil(height/2)) = 4 * 6 = 24"));
  EXPECT_THAT(error_of(test::cdr_image(false, 0, 0, "", 1, 1, "bayer_rggb8", 0, 1, {0}), PixelFormat::GRAY8, 1, 1),
              HasSubstr("Image.encoding: unsupported encoding \"bayer_rggb8\" (supported: rgb8, bgr8"));
  EXPECT_THAT(error_of(test::cdr_image(false, 0, 0, "", 1, 1, "mono8", 0, 1, {0}), PixelFormat::RGB8, 1, 1),
              HasSubstr("Image.encoding: \"mono8\", but the stream is rgb8"));
  EXPECT_THAT(error_of(test::cdr_image(false, 0, 0, "", 1, 2, "mono8", 0, 2, {0, 0}), PixelFormat::GRAY8, 1, 1),
              HasSubstr("Image.width: 2x1, but the stream is 1x1"));
}

}  // namespace
}  // namespace handoff::media::ros
