#include <gtest/gtest.h>

#include <handoff/frame_validate.hpp>
#include <handoff/vk_memory.hpp>

#include <fcntl.h>

#include <numeric>
#include <tuple>
#include <random>

#include "vk_fixture.hpp"

namespace handoff::test {
namespace {

using VkMemoryTest = VkFixture;

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  std::mt19937 rng(seed);
  for (auto& b : v) b = std::byte(rng() & 0xff);
  return v;
}

TEST_F(VkMemoryTest, BufferRoundTripsBytesEvenAndOddSizes) {
  for (VkDeviceSize size : {VkDeviceSize(1), VkDeviceSize(3), VkDeviceSize(4096), VkDeviceSize(12345)}) {
    VkExportableBuffer buf(*vk, size);
    EXPECT_GE(buf.allocation_size(), size + kExportPadding) << "allocation padded for llvmpipe's GL import";
    auto bytes = pattern(size, unsigned(size));
    buf.upload(bytes);
    EXPECT_EQ(buf.download(), bytes) << "size " << size;
    if (size > 2) {
      auto mid = buf.download(1, size - 2);
      EXPECT_TRUE(std::equal(mid.begin(), mid.end(), bytes.begin() + 1));
    }
  }
}

TEST_F(VkMemoryTest, BufferRangeChecksAreUsageErrors) {
  VkExportableBuffer buf(*vk, 16);
  auto bytes = pattern(8, 1);
  EXPECT_THROW(buf.upload(bytes, 9), UsageError);
  EXPECT_THROW(buf.download(17), UsageError);
  EXPECT_THROW(buf.download(8, 9), UsageError);
  EXPECT_THROW(VkExportableBuffer(*vk, 0), UsageError);
}

TEST_F(VkMemoryTest, ExportGivesANewOwnedDescriptorEachTime) {
  VkExportableBuffer buf(*vk, 1000);
  int before = open_fd_count();
  {
    ExportedMemory a = buf.export_memory();
    ExportedMemory b = buf.export_memory();
    ASSERT_TRUE(a.fd);
    ASSERT_TRUE(b.fd);
    EXPECT_NE(a.fd.get(), b.fd.get());
    EXPECT_NE(fcntl(a.fd.get(), F_GETFD), -1) << "a live descriptor";
    EXPECT_EQ(a.type, VkHandleType::OpaqueFd);
    EXPECT_EQ(a.allocation_size, buf.allocation_size());
    EXPECT_EQ(a.size, 1000u);
    EXPECT_EQ(open_fd_count(), before + 2);
  }
  EXPECT_EQ(open_fd_count(), before) << "an unimported export closes its descriptor";
  // Ownership passes out with release(): the caller closes it then.
  ExportedMemory c = buf.export_memory();
  int raw = c.fd.release();
  EXPECT_EQ(open_fd_count(), before + 1);
  UniqueFd adopt(raw);
  adopt.reset();
  EXPECT_EQ(open_fd_count(), before);
}

TEST_F(VkMemoryTest, DmaBufIsExportedOrRefusedByName) {
  if (vk->info().dma_buf_memory) {
    VkExportableBuffer buf(*vk, 4096, VkHandleType::DmaBuf);
    ExportedMemory e = buf.export_memory();
    EXPECT_TRUE(e.fd);
    EXPECT_EQ(e.type, VkHandleType::DmaBuf);
  } else {
    try {
      VkExportableBuffer buf(*vk, 4096, VkHandleType::DmaBuf);
      FAIL() << "DMA_BUF export where the device reports none";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("DMA_BUF"), std::string::npos) << e.what();
    }
  }
}

struct ImageCase {
  VkFormat format;
  std::uint32_t w, h;
};

TEST_F(VkMemoryTest, ImagesRoundTripTexelsEvenAndOddSizes) {
  for (ImageCase c : {ImageCase{VK_FORMAT_R8_UNORM, 64, 32}, ImageCase{VK_FORMAT_R8_UNORM, 33, 17},
                      ImageCase{VK_FORMAT_R8G8_UNORM, 17, 9}, ImageCase{VK_FORMAT_R16_UNORM, 31, 7},
                      ImageCase{VK_FORMAT_R16G16_UNORM, 16, 16}, ImageCase{VK_FORMAT_R8G8B8A8_UNORM, 5, 3}}) {
    VkExportableImage img(*vk, c.w, c.h, c.format);
    auto texels = pattern(std::size_t(c.w) * c.h * img.texel_size(), c.w * 131 + c.h);
    img.upload(texels);
    EXPECT_EQ(img.download(), texels) << "format " << c.format << " " << c.w << "x" << c.h;
    ExportedMemory e = img.export_memory();
    EXPECT_TRUE(e.fd);
    EXPECT_GE(e.allocation_size, e.size);
  }
}

TEST_F(VkMemoryTest, ImageMisuseIsRefusedByName) {
  EXPECT_THROW(VkExportableImage(*vk, 0, 4, VK_FORMAT_R8_UNORM), UsageError);
  try {
    VkExportableImage(*vk, 4, 4, VK_FORMAT_D32_SFLOAT);
    FAIL() << "a depth image";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("format"), std::string::npos) << e.what();
  }
  VkExportableImage img(*vk, 4, 4, VK_FORMAT_R8_UNORM);
  auto wrong = pattern(15, 1);
  EXPECT_THROW(img.upload(wrong), UsageError);
}

TEST_F(VkMemoryTest, ImageSizesBeyondTheLibraryOrTheDeviceAreRefusedBeforeAnythingIsMade) {
  try {
    VkExportableImage(*vk, kMaxFrameDimension + 1, 4, VK_FORMAT_R8_UNORM);
    FAIL() << "an image wider than kMaxFrameDimension";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(kMaxFrameDimension)), std::string::npos) << e.what();
  }
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(vk->physical_device(), &props);
  const std::uint32_t device_max = props.limits.maxImageDimension2D;
  if (device_max >= kMaxFrameDimension) GTEST_SKIP() << "the device makes images as large as handoff accepts";
  try {
    VkExportableImage(*vk, device_max + 1, 4, VK_FORMAT_R8_UNORM);
    FAIL() << "an image wider than the device makes";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::to_string(device_max + 1) + "x4"), std::string::npos) << what;
    EXPECT_NE(what.find(vk->info().name), std::string::npos) << what;
  }
  // vkCreateImage past the limit would be a validation message (TearDown).
}

TEST(VkFrameBufferLayout, SizesFollowTheLibrarysLargestFrameDimension) {
  EXPECT_NO_THROW(vk_frame_layout(PixelFormat::NV12, kMaxFrameDimension, 2));
  for (auto [w, h, field] : {std::tuple{kMaxFrameDimension + 1, 2u, "width"}, std::tuple{2u, kMaxFrameDimension + 1, "height"}}) {
    try {
      vk_frame_layout(PixelFormat::P010, w, h);
      ADD_FAILURE() << w << "x" << h << " accepted";
    } catch (const InvalidFrame& e) {
      EXPECT_EQ(std::string(e.what()), std::string(field) + ": " + dimension_problem(field, kMaxFrameDimension + 1));
    }
  }
  EXPECT_THROW(vk_frame_layout(PixelFormat::P010, 0, 2), InvalidFrame);
}

TEST(VkFrameBufferLayout, PlanesShareAPitchOfWholeWordsAndSamples) {
  for (PixelFormat f : {PixelFormat::NV12, PixelFormat::P010}) {
    for (auto [w, h] : {std::pair{1920u, 1080u}, std::pair{33u, 17u}, std::pair{1u, 1u}}) {
      const FrameLayout l = vk_frame_layout(f, w, h);
      const std::size_t bps = bytes_per_sample(f), pitch = l.planes[0].pitch;
      EXPECT_EQ(pitch % 256, 0u);
      EXPECT_EQ(l.planes[1].pitch, pitch);
      EXPECT_GE(pitch, std::size_t(w) * bps);
      EXPECT_GE(pitch, std::size_t(chroma_width(w)) * 2 * bps);
      EXPECT_EQ(l.planes[0].buffer, 0u);
      EXPECT_EQ(l.planes[1].buffer, 0u);
      EXPECT_EQ(l.planes[1].offset, pitch * h);
      EXPECT_EQ(l.buffer_bytes(), l.planes[1].offset + pitch * chroma_height(h));  // whole rows: the shader writes them
      Frame fr = l.describe(MemoryKind::Vulkan);
      EXPECT_EQ(fr.memory, MemoryKind::Vulkan);
      EXPECT_EQ(fr.chroma().offset, l.planes[1].offset);
      EXPECT_EQ(fr.chroma().width, chroma_width(w));
      EXPECT_EQ(fr.chroma().height, chroma_height(h));
      EXPECT_EQ(fr.chroma().components, 2u);
      std::vector<std::byte> host(l.buffer_bytes());
      Frame hf = l.describe(MemoryKind::Host, {host.data()});
      EXPECT_EQ(hf.chroma().data, host.data() + l.planes[1].offset);
      EXPECT_NO_THROW(validate(hf));
    }
  }
  EXPECT_THROW(vk_frame_layout(PixelFormat::NV12, 0, 8), UsageError);
  EXPECT_THROW(vk_frame_layout(PixelFormat::NV12, 8, 100000), UsageError);
}

}  // namespace
}  // namespace handoff::test
