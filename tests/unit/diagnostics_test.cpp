// handoff::live_objects() (handoff/diagnostics.hpp), the public leak counts:
// each rises when handoff makes the object and falls when it is released.
// Public API only (no test hooks).
#include <handoff/diagnostics.hpp>
#include <handoff/dlpack.hpp>
#include <handoff/host_frame.hpp>

#include <gtest/gtest.h>

namespace handoff {
namespace {

TEST(LiveObjects, AHostFrameCountsUntilItsLastCopyGoes) {
  const LiveObjects before = live_objects();
  Frame f = allocate_host_frame(PixelFormat::NV12, 32, 16);
  Frame copy = f;
  EXPECT_EQ(live_objects().frames, before.frames + 1);
  f = Frame{};
  EXPECT_EQ(live_objects().frames, before.frames + 1) << "a copy holds the storage";
  copy = Frame{};
  EXPECT_EQ(live_objects().frames, before.frames);
}

TEST(LiveObjects, AFrameOverSomeoneElsesMemoryHoldsNoStorage) {
  alignas(64) static unsigned char luma[16 * 16], chroma[8 * 16];
  const LiveObjects before = live_objects();
  const Frame f = host_planes_frame(PixelFormat::NV12, 16, 16, luma, 16, chroma, 16);
  EXPECT_EQ(live_objects().frames, before.frames);
}

TEST(LiveObjects, AnExportCountsUntilItsDeleterRuns) {
  Frame f = allocate_host_frame(PixelFormat::P010, 32, 16);
  const LiveObjects before = live_objects();
  DLManagedTensor* legacy = export_dlpack(f, FramePart::Luma);
  DLManagedTensorVersioned* versioned = export_dlpack_versioned(f, FramePart::Chroma);
  LiveObjects now = live_objects();
  EXPECT_EQ(now.dlpack_alive, before.dlpack_alive + 2);
  EXPECT_EQ(now.dlpack_exported, before.dlpack_exported + 2);
  EXPECT_EQ(now.dlpack_deleted, before.dlpack_deleted);
  f = Frame{};
  EXPECT_EQ(live_objects().frames, before.frames) << "the exports hold the frame's storage";
  legacy->deleter(legacy);
  now = live_objects();
  EXPECT_EQ(now.dlpack_alive, before.dlpack_alive + 1);
  EXPECT_EQ(now.dlpack_deleted, before.dlpack_deleted + 1);
  EXPECT_EQ(now.frames, before.frames);
  versioned->deleter(versioned);
  now = live_objects();
  EXPECT_EQ(now.dlpack_alive, before.dlpack_alive);
  EXPECT_EQ(now.dlpack_exported, before.dlpack_exported + 2);
  EXPECT_EQ(now.dlpack_deleted, before.dlpack_deleted + 2);
  EXPECT_EQ(now.frames, before.frames - 1);
  EXPECT_EQ(now.dlpack_alive, now.dlpack_exported - now.dlpack_deleted);
}

TEST(LiveObjects, AnImportedFrameCountsAndHoldsItsProducersTensors) {
  Frame source = allocate_host_frame(PixelFormat::NV12, 32, 16);
  const LiveObjects before = live_objects();
  ProducerTensor y(export_dlpack_versioned(source, FramePart::Luma));
  ProducerTensor c(export_dlpack(source, FramePart::Chroma));
  Frame imported = import_dlpack(y, c, ImportOptions{});
  source = Frame{};
  LiveObjects now = live_objects();
  EXPECT_EQ(now.frames, before.frames + 1) << "the source's storage, held by the exports, and the import";
  EXPECT_EQ(now.dlpack_alive, before.dlpack_alive + 2);
  imported = Frame{};  // runs the producers' deleters
  now = live_objects();
  EXPECT_EQ(now.frames, before.frames - 1);
  EXPECT_EQ(now.dlpack_alive, before.dlpack_alive);
  EXPECT_EQ(now.dlpack_deleted, before.dlpack_deleted + 2);
}

}  // namespace
}  // namespace handoff
