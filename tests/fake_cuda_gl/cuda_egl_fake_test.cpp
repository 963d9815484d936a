// The EGLImage route into CUDA (handoff/cuda_egl.hpp) against the fake CUDA
// driver on llvmpipe: an EGLImage (made here from a GL texture, which llvmpipe
// can do; DMA-BUF imports it cannot) registered, mapped and described as a
// pitched plane; each entry point failing in turn leaving nothing registered
// or mapped; a driver without the route; the DMA-BUF import's errors naming
// what is missing; import_dmabuf_plane() choosing between the two routes.
#include <glad/gl.h>

#include <handoff/cuda.hpp>
#include <handoff/cuda_egl.hpp>
#include <handoff/error.hpp>
#include <handoff/gl_worker.hpp>
#ifdef HANDOFF_HAVE_VULKAN
#include <handoff/vk_cuda.hpp>
#endif

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include <handoff/cuda_abi.hpp>
#include "fake_cuda_control.hpp"
#include "gl_fixture.hpp"

#include <gtest/gtest.h>

namespace handoff {
namespace abi = cuda::abi;
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

class CudaEglFake : public test::GlWorkerFixture {
 protected:
  void SetUp() override {
    test::GlWorkerFixture::SetUp();
    ASSERT_TRUE(fake.ok()) << fake.error();
    fake.reset();
    ASSERT_TRUE(cuda::driver().usable()) << cuda::driver().describe();
    ctx = cuda::PrimaryContext(cuda::driver(), 0);
    // An EGLImage of a 64x32 RG8 texture, made on the worker's context.
    worker().run([&] {
      display = eglGetCurrentDisplay();
      const char* ext = eglQueryString(display, EGL_EXTENSIONS);
      ASSERT_TRUE(ext && std::strstr(ext, "EGL_KHR_gl_texture_2D_image")) << "llvmpipe's EGL makes GL-texture images";
      glCreateTextures(GL_TEXTURE_2D, 1, &texture);
      glTextureStorage2D(texture, 1, GL_RG8, 64, 32);
      auto create = reinterpret_cast<PFNEGLCREATEIMAGEKHRPROC>(eglGetProcAddress("eglCreateImageKHR"));
      image = create(display, eglGetCurrentContext(), EGL_GL_TEXTURE_2D_KHR,
                     reinterpret_cast<EGLClientBuffer>(static_cast<std::uintptr_t>(texture)), nullptr);
      ASSERT_NE(image, EGL_NO_IMAGE_KHR) << "eglCreateImageKHR: 0x" << std::hex << eglGetError();
    });
    registrations = fake.live_registrations();
    mappings = fake.live_mappings();
  }
  void TearDown() override {
    if (image != EGL_NO_IMAGE_KHR || texture) {
      worker().run([&] {
        auto destroy = reinterpret_cast<PFNEGLDESTROYIMAGEKHRPROC>(eglGetProcAddress("eglDestroyImageKHR"));
        if (image != EGL_NO_IMAGE_KHR) destroy(display, image);
        glDeleteTextures(1, &texture);
      });
    }
    if (fake.ok()) fake.reset();
    ctx.reset();
    test::GlWorkerFixture::TearDown();
  }
  void expect_nothing_left(const std::string& when) {
    EXPECT_EQ(fake.live_registrations(), registrations) << when;
    EXPECT_EQ(fake.live_mappings(), mappings) << when;
  }

  test::FakeCuda fake;
  cuda::PrimaryContext ctx;
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLImageKHR image = EGL_NO_IMAGE_KHR;
  GLuint texture = 0;
  int registrations = 0, mappings = 0;
};

TEST_F(CudaEglFake, RegistersMapsAndDescribesAPitchedPlaneThenReleasesIt) {
  fake.set_egl_images(64, 32, 2, 1);
  {
    CudaEglImage cuda_image(ctx, image);
    const CudaEglPlane& p = cuda_image.plane();
    EXPECT_TRUE(p.pitched);
    EXPECT_NE(p.device_pointer, 0u);
    EXPECT_EQ(p.array, nullptr);
    EXPECT_EQ(p.width, 64u);
    EXPECT_EQ(p.height, 32u);
    EXPECT_EQ(p.pitch, 256u) << "the fake's pitch: the 128-byte row rounded up to 256";
    EXPECT_EQ(p.channels, 2u);
    EXPECT_EQ(fake.live_registrations(), registrations + 1);
    EXPECT_EQ(fake.live_mappings(), mappings + 1);
    // Read-only registration by default, registered without a GL context on this thread.
    EXPECT_EQ(fake.call_count("cuGraphicsEGLRegisterImage"), 1);
  }
  expect_nothing_left("after destruction");
  EXPECT_EQ(fake.call_count("cuGraphicsUnmapResources"), 1);
  EXPECT_EQ(fake.call_count("cuGraphicsUnregisterResource"), 1);
}

TEST_F(CudaEglFake, AnImageTheDriverKeepsAsACudaArrayIsDescribedAsAnArray) {
  fake.set_egl_images(64, 32, 2, 1);
  fake.set_egl_arrays(1);
  {
    CudaEglImage cuda_image(ctx, image);
    const CudaEglPlane& p = cuda_image.plane();
    EXPECT_FALSE(p.pitched);
    EXPECT_NE(p.array, nullptr);
    EXPECT_EQ(p.device_pointer, 0u) << "an array has no linear address";
    EXPECT_EQ(p.pitch, 0u);
    EXPECT_EQ(p.width, 64u);
    EXPECT_EQ(p.height, 32u);
    EXPECT_EQ(p.channels, 2u);
    EXPECT_EQ(fake.live_mappings(), mappings + 1);
  }
  expect_nothing_left("after destruction");
}

TEST_F(CudaEglFake, TheImageKeepsItsContextWhenTheCallersLastOneGoes) {
  fake.set_egl_images(64, 32, 2, 1);
  ASSERT_EQ(fake.primary_context_refs(0), 1) << "the fixture's context is the caller's only one";
  const int resets = fake.context_resets(0);
  auto cuda_image = std::make_unique<CudaEglImage>(ctx, image);
  ctx.reset();  // the caller's last PrimaryContext goes before the image
  EXPECT_EQ(fake.context_resets(0), resets) << "the image keeps its context retained";
  {
    // A consumer in the device's primary context writes the whole plane.
    cuda::PrimaryContext consumer(cuda::driver(), 0);
    cuda::ScopedContext cur(consumer);
    const CudaEglPlane& p = cuda_image->plane();
    EXPECT_EQ(cuda::driver().api().cuMemsetD8(p.device_pointer, 0x5a, std::size_t(p.pitch) * p.height),
              abi::CUDA_SUCCESS);
    cuda_image.reset();
  }
  EXPECT_EQ(fake.objects_lost_to_resets(), 0) << "nothing was destroyed under the image";
  expect_nothing_left("after the image is gone");
}

TEST_F(CudaEglFake, EachEntryPointFailingInTurnLeavesNothingRegisteredOrMapped) {
  fake.set_egl_images(64, 32, 2, 1);
  for (const char* entry : {"cuGraphicsEGLRegisterImage", "cuGraphicsMapResources",
                            "cuGraphicsResourceGetMappedEglFrame"}) {
    fake.fail(entry, abi::CUDA_ERROR_OUT_OF_MEMORY, 0);
    const int unmaps = fake.call_count("cuGraphicsUnmapResources");
    try {
      CudaEglImage cuda_image(ctx, image);
      ADD_FAILURE() << entry << " failed and the image was still made";
    } catch (const Error& e) {
      EXPECT_EQ(e.call(), entry);
      EXPECT_NE(std::string(e.what()).find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos) << e.what();
    }
    fake.fail(entry, 0, 0);
    expect_nothing_left(std::string("after ") + entry + " failed");
    // What was mapped is unmapped before it is unregistered (the fake would
    // unmap on unregistration; a driver need not).
    const bool was_mapped = std::strcmp(entry, "cuGraphicsResourceGetMappedEglFrame") == 0;
    EXPECT_EQ(fake.call_count("cuGraphicsUnmapResources") - unmaps, was_mapped ? 1 : 0) << entry;
  }
}

TEST_F(CudaEglFake, ADriverThatDoesNotTakeTheImageSaysSo) {
  // set_egl_images() not called: the fake refuses like a driver without EGL interop.
  const std::string m = message_of([&] { CudaEglImage cuda_image(ctx, image); });
  EXPECT_NE(m.find("cuGraphicsEGLRegisterImage"), std::string::npos) << m;
  EXPECT_NE(m.find("CUDA_ERROR_NOT_SUPPORTED"), std::string::npos) << m;
  expect_nothing_left("after the refusal");
}

TEST_F(CudaEglFake, ADmaBufImageNamesWhatIsMissing) {
  // A memfd stands in for the DMA-BUF: llvmpipe's EGL either lacks the import
  // extension (the error names it) or refuses a descriptor that is no DMA-BUF
  // (the error names eglCreateImageKHR and the plane).
  const int fd = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 64 * 32), 0);
  DmaBufPlane plane{fd, 64, 32, kDrmFormatR8, 0, 64, {}};
  bool has_import = false;
  std::string m;
  worker().run([&] {
    const char* ext = eglQueryString(display, EGL_EXTENSIONS);
    has_import = ext && std::strstr(ext, "EGL_EXT_image_dma_buf_import");
    m = message_of([&] { EglDmaBufImage img(display, plane); });
  });
  if (has_import) {
    EXPECT_NE(m.find("eglCreateImageKHR"), std::string::npos) << m;
    EXPECT_NE(m.find("64x32 R8"), std::string::npos) << m;
  } else {
    EXPECT_NE(m.find("EGL_EXT_image_dma_buf_import"), std::string::npos) << m;
  }
  EXPECT_NE(m.find("(no exception)"), 0u);
  // Bad planes are refused before EGL sees them.
  plane.pitch = 0;
  EXPECT_THROW(EglDmaBufImage(display, plane), UsageError);
  ::close(fd);
}

TEST_F(CudaEglFake, TheRouteReportSaysWhatIsMissing) {
  EXPECT_EQ(egl_route_unavailable(nullptr), "no EGL display");
  bool has_import = false;
  std::string why;
  worker().run([&] {
    const char* ext = eglQueryString(display, EGL_EXTENSIONS);
    has_import = ext && std::strstr(ext, "EGL_EXT_image_dma_buf_import");
    why = egl_route_unavailable(display);
  });
  // The fake has both entry points, so only the display can be what is missing.
  if (has_import) EXPECT_EQ(why, "");
  else EXPECT_NE(why.find("EGL_EXT_image_dma_buf_import"), std::string::npos) << why;
}

#ifdef HANDOFF_HAVE_VULKAN
ExportedMemory dmabuf_memory(std::size_t bytes) {
  ExportedMemory m;
  m.fd = UniqueFd(memfd_create("dmabuf-stand-in", MFD_CLOEXEC));
  if (m.fd && ftruncate(m.fd.get(), off_t(bytes)) != 0) m.fd = UniqueFd();
  m.type = VkHandleType::DmaBuf;
  m.allocation_size = m.size = bytes;
  return m;
}

TEST_F(CudaEglFake, ImportDmaBufPlaneTakesExternalMemoryWhenTheDriverAcceptsIt) {
  ExportedMemory m = dmabuf_memory(64 * 32 + 4096);
  ASSERT_TRUE(m.fd);
  ASSERT_EQ(fake.declare_dmabuf(m.fd.get()), 0) << "the memfd stands for a DMA-BUF";
  const DmaBufPlane plane{-1, 64, 32, kDrmFormatR8, 4096, 64, {}};
  {
    CudaDmaBufPlane p = import_dmabuf_plane(ctx, m, plane, display);
    EXPECT_FALSE(p.via_egl_image);
    EXPECT_NE(p.device_pointer, 0u);
    EXPECT_EQ(p.pitch, 64u);
    EXPECT_FALSE(m.fd) << "CUDA took the descriptor";
    EXPECT_EQ(fake.live_external_memories(), 1);
  }
  EXPECT_EQ(fake.live_external_memories(), 0);
  EXPECT_EQ(fake.call_count("cuGraphicsEGLRegisterImage"), 0) << "the EGL route was not needed";
}

// A memfd nobody declared a DMA-BUF stand-in is refused as external memory
// (CUDA_ERROR_INVALID_VALUE) and the EGLImage route is tried: on llvmpipe
// (no EGL_EXT_image_dma_buf_import here) that fails too and the error names
// both; where EGL takes it, the plane is the fake's CUDA array.
TEST_F(CudaEglFake, AMemfdThatIsNoDmaBufIsRefusedAsExternalMemoryAndTheEglRouteIsTried) {
  fake.set_egl_images(64, 32, 1, 1);
  fake.set_egl_arrays(1);
  ExportedMemory m = dmabuf_memory(64 * 32);  // undeclared: no DMA-BUF to the fake
  ASSERT_TRUE(m.fd);
  const DmaBufPlane plane{-1, 64, 32, kDrmFormatR8, 0, 64, {}};
  bool has_import = false;
  worker().run([&] {
    const char* ext = eglQueryString(display, EGL_EXTENSIONS);
    has_import = ext && std::strstr(ext, "EGL_EXT_image_dma_buf_import");
  });
  if (!has_import) {
    // llvmpipe without the import: the EGL route fails too, and both are named.
    const std::string why = message_of([&] { import_dmabuf_plane(ctx, m, plane, display); });
    EXPECT_NE(why.find("CUDA_ERROR_INVALID_VALUE"), std::string::npos) << why;
    EXPECT_NE(why.find("EGL_EXT_image_dma_buf_import"), std::string::npos) << why;
    EXPECT_TRUE(m.fd);
    return;
  }
  std::string failure;
  try {
    CudaDmaBufPlane p = import_dmabuf_plane(ctx, m, plane, display);
    EXPECT_TRUE(p.via_egl_image);
    EXPECT_NE(p.array, nullptr);
    EXPECT_EQ(p.device_pointer, 0u);
  } catch (const Error& e) {
    failure = e.what();  // llvmpipe refusing a memfd as a DMA-BUF in eglCreateImageKHR
  }
  if (!failure.empty()) {
    EXPECT_NE(failure.find("eglCreateImageKHR"), std::string::npos) << failure;
    EXPECT_NE(failure.find("CUDA_ERROR_INVALID_VALUE"), std::string::npos) << failure;
  }
  EXPECT_EQ(fake.live_external_memories(), 0);
  expect_nothing_left("after the plane went");
}

TEST_F(CudaEglFake, ImportDmaBufPlaneNamesBothRoutesWhenNeitherWorks) {
  fake.set_egl_images(64, 32, 1, 1);
  fake.fail("cuImportExternalMemory", abi::CUDA_ERROR_NOT_SUPPORTED, 0);
  ExportedMemory m = dmabuf_memory(64 * 32);
  ASSERT_TRUE(m.fd);
  const DmaBufPlane plane{-1, 64, 32, kDrmFormatR8, 0, 64, {}};
  const std::string m1 = message_of([&] { import_dmabuf_plane(ctx, m, plane, display); });
  EXPECT_NE(m1.find("neither route"), std::string::npos) << m1;
  EXPECT_NE(m1.find("external memory: "), std::string::npos) << m1;
  EXPECT_NE(m1.find("CUDA_ERROR_NOT_SUPPORTED"), std::string::npos) << m1;
  EXPECT_NE(m1.find("EGLImage route: "), std::string::npos) << m1;
  EXPECT_TRUE(m.fd) << "a failed import leaves the descriptor with the caller";
  // Without a display there is no second route to try; the error says so.
  const std::string m2 = message_of([&] { import_dmabuf_plane(ctx, m, plane, nullptr); });
  EXPECT_NE(m2.find("no EGL display"), std::string::npos) << m2;
  expect_nothing_left("after both refusals");
  EXPECT_EQ(fake.live_external_memories(), 0);
  // A plane outside the allocation is refused before any driver call.
  const DmaBufPlane outside{-1, 64, 64, kDrmFormatR8, 0, 64, {}};
  EXPECT_THROW(import_dmabuf_plane(ctx, m, outside, display), UsageError);
}
#endif

}  // namespace
}  // namespace handoff
