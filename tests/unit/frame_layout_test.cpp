// Plane layout math and host frame allocation: odd sizes, P010, pitch > width.
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>

#include "interop_testing.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

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

// --- FrameLayout ------------------------------------------------------------------

TEST(FrameLayout, PackedIsTwoBuffersOfPackedRows) {
  const FrameLayout l = FrameLayout::packed(PixelFormat::P010, 33, 17);
  EXPECT_EQ(l.planes[0], (PlanePlacement{66, 0, 0}));
  EXPECT_EQ(l.planes[1], (PlanePlacement{68, 0, 1}));
  EXPECT_EQ(l.buffer_bytes(0), 66u * 17);
  EXPECT_EQ(l.buffer_bytes(1), 68u * 9);
  EXPECT_EQ(l.span(0), 66u * 17);
  std::vector<std::byte> a(l.buffer_bytes(0)), b(l.buffer_bytes(1));
  const Frame f = l.describe(MemoryKind::Host, {a.data(), b.data()});
  EXPECT_NO_THROW(validate(f));
  EXPECT_EQ(f.luma().data, a.data());
  EXPECT_EQ(f.chroma().data, b.data());
  EXPECT_EQ(f.chroma().width, 17u);
  EXPECT_EQ(f.chroma().height, 9u);
  // Pitch 0 means the packed row.
  FrameLayout z = l;
  z.planes[0].pitch = 0;
  EXPECT_EQ(z.pitch(0), 66u);
}

TEST(FrameLayout, ContiguousPutsChromaAfterLumaAtAlignedOffsets) {
  const FrameLayout l = FrameLayout::contiguous(PixelFormat::NV12, 33, 17, 64);
  EXPECT_EQ(l.planes[0], (PlanePlacement{64, 0, 0}));
  EXPECT_EQ(l.planes[1], (PlanePlacement{64, 64 * 17, 0}));
  EXPECT_EQ(l.buffer_bytes(), 64u * 17 + 64 * 9);
  EXPECT_EQ(l.buffer_bytes(1), 0u);  // nothing in buffer 1
  EXPECT_EQ(l.span(1), 64u * 8 + 34);
  const FrameLayout odd = FrameLayout::contiguous(PixelFormat::NV12, 300, 3, 256);
  EXPECT_EQ(odd.planes[0].pitch, 512u);
  EXPECT_EQ(odd.planes[1].offset, 1536u);
  const FrameLayout shared = FrameLayout::contiguous(PixelFormat::NV12, 255, 3, 256, true);
  EXPECT_EQ(shared.planes[0].pitch, shared.planes[1].pitch);
  EXPECT_EQ(shared.planes[0].pitch, 256u);
  Frame gl = l.describe(MemoryKind::GlBuffer);
  EXPECT_EQ(gl.chroma().offset, 64u * 17);
  EXPECT_EQ(gl.chroma().data, nullptr);
  gl.gl_buffer = 7;
  EXPECT_NO_THROW(validate(gl));
  EXPECT_THROW(FrameLayout::contiguous(PixelFormat::NV12, 8, 8, 3), UsageError);
  EXPECT_THROW(FrameLayout::contiguous(PixelFormat::NV12, 8, 8, 8192), UsageError);
  // No base pointer for a host frame: validate() names the plane.
  EXPECT_THROW(validate(l.describe(MemoryKind::Host)), InvalidFrame);
}

// One largest frame dimension: every path that takes a size accepts
// kMaxFrameDimension and refuses one more with the same message.
TEST(FrameLayout, OneLargestDimensionAndOneMessageEverywhere) {
  const std::uint32_t over = kMaxFrameDimension + 1;
  const std::string width_msg = "width: " + dimension_problem("width", over);
  const std::string height_msg = "height: " + dimension_problem("height", over);
  EXPECT_EQ(width_msg, "width: width 32769 exceeds the maximum 32768");
  auto refusal = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const InvalidFrame& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(refusal([&] { validate_dimensions(over, 2); }), width_msg);
  EXPECT_EQ(refusal([&] { validate_dimensions(2, over); }), height_msg);
  EXPECT_EQ(refusal([&] { plane_layout(PixelFormat::NV12, over, 2, 0); }), width_msg);
  EXPECT_EQ(refusal([&] { FrameLayout::contiguous(PixelFormat::P010, over, 2); }), width_msg);
  EXPECT_EQ(refusal([&] { FrameLayout::packed(PixelFormat::NV12, 2, over).describe(MemoryKind::Vulkan); }), height_msg);
  EXPECT_EQ(refusal([&] { allocate_host_frame(PixelFormat::NV12, over, 2); }), width_msg);
  Frame big = allocate_host_frame(PixelFormat::NV12, kMaxFrameDimension, 2);
  EXPECT_NO_THROW(validate(big));
  big.width = over;
  EXPECT_EQ(refusal([&] { validate(big); }), width_msg);
  EXPECT_EQ(dimension_problem("width", 0), "width is 0");
  EXPECT_EQ(dimension_problem("width", kMaxFrameDimension), "");
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
