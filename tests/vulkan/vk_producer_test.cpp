#include <gtest/gtest.h>

#include <handoff/vk_producer.hpp>

#include <cstring>

#include "scene_reference.hpp"
#include "vk_fixture.hpp"

namespace handoff::test {
namespace {

using VkProducerTest = VkFixture;

std::uint32_t sample(const std::vector<std::byte>& bytes, std::size_t offset, PixelFormat f) {
  if (f == PixelFormat::NV12) return std::uint32_t(bytes[offset]);
  std::uint16_t v;
  std::memcpy(&v, bytes.data() + offset, 2);
  return v;
}

// Checks a frame (luma rows then chroma rows at `pitch`, or tightly packed
// planes for images) against the CPU reference: every code within one.
struct Checker {
  SceneCodes ref;
  int far = 0, off_by_one = 0, total = 0;
  void check(std::uint32_t got, std::uint32_t want, const char* what, int x, int y) {
    ++total;
    std::uint32_t d = got > want ? got - want : want - got;
    if (d == 1) ++off_by_one;
    if (d > 1 && ++far <= 5)
      ADD_FAILURE() << what << " at (" << x << "," << y << "): got " << got << ", want " << want;
  }
};

void check_planes(Checker& c, const std::vector<std::byte>& luma, std::size_t luma_pitch,
                  const std::vector<std::byte>& chroma, std::size_t chroma_pitch) {
  PixelFormat f = c.ref.format;
  std::size_t bps = bytes_per_sample(f);
  unsigned shift = f == PixelFormat::P010 ? 6 : 0;
  for (int y = 0; y < c.ref.h; ++y)
    for (int x = 0; x < c.ref.w; ++x) {
      std::uint32_t v = sample(luma, y * luma_pitch + x * bps, f);
      if (shift && (v & 0x3f)) ADD_FAILURE() << "P010 low bits set at " << x << "," << y;
      c.check(v >> shift, c.ref.luma(x, y), "luma", x, y);
    }
  for (int y = 0; y < int(chroma_height(c.ref.h)); ++y)
    for (int x = 0; x < int(chroma_width(c.ref.w)); ++x) {
      auto want = c.ref.chroma(x, y);
      c.check(sample(chroma, y * chroma_pitch + 2 * x * bps, f) >> shift, want[0], "Cb", x, y);
      c.check(sample(chroma, y * chroma_pitch + (2 * x + 1) * bps, f) >> shift, want[1], "Cr", x, y);
    }
}

struct Case {
  PixelFormat format;
  std::uint32_t w, h;
  Colorimetry colorimetry;
  std::int64_t frame;
};

const Case kCases[] = {
    {PixelFormat::NV12, 64, 48, {}, 0},
    {PixelFormat::NV12, 33, 17, {ColorMatrix::BT601, ColorRange::Full}, 7},
    {PixelFormat::P010, 40, 30, {ColorMatrix::BT2020, ColorRange::Limited}, 3},
    {PixelFormat::P010, 21, 11, {ColorMatrix::BT709, ColorRange::Full}, 12},
    {PixelFormat::NV12, 1, 1, {}, 1},
};

TEST_F(VkProducerTest, BufferTargetMatchesTheCpuScene) {
  for (const Case& k : kCases) {
    SCOPED_TRACE(std::string(to_string(k.format)) + " " + std::to_string(k.w) + "x" + std::to_string(k.h));
    VkFrameProducer p(*vk, k.format, k.w, k.h, VkFrameProducer::Target::Buffer, k.colorimetry);
    ASSERT_NE(p.buffer(), nullptr);
    ASSERT_EQ(p.images(), nullptr);
    // Garbage first, so padding the shader fails to clear is seen.
    std::vector<std::byte> junk(p.buffer()->layout().buffer_bytes(), std::byte{0xcd});
    p.buffer()->buffer().upload(junk);
    p.produce(k.frame);
    auto bytes = p.buffer()->buffer().download();
    const auto& l = p.buffer()->layout();
    std::vector<std::byte> chroma(bytes.begin() + l.planes[1].offset, bytes.end());
    Checker c{{k.format, k.colorimetry, int(k.w), int(k.h), std::uint32_t(k.frame)}};
    check_planes(c, bytes, l.planes[0].pitch, chroma, l.planes[0].pitch);
    EXPECT_EQ(c.far, 0);
    EXPECT_LE(c.off_by_one * 100, c.total) << "rounding differences stay rare";
    // Row padding is written as zeros.
    std::size_t bps = bytes_per_sample(k.format);
    for (std::size_t y = 0; y < k.h; ++y)
      for (std::size_t b = k.w * bps; b < l.planes[0].pitch; ++b)
        ASSERT_EQ(bytes[y * l.planes[0].pitch + b], std::byte{0}) << "luma padding row " << y << " byte " << b;
    Frame f = p.frame();
    EXPECT_EQ(f.memory, MemoryKind::Vulkan);
    EXPECT_EQ(f.index, k.frame);
    EXPECT_EQ(f.colorimetry, k.colorimetry);
  }
}

TEST_F(VkProducerTest, ImagesTargetMatchesTheCpuSceneAndTheBuffer) {
  if (!vk->info().storage_image_r8_rg8) GTEST_SKIP() << "device lacks R8/RG8 storage images";
  for (const Case& k : kCases) {
    SCOPED_TRACE(std::string(to_string(k.format)) + " " + std::to_string(k.w) + "x" + std::to_string(k.h));
    VkFrameProducer p(*vk, k.format, k.w, k.h, VkFrameProducer::Target::Images, k.colorimetry);
    ASSERT_NE(p.images(), nullptr);
    p.produce(k.frame);
    auto luma = p.images()->luma().download();
    auto chroma = p.images()->chroma().download();
    std::size_t bps = bytes_per_sample(k.format);
    Checker c{{k.format, k.colorimetry, int(k.w), int(k.h), std::uint32_t(k.frame)}};
    check_planes(c, luma, k.w * bps, chroma, chroma_width(k.w) * 2 * bps);
    EXPECT_EQ(c.far, 0);

    // Same shader maths, same device: the buffer target holds the same codes.
    VkFrameProducer pb(*vk, k.format, k.w, k.h, VkFrameProducer::Target::Buffer, k.colorimetry);
    pb.produce(k.frame);
    auto bytes = pb.buffer()->buffer().download();
    const auto& l = pb.buffer()->layout();
    for (std::size_t y = 0; y < k.h; ++y)
      ASSERT_EQ(0, std::memcmp(luma.data() + y * k.w * bps, bytes.data() + y * l.planes[0].pitch, k.w * bps)) << y;
    std::size_t crow = chroma_width(k.w) * 2 * bps;
    for (std::size_t y = 0; y < chroma_height(k.h); ++y)
      ASSERT_EQ(0, std::memcmp(chroma.data() + y * crow, bytes.data() + l.planes[1].offset + y * l.planes[0].pitch, crow))
          << y;
  }
}

TEST_F(VkProducerTest, FramesMoveAndBarsStayPut) {
  VkFrameProducer p(*vk, PixelFormat::NV12, 128, 96, VkFrameProducer::Target::Buffer);
  p.produce(0);
  auto a = p.buffer()->buffer().download();
  p.produce(10);
  auto b = p.buffer()->buffer().download();
  EXPECT_NE(a, b) << "the shapes move between frames";
  EXPECT_EQ(p.last_index(), 10);
  // The first bar's top rows (75% white, BT.709 limited: Y = 16 + 219*0.749 = 180) do not move.
  EXPECT_EQ(std::uint32_t(a[0]), 180u);
  EXPECT_EQ(a[0], b[0]);
}

TEST_F(VkProducerTest, SplitSubmitAndWait) {
  VkFrameProducer p(*vk, PixelFormat::P010, 64, 64, VkFrameProducer::Target::Buffer);
  p.submit(1);
  p.submit(2);  // waits for the first
  p.wait();
  p.wait();  // no-op
  auto bytes = p.buffer()->buffer().download();
  Checker c{{PixelFormat::P010, {}, 64, 64, 2}};
  std::vector<std::byte> chroma(bytes.begin() + p.buffer()->layout().planes[1].offset, bytes.end());
  check_planes(c, bytes, p.buffer()->layout().planes[0].pitch, chroma, p.buffer()->layout().planes[0].pitch);
  EXPECT_EQ(c.far, 0);
}

TEST_F(VkProducerTest, BadSizesAreUsageErrors) {
  EXPECT_THROW(VkFrameProducer(*vk, PixelFormat::NV12, 0, 16, VkFrameProducer::Target::Buffer), UsageError);
  EXPECT_THROW(VkFrameProducer(*vk, PixelFormat::NV12, 16, 0, VkFrameProducer::Target::Images), UsageError);
}

TEST_F(VkProducerTest, SemaphoresExportOrAreRefusedByName) {
  if (vk->info().opaque_fd_semaphore) {
    VkExportableSemaphore s(*vk);
    EXPECT_TRUE(s.export_fd());
  } else {
    try {
      VkExportableSemaphore s(*vk);
      FAIL() << "a semaphore export where the device reports none";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("CPU fences"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace handoff::test
