// The Viewer's CUDA path on a real GPU (label cuda; scripts/gpu-check runs it):
// a CUDA frame copied device to device into the registered GL buffer, and
// acquire / present with the ring's device pointers. Skips, saying why,
// without a usable CUDA driver, or where GL is not on the CUDA device.
#include <gtest/gtest.h>

#include "cuda_frames.hpp"

namespace handoff::viewer::test {
namespace {

class ViewerCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    const cuda::Driver& d = cuda::driver();
    if (!d.usable()) GTEST_SKIP() << "no CUDA driver: " << d.describe();
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
  if (!cuda_mapped(v, why)) GTEST_SKIP() << "GL does not share the CUDA device here: " << why;
}

TEST_F(ViewerCuda, AcquireAndPresentOnTheDevice) {
  Viewer v(options());
  {
    ViewerFrame probe = v.acquire(PixelFormat::NV12, 64, 48);
    if (probe.frame().memory != MemoryKind::Cuda) {
      v.present(std::move(probe));
      (void)v.snapshot();
      GTEST_SKIP() << "GL does not share the CUDA device here: " << v.stream().memory;
    }
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
}  // namespace handoff::viewer::test
