// The Viewer's CUDA path on a real GPU (label cuda; scripts/gpu-check runs it):
// a CUDA frame copied device to device into the registered GL buffer, and
// acquire / present with the ring's device pointers. Skips, saying why,
// where there is no CUDA GPU; where there is one, GL not sharing the CUDA
// device (the viewer fell back to host buffers) is a failure.
#include <gtest/gtest.h>

#include "cuda_frames.hpp"
#include "cuda_gpu.hpp"
#include <handoff/cuda_check.hpp>

namespace handoff::view::test {
namespace {

class ViewerCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    HANDOFF_REQUIRE_CUDA_GPU(cuda::driver());
  }
  static ViewerOptions options() {
    ViewerOptions o;
    o.title = "cuda";
    o.width = 320;
    o.height = 240;
    o.display = ViewerDisplay::Headless;
    o.gl_debug = true;
    return o;
  }
  // The buffers must be the GPU's own (else the host path was tested).
  static bool cuda_mapped(const Viewer& v, std::string& why) {
    why = v.stream().memory;
    return why.find("CUDA-mapped") != std::string::npos;
  }
};

TEST_F(ViewerCuda, ACudaFrameIsShownWithTheReferenceColours) {
  Viewer v(options());
  const Colorimetry c{ColorMatrix::BT709, ColorRange::Limited, ChromaSiting::Left};
  for (PixelFormat f : {PixelFormat::NV12, PixelFormat::P010}) {
    DeviceFrame dev(quadrant_frame(f, 1920, 1080, c));
    for (int i = 0; i < 10; ++i) v.show(dev.frame());
    expect_quadrants(v.snapshot(), f, c);
  }
  EXPECT_EQ(v.diagnostics().gl_errors, 0u) << v.diagnostics().first_gl_error;
  std::string why;
  EXPECT_TRUE(cuda_mapped(v, why)) << "a CUDA GPU is here and the viewer fell back to host buffers (GL does not "
                                      "share the CUDA device, or registering / mapping its buffers failed): "
                                   << why;
}

TEST_F(ViewerCuda, AcquireAndPresentOnTheDevice) {
  Viewer v(options());
  {
    ViewerFrame probe = v.acquire(PixelFormat::NV12, 64, 48);
    const bool on_device = probe.frame().memory == MemoryKind::Cuda;
    v.present(std::move(probe));
    (void)v.snapshot();
    ASSERT_TRUE(on_device) << "a CUDA GPU is here and the viewer's slots are host buffers (GL does not share "
                              "the CUDA device, or registering / mapping its buffers failed): "
                           << v.stream().memory;
  }
  const Colorimetry c{};
  cuda::PrimaryContext ctx(cuda::driver(), 0);
  for (int round = 0; round < 5; ++round) {
    ViewerFrame slot = v.acquire(PixelFormat::P010, 1280, 720, c);
    const Frame& f = slot.frame();
    ASSERT_EQ(f.memory, MemoryKind::Cuda);
    const Frame host = quadrant_frame(PixelFormat::P010, 1280, 720, c);
    cuda::ScopedContext current(ctx);
    for (int p = 0; p < 2; ++p) {
      cuda::abi::CUDA_MEMCPY2D m{};
      m.srcMemoryType = cuda::abi::CU_MEMORYTYPE_HOST;
      m.srcHost = host.planes[std::size_t(p)].data;
      m.srcPitch = host.planes[std::size_t(p)].pitch;
      m.dstMemoryType = cuda::abi::CU_MEMORYTYPE_DEVICE;
      m.dstDevice = reinterpret_cast<cuda::abi::CUdeviceptr>(f.planes[std::size_t(p)].data);
      m.dstPitch = f.planes[std::size_t(p)].pitch;
      m.WidthInBytes = plane_layout(f.format, f.width, f.height, p).row_bytes;
      m.Height = f.planes[std::size_t(p)].height;
      HANDOFF_CU_CHECK(cuda::driver().api().cuMemcpy2D(&m));
    }
    v.present(std::move(slot));
    expect_quadrants(v.snapshot(), PixelFormat::P010, c);
  }
}

}  // namespace
}  // namespace handoff::view::test
