// Vulkan (lavapipe) <-> OpenGL (llvmpipe) through exported memory: identical
// bytes both ways, buffers and plane textures, even and odd sizes; descriptor
// ownership on failure; 1,000 export/import/release cycles leaving nothing.
// Any Vulkan validation message or KHR_debug error fails a test.
#include <glad/gl.h>

#include <handoff/gl_check.hpp>
#include <handoff/vk_gl.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "gl_fixture.hpp"
#include "interop_testing.hpp"
#include "scene_reference.hpp"
#include "vk_fixture.hpp"

namespace handoff::test {
namespace {

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  std::mt19937 rng(seed);
  for (auto& b : v) b = std::byte(rng() & 0xff);
  return v;
}

class VkGlTest : public GlWorkerFixture {
 protected:
  void SetUp() override {
    std::string why;
    if (!have_vulkan_device(&why)) GTEST_SKIP() << "no Vulkan device: " << why;
    GlWorkerFixture::SetUp();
    if (!worker().info().memory_object_fd)
      GTEST_SKIP() << "GL context lacks GL_EXT_memory_object_fd (" << worker().info().renderer << ")";
    vk = make_validated_context(log);
  }
  void TearDown() override {
    vk.reset();
    log.fail_on_any("Vulkan validation message during the test or at device/instance destruction");
    GlWorkerFixture::TearDown();
  }

  std::vector<std::byte> gl_read_buffer(unsigned name, std::size_t size) {
    std::vector<std::byte> out(size);
    worker().run([&] {
      HANDOFF_GL_CHECK(glGetNamedBufferSubData(name, 0, GLsizeiptr(size), out.data()));
    });
    return out;
  }
  std::vector<std::byte> gl_read_texture(unsigned name, VkFormat f, std::uint32_t w, std::uint32_t h) {
    GLenum format = (f == VK_FORMAT_R8_UNORM || f == VK_FORMAT_R16_UNORM) ? GL_RED
                    : f == VK_FORMAT_R8G8B8A8_UNORM                     ? GL_RGBA
                                                                        : GL_RG;
    GLenum type = (f == VK_FORMAT_R16_UNORM || f == VK_FORMAT_R16G16_UNORM) ? GL_UNSIGNED_SHORT : GL_UNSIGNED_BYTE;
    std::size_t texel = (format == GL_RED ? 1 : format == GL_RG ? 2 : 4) * (type == GL_UNSIGNED_SHORT ? 2 : 1);
    std::vector<std::byte> out(std::size_t(w) * h * texel);
    worker().run([&] {
      glPixelStorei(GL_PACK_ALIGNMENT, 1);
      HANDOFF_GL_CHECK(glGetTextureImage(name, 0, format, type, GLsizei(out.size()), out.data()));
    });
    return out;
  }
  static int open_fds() { return open_fd_count(); }

  DebugMessages log;
  std::unique_ptr<VkContext> vk;
};

TEST_F(VkGlTest, SameDeviceAndTheSyncModeIsReported) {
  const GlInfo& gl = worker().info();
  ASSERT_TRUE(gl.device_uuid.has_value()) << "GL_EXT_memory_object gives GL_DEVICE_UUID_EXT";
  EXPECT_EQ(*gl.device_uuid, vk->info().device_uuid) << "GL and Vulkan run on the same device here";
  EXPECT_NO_THROW(check_gl_vk_device(gl, vk->info()));
  GlVkSync sync = gl_vk_sync(gl, vk->info());
  bool both = vk->info().opaque_fd_semaphore && gl.semaphore_fd;
  EXPECT_EQ(sync, both ? GlVkSync::ExternalSemaphore : GlVkSync::CpuFence);
  EXPECT_NE(std::string(to_string(sync)).find(both ? "semaphore" : "CPU"), std::string::npos);

  GlInfo other = gl;
  other.device_uuid->bytes.fill(0x42);
  try {
    check_gl_vk_device(other, vk->info());
    FAIL() << "a GL context on another GPU was accepted";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(to_string(*other.device_uuid)), std::string::npos) << what;
    EXPECT_NE(what.find(to_string(vk->info().device_uuid)), std::string::npos) << what;
  }
  GlInfo no_import = gl;
  no_import.memory_object_fd = false;
  EXPECT_THROW(check_gl_vk_device(no_import, vk->info()), Error);
}

TEST_F(VkGlTest, VulkanWritesGlReadsBuffersEvenAndOddSizes) {
  for (std::size_t size : {std::size_t(1), std::size_t(3), std::size_t(4096), std::size_t(12347)}) {
    SCOPED_TRACE(size);
    VkExportableBuffer buf(*vk, size);
    auto bytes = pattern(size, unsigned(size));
    buf.upload(bytes);  // waited for on the CPU fence before GL looks
    worker().run([&] {
      GlVkBuffer gl(buf);
      EXPECT_EQ(gl.size(), size);
      std::vector<std::byte> out(size);
      HANDOFF_GL_CHECK(glGetNamedBufferSubData(gl.name(), 0, GLsizeiptr(size), out.data()));
      EXPECT_EQ(out, bytes);
    });
  }
}

TEST_F(VkGlTest, GlWritesVulkanReadsBuffers) {
  for (std::size_t size : {std::size_t(5), std::size_t(65536), std::size_t(1001)}) {
    SCOPED_TRACE(size);
    VkExportableBuffer buf(*vk, size);
    auto bytes = pattern(size, unsigned(size) + 1);
    worker().run([&] {
      GlVkBuffer gl(buf);
      HANDOFF_GL_CHECK(glNamedBufferSubData(gl.name(), 0, GLsizeiptr(size), bytes.data()));
      gl_finish_for_vulkan();  // CPU fence: GL done before Vulkan reads
    });
    EXPECT_EQ(buf.download(), bytes);
  }
}

struct PlaneCase {
  PixelFormat format;
  std::uint32_t w, h;
};
const PlaneCase kPlaneCases[] = {{PixelFormat::NV12, 64, 36}, {PixelFormat::NV12, 33, 17},
                                 {PixelFormat::P010, 48, 20}, {PixelFormat::P010, 21, 15}};

TEST_F(VkGlTest, VulkanWritesGlReadsPlaneTexturesIdentically) {
  if (!vk->info().storage_image_r8_rg8) GTEST_SKIP() << "no R8/RG8 storage images on " << vk->info().name;
  for (const PlaneCase& c : kPlaneCases) {
    SCOPED_TRACE(std::string(to_string(c.format)) + " " + std::to_string(c.w) + "x" + std::to_string(c.h));
    VkFrameProducer p(*vk, c.format, c.w, c.h, VkFrameProducer::Target::Images);
    GlVkFrame gl(worker(), *p.images());
    ASSERT_NE(gl.luma_texture(), 0u);
    ASSERT_NE(gl.chroma_texture(), 0u);
    for (std::int64_t n : {0, 5}) {
      p.produce(n);
      auto& img = *p.images();
      EXPECT_EQ(gl_read_texture(gl.luma_texture(), img.luma().format(), c.w, c.h), img.luma().download());
      EXPECT_EQ(gl_read_texture(gl.chroma_texture(), img.chroma().format(), chroma_width(c.w), chroma_height(c.h)),
                img.chroma().download());
    }
    // And the bytes are the scene, not merely equal garbage.
    auto luma = gl_read_texture(gl.luma_texture(), p.images()->luma().format(), c.w, c.h);
    SceneCodes ref{c.format, {}, int(c.w), int(c.h), 5};
    std::uint32_t v = c.format == PixelFormat::NV12 ? std::uint32_t(luma[0])
                                                    : (std::uint32_t(luma[0]) | std::uint32_t(luma[1]) << 8) >> 6;
    EXPECT_NEAR(double(v), double(ref.luma(0, 0)), 1.0);
  }
}

TEST_F(VkGlTest, VulkanFrameBufferReadByGlAsAGlBufferFrame) {
  for (const PlaneCase& c : kPlaneCases) {
    SCOPED_TRACE(std::string(to_string(c.format)) + " " + std::to_string(c.w) + "x" + std::to_string(c.h));
    VkFrameProducer p(*vk, c.format, c.w, c.h, VkFrameProducer::Target::Buffer);
    GlVkFrame gl(worker(), *p.buffer());
    p.produce(3);
    Frame f = gl.frame();
    EXPECT_EQ(f.memory, MemoryKind::GlBuffer);
    EXPECT_EQ(f.gl_buffer, gl.buffer());
    EXPECT_EQ(f.chroma().offset, p.buffer()->layout().planes[1].offset);
    EXPECT_TRUE(f.owner);
    EXPECT_EQ(gl_read_buffer(gl.buffer(), p.buffer()->layout().buffer_bytes()), p.buffer()->buffer().download());
  }
}

struct TexCase {
  VkFormat format;
  std::uint32_t w, h;
};

TEST_F(VkGlTest, GlWritesVulkanReadsTextures) {
  for (TexCase c : {TexCase{VK_FORMAT_R8_UNORM, 31, 9}, TexCase{VK_FORMAT_R8G8_UNORM, 16, 8},
                    TexCase{VK_FORMAT_R16_UNORM, 7, 5}, TexCase{VK_FORMAT_R16G16_UNORM, 11, 3},
                    TexCase{VK_FORMAT_R8G8B8A8_UNORM, 13, 13}}) {
    SCOPED_TRACE(c.format);
    VkExportableImage img(*vk, c.w, c.h, c.format);
    auto texels = pattern(std::size_t(c.w) * c.h * img.texel_size(), c.w * 7 + c.h);
    worker().run([&] {
      GlVkTexture tex(img);
      GLenum format = (c.format == VK_FORMAT_R8_UNORM || c.format == VK_FORMAT_R16_UNORM) ? GL_RED
                      : c.format == VK_FORMAT_R8G8B8A8_UNORM                           ? GL_RGBA
                                                                                       : GL_RG;
      GLenum type = (c.format == VK_FORMAT_R16_UNORM || c.format == VK_FORMAT_R16G16_UNORM) ? GL_UNSIGNED_SHORT
                                                                                            : GL_UNSIGNED_BYTE;
      glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
      HANDOFF_GL_CHECK(glTextureSubImage2D(tex.name(), 0, 0, 0, GLsizei(c.w), GLsizei(c.h), format, type, texels.data()));
      gl_finish_for_vulkan();
    });
    EXPECT_EQ(img.download(), texels);
  }
}

TEST_F(VkGlTest, DescriptorOwnershipPassesOnSuccessOnly) {
  int before = open_fds();
  {
    // DMA_BUF descriptors do not go through GL_EXT_memory_object_fd: refused
    // before GL sees them, descriptor untouched.
    ExportedMemory dmabuf;
    dmabuf.fd.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    dmabuf.type = VkHandleType::DmaBuf;
    dmabuf.allocation_size = 4096;
    int raw = dmabuf.fd.get();
    worker().run([&] {
      try {
        GlVkMemory m(dmabuf);
        ADD_FAILURE() << "a DMA_BUF descriptor was imported as OPAQUE_FD";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("DMA_BUF"), std::string::npos) << e.what();
      }
    });
    EXPECT_EQ(dmabuf.fd.get(), raw) << "still the caller's";
    EXPECT_NE(fcntl(raw, F_GETFD), -1) << "and still open";

    // A successful import takes it: the ExportedMemory is left empty, and a
    // second import of the same (now empty) export is misuse.
    VkExportableBuffer buf(*vk, 256);
    ExportedMemory good = buf.export_memory();
    worker().run([&] {
      GlVkMemory m(good);
      EXPECT_NE(m.name(), 0u);
    });
    EXPECT_FALSE(good.fd) << "GL owns the descriptor after a successful import";
    worker().run([&] { EXPECT_THROW(GlVkMemory again(good), UsageError); });

    // Sizes that do not fit the allocation are refused before GL sees them.
    ExportedMemory small = buf.export_memory();
    worker().run([&] { EXPECT_THROW(GlVkBuffer b(small, std::size_t(small.allocation_size) + 1), UsageError); });
    EXPECT_TRUE(small.fd);
  }
  EXPECT_EQ(open_fds(), before) << "every descriptor closed, imported or not";
}

TEST_F(VkGlTest, GlObjectFillingTheAllocationFailsCleanly) {
  // llvmpipe refuses a GL object as large as the allocation behind it (why
  // exports are padded). A GL buffer spanning the whole allocation provokes a
  // real GL failure after the import took the descriptor: nothing may be left.
  VkExportableBuffer buf(*vk, 4096);
  int before = open_fds();
  {
    ExportedMemory m = buf.export_memory();
    bool refused = false;
    worker().run([&] {
      try {
        GlVkBuffer b(m, std::size_t(m.allocation_size));
      } catch (const Error& e) {
        refused = true;
        EXPECT_EQ(e.api(), Api::Gl);
        EXPECT_EQ(e.call(), "glNamedBufferStorageMemEXT") << e.what();
        EXPECT_EQ(e.code_name(), "GL_OUT_OF_MEMORY") << e.what();
      }
    });
    gl_errors().clear();  // the refusal was the point
    if (!refused && worker().info().renderer.find("llvmpipe") != std::string::npos)
      ADD_FAILURE() << "llvmpipe accepted an unpadded import: the padding rule may be obsolete";
    EXPECT_FALSE(m.fd) << "the import itself succeeded and took the descriptor";
  }
  // The memory object holding it, and the buffer made before the refusal,
  // were deleted on the failure path.
  worker().run([] {
    for (unsigned n = 1; n < 64; ++n) {
      if (glIsMemoryObjectEXT(n)) ADD_FAILURE() << "GL memory object " << n << " left";
      if (glIsBuffer(n)) ADD_FAILURE() << "GL buffer " << n << " left";
    }
  });
  EXPECT_EQ(open_fds(), before);
}

TEST_F(VkGlTest, TextureRefusedAfterTheImportLeavesNothing) {
  // The texture constructor fails half way: the memory object has taken the
  // descriptor and the texture exists when GL refuses the storage (wider than
  // GL_MAX_TEXTURE_SIZE; llvmpipe does not check the allocation's size).
  VkExportableImage img(*vk, 16, 16, VK_FORMAT_R8_UNORM);
  int before = open_fds();
  {
    ExportedMemory m = img.export_memory();
    worker().run([&] {
      GLint max = 0;
      glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max);
      const auto too_wide = std::uint32_t(max) + 1;
      try {
        GlVkTexture t(m, too_wide, 1, VK_FORMAT_R8_UNORM);
        ADD_FAILURE() << "a texture wider than GL_MAX_TEXTURE_SIZE";
      } catch (const Error& e) {
        EXPECT_EQ(e.api(), Api::Gl);
        EXPECT_EQ(e.call(), "glTextureStorageMem2DEXT") << e.what();
        EXPECT_NE(std::string(e.what()).find(std::to_string(too_wide) + "x1"), std::string::npos) << e.what();
      }
    });
    gl_errors().clear();  // the refusal was the point
    EXPECT_FALSE(m.fd) << "the import itself succeeded and took the descriptor";
  }
  worker().run([] {
    for (unsigned n = 1; n < 64; ++n) {
      if (glIsMemoryObjectEXT(n)) ADD_FAILURE() << "GL memory object " << n << " left";
      if (glIsTexture(n)) ADD_FAILURE() << "GL texture " << n << " left";
    }
  });
  EXPECT_EQ(open_fds(), before);
}

TEST_F(VkGlTest, AThousandExportImportReleaseCyclesLeaveNothing) {
  // Warm up once (drivers open descriptors lazily), then count.
  {
    VkExportableBuffer b(*vk, 4096);
    worker().run([&] { GlVkBuffer g(b); });
  }
  const int fds_before = open_fds();
  const std::size_t live_before = handoff::testing::live_resources(*worker().core());
  std::vector<unsigned> buffers, textures, memories;
  for (int i = 0; i < 1000; ++i) {
    std::size_t size = 4096 + std::size_t(i % 7) * 333;
    if (i % 4 == 3) {
      VkExportableImage img(*vk, 17 + i % 5, 9, VK_FORMAT_R8_UNORM);
      worker().run([&] {
        GlVkTexture t(img);
        if (i % 100 == 3) textures.push_back(t.name());
      });
    } else if (i % 4 == 2) {
      VkFrameBuffer fb(*vk, PixelFormat::NV12, 16 + i % 3, 8);
      GlVkFrame g(worker(), fb);
      if (i % 100 == 2) buffers.push_back(g.buffer());
    } else {
      VkExportableBuffer b(*vk, size);
      worker().run([&] {
        GlVkBuffer g(b);
        if (i % 100 == 0) buffers.push_back(g.name());
      });
    }
  }
  // GlVkFrame releases are queued on the worker; a run() after them drains the queue.
  worker().run([&] {
    for (unsigned b : buffers) EXPECT_FALSE(glIsBuffer(b)) << "GL buffer " << b << " left";
    for (unsigned t : textures) EXPECT_FALSE(glIsTexture(t)) << "GL texture " << t << " left";
    // Memory objects are named from 1 upwards; none of the first thousands survives.
    for (unsigned m = 1; m < 1200; ++m)
      if (glIsMemoryObjectEXT(m)) ADD_FAILURE() << "GL memory object " << m << " left";
  });
  EXPECT_EQ(handoff::testing::live_resources(*worker().core()), live_before);
  EXPECT_EQ(open_fds(), fds_before) << "descriptors left open";
  // Vulkan objects: the validation layer's object tracker reports any left at
  // vkDestroyDevice, which TearDown turns into a failure.
}

TEST_F(VkGlTest, GlVkSourceProducesTheSceneIntoGlTextures) {
  if (!vk->info().storage_image_r8_rg8) GTEST_SKIP() << "no R8/RG8 storage images on " << vk->info().name;
  DebugMessages src_log;
  for (PixelFormat fmt : {PixelFormat::NV12, PixelFormat::P010}) {
    worker().run([&] {
      VkContextOptions o;
      o.validation = true;
      o.on_message = src_log.vk_sink();
      GlVkSource src(fmt, 40, 30, {ColorMatrix::BT709, ColorRange::Limited}, o);
      EXPECT_EQ(src.sync(), gl_vk_sync(worker().info(), src.vulkan().info()));
      src.produce(4);
      EXPECT_EQ(src.frame().index, 4);
      EXPECT_EQ(src.frame().format, fmt);
      std::size_t bps = bytes_per_sample(fmt);
      std::vector<std::byte> luma(40 * 30 * bps);
      glPixelStorei(GL_PACK_ALIGNMENT, 1);
      HANDOFF_GL_CHECK(glGetTextureImage(src.luma_texture(), 0, GL_RED, bps == 1 ? GL_UNSIGNED_BYTE : GL_UNSIGNED_SHORT,
                                         GLsizei(luma.size()), luma.data()));
      SceneCodes ref{fmt, {}, 40, 30, 4};
      int far = 0;
      for (int y = 0; y < 30; ++y)
        for (int x = 0; x < 40; ++x) {
          std::uint32_t v = bps == 1 ? std::uint32_t(luma[y * 40 + x])
                                     : (std::uint32_t(luma[2 * (y * 40 + x)]) |
                                        std::uint32_t(luma[2 * (y * 40 + x) + 1]) << 8) >> 6;
          std::uint32_t want = ref.luma(x, y);
          if ((v > want ? v - want : want - v) > 1) ++far;
        }
      EXPECT_EQ(far, 0);
      gl_finish_for_vulkan();
      src.produce(5);
    });
  }
  src_log.fail_on_any("Vulkan validation message in GlVkSource's own context");
}

}  // namespace
}  // namespace handoff::test
