#pragma once
// CUDA frames for the Viewer tests (fake driver and real GPU): a device copy
// of a host frame, and the quadrant check through a snapshot.
#include <gtest/gtest.h>

#include <handoff/cuda.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/viewer.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>
#include "viewer_frames.hpp"

namespace handoff::view::test {

// A device copy of a host frame: a pitched allocation per plane (one to
// three, as its format has) in the primary context of device 0, filled with
// cuMemcpy2D.
class DeviceFrame {
 public:
  explicit DeviceFrame(const Frame& host) : ctx_(cuda::driver(), 0) {
    const cuda::Driver& d = cuda::driver();
    cuda::ScopedContext current(ctx_);
    frame_ = host;
    frame_.memory = MemoryKind::Cuda;
    frame_.device = 0;
    frame_.cuda_context = ctx_.handle();
    frame_.owner = nullptr;
    for (int p = 0; p < plane_count(host.format); ++p) {
      const Plane& hp = host.planes[std::size_t(p)];
      HANDOFF_CU_CHECK(d.api().cuMemAlloc(&ptr_[p], hp.pitch * hp.height));
      cuda::abi::CUDA_MEMCPY2D m{};
      m.srcMemoryType = cuda::abi::CU_MEMORYTYPE_HOST;
      m.srcHost = hp.data;
      m.srcPitch = hp.pitch;
      m.dstMemoryType = cuda::abi::CU_MEMORYTYPE_DEVICE;
      m.dstDevice = ptr_[p];
      m.dstPitch = hp.pitch;
      m.WidthInBytes = plane_layout(host.format, host.width, host.height, p).row_bytes;
      m.Height = hp.height;
      HANDOFF_CU_CHECK(d.api().cuMemcpy2D(&m));
      frame_.planes[std::size_t(p)].data = reinterpret_cast<void*>(ptr_[p]);
    }
  }
  ~DeviceFrame() {
    cuda::ScopedContext current(ctx_);
    for (cuda::abi::CUdeviceptr p : ptr_)
      if (p) cuda::driver().api().cuMemFree(p);
  }
  const Frame& frame() const { return frame_; }

 private:
  cuda::PrimaryContext ctx_;
  cuda::abi::CUdeviceptr ptr_[kMaxPlanes] = {0, 0, 0};
  Frame frame_;
};

inline void expect_quadrants(const RgbaImage& img, PixelFormat f, Colorimetry c) {
  const auto q = quadrant_colours(f, c);
  const std::uint32_t xs[2] = {img.width() / 4, 3 * img.width() / 4}, ys[2] = {img.height() / 4, 3 * img.height() / 4};
  for (int i = 0; i < 4; ++i) {
    const auto want = expected_rgb(q[std::size_t(i)], f, c);
    const std::uint8_t* p = img.pixel(xs[i % 2], ys[i / 2]);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(int(p[k]), int(want[std::size_t(k)]), 1) << "quadrant " << i;
  }
}

}  // namespace handoff::view::test
