// DLPack export: layout, device, dtype, read-only flag, lifetime, refusals.
#include <handoff/dlpack.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>

#include "interop_testing.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <thread>
#include <vector>

namespace handoff {
namespace {

using ::testing::HasSubstr;

TEST(DLPackExport, LumaNv12Pitched) {
  const Frame f = allocate_host_frame(PixelFormat::NV12, 33, 17, {.alignment = 64});
  const auto before = testing::export_counts();
  DLManagedTensor* t = export_dlpack(f, FramePart::Luma);
  const DLTensor& d = t->dl_tensor;
  EXPECT_EQ(d.data, f.planes[0].data);
  EXPECT_EQ(d.byte_offset, 0u);
  EXPECT_EQ(d.device.device_type, kDLCPU);
  EXPECT_EQ(d.device.device_id, 0);
  EXPECT_EQ(d.ndim, 2);
  EXPECT_EQ(d.dtype.code, kDLUInt);
  EXPECT_EQ(d.dtype.bits, 8);
  EXPECT_EQ(d.dtype.lanes, 1);
  EXPECT_EQ(d.shape[0], 17);
  EXPECT_EQ(d.shape[1], 33);
  EXPECT_EQ(d.strides[0], 64);
  EXPECT_EQ(d.strides[1], 1);
  EXPECT_EQ(testing::export_counts().live, before.live + 1);
  t->deleter(t);
  EXPECT_EQ(testing::export_counts().live, before.live);
  EXPECT_EQ(testing::export_counts().deleted, before.deleted + 1);
}

TEST(DLPackExport, ChromaP010StridesInElements) {
  const Frame f = allocate_host_frame(PixelFormat::P010, 33, 17, {.alignment = 128});
  DLManagedTensorVersioned* t = export_dlpack_versioned(f, FramePart::Chroma);
  EXPECT_EQ(t->version.major, 1u);
  EXPECT_EQ(t->flags & kDLPackFlagReadOnly, kDLPackFlagReadOnly);
  const DLTensor& d = t->dl_tensor;
  EXPECT_EQ(d.dtype.bits, 16);
  EXPECT_EQ(d.ndim, 3);
  EXPECT_EQ(d.shape[0], 9);
  EXPECT_EQ(d.shape[1], 17);
  EXPECT_EQ(d.shape[2], 2);
  EXPECT_EQ(d.strides[0], 64);  // 128-byte pitch in 2-byte elements
  EXPECT_EQ(d.strides[1], 2);
  EXPECT_EQ(d.strides[2], 1);
  t->deleter(t);
}

TEST(DLPackExport, CudaDeviceAndOrdinal) {
  // A CUDA-memory frame description (pointers are never dereferenced by export).
  Frame f = allocate_host_frame(PixelFormat::NV12, 8, 4);
  f.memory = MemoryKind::Cuda;
  f.device = 3;
  DLManagedTensor* t = export_dlpack(f, FramePart::Luma);
  EXPECT_EQ(t->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(t->dl_tensor.device.device_id, 3);
  t->deleter(t);
}

TEST(DLPackExport, StackedWholeFrame) {
  const Frame f = allocate_host_frame(PixelFormat::NV12, 10, 5, {.alignment = 16});
  DLManagedTensor* t = export_dlpack(f, FramePart::Stacked);
  EXPECT_EQ(t->dl_tensor.shape[0], 5 + 3);
  EXPECT_EQ(t->dl_tensor.shape[1], 10);
  EXPECT_EQ(t->dl_tensor.strides[0], 16);
  t->deleter(t);
  const Frame odd = allocate_host_frame(PixelFormat::NV12, 11, 5);
  EXPECT_THROW(export_dlpack(odd, FramePart::Stacked), UsageError);
}

TEST(DLPackExport, TensorKeepsFrameAlive) {
  const std::size_t before = testing::live_frames();
  Frame f = allocate_host_frame(PixelFormat::NV12, 16, 16);
  fill_test_pattern(f, 5);
  DLManagedTensorVersioned* t = export_dlpack_versioned(f, FramePart::Luma);
  f = Frame{};  // the producer lets go of its frame
  EXPECT_EQ(testing::live_frames(), before + 1);
  const auto* p = static_cast<const unsigned char*>(t->dl_tensor.data);
  EXPECT_EQ(p[t->dl_tensor.strides[0] * 2 + 3], (7 * 3 + 13 * 2 + 5) % 256);  // still readable
  t->deleter(t);
  EXPECT_EQ(testing::live_frames(), before);
}

TEST(DLPackExport, RefusesGlAndVulkanMemory) {
  Frame f = allocate_host_frame(PixelFormat::NV12, 8, 8);
  f.memory = MemoryKind::GlBuffer;
  f.gl_buffer = 3;
  try {
    export_dlpack(f, FramePart::Luma);
    FAIL() << "GL buffer export accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("GL buffer"));
  }
  f.memory = MemoryKind::Vulkan;
  EXPECT_THROW(export_dlpack_versioned(f, FramePart::Chroma), UsageError);
}

TEST(DLPackExport, RefusesInvalidFrame) {
  Frame f = allocate_host_frame(PixelFormat::NV12, 8, 8);
  f.planes[0].pitch = 4;
  EXPECT_THROW(export_dlpack(f, FramePart::Luma), InvalidFrame);
}

// export_dlpack(frame, layout) trusts a layout computed once (the Python Plane
// caches it) only as far as it describes that frame: data, device, shape and
// strides are checked against the frame's planes.
void expect_layout_refused(const Frame& f, const TensorLayout& l, const std::string& names) {
  try {
    DLManagedTensor* t = export_dlpack(f, l);
    t->deleter(t);
    ADD_FAILURE() << "a layout that does not describe the frame was exported (" << names << ")";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr(names));
  }
  EXPECT_THROW(export_dlpack_versioned(f, l), UsageError) << names;
}

TEST(DLPackExport, ALayoutMustDescribeTheFrameItIsExportedWith) {
  const Frame f = allocate_host_frame(PixelFormat::NV12, 34, 17, {.alignment = 64});
  for (FramePart part : {FramePart::Luma, FramePart::Chroma}) {
    const TensorLayout l = tensor_layout(f, part);
    DLManagedTensor* t = export_dlpack(f, l);
    EXPECT_EQ(t->dl_tensor.data, l.data);
    t->deleter(t);
    DLManagedTensorVersioned* v = export_dlpack_versioned(f, l);
    v->deleter(v);
  }
  const Frame stacked = allocate_host_frame(PixelFormat::P010, 34, 17, {.alignment = 4});
  ASSERT_TRUE(is_stacked(stacked));
  DLManagedTensor* t = export_dlpack(stacked, tensor_layout(stacked, FramePart::Stacked));
  t->deleter(t);

  const Frame other = allocate_host_frame(PixelFormat::NV12, 34, 17, {.alignment = 64});
  expect_layout_refused(f, tensor_layout(other, FramePart::Luma), "is no plane of this frame");
  TensorLayout l = tensor_layout(f, FramePart::Luma);
  l.shape[1] = 33;
  expect_layout_refused(f, l, "luma plane: shape (17, 33) is not the plane's (17, 34)");
  l = tensor_layout(f, FramePart::Chroma);
  l.strides[0] = 34;
  expect_layout_refused(f, l, "chroma plane: strides (34, 2, 1) are not the plane's (64, 2, 1)");
  l = tensor_layout(f, FramePart::Luma);
  l.device = DLDevice{kDLCUDA, 0};
  expect_layout_refused(f, l, "luma plane: device (2, 0) is not the frame's (1, 0)");
  l = tensor_layout(f, FramePart::Luma);
  l.dtype.bits = 16;
  expect_layout_refused(f, l, "luma plane: dtype");
  Frame split = stacked;  // the same luma, the chroma elsewhere: no longer one stacked array
  split.planes[1].data = other.planes[1].data;
  expect_layout_refused(split, tensor_layout(stacked, FramePart::Stacked), "stacked frame: the frame is not stacked");
  // The same memory described as CUDA memory is another frame to DLPack.
  Frame cuda = f;
  cuda.memory = MemoryKind::Cuda;
  cuda.device = 1;
  expect_layout_refused(cuda, tensor_layout(f, FramePart::Chroma), "device (1, 0) is not the frame's (2, 1)");
}

TEST(DLPackExport, ConcurrentExportsAndDeletersOnOtherThreads) {
  // Frames are shared between threads (a producer thread, the GL worker, a
  // consumer): exports and deleters may run anywhere. TSan checks this.
  const std::size_t frames_before = testing::live_frames();
  const auto before = testing::export_counts();
  std::vector<DLManagedTensorVersioned*> made[4];
  {
    const Frame f = allocate_host_frame(PixelFormat::P010, 64, 32);
    std::vector<std::thread> producers;
    for (int t = 0; t < 4; ++t) {
      producers.emplace_back([&f, &out = made[t]] {
        for (int i = 0; i < 200; ++i) {
          out.push_back(export_dlpack_versioned(f, i % 2 ? FramePart::Luma : FramePart::Chroma));
        }
      });
    }
    for (auto& t : producers) t.join();
  }  // the frame is gone; the exports keep its memory
  EXPECT_EQ(testing::live_frames(), frames_before + 1);
  std::vector<std::thread> consumers;
  for (int t = 0; t < 4; ++t) {
    consumers.emplace_back([&out = made[(t + 1) % 4]] {
      for (auto* m : out) m->deleter(m);
    });
  }
  for (auto& t : consumers) t.join();
  EXPECT_EQ(testing::live_frames(), frames_before);
  EXPECT_EQ(testing::export_counts().live, before.live);
  EXPECT_EQ(testing::export_counts().exported - before.exported, 800u);
  EXPECT_EQ(testing::export_counts().deleted - before.deleted, 800u);
}

// Every format: each plane exports as (rows, width) or (rows, width,
// components), packed inside the row, the pitch as the row stride, with the
// format's dtype; read from the frame's planes through plane_layout, not restated.
class DLPackExportFormats : public ::testing::TestWithParam<PixelFormat> {};

TEST_P(DLPackExportFormats, EveryPlaneShapeStridesDtype) {
  const PixelFormat fmt = GetParam();
  const Frame f = allocate_host_frame(fmt, 33, 17, {.alignment = 256});
  ASSERT_EQ(f.format, fmt);
  for (int i = 0; i < plane_count(fmt); ++i) {
    SCOPED_TRACE(std::string(to_string(fmt)) + " plane " + std::to_string(i));
    const PlaneLayout pl = plane_layout(fmt, 33, 17, i);
    const TensorLayout l = tensor_layout(f, plane_part(i));
    EXPECT_EQ(l.data, f.planes[std::size_t(i)].data);
    EXPECT_EQ(l.sample_bytes, bytes_per_sample(fmt));
    EXPECT_EQ(l.dtype.code, is_float(fmt) ? kDLFloat : kDLUInt);
    EXPECT_EQ(l.dtype.bits, 8 * bytes_per_sample(fmt));
    EXPECT_EQ(l.ndim, pl.components == 1 ? 2 : 3);
    EXPECT_EQ(l.shape[0], pl.height);
    EXPECT_EQ(l.shape[1], pl.width);
    EXPECT_EQ(l.strides[0], std::int64_t(f.planes[std::size_t(i)].pitch / bytes_per_sample(fmt)));
    if (l.ndim == 3) {
      EXPECT_EQ(l.shape[2], pl.components);
      EXPECT_EQ(l.strides[1], pl.components);
      EXPECT_EQ(l.strides[2], 1);
    } else {
      EXPECT_EQ(l.strides[1], 1);
    }
    // The versioned tensor says the same, read-only.
    DLManagedTensorVersioned* t = export_dlpack_versioned(f, plane_part(i));
    EXPECT_EQ(t->flags & kDLPackFlagReadOnly, kDLPackFlagReadOnly);
    EXPECT_EQ(t->dl_tensor.ndim, l.ndim);
    EXPECT_EQ(t->dl_tensor.dtype.code, l.dtype.code);
    for (int d = 0; d < l.ndim; ++d) {
      EXPECT_EQ(t->dl_tensor.shape[d], l.shape[std::size_t(d)]);
      EXPECT_EQ(t->dl_tensor.strides[d], l.strides[std::size_t(d)]);
    }
    t->deleter(t);
  }
  // One plane past the format's planes is refused, naming the ones it has.
  if (plane_count(fmt) < int(kMaxPlanes)) {
    try {
      tensor_layout(f, plane_part(plane_count(fmt)));
      ADD_FAILURE() << "plane " << plane_count(fmt) << " of " << to_string(fmt) << " exported";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string(plane_name(fmt, 0))));
      EXPECT_THAT(e.what(), HasSubstr("does not exist"));
    }
  }
}

// Export every plane, import the tensors back: the same memory, pitch and size.
TEST_P(DLPackExportFormats, RoundTripThroughImport) {
  const PixelFormat fmt = GetParam();
  const Frame f = allocate_host_frame(fmt, 34, 17, {.alignment = 128});
  fill_test_pattern(f, 3);
  std::vector<ProducerTensor> tensors;
  for (int i = 0; i < plane_count(fmt); ++i) tensors.emplace_back(export_dlpack_versioned(f, plane_part(i)));
  ImportOptions o;
  o.format = fmt;
  const Frame g = import_dlpack(std::span<ProducerTensor>(tensors), o);
  EXPECT_EQ(g.format, fmt);
  EXPECT_EQ(g.width, 34u);
  EXPECT_EQ(g.height, 17u);
  for (int i = 0; i < plane_count(fmt); ++i) {
    EXPECT_EQ(g.planes[std::size_t(i)].data, f.planes[std::size_t(i)].data) << i;
    EXPECT_EQ(g.planes[std::size_t(i)].pitch, f.planes[std::size_t(i)].pitch) << i;
    EXPECT_EQ(g.planes[std::size_t(i)].components, f.planes[std::size_t(i)].components) << i;
    EXPECT_FALSE(tensors[std::size_t(i)]) << "the frame owns tensor " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, DLPackExportFormats, ::testing::ValuesIn(kPixelFormats),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(DLPackExport, Gray32fIsFloat32) {
  const Frame f = allocate_host_frame(PixelFormat::GRAY32F, 5, 3, {.alignment = 64});
  DLManagedTensor* t = export_dlpack(f, FramePart::Pixels);
  EXPECT_EQ(t->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(t->dl_tensor.dtype.bits, 32);
  EXPECT_EQ(t->dl_tensor.strides[0], 16);  // 64 bytes in 4-byte samples
  t->deleter(t);
}

TEST(DLPackExport, NoStackedTensorForOnePlaneOrI420Frames) {
  for (PixelFormat fmt : {PixelFormat::RGB8, PixelFormat::GRAY16, PixelFormat::YUYV, PixelFormat::I420}) {
    const Frame f = allocate_host_frame(fmt, 8, 4, {.alignment = 4});
    try {
      tensor_layout(f, FramePart::Stacked);
      ADD_FAILURE() << to_string(fmt) << " exported a stacked tensor";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string(to_string(fmt))));
    }
  }
}

TEST(DLPackExport, PartNamesFollowTheFormat) {
  EXPECT_EQ(part_name(PixelFormat::RGB8, FramePart::Pixels), "pixels");
  EXPECT_EQ(part_name(PixelFormat::I420, FramePart::U), "u");
  EXPECT_EQ(part_name(PixelFormat::I420, FramePart::V), "v");
  EXPECT_EQ(part_name(PixelFormat::NV12, FramePart::Chroma), "chroma");
  EXPECT_EQ(part_name(PixelFormat::NV12, FramePart::Stacked), "stacked frame");
}

// A cached layout of one plane exported with another frame's plane names what differs.
TEST(DLPackExport, LayoutOfAnI420PlaneChecked) {
  const Frame f = allocate_host_frame(PixelFormat::I420, 8, 6, {.alignment = 16});
  TensorLayout l = tensor_layout(f, FramePart::V);
  DLManagedTensor* t = export_dlpack(f, l);
  EXPECT_EQ(t->dl_tensor.data, f.planes[2].data);
  t->deleter(t);
  l.shape[1] += 1;
  try {
    export_dlpack(f, l);
    ADD_FAILURE() << "a wrong layout exported";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("v plane"));
    EXPECT_THAT(e.what(), HasSubstr("shape"));
  }
}

}  // namespace
}  // namespace handoff
