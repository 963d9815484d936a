// The scene kernel on a real GPU (label cuda): its output must equal the CPU
// renderer's byte for byte (same scene_math.hpp, nvcc -fmad=false), for the
// embedded PTX (JIT) and, on compute capability 9.0, the sm_90 cubin; it must
// not write outside the rows (pitch padding stays untouched). Skipped, saying
// why, where there is no CUDA GPU or no embedded kernel (built without nvcc).
#include <handoff/cuda.hpp>
#include <handoff/media/scene.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>

#include <gtest/gtest.h>

#include "cuda_gpu.hpp"

#include <cstring>
#include <vector>

namespace handoff::media {
namespace abi = cuda::abi;
namespace {

struct DeviceBuffer {
  const cuda::Driver& drv;
  abi::CUdeviceptr ptr = 0;
  DeviceBuffer(const cuda::Driver& d, std::size_t bytes) : drv(d) {
    HANDOFF_CU_CHECK(drv.api().cuMemAlloc(&ptr, bytes));
  }
  ~DeviceBuffer() {
    if (ptr) drv.api().cuMemFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Module {
  const cuda::Driver& drv;
  abi::CUmodule mod = nullptr;
  Module(const cuda::Driver& d, const void* image) : drv(d) {
    HANDOFF_CU_CHECK(drv.api().cuModuleLoadData(&mod, image));
  }
  ~Module() {
    if (mod) drv.api().cuModuleUnload(mod);
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
};

void compare_with_cpu(const cuda::Driver& drv, abi::CUfunction fn, const SceneOptions& o, std::int64_t index) {
  SCOPED_TRACE(std::to_string(o.width) + "x" + std::to_string(o.height) + " " +
               std::string(to_string(o.format)) + " frame " + std::to_string(index));
  HostFrame cpu(o.format, o.width, o.height, 256);
  const scene::SceneState state = scene_state(o, index);
  render_scene_cpu(state, cpu.target());

  const std::size_t lbytes = cpu.luma_pitch() * o.height, cbytes = cpu.chroma_pitch() * chroma_height(o.height);
  DeviceBuffer luma(drv, lbytes), chroma(drv, cbytes);
  HANDOFF_CU_CHECK(drv.api().cuMemsetD8(luma.ptr, 0xCD, lbytes));
  HANDOFF_CU_CHECK(drv.api().cuMemsetD8(chroma.ptr, 0xCD, cbytes));
  abi::CUdeviceptr lp = luma.ptr, cp = chroma.ptr;
  std::size_t lpitch = cpu.luma_pitch(), cpitch = cpu.chroma_pitch();
  scene::SceneState arg = state;
  void* params[] = {&lp, &lpitch, &cp, &cpitch, &arg};
  const Grid g = scene_grid(o.width, o.height);
  HANDOFF_CU_CHECK(drv.api().cuLaunchKernel(fn, g.x, g.y, 1, kSceneBlock, kSceneBlock, 1, 0, nullptr, params, nullptr));
  HANDOFF_CU_CHECK(drv.api().cuCtxSynchronize());
  std::vector<std::uint8_t> gl(lbytes), gc(cbytes);
  HANDOFF_CU_CHECK(drv.api().cuMemcpyDtoH(gl.data(), luma.ptr, lbytes));
  HANDOFF_CU_CHECK(drv.api().cuMemcpyDtoH(gc.data(), chroma.ptr, cbytes));

  const std::size_t bps = bytes_per_sample(o.format);
  auto check_plane = [&](const std::vector<std::uint8_t>& gpu, const std::uint8_t* ref, std::size_t pitch,
                         std::size_t rows, std::size_t row_bytes, const char* name) {
    std::size_t mismatches = 0, padding_written = 0;
    for (std::size_t y = 0; y < rows; ++y) {
      for (std::size_t x = 0; x < row_bytes; ++x) mismatches += gpu[y * pitch + x] != ref[y * pitch + x];
      for (std::size_t x = row_bytes; x < pitch; ++x) padding_written += gpu[y * pitch + x] != 0xCD;
    }
    EXPECT_EQ(mismatches, 0u) << name << ": GPU and CPU differ";
    EXPECT_EQ(padding_written, 0u) << name << ": the kernel wrote into the pitch padding";
  };
  check_plane(gl, cpu.luma(), cpu.luma_pitch(), o.height, bps * o.width, "luma");
  check_plane(gc, cpu.chroma(), cpu.chroma_pitch(), chroma_height(o.height), 2 * bps * chroma_width(o.width), "chroma");
}

TEST(SceneKernel, MatchesTheCpuRendererOnTheGpu) {
  const cuda::Driver& drv = cuda::driver();
  HANDOFF_REQUIRE_CUDA_GPU(drv);
  if (!has_cuda_kernel()) GTEST_SKIP() << "built without nvcc: no embedded scene kernel";
  cuda::PrimaryContext ctx(drv, 0);
  cuda::ScopedContext current(ctx);
  const cuda::DeviceInfo dev = drv.device(0);

  std::vector<std::pair<const char*, const void*>> images = {{"PTX", scene_ptx().data()}};
  if (dev.cc_major == 9 && dev.cc_minor == 0) images.push_back({"sm_90 cubin", scene_cubin().data()});
  for (auto [what, image] : images) {
    SCOPED_TRACE(what);
    Module m(drv, image);
    abi::CUfunction fn = nullptr;
    HANDOFF_CU_CHECK(drv.api().cuModuleGetFunction(&fn, m.mod, kSceneKernelName));
    for (auto [w, h] : {std::pair{1920u, 1080u}, std::pair{333u, 199u}, std::pair{1u, 1u}}) {
      for (PixelFormat f : {PixelFormat::NV12, PixelFormat::P010}) {
        SceneOptions o;
        o.width = w;
        o.height = h;
        o.format = f;
        o.colorimetry = f == PixelFormat::P010
                            ? Colorimetry{ColorMatrix::BT2020, ColorRange::Limited, ChromaSiting::Left}
                            : Colorimetry{ColorMatrix::BT709, ColorRange::Full, ChromaSiting::Left};
        for (std::int64_t index : {0, 123}) compare_with_cpu(drv, fn, o, index);
      }
    }
  }
}

}  // namespace
}  // namespace handoff::media
