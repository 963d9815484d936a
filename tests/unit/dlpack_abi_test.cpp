// The v1 ABI declared by the project. The layout itself is checked at compile
// time in dlpack_v1.hpp (this file would not build otherwise); these tests
// check the same facts at run time against the system header's types, and
// that an exported versioned tensor reads correctly through raw offsets, as a
// C consumer compiled against DLPack 1.0 would read it.
#include <handoff/dlpack.hpp>
#include <handoff/dlpack_v1.hpp>
#include <handoff/host_frame.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

namespace handoff {
namespace {

TEST(DLPackAbi, LegacyLayoutMatchesSystemHeader) {
  static_assert(DLPACK_VERSION == 60, "the system header is expected to be DLPack 0.6");
  EXPECT_EQ(sizeof(DLManagedTensor), 64u);
  EXPECT_EQ(offsetof(DLManagedTensor, deleter), 56u);
}

TEST(DLPackAbi, VersionedLayout) {
  EXPECT_EQ(sizeof(DLManagedTensorVersioned), 80u);
  EXPECT_EQ(offsetof(DLManagedTensorVersioned, flags), 24u);
  EXPECT_EQ(offsetof(DLManagedTensorVersioned, dl_tensor), 32u);
  EXPECT_EQ(kDLPackFlagReadOnly, 1u);
  EXPECT_EQ(kDLPackFlagIsCopied, 2u);
  EXPECT_EQ(kDLPackFlagIsSubbyteTypePadded, 4u);
}

TEST(DLPackAbi, VersionedTensorThroughRawOffsets) {
  const Frame f = allocate_host_frame(PixelFormat::P010, 6, 4, {.alignment = 32});
  DLManagedTensorVersioned* t = export_dlpack_versioned(f, FramePart::Chroma);
  const auto* raw = reinterpret_cast<const unsigned char*>(t);
  std::uint32_t major = 0, minor = 0;
  std::uint64_t flags = 0;
  void* data = nullptr;
  std::int32_t ndim = 0;
  std::memcpy(&major, raw + 0, 4);
  std::memcpy(&minor, raw + 4, 4);
  std::memcpy(&flags, raw + 24, 8);
  std::memcpy(&data, raw + 32, 8);
  std::memcpy(&ndim, raw + 32 + 16, 4);
  EXPECT_EQ(major, 1u);
  EXPECT_EQ(minor, 0u);
  EXPECT_EQ(flags, kDLPackFlagReadOnly);
  EXPECT_EQ(data, f.planes[1].data);
  EXPECT_EQ(ndim, 3);
  void (*deleter)(DLManagedTensorVersioned*) = nullptr;
  std::memcpy(&deleter, raw + 16, 8);
  deleter(t);
}

}  // namespace
}  // namespace handoff
