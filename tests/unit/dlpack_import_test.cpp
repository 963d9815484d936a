// DLPack import: every check names the plane and field; the producer's
// deleter runs exactly once, when the last copy of the frame is gone, and
// not at all (ownership stays with the caller) when the import is refused.
#include <handoff/dlpack.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>

#include "interop_testing.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <span>
#include <vector>

namespace handoff {
namespace {

using ::testing::HasSubstr;

// A producer's tensor over its own memory; counts deleter calls.
struct Producer {
  Producer(int ndim_, std::vector<std::int64_t> shape_, std::vector<std::int64_t> strides_, int bits, int* calls)
      : shape(std::move(shape_)), strides(std::move(strides_)), deleted(calls) {
    std::int64_t elems = 1;
    for (int d = 0; d < ndim_; ++d) elems += (shape[std::size_t(d)] - 1) * strides[std::size_t(d)];
    mem.assign(std::size_t(elems) * std::size_t(bits / 8) + 16, 0);
    DLTensor& t = managed.dl_tensor;
    t.data = mem.data();
    t.device = {kDLCPU, 0};
    t.ndim = ndim_;
    t.dtype = {kDLUInt, std::uint8_t(bits), 1};
    t.shape = shape.data();
    t.strides = strides.data();
    t.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) { ++*static_cast<Producer*>(self->manager_ctx)->deleted; };
    versioned.version = {1, 0};
    versioned.manager_ctx = this;
    versioned.flags = kDLPackFlagReadOnly;
    versioned.dl_tensor = t;
    versioned.deleter = [](DLManagedTensorVersioned* self) {
      ++*static_cast<Producer*>(self->manager_ctx)->deleted;
    };
  }
  DLTensor& t() { return managed.dl_tensor; }
  std::vector<std::uint8_t> mem;
  std::vector<std::int64_t> shape, strides;
  int* deleted;
  DLManagedTensor managed{};
  DLManagedTensorVersioned versioned{};
};

class DLPackImport : public ::testing::Test {
 protected:
  // A pitched 33 x 17 NV12 pair: pitch 40 (luma), 36 (chroma).
  int luma_deleted = 0;
  int chroma_deleted = 0;
  Producer luma{2, {17, 33}, {40, 1}, 8, &luma_deleted};
  Producer chroma{3, {9, 17, 2}, {36, 2, 1}, 8, &chroma_deleted};
  ImportOptions opts{};

  // Imports through DLTensor views and returns the failure.
  InvalidFrame refusal() {
    try {
      frame_from_dltensors(luma.t(), chroma.t(), opts);
    } catch (const InvalidFrame& e) {
      return e;
    }
    ADD_FAILURE() << "import accepted";
    return InvalidFrame("none", "none");
  }
};

TEST_F(DLPackImport, PitchedPlanesBecomeFrame) {
  ProducerTensor y(&luma.managed), c(&chroma.versioned);
  const Frame f = import_dlpack(y, c, opts);
  EXPECT_FALSE(y);
  EXPECT_FALSE(c);
  EXPECT_EQ(f.width, 33u);
  EXPECT_EQ(f.height, 17u);
  EXPECT_EQ(f.memory, MemoryKind::Host);
  EXPECT_EQ(f.planes[0].data, luma.mem.data());
  EXPECT_EQ(f.planes[0].pitch, 40u);
  EXPECT_EQ(f.planes[1].pitch, 36u);
  EXPECT_EQ(f.planes[1].width, 17u);
}

TEST_F(DLPackImport, DeleterRunsOnceWhenLastCopyGoes) {
  const std::size_t live = testing::live_frames();
  {
    ProducerTensor y(&luma.managed), c(&chroma.managed);
    Frame f = import_dlpack(y, c, opts);
    Frame copy = f;
    EXPECT_EQ(testing::live_frames(), live + 1);
    f = Frame{};
    EXPECT_EQ(luma_deleted, 0);
    EXPECT_EQ(chroma_deleted, 0);
  }
  EXPECT_EQ(luma_deleted, 1);
  EXPECT_EQ(chroma_deleted, 1);
  EXPECT_EQ(testing::live_frames(), live);
}

TEST_F(DLPackImport, RefusedImportLeavesOwnershipWithCaller) {
  chroma.shape[1] = 16;
  ProducerTensor y(&luma.managed), c(&chroma.managed);
  EXPECT_THROW(import_dlpack(y, c, opts), InvalidFrame);
  EXPECT_TRUE(y);
  EXPECT_TRUE(c);
  EXPECT_EQ(luma_deleted, 0);
  y.release();  // still ours: hand back without deleting
  c.reset();    // or delete now
  EXPECT_EQ(luma_deleted, 0);
  EXPECT_EQ(chroma_deleted, 1);
}

TEST_F(DLPackImport, CudaDeviceGivesCudaFrame) {
  luma.t().device = chroma.t().device = {kDLCUDA, 1};
  opts.cuda_context = reinterpret_cast<void*>(0x1234);
  const Frame f = frame_from_dltensors(luma.t(), chroma.t(), opts);
  EXPECT_EQ(f.memory, MemoryKind::Cuda);
  EXPECT_EQ(f.device, 1);
  EXPECT_EQ(f.cuda_context, reinterpret_cast<void*>(0x1234));
}

TEST_F(DLPackImport, CompactWhenStridesNull) {
  luma.t().strides = nullptr;
  chroma.t().strides = nullptr;
  const Frame f = frame_from_dltensors(luma.t(), chroma.t(), opts);
  EXPECT_EQ(f.planes[0].pitch, 33u);
  EXPECT_EQ(f.planes[1].pitch, 34u);
}

TEST_F(DLPackImport, ByteOffsetApplied) {
  luma.t().byte_offset = 8;
  const Frame f = frame_from_dltensors(luma.t(), chroma.t(), opts);
  EXPECT_EQ(f.planes[0].data, luma.mem.data() + 8);
}

TEST_F(DLPackImport, WrongDtype) {
  luma.t().dtype = {kDLInt, 8, 1};
  auto e = refusal();
  EXPECT_EQ(e.field(), "luma.dtype");
  EXPECT_THAT(e.what(), HasSubstr("dtype int8 does not fit nv12 (uint8 expected)"));
}

TEST_F(DLPackImport, P010NeedsUint16) {
  opts.format = PixelFormat::P010;
  auto e = refusal();
  EXPECT_EQ(e.field(), "luma.dtype");
  EXPECT_THAT(e.what(), HasSubstr("uint16 expected"));
}

TEST_F(DLPackImport, WrongNdim) {
  chroma.t().ndim = 2;
  auto e = refusal();
  EXPECT_EQ(e.field(), "chroma.ndim");
}

TEST_F(DLPackImport, WrongChromaShape) {
  chroma.shape[0] = 8;  // floor(17 / 2)
  auto e = refusal();
  EXPECT_EQ(e.field(), "chroma.shape");
  EXPECT_THAT(e.what(), HasSubstr("shape (8, 17, 2) does not fit nv12 33x17: expected (9, 17, 2)"));
}

TEST_F(DLPackImport, ZeroLumaShape) {
  luma.shape[0] = 0;
  EXPECT_EQ(refusal().field(), "luma.shape");
}

TEST_F(DLPackImport, DimensionsAboveTheLimitAreRefusedWithTheSharedMessage) {
  luma.shape[1] = std::int64_t(kMaxFrameDimension) + 1;
  auto e = refusal();
  EXPECT_EQ(e.field(), "luma.shape");
  EXPECT_THAT(e.what(), HasSubstr(": " + dimension_problem("width", kMaxFrameDimension + 1)));
  luma.shape[1] = 33;
  luma.shape[0] = -3;
  EXPECT_THAT(refusal().what(), HasSubstr("height is negative"));
}

TEST_F(DLPackImport, NonPackedRows) {
  luma.strides[1] = 2;
  auto e = refusal();
  EXPECT_EQ(e.field(), "luma.strides");
  EXPECT_THAT(e.what(), HasSubstr("do not describe packed rows"));
  luma.strides[1] = 1;
  chroma.strides = {36, 1, 17};  // planar U then V, not interleaved
  EXPECT_EQ(refusal().field(), "chroma.strides");
}

TEST_F(DLPackImport, NegativeStride) {
  luma.strides[0] = -40;
  auto e = refusal();
  EXPECT_EQ(e.field(), "luma.strides");
  EXPECT_THAT(e.what(), HasSubstr("negative"));
}

TEST_F(DLPackImport, RowStrideBelowPackedRow) {
  chroma.strides[0] = 30;
  auto e = refusal();
  EXPECT_EQ(e.field(), "chroma.strides");
  EXPECT_THAT(e.what(), HasSubstr("row stride 30 elements is below the packed row of 34 elements"));
}

TEST_F(DLPackImport, NullData) {
  chroma.t().data = nullptr;
  EXPECT_EQ(refusal().field(), "chroma.data");
}

TEST_F(DLPackImport, MisalignedByteOffsetForP010) {
  Producer y{2, {4, 4}, {4, 1}, 16, &luma_deleted};
  Producer c{3, {2, 2, 2}, {4, 2, 1}, 16, &chroma_deleted};
  opts.format = PixelFormat::P010;
  EXPECT_NO_THROW(frame_from_dltensors(y.t(), c.t(), opts));
  y.t().byte_offset = 3;
  try {
    frame_from_dltensors(y.t(), c.t(), opts);
    FAIL() << "odd byte_offset accepted";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "luma.byte_offset");
    EXPECT_THAT(e.what(), HasSubstr("not aligned to 2-byte samples"));
  }
}

TEST_F(DLPackImport, MixedDevices) {
  chroma.t().device = {kDLCUDA, 0};
  auto e = refusal();
  EXPECT_EQ(e.field(), "chroma.device");
  EXPECT_THAT(e.what(), HasSubstr("chroma is on cuda:0, luma on cpu:0"));
}

TEST_F(DLPackImport, ForeignDevice) {
  luma.t().device = chroma.t().device = {kDLOpenCL, 0};
  auto e = refusal();
  EXPECT_EQ(e.field(), "luma.device");
  EXPECT_THAT(e.what(), HasSubstr("not supported"));
}

TEST_F(DLPackImport, UnknownMajorVersion) {
  chroma.versioned.version = {2, 0};
  ProducerTensor y(&luma.managed), c(&chroma.versioned);
  try {
    import_dlpack(y, c, opts);
    FAIL() << "version 2 accepted";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "chroma.version");
  }
  EXPECT_TRUE(c);
  y.release();
  c.release();
}

TEST_F(DLPackImport, OneRowAnyRowStride) {
  Producer y{2, {1, 4}, {0, 1}, 8, &luma_deleted};
  Producer c{3, {1, 2, 2}, {0, 2, 1}, 8, &chroma_deleted};
  const Frame f = frame_from_dltensors(y.t(), c.t(), opts);
  EXPECT_EQ(f.planes[0].pitch, 4u);
}

TEST(DLPackElementStrides, WholeSamplesOnly) {
  const std::int64_t good[2] = {64, 2};
  EXPECT_EQ(element_strides("luma.strides", good, 2, 2)[0], 32);
  const std::int64_t odd[2] = {65, 2};
  try {
    element_strides("luma.strides", odd, 2, 2);
    FAIL() << "odd byte stride accepted";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "luma.strides");
    EXPECT_THAT(e.what(), HasSubstr("not a whole number of 2-byte samples"));
  }
}

TEST(DLPackRoundTrip, ExportThenImportAliases) {
  const Frame f = allocate_host_frame(PixelFormat::P010, 33, 17, {.alignment = 64});
  ProducerTensor y(export_dlpack(f, FramePart::Luma));
  ProducerTensor c(export_dlpack_versioned(f, FramePart::Chroma));
  const auto before = testing::export_counts();
  {
    ImportOptions opts;
    opts.format = PixelFormat::P010;
    const Frame g = import_dlpack(y, c, opts);
    EXPECT_EQ(g.planes[0].data, f.planes[0].data);
    EXPECT_EQ(g.planes[1].data, f.planes[1].data);
    EXPECT_EQ(g.planes[0].pitch, f.planes[0].pitch);
    EXPECT_EQ(g.planes[1].pitch, f.planes[1].pitch);
  }
  EXPECT_EQ(testing::export_counts().live, before.live - 2);
}

// --- the one-plane formats and i420 ------------------------------------------------
// Imports `t` as one plane of `format`; the failure, or none.
std::optional<InvalidFrame> one_plane_refusal(const DLTensor& t, PixelFormat format) {
  ImportOptions o;
  o.format = format;
  const DLTensor* planes[1] = {&t};
  try {
    frame_from_dltensors(planes, o);
  } catch (const InvalidFrame& e) {
    return e;
  }
  return std::nullopt;
}

TEST(DLPackImportFormats, PitchedRgbRowsWithoutACopy) {
  int deleted = 0;
  // 5 x 7 rgb8 in rows of 32 bytes: (7, 5, 3), strides (32, 3, 1).
  Producer p{3, {7, 5, 3}, {32, 3, 1}, 8, &deleted};
  ImportOptions o;
  o.format = PixelFormat::RGB8;
  {
    ProducerTensor planes[1] = {ProducerTensor(&p.managed)};
    const Frame f = import_dlpack(std::span<ProducerTensor>(planes), o);
    EXPECT_EQ(f.width, 5u);
    EXPECT_EQ(f.height, 7u);
    EXPECT_EQ(f.planes[0].data, p.mem.data());
    EXPECT_EQ(f.planes[0].pitch, 32u);
    EXPECT_EQ(f.planes[0].components, 3u);
    EXPECT_EQ(deleted, 0);
  }
  EXPECT_EQ(deleted, 1);
}

TEST(DLPackImportFormats, GrayAsHwOrHw1AndFloat32) {
  int deleted = 0;
  Producer hw{2, {4, 6}, {8, 1}, 16, &deleted};
  EXPECT_FALSE(one_plane_refusal(hw.t(), PixelFormat::GRAY16));
  Producer hw1{3, {4, 6, 1}, {8, 1, 1}, 8, &deleted};
  EXPECT_FALSE(one_plane_refusal(hw1.t(), PixelFormat::GRAY8));
  Producer f32{2, {4, 6}, {6, 1}, 32, &deleted};
  f32.t().dtype = {kDLFloat, 32, 1};
  EXPECT_FALSE(one_plane_refusal(f32.t(), PixelFormat::GRAY32F));
  // uint32 is not gray32f, float32 is not gray16.
  f32.t().dtype = {kDLUInt, 32, 1};
  auto e = one_plane_refusal(f32.t(), PixelFormat::GRAY32F);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "pixels.dtype");
  EXPECT_THAT(e->what(), HasSubstr("float32 expected"));
}

TEST(DLPackImportFormats, ChannelsThatDoNotFitTheFormat) {
  int deleted = 0;
  Producer rgb{3, {4, 6, 3}, {18, 3, 1}, 8, &deleted};
  auto e = one_plane_refusal(rgb.t(), PixelFormat::RGBA8);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "pixels.shape");
  EXPECT_THAT(e->what(), HasSubstr("rgba8: 4 channels (R, G, B, A) expected, not 3"));
  // A 2-D array is not rgb8; an (H, W, 2) array is not grey.
  Producer hw{2, {4, 6}, {6, 1}, 8, &deleted};
  e = one_plane_refusal(hw.t(), PixelFormat::RGB8);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "pixels.ndim");
  Producer hw2{3, {4, 6, 2}, {12, 2, 1}, 8, &deleted};
  e = one_plane_refusal(hw2.t(), PixelFormat::GRAY8);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "pixels.shape");
  EXPECT_FALSE(one_plane_refusal(hw2.t(), PixelFormat::YUYV));
}

TEST(DLPackImportFormats, DtypeThatDoesNotFit) {
  int deleted = 0;
  Producer rgb16{3, {4, 6, 3}, {18, 3, 1}, 16, &deleted};
  auto e = one_plane_refusal(rgb16.t(), PixelFormat::RGB8);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "pixels.dtype");
  EXPECT_THAT(e->what(), HasSubstr("uint16 does not fit rgb8 (uint8 expected)"));
}

TEST(DLPackImportFormats, NonContiguousChannelsRefused) {
  int deleted = 0;
  // A CHW array viewed as HWC: channels a plane apart.
  Producer chw{3, {4, 6, 3}, {6, 1, 24}, 8, &deleted};
  auto e = one_plane_refusal(chw.t(), PixelFormat::RGB8);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "pixels.strides");
  EXPECT_THAT(e->what(), HasSubstr("expected (pitch, 3, 1)"));
  // Every other pixel of a wider image.
  Producer skip{3, {4, 6, 3}, {36, 6, 1}, 8, &deleted};
  e = one_plane_refusal(skip.t(), PixelFormat::RGB8);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "pixels.strides");
}

TEST(DLPackImportFormats, YuyvWidthIsEven) {
  int deleted = 0;
  Producer odd{3, {4, 5, 2}, {10, 2, 1}, 8, &deleted};
  auto e = one_plane_refusal(odd.t(), PixelFormat::UYVY);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "pixels.shape");
  EXPECT_THAT(e->what(), HasSubstr("odd"));
}

TEST(DLPackImportFormats, PlaneCountMustFitTheFormat) {
  int deleted = 0;
  Producer y{2, {4, 6}, {6, 1}, 8, &deleted};
  Producer c{3, {2, 3, 2}, {6, 2, 1}, 8, &deleted};
  ImportOptions o;
  o.format = PixelFormat::RGB8;
  const DLTensor* two[2] = {&y.t(), &c.t()};
  try {
    frame_from_dltensors(two, o);
    ADD_FAILURE() << "two tensors as rgb8";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "planes");
    EXPECT_THAT(e.what(), HasSubstr("rgb8: it takes 1 (pixels)"));
  }
  o.format = PixelFormat::I420;
  try {
    frame_from_dltensors(two, o);
    ADD_FAILURE() << "two tensors as i420";
  } catch (const InvalidFrame& e) {
    EXPECT_THAT(e.what(), HasSubstr("luma, u, v"));
  }
}

TEST(DLPackImportFormats, I420ThreePlanesEachChecked) {
  int y_del = 0, u_del = 0, v_del = 0;
  Producer y{2, {7, 9}, {16, 1}, 8, &y_del};
  Producer u{2, {4, 5}, {8, 1}, 8, &u_del};
  Producer v{2, {4, 5}, {8, 1}, 8, &v_del};
  ImportOptions o;
  o.format = PixelFormat::I420;
  {
    ProducerTensor planes[3] = {ProducerTensor(&y.versioned), ProducerTensor(&u.managed),
                                ProducerTensor(&v.versioned)};
    const Frame f = import_dlpack(std::span<ProducerTensor>(planes), o);
    EXPECT_EQ(f.width, 9u);
    EXPECT_EQ(f.height, 7u);
    EXPECT_EQ(f.planes[2].data, v.mem.data());
    EXPECT_EQ(f.planes[1].pitch, 8u);
  }
  EXPECT_EQ(y_del + u_del + v_del, 3);
  // A v plane of the wrong size is named, and nothing is taken.
  v.shape[1] = 4;
  v.versioned.dl_tensor.shape = v.shape.data();
  ProducerTensor planes[3] = {ProducerTensor(&y.versioned), ProducerTensor(&u.managed),
                              ProducerTensor(&v.versioned)};
  try {
    import_dlpack(std::span<ProducerTensor>(planes), o);
    ADD_FAILURE() << "a wrong v plane imported";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "v.shape");
  }
  for (auto& p : planes) EXPECT_TRUE(p) << "a refused import leaves the tensors with the caller";
  for (auto& p : planes) p.release();
  EXPECT_EQ(y_del + u_del + v_del, 3);
}

}  // namespace
}  // namespace handoff
