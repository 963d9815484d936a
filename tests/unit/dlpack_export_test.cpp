// DLPack export: layout, device, dtype, read-only flag, lifetime, refusals.
#include <handoff/dlpack.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/testing.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace handoff
