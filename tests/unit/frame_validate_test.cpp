// Every validation failure, with the field it names and the values it quotes.
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace handoff {
namespace {

using ::testing::HasSubstr;

// Runs validate(f) and returns the failure (fails the test when there is none).
InvalidFrame failure(const Frame& f) {
  try {
    validate(f);
  } catch (const InvalidFrame& e) {
    return e;
  }
  ADD_FAILURE() << "validate() accepted the frame";
  return InvalidFrame("none", "none");
}

class FrameValidate : public ::testing::Test {
 protected:
  // 33 x 17 NV12 with pitch 48, planes in a local buffer.
  void SetUp() override {
    f.format = PixelFormat::NV12;
    f.width = 33;
    f.height = 17;
    f.planes[0] = Plane{buf, 0, 48, 33, 17, 1};
    f.planes[1] = Plane{buf + 48 * 17, 0, 48, 17, 9, 2};
  }
  alignas(64) unsigned char buf[48 * 26]{};
  Frame f;
};

TEST_F(FrameValidate, GoodFrameAccepted) { EXPECT_NO_THROW(validate(f)); }

TEST_F(FrameValidate, ZeroWidth) {
  f.width = 0;
  auto e = failure(f);
  EXPECT_EQ(e.field(), "width");
  EXPECT_THAT(e.what(), HasSubstr("width is 0"));
}

TEST_F(FrameValidate, ZeroHeight) {
  f.height = 0;
  EXPECT_EQ(failure(f).field(), "height");
}

TEST_F(FrameValidate, OverLargeDimension) {
  f.width = 100000;
  auto e = failure(f);
  EXPECT_EQ(e.field(), "width");
  EXPECT_THAT(e.what(), HasSubstr("100000 exceeds the maximum 32768"));
}

TEST_F(FrameValidate, PitchBelowPackedRow) {
  f.planes[1].pitch = 32;
  auto e = failure(f);
  EXPECT_EQ(e.field(), "planes[1] (chroma).pitch");
  EXPECT_THAT(e.what(), HasSubstr("pitch 32 is below the packed row of 34 bytes"));
}

TEST_F(FrameValidate, PitchNotWholeSamples) {
  f.format = PixelFormat::P010;
  f.planes[0].pitch = 67;  // >= 66-byte row, but not a whole number of 2-byte samples
  f.planes[1].pitch = 68;
  auto e = failure(f);
  EXPECT_EQ(e.field(), "planes[0] (luma).pitch");
  EXPECT_THAT(e.what(), HasSubstr("pitch 67 is not a whole number of 2-byte samples"));
}

TEST_F(FrameValidate, NullPointer) {
  f.planes[0].data = nullptr;
  auto e = failure(f);
  EXPECT_EQ(e.field(), "planes[0] (luma).data");
  EXPECT_THAT(e.what(), HasSubstr("null"));
}

TEST_F(FrameValidate, MisalignedP010Pointer) {
  f.format = PixelFormat::P010;
  f.planes[0].pitch = f.planes[1].pitch = 68;
  f.planes[0].data = buf + 1;
  auto e = failure(f);
  EXPECT_EQ(e.field(), "planes[0] (luma).data");
  EXPECT_THAT(e.what(), HasSubstr("not aligned to 2-byte samples"));
}

TEST_F(FrameValidate, PlaneShapeDoesNotFitFormat) {
  f.planes[1].width = 16;  // floor instead of ceil
  auto e = failure(f);
  EXPECT_EQ(e.field(), "planes[1] (chroma).shape");
  EXPECT_THAT(e.what(), HasSubstr("shape (9, 16, 2) does not fit nv12 33x17: expected (9, 17, 2)"));
}

TEST_F(FrameValidate, LumaWithTwoComponents) {
  f.planes[0].components = 2;
  EXPECT_EQ(failure(f).field(), "planes[0] (luma).shape");
}

TEST_F(FrameValidate, ArithmeticOverflow) {
  f.planes[0].pitch = std::numeric_limits<std::size_t>::max() / 4;
  auto e = failure(f);
  EXPECT_EQ(e.field(), "planes[0] (luma).pitch");
  EXPECT_THAT(e.what(), HasSubstr("overflows"));
}

TEST_F(FrameValidate, AddressOverflow) {
  f.planes[1].data = reinterpret_cast<void*>(std::numeric_limits<std::uintptr_t>::max() - 64);
  auto e = failure(f);
  EXPECT_EQ(e.field(), "planes[1] (chroma).data");
  EXPECT_THAT(e.what(), HasSubstr("overflows the address space"));
}

TEST_F(FrameValidate, CudaNeedsOrdinal) {
  f.memory = MemoryKind::Cuda;
  f.device = -1;
  auto e = failure(f);
  EXPECT_EQ(e.field(), "device");
  EXPECT_THAT(e.what(), HasSubstr("-1"));
}

TEST_F(FrameValidate, GlBufferNeedsName) {
  f.memory = MemoryKind::GlBuffer;
  f.gl_buffer = 0;
  EXPECT_EQ(failure(f).field(), "gl_buffer");
  f.gl_buffer = 7;
  f.planes[0].data = f.planes[1].data = nullptr;  // offsets, not pointers
  f.planes[1].offset = 48 * 17;
  EXPECT_NO_THROW(validate(f));
  f.format = PixelFormat::P010;
  f.planes[0].pitch = f.planes[1].pitch = 68;
  f.planes[1].offset = 68 * 17 + 1;
  EXPECT_EQ(failure(f).field(), "planes[1] (chroma).offset");
}

TEST_F(FrameValidate, BadEnumValues) {
  Frame g = f;
  g.format = static_cast<PixelFormat>(12);  // one past gray32f
  EXPECT_EQ(failure(g).field(), "format");
  g = f;
  g.colorimetry.matrix = static_cast<ColorMatrix>(9);
  EXPECT_EQ(failure(g).field(), "colorimetry.matrix");
  g = f;
  g.colorimetry.range = static_cast<ColorRange>(9);
  EXPECT_EQ(failure(g).field(), "colorimetry.range");
  g = f;
  g.colorimetry.siting = static_cast<ChromaSiting>(9);
  EXPECT_EQ(failure(g).field(), "colorimetry.siting");
  g = f;
  g.memory = static_cast<MemoryKind>(9);
  EXPECT_EQ(failure(g).field(), "memory");
}

TEST_F(FrameValidate, InvalidFrameIsUsageError) {
  f.width = 0;
  EXPECT_THROW(validate(f), UsageError);
}

}  // namespace
}  // namespace handoff
