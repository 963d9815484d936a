// Plane layout math and host frame allocation: odd sizes, P010, pitch > width.
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/testing.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace handoff {
namespace {

TEST(FrameLayout, OddSizeNv12) {
  const PlaneLayout y = plane_layout(PixelFormat::NV12, 33, 17, 0);
  EXPECT_EQ(y.width, 33u);
  EXPECT_EQ(y.height, 17u);
  EXPECT_EQ(y.components, 1u);
  EXPECT_EQ(y.sample_bytes, 1u);
  EXPECT_EQ(y.row_bytes, 33u);
  const PlaneLayout c = plane_layout(PixelFormat::NV12, 33, 17, 1);
  EXPECT_EQ(c.width, 17u);   // ceil(33 / 2)
  EXPECT_EQ(c.height, 9u);   // ceil(17 / 2)
  EXPECT_EQ(c.components, 2u);
  EXPECT_EQ(c.row_bytes, 34u);  // one more than the luma row for an odd width
}

TEST(FrameLayout, OddSizeP010) {
  const PlaneLayout y = plane_layout(PixelFormat::P010, 33, 17, 0);
  EXPECT_EQ(y.sample_bytes, 2u);
  EXPECT_EQ(y.row_bytes, 66u);
  const PlaneLayout c = plane_layout(PixelFormat::P010, 33, 17, 1);
  EXPECT_EQ(c.width, 17u);
  EXPECT_EQ(c.height, 9u);
  EXPECT_EQ(c.row_bytes, 68u);
}

TEST(FrameLayout, OnePixel) {
  const PlaneLayout c = plane_layout(PixelFormat::NV12, 1, 1, 1);
  EXPECT_EQ(c.width, 1u);
  EXPECT_EQ(c.height, 1u);
  EXPECT_EQ(c.row_bytes, 2u);
}

TEST(FrameLayout, SpanWithPitchAboveRow) {
  EXPECT_EQ(plane_span_bytes(64, 17, 33), 64u * 16 + 33);
  EXPECT_EQ(plane_span_bytes(64, 1, 33), 33u);
  EXPECT_THROW(plane_span_bytes(SIZE_MAX / 2, 3, 10), InvalidFrame);
}

TEST(FrameLayout, BadPlaneIndex) {
  EXPECT_THROW(plane_layout(PixelFormat::NV12, 2, 2, 2), InvalidFrame);
  EXPECT_THROW(plane_layout(PixelFormat::NV12, 0, 2, 0), InvalidFrame);
}

TEST(HostFrame, PitchedOddNv12) {
  const Frame f = allocate_host_frame(PixelFormat::NV12, 33, 17, {.alignment = 64});
  EXPECT_EQ(f.memory, MemoryKind::Host);
  EXPECT_EQ(f.planes[0].pitch, 64u);
  EXPECT_EQ(f.planes[1].pitch, 64u);
  EXPECT_EQ(f.planes[0].width, 33u);
  EXPECT_EQ(f.planes[1].width, 17u);
  EXPECT_EQ(f.planes[1].height, 9u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f.planes[0].data) % 64, 0u);
  EXPECT_EQ(static_cast<const char*>(f.planes[1].data) - static_cast<const char*>(f.planes[0].data), 64 * 17);
  EXPECT_FALSE(is_stacked(f));  // odd width: a chroma row is longer than a luma row
  EXPECT_NO_THROW(validate(f));
}

TEST(HostFrame, PitchedP010IsStackedForEvenWidth) {
  const Frame f = allocate_host_frame(PixelFormat::P010, 100, 31, {.alignment = 256});
  EXPECT_EQ(f.planes[0].pitch, 256u);  // 200-byte rows rounded up
  EXPECT_TRUE(is_stacked(f));
  EXPECT_EQ(f.planes[1].height, 16u);
}

TEST(HostFrame, BadAlignment) {
  EXPECT_THROW(allocate_host_frame(PixelFormat::NV12, 4, 4, {.alignment = 3}), UsageError);
  EXPECT_THROW(allocate_host_frame(PixelFormat::P010, 4, 4, {.alignment = 1}), UsageError);
  EXPECT_THROW(allocate_host_frame(PixelFormat::NV12, 4, 4, {.alignment = 8192}), UsageError);
}

TEST(HostFrame, LiveCountFollowsOwner) {
  const std::size_t before = testing::live_frames();
  {
    Frame f = allocate_host_frame(PixelFormat::NV12, 8, 8);
    EXPECT_EQ(testing::live_frames(), before + 1);
    Frame copy = f;
    f = Frame{};
    EXPECT_EQ(testing::live_frames(), before + 1);  // the copy shares the storage
  }
  EXPECT_EQ(testing::live_frames(), before);
}

TEST(HostFrame, TestPatternP010LittleEndianTopBits) {
  const Frame f = allocate_host_frame(PixelFormat::P010, 5, 3, {.alignment = 16});
  fill_test_pattern(f, 1000);
  const auto* y = static_cast<const std::uint8_t*>(f.planes[0].data);
  // luma(x=2, y=1) = (14 + 13 + 1000) mod 1024 = 3, stored as 3 << 6 = 0x00c0.
  const std::uint8_t* px = y + 1 * f.planes[0].pitch + 2 * 2;
  EXPECT_EQ(px[0], 0xc0);
  EXPECT_EQ(px[1], 0x00);
  const auto* c = static_cast<const std::uint8_t*>(f.planes[1].data);
  // V(x=1, y=1) = (11 + 2 + 1000 + 128) mod 1024 = 117 -> 117 << 6 = 0x1d40.
  const std::uint8_t* v = c + 1 * f.planes[1].pitch + (2 * 1 + 1) * 2;
  EXPECT_EQ(v[0], 0x40);
  EXPECT_EQ(v[1], 0x1d);
}

}  // namespace
}  // namespace handoff
