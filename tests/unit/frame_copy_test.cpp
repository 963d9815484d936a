// copy_frame between host frames (the CUDA pairs are in tests/fake_cuda):
// every sample arrives whatever the two pitches, and what cannot be copied
// is refused naming the field.
#include <handoff/frame_copy.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace handoff {
namespace {

using ::testing::HasSubstr;

// The bytes of each plane's packed rows (what a copy must carry; padding excluded).
std::vector<std::uint8_t> packed_bytes(const Frame& f) {
  std::vector<std::uint8_t> out;
  for (int p = 0; p < plane_count(f.format); ++p) {
    const PlaneLayout l = plane_layout(f.format, f.width, f.height, p);
    const auto* base = static_cast<const std::uint8_t*>(f.planes[std::size_t(p)].data);
    for (std::uint32_t y = 0; y < l.height; ++y) {
      const std::uint8_t* row = base + y * f.planes[std::size_t(p)].pitch;
      out.insert(out.end(), row, row + l.row_bytes);
    }
  }
  return out;
}

struct Shape {
  PixelFormat format;
  std::uint32_t width, height;
  std::size_t src_alignment, dst_alignment;
};

class HostCopy : public ::testing::TestWithParam<Shape> {};

TEST_P(HostCopy, EverySampleArrivesAndThePaddingIsLeftAlone) {
  const Shape s = GetParam();
  HostFrameOptions so, dop;
  so.alignment = s.src_alignment;
  dop.alignment = s.dst_alignment;
  const Frame src = allocate_host_frame(s.format, s.width, s.height, so);
  fill_test_pattern(src, 7);
  const Frame dst = allocate_host_frame(s.format, s.width, s.height, dop);
  // Mark every byte of the destination, padding included, to see what the copy touched.
  const Plane& last = dst.planes[std::size_t(plane_count(s.format) - 1)];
  const std::size_t dst_bytes = last.pitch * last.height + (static_cast<std::uint8_t*>(last.data) -
                                                            static_cast<std::uint8_t*>(dst.planes[0].data));
  std::memset(dst.planes[0].data, 0xA5, dst_bytes);
  copy_frame(src, dst);
  EXPECT_EQ(packed_bytes(dst), packed_bytes(src));
  for (int p = 0; p < plane_count(s.format); ++p) {
    const PlaneLayout l = plane_layout(s.format, s.width, s.height, p);
    const auto* base = static_cast<const std::uint8_t*>(dst.planes[std::size_t(p)].data);
    for (std::uint32_t y = 0; y < l.height; ++y)
      for (std::size_t x = l.row_bytes; x < dst.planes[std::size_t(p)].pitch; ++x)
        ASSERT_EQ(base[y * dst.planes[std::size_t(p)].pitch + x], 0xA5) << "plane " << p << " row " << y << " padding";
  }
}

INSTANTIATE_TEST_SUITE_P(Pitches, HostCopy,
                         ::testing::Values(Shape{PixelFormat::NV12, 64, 48, 64, 64},     // same pitch, no padding: one memcpy
                                           Shape{PixelFormat::NV12, 33, 17, 1, 256},     // packed to pitched
                                           Shape{PixelFormat::NV12, 33, 17, 512, 1},     // pitched to packed
                                           Shape{PixelFormat::P010, 35, 9, 2, 128},      // odd sizes, 2-byte samples
                                           Shape{PixelFormat::P010, 1, 1, 4096, 2},
                                           // every other format: three planes, one packed plane of 2 to 4 samples
                                           // per pixel, 2- and 4-byte grey, odd sizes
                                           Shape{PixelFormat::I420, 33, 17, 1, 64},
                                           Shape{PixelFormat::YUYV, 33, 5, 64, 1},
                                           Shape{PixelFormat::UYVY, 6, 4, 2, 2},
                                           Shape{PixelFormat::RGB8, 31, 7, 1, 32},
                                           Shape{PixelFormat::BGR8, 31, 7, 64, 1},
                                           Shape{PixelFormat::RGBA8, 5, 3, 4, 256},
                                           Shape{PixelFormat::BGRA8, 5, 3, 256, 4},
                                           Shape{PixelFormat::GRAY8, 17, 3, 1, 16},
                                           Shape{PixelFormat::GRAY16, 17, 3, 2, 64},
                                           Shape{PixelFormat::GRAY32F, 17, 3, 4, 8}));

TEST(FrameCopy, MismatchesAreRefusedNamingTheField) {
  const Frame a = allocate_host_frame(PixelFormat::NV12, 64, 48);
  auto field_of = [&](const Frame& src, const Frame& dst) -> std::string {
    try {
      copy_frame(src, dst);
    } catch (const InvalidFrame& e) {
      return e.field();
    }
    return "(accepted)";
  };
  EXPECT_EQ(field_of(a, allocate_host_frame(PixelFormat::P010, 64, 48)), "dst.format");
  EXPECT_EQ(field_of(a, allocate_host_frame(PixelFormat::NV12, 66, 48)), "dst.width");
  EXPECT_EQ(field_of(a, allocate_host_frame(PixelFormat::NV12, 64, 46)), "dst.height");
  Frame short_pitch = a;
  short_pitch.planes[1].pitch = 8;
  EXPECT_EQ(field_of(short_pitch, a), "src.planes[1] (chroma).pitch");
  EXPECT_EQ(field_of(a, short_pitch), "dst.planes[1] (chroma).pitch");
  try {
    copy_frame(a, short_pitch);
  } catch (const InvalidFrame& e) {
    EXPECT_THAT(e.what(), ::testing::StartsWith("dst.planes[1] (chroma).pitch: "));
    EXPECT_THAT(std::string(e.what()).substr(8), ::testing::Not(HasSubstr("planes[1] (chroma).pitch")))
        << "the field named once";
  }
  Frame null = a;
  null.planes[0].data = nullptr;
  EXPECT_THAT(field_of(a, null), ::testing::StartsWith("dst.planes[0]"));
  try {
    copy_frame(a, allocate_host_frame(PixelFormat::NV12, 66, 48));
    FAIL() << "accepted";
  } catch (const InvalidFrame& e) {
    EXPECT_THAT(e.what(), HasSubstr("66x48, the source's is 64x48"));
  }
}

TEST(FrameCopy, MemoryAddressedByOffsetIsRefusedSayingToMapIt) {
  const Frame a = allocate_host_frame(PixelFormat::NV12, 64, 48);
  Frame gl = a;
  gl.memory = MemoryKind::GlBuffer;
  gl.gl_buffer = 3;
  try {
    copy_frame(gl, a);
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("src.memory is a GL buffer"));
    EXPECT_THAT(e.what(), HasSubstr("map it"));
  }
  Frame vk = a;
  vk.memory = MemoryKind::Vulkan;
  EXPECT_THROW(copy_frame(a, vk), UsageError);
}

}  // namespace
}  // namespace handoff
