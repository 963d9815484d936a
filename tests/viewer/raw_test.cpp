// Raw reader (every pixel format) and the --size / --format parsers.
#include <handoff/media/error.hpp>
#include <handoff/media/raw_reader.hpp>

#include "test_util.hpp"

#include <gmock/gmock.h>

namespace handoff::media {
namespace {

using test::message_of;
using test::TempDir;
using ::testing::HasSubstr;

std::string frames_bytes(PixelFormat fmt, std::uint32_t w, std::uint32_t h, int n) {
  std::string s;
  const std::size_t fb = packed_frame_bytes(fmt, w, h);
  for (int f = 0; f < n; ++f)
    for (std::size_t i = 0; i < fb; ++i) s += char((i * 3 + std::size_t(f) * 17) & 0xFF);
  return s;
}

TEST(Raw, FrameBytes) {
  EXPECT_EQ(packed_frame_bytes(PixelFormat::NV12, 4, 2), 8u + 4u);
  EXPECT_EQ(packed_frame_bytes(PixelFormat::NV12, 5, 3), 15u + 2u * 3u * 2u);
  EXPECT_EQ(packed_frame_bytes(PixelFormat::P010, 5, 3), 2u * (15u + 12u));
  EXPECT_EQ(packed_frame_bytes(PixelFormat::NV12, 1920, 1080), 1920u * 1080u * 3u / 2u);
  // The formats of issue 23, as ffmpeg's yuv420p, yuyv422, rgb24, ... size them.
  EXPECT_EQ(packed_frame_bytes(PixelFormat::I420, 5, 3), 15u + 2u * 3u * 2u);
  EXPECT_EQ(packed_frame_bytes(PixelFormat::YUYV, 5, 3), 6u * 2u * 3u);  // width rounded up to a pair
  EXPECT_EQ(packed_frame_bytes(PixelFormat::UYVY, 4, 3), 4u * 2u * 3u);
  EXPECT_EQ(packed_frame_bytes(PixelFormat::RGB8, 5, 3), 45u);
  EXPECT_EQ(packed_frame_bytes(PixelFormat::BGRA8, 5, 3), 60u);
  EXPECT_EQ(packed_frame_bytes(PixelFormat::GRAY8, 5, 3), 15u);
  EXPECT_EQ(packed_frame_bytes(PixelFormat::GRAY16, 5, 3), 30u);
  EXPECT_EQ(packed_frame_bytes(PixelFormat::GRAY32F, 5, 3), 60u);
}

// Every format: frame k's planes are the file's bytes from k * frame size on,
// plane after plane, each row landing at its pitch in a padded target.
TEST(Raw, ReadsEveryFormatPlaneByPlane) {
  TempDir dir;
  for (PixelFormat fmt : kPixelFormats) {
    const std::uint32_t w = 7, h = 5;
    const auto path = dir / "clip.raw";
    const std::string bytes = frames_bytes(fmt, w, h, 3);
    test::write_file(path, bytes);
    RawOptions o;
    o.format = fmt;
    o.width = w;
    o.height = h;
    auto src = open_raw(path, o);
    EXPECT_EQ(src->info().format, fmt);
    EXPECT_EQ(src->info().frame_count, 3) << to_string(fmt);
    HostFrame fr(fmt, w, h, 64);
    src->seek(2);
    ASSERT_TRUE(src->read_into(fr.target()));
    std::size_t at = 2 * packed_frame_bytes(fmt, w, h);
    for (int p = 0; p < plane_count(fmt); ++p) {
      const PlaneLayout l = plane_layout(fmt, w, h, p);
      for (std::uint32_t y = 0; y < l.height; ++y, at += l.row_bytes)
        ASSERT_EQ(std::string(reinterpret_cast<const char*>(fr.plane(p)) + y * fr.pitch(p), l.row_bytes),
                  bytes.substr(at, l.row_bytes))
            << to_string(fmt) << " plane " << p << " row " << y;
    }
    EXPECT_EQ(at, bytes.size());
  }
}

TEST(Raw, ReadsAndSeeksNv12AndP010) {
  TempDir dir;
  for (PixelFormat fmt : {PixelFormat::NV12, PixelFormat::P010}) {
    const auto path = dir / "clip.raw";
    test::write_file(path, frames_bytes(fmt, 5, 3, 4));
    RawOptions o;
    o.format = fmt;
    o.width = 5;
    o.height = 3;
    o.rate = {50, 1};
    o.colorimetry.range = ColorRange::Full;
    auto src = open_raw(path, o);
    EXPECT_EQ(src->info().frame_count, 4);
    EXPECT_EQ(src->info().format, fmt);
    EXPECT_EQ(src->info().rate, (Rational{50, 1}));
    EXPECT_EQ(src->info().colorimetry.range, ColorRange::Full);
    HostFrame fr(fmt, 5, 3, 32);
    src->seek(2);
    ASSERT_TRUE(src->read_into(fr.target()));
    const std::size_t bps = bytes_per_sample(fmt);
    for (std::size_t i = 0; i < 5 * bps; ++i) EXPECT_EQ(fr.luma()[fr.luma_pitch() + i], ((5 * bps + i) * 3 + 34) & 0xFF);
    const std::size_t chroma_start = 15 * bps;
    EXPECT_EQ(fr.chroma()[0], (chroma_start * 3 + 34) & 0xFF);
    src->seek(3);
    EXPECT_TRUE(src->read_into(fr.target()));
    EXPECT_FALSE(src->read_into(fr.target()));
    EXPECT_THROW(src->seek(5), UsageError);
  }
}

// Packed targets (pitch == row bytes) are read straight into; padded ones go
// through a scratch buffer. Both must hold every byte of the frame.
TEST(Raw, PackedAndPaddedTargetsHoldTheSameFrame) {
  TempDir dir;
  for (PixelFormat fmt : {PixelFormat::NV12, PixelFormat::P010}) {
    const std::uint32_t w = 7, h = 5;
    const auto path = dir / "clip.raw";
    test::write_file(path, frames_bytes(fmt, w, h, 3));
    RawOptions o;
    o.format = fmt;
    o.width = w;
    o.height = h;
    auto src = open_raw(path, o);
    const std::size_t bps = bytes_per_sample(fmt);
    const std::size_t luma_row = w * bps, chroma_row = 2 * chroma_width(w) * bps;
    for (std::size_t align : {std::size_t(1), std::size_t(64)}) {
      HostFrame fr(fmt, w, h, align);
      ASSERT_EQ(fr.luma_pitch() == luma_row, align == 1);
      src->seek(1);
      ASSERT_TRUE(src->read_into(fr.target()));
      // frames_bytes: byte i of frame f is (3 i + 17 f) mod 256; frame 1 here.
      auto expected = [](std::size_t i) { return std::uint8_t((i * 3 + 17) & 0xFF); };
      for (std::uint32_t y = 0; y < h; ++y)
        for (std::size_t x = 0; x < luma_row; ++x)
          ASSERT_EQ(fr.luma()[y * fr.luma_pitch() + x], expected(y * luma_row + x)) << "align " << align;
      for (std::uint32_t y = 0; y < chroma_height(h); ++y)
        for (std::size_t x = 0; x < chroma_row; ++x)
          ASSERT_EQ(fr.chroma()[y * fr.chroma_pitch() + x], expected(h * luma_row + y * chroma_row + x))
              << "align " << align;
    }
  }
}

TEST(Raw, SizeNotAWholeNumberOfFrames) {
  TempDir dir;
  const auto path = dir / "odd.nv12";
  test::write_file(path, frames_bytes(PixelFormat::NV12, 4, 4, 2) + "xyz");
  RawOptions o;
  o.width = 4;
  o.height = 4;
  const std::string m = message_of<ParseError>([&] { open_raw(path, o); });
  EXPECT_THAT(m, HasSubstr(path.string()));
  EXPECT_THAT(m, HasSubstr("file size 51 bytes is not a whole number of nv12 4x4 frames (24 bytes each)"));
}

TEST(Raw, BadOptions) {
  TempDir dir;
  const auto path = dir / "x.raw";
  test::write_file(path, "");
  RawOptions o;
  o.width = 0;
  o.height = 4;
  EXPECT_THAT(message_of<ParseError>([&] { open_raw(path, o); }), HasSubstr("width: width is 0"));
  o.width = 4;
  o.height = kMaxFrameDimension + 1;
  EXPECT_THAT(message_of<ParseError>([&] { open_raw(path, o); }), HasSubstr("height: height 32769 exceeds the maximum 32768"));
  o.height = 4;
  EXPECT_THAT(message_of<ParseError>([&] { open_raw(dir / "missing.raw", o); }), HasSubstr("missing.raw: open"));
}

// A file of 0 bytes has nothing to show: an error naming the file (handoff-view
// exits 1), not a stream of 0 frames.
TEST(Raw, EmptyFileIsAnErrorNamingIt) {
  TempDir dir;
  const auto path = dir / "empty.nv12";
  test::write_file(path, "");
  RawOptions o;
  o.width = 4;
  o.height = 4;
  const std::string m = message_of<ParseError>([&] { open_raw(path, o); });
  EXPECT_THAT(m, HasSubstr(path.string()));
  EXPECT_THAT(m, HasSubstr("size: the file is empty (0 bytes): no frames"));
  test::write_file(path, frames_bytes(PixelFormat::NV12, 4, 4, 1));
  EXPECT_EQ(open_raw(path, o)->info().frame_count, 1);
}

TEST(Raw, ParseSize) {
  std::uint32_t w = 0, h = 0;
  parse_size("1920x1080", w, h);
  EXPECT_EQ(w, 1920u);
  EXPECT_EQ(h, 1080u);
  parse_size("7X5", w, h);
  EXPECT_EQ(w, 7u);
  EXPECT_EQ(h, 5u);
  for (const char* bad : {"", "1920", "x1080", "1920x", "0x10", "10x0", "32769x10", "12ax4", "-1x4", "4x4x4"}) {
    EXPECT_THAT(message_of<ParseError>([&] { parse_size(bad, w, h); }), HasSubstr("size")) << bad;
  }
}

}  // namespace
}  // namespace handoff::media
