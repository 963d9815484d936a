// Every pixel format's planes (frame.hpp's table): shapes at odd sizes,
// names, the one-buffer layout, host frames and their test pattern, and what
// validate() and require_format() say about frames that do not fit.
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace handoff {
namespace {

using ::testing::HasSubstr;

struct Expected {
  PixelFormat format;
  int planes;
  // Per plane, for a 33 x 17 frame: elements per row, rows, samples per element.
  std::uint32_t shape[3][3];
  std::size_t sample_bytes;
};

// Written from the format list in frame.hpp, not from the code under test.
const Expected kTable[] = {
    {PixelFormat::NV12, 2, {{33, 17, 1}, {17, 9, 2}}, 1},
    {PixelFormat::P010, 2, {{33, 17, 1}, {17, 9, 2}}, 2},
    {PixelFormat::I420, 3, {{33, 17, 1}, {17, 9, 1}, {17, 9, 1}}, 1},
    {PixelFormat::YUYV, 1, {{34, 17, 2}}, 1},
    {PixelFormat::UYVY, 1, {{34, 17, 2}}, 1},
    {PixelFormat::RGB8, 1, {{33, 17, 3}}, 1},
    {PixelFormat::BGR8, 1, {{33, 17, 3}}, 1},
    {PixelFormat::RGBA8, 1, {{33, 17, 4}}, 1},
    {PixelFormat::BGRA8, 1, {{33, 17, 4}}, 1},
    {PixelFormat::GRAY8, 1, {{33, 17, 1}}, 1},
    {PixelFormat::GRAY16, 1, {{33, 17, 1}}, 2},
    {PixelFormat::GRAY32F, 1, {{33, 17, 1}}, 4},
};

TEST(FrameFormats, EveryFormatsPlanesHaveTheShapeTheFormatListSays) {
  ASSERT_EQ(std::size(kTable), std::size(kPixelFormats));
  for (const Expected& e : kTable) {
    SCOPED_TRACE(std::string(to_string(e.format)));
    EXPECT_EQ(plane_count(e.format), e.planes);
    EXPECT_EQ(bytes_per_sample(e.format), e.sample_bytes);
    for (int p = 0; p < e.planes; ++p) {
      const PlaneLayout l = plane_layout(e.format, 33, 17, p);
      EXPECT_EQ(l.width, e.shape[p][0]) << "plane " << p;
      EXPECT_EQ(l.height, e.shape[p][1]) << "plane " << p;
      EXPECT_EQ(l.components, e.shape[p][2]) << "plane " << p;
      EXPECT_EQ(l.sample_bytes, e.sample_bytes);
      EXPECT_EQ(l.row_bytes, std::size_t(e.shape[p][0]) * e.shape[p][2] * e.sample_bytes);
    }
    // One plane past the format's last is refused, naming the planes there are.
    try {
      plane_layout(e.format, 33, 17, e.planes);
      ADD_FAILURE() << "plane " << e.planes << " accepted";
    } catch (const InvalidFrame& x) {
      EXPECT_EQ(x.field(), "plane");
      EXPECT_THAT(x.what(), HasSubstr("plane index " + std::to_string(e.planes) + " of a " +
                                      std::string(to_string(e.format)) + " frame is not 0 ("));
    }
  }
}

TEST(FrameFormats, FamiliesAndPlaneNames) {
  int yuv = 0, rgb = 0, gray = 0;
  for (PixelFormat f : kPixelFormats) {
    EXPECT_EQ(int(is_yuv(f)) + int(is_rgb(f)) + int(is_gray(f)), 1) << to_string(f);
    yuv += is_yuv(f);
    rgb += is_rgb(f);
    gray += is_gray(f);
  }
  EXPECT_EQ(yuv, 5);
  EXPECT_EQ(rgb, 4);
  EXPECT_EQ(gray, 3);
  EXPECT_TRUE(is_float(PixelFormat::GRAY32F));
  EXPECT_FALSE(is_float(PixelFormat::GRAY16));
  EXPECT_EQ(plane_name(PixelFormat::NV12, 1), "chroma");
  EXPECT_EQ(plane_name(PixelFormat::I420, 0), "luma");
  EXPECT_EQ(plane_name(PixelFormat::I420, 2), "v");
  EXPECT_EQ(plane_name(PixelFormat::RGB8, 0), "pixels");
  EXPECT_EQ(plane_name(PixelFormat::RGB8, 1), "plane?");
}

TEST(FrameFormats, OneBufferLayoutPutsEachPlaneAfterTheLastAtAlignedOffsets) {
  const FrameLayout l = FrameLayout::contiguous(PixelFormat::I420, 33, 17, 64);
  EXPECT_EQ(l.planes[0], (PlanePlacement{64, 0, 0}));
  EXPECT_EQ(l.planes[1], (PlanePlacement{64, 64 * 17, 0}));           // U: 17 samples in a 64-byte pitch
  EXPECT_EQ(l.planes[2], (PlanePlacement{64, 64 * 17 + 64 * 9, 0}));  // V right after U's 9 rows
  EXPECT_EQ(l.buffer_bytes(), 64u * (17 + 9 + 9));
  const FrameLayout rgb = FrameLayout::contiguous(PixelFormat::RGB8, 33, 17, 64);
  EXPECT_EQ(rgb.planes[0], (PlanePlacement{128, 0, 0}));  // 99 bytes rounded up
  EXPECT_EQ(rgb.buffer_bytes(), 128u * 17);
  const FrameLayout packed = FrameLayout::packed(PixelFormat::I420, 33, 17);
  EXPECT_EQ(packed.planes[2], (PlanePlacement{17, 0, 2}));
  EXPECT_EQ(packed.buffer_bytes(2), 17u * 9);
  std::vector<std::byte> y(packed.buffer_bytes(0)), u(packed.buffer_bytes(1)), v(packed.buffer_bytes(2));
  const Frame f = packed.describe(MemoryKind::Host, {y.data(), u.data(), v.data()});
  EXPECT_NO_THROW(validate(f));
  EXPECT_EQ(f.planes[2].data, v.data());
}

TEST(FrameFormats, EveryFormatAllocatesAValidHostFrame) {
  for (PixelFormat format : kPixelFormats) {
    SCOPED_TRACE(std::string(to_string(format)));
    const Frame f = allocate_host_frame(format, 7, 5, {.alignment = 16});
    EXPECT_NO_THROW(validate(f));
    for (int p = 0; p < plane_count(format); ++p) EXPECT_NE(f.planes[std::size_t(p)].data, nullptr);
    for (int p = plane_count(format); p < int(kMaxPlanes); ++p) EXPECT_EQ(f.planes[std::size_t(p)].data, nullptr);
    EXPECT_FALSE(is_stacked(f) && plane_count(format) != 2);
  }
}

template <typename T>
T sample(const Frame& f, int plane, std::uint32_t x, std::uint32_t y, std::uint32_t component) {
  const Plane& p = f.planes[std::size_t(plane)];
  T v;
  std::memcpy(&v, static_cast<const std::byte*>(p.data) + y * p.pitch + (x * p.components + component) * sizeof(T),
              sizeof v);
  return v;
}

TEST(FrameFormats, TheTestPatternFollowsItsFormulaInEveryFormat) {
  const Frame rgba = allocate_host_frame(PixelFormat::RGBA8, 9, 4);
  fill_test_pattern(rgba, 3);
  EXPECT_EQ(sample<std::uint8_t>(rgba, 0, 2, 1, 0), (7 * 2 + 13 * 1 + 3) % 256);
  EXPECT_EQ(sample<std::uint8_t>(rgba, 0, 2, 1, 1), (5 * 2 + 3 * 1 + 3 + 64) % 256);
  EXPECT_EQ(sample<std::uint8_t>(rgba, 0, 2, 1, 2), (11 * 2 + 2 * 1 + 3 + 128) % 256);
  EXPECT_EQ(sample<std::uint8_t>(rgba, 0, 8, 3, 3), (3 * 8 + 5 * 3 + 3 + 192) % 256);
  // i420's U and V carry nv12's chroma values.
  const Frame i420 = allocate_host_frame(PixelFormat::I420, 9, 4);
  const Frame nv12 = allocate_host_frame(PixelFormat::NV12, 9, 4);
  fill_test_pattern(i420, 5);
  fill_test_pattern(nv12, 5);
  for (std::uint32_t y = 0; y < 2; ++y)
    for (std::uint32_t x = 0; x < 5; ++x) {
      EXPECT_EQ(sample<std::uint8_t>(i420, 1, x, y, 0), sample<std::uint8_t>(nv12, 1, x, y, 0));
      EXPECT_EQ(sample<std::uint8_t>(i420, 2, x, y, 0), sample<std::uint8_t>(nv12, 1, x, y, 1));
    }
  // gray16: all 16 bits, little-endian in memory.
  const Frame g16 = allocate_host_frame(PixelFormat::GRAY16, 9, 4);
  fill_test_pattern(g16, 60000);
  const auto* row = static_cast<const std::uint8_t*>(g16.planes[0].data) + 2 * g16.planes[0].pitch;
  const std::uint32_t want = (7 * 4 + 13 * 2 + 60000) % 65536;
  EXPECT_EQ(row[8], want & 0xff);
  EXPECT_EQ(row[9], want >> 8);
  // gray32f: quarter steps.
  const Frame g32 = allocate_host_frame(PixelFormat::GRAY32F, 9, 4);
  fill_test_pattern(g32, 1);
  EXPECT_FLOAT_EQ(sample<float>(g32, 0, 3, 2, 0), float((7 * 3 + 13 * 2 + 1) % 4096) * 0.25f);
}

TEST(FrameFormats, ValidateNamesThePlaneOfEachFormat) {
  Frame rgb = allocate_host_frame(PixelFormat::RGB8, 8, 4);
  rgb.planes[0].components = 4;
  try {
    validate(rgb);
    ADD_FAILURE() << "an rgb8 plane of 4 components accepted";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "planes[0] (pixels).shape");
    EXPECT_THAT(e.what(), HasSubstr("expected (4, 8, 3)"));
  }
  Frame i420 = allocate_host_frame(PixelFormat::I420, 8, 4);
  i420.planes[2].data = nullptr;
  try {
    validate(i420);
    ADD_FAILURE() << "an i420 frame without V accepted";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "planes[2] (v).data");
  }
  Frame g32 = allocate_host_frame(PixelFormat::GRAY32F, 8, 4);
  g32.planes[0].data = static_cast<std::byte*>(g32.planes[0].data) + 2;
  try {
    validate(g32);
    ADD_FAILURE() << "a gray32f plane at a 2-byte address accepted";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "planes[0] (pixels).data");
    EXPECT_THAT(e.what(), HasSubstr("4-byte samples"));
  }
  Frame yuyv = allocate_host_frame(PixelFormat::YUYV, 8, 4);
  yuyv.planes[0].pitch = 15;  // below the 16-byte row
  EXPECT_THROW(validate(yuyv), InvalidFrame);
  Frame unknown = allocate_host_frame(PixelFormat::NV12, 8, 4);
  unknown.format = static_cast<PixelFormat>(12);
  try {
    validate(unknown);
    ADD_FAILURE() << "format value 12 accepted";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "format");
    EXPECT_THAT(e.what(), HasSubstr("format value 12 is not one of nv12, p010, i420"));
  }
}

TEST(FrameFormats, RequireFormatNamesWhoTakesWhatAndWhatCame) {
  EXPECT_NO_THROW(require_format(PixelFormat::P010, {PixelFormat::NV12, PixelFormat::P010}, "x"));
  try {
    require_format(PixelFormat::RGB8, {PixelFormat::NV12, PixelFormat::P010, PixelFormat::I420}, "the scene");
    ADD_FAILURE() << "rgb8 accepted";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "format");
    EXPECT_EQ(std::string(e.what()), "format: the scene takes nv12, p010 or i420 frames, not rgb8");
  }
  EXPECT_THROW(require_format(static_cast<PixelFormat>(40), {PixelFormat::NV12}, "y"), InvalidFrame);
}

}  // namespace
}  // namespace handoff
