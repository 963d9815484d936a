// The Viewer's CUDA path against the fake CUDA driver (host memory behind
// "device" pointers, every documented rule of the API enforced): the ring's
// buffers are registered with CUDA; a CUDA frame is copied device to device
// with cuMemcpy2DAsync on the viewer's stream (no host round trip), a host
// frame host to device; acquire() hands out CUDA pointers; nothing stays
// registered, mapped or allocated once the viewer is gone.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>


#include "cuda_frames.hpp"
#include "format_frames.hpp"
#include "fake_cuda_control.hpp"
#include "interop_testing.hpp"
#include <handoff/cuda_check.hpp>

namespace handoff::view::test {
namespace {

ViewerOptions cuda_options() {
  ViewerOptions o;
  o.title = "fake-cuda";
  o.width = 320;
  o.height = 240;
  o.display = ViewerDisplay::Headless;
  o.memory = ViewerMemory::Cuda;
  o.gl_debug = true;
  return o;
}

class ViewerFakeCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fake_.ok()) << fake_.error();
    fake_.reset();
    const std::optional<std::string> gl = handoff::testing::gl_device_uuid();
    ASSERT_TRUE(gl) << "GL reports no GL_DEVICE_UUID_EXT";
    ASSERT_EQ(fake_.set_uuid(gl->c_str()), 0);  // the fake is the GL device: the same-GPU check runs and passes
  }
  void TearDown() override {
    EXPECT_EQ(fake_.live_mappings(), 0);
    EXPECT_EQ(fake_.live_registrations(), 0);
    EXPECT_EQ(fake_.live_streams(), 0);
    EXPECT_EQ(fake_.live_allocations(), 0);
  }
  handoff::test::FakeCuda fake_;
};

TEST_F(ViewerFakeCuda, ACudaFrameIsCopiedDeviceToDeviceIntoTheRegisteredBuffer) {
  const Colorimetry c{};
  Viewer v(cuda_options());
  for (PixelFormat f : {PixelFormat::NV12, PixelFormat::P010}) {
    const Frame host = quadrant_frame(f, 96, 64, c);
    DeviceFrame dev(host);
    const int async = fake_.call_count("cuMemcpy2DAsync"), sync = fake_.call_count("cuMemcpy2D");
    const int to_host = fake_.call_count("cuMemcpyDtoH"), maps = fake_.call_count("cuGraphicsMapResources");
    v.show(dev.frame());
    EXPECT_EQ(fake_.call_count("cuMemcpy2DAsync"), async + 2) << "one copy per plane, on the viewer's stream";
    EXPECT_EQ(fake_.call_count("cuMemcpy2D"), sync) << "no synchronous copy";
    EXPECT_EQ(fake_.call_count("cuMemcpyDtoH"), to_host) << "no host round trip";
    EXPECT_EQ(fake_.call_count("cuGraphicsMapResources"), maps + 1);
    expect_quadrants(v.snapshot(), f, c);
  }
  EXPECT_NE(v.stream().memory.find("CUDA-mapped"), std::string::npos) << v.stream().memory;
  EXPECT_EQ(fake_.live_streams(), 1) << "the viewer's own stream";
  EXPECT_EQ(v.diagnostics().gl_errors, 0u) << v.diagnostics().first_gl_error;
}

// Every format: a CUDA frame is one device-to-device copy per plane (no host
// round trip) and shows its float64 reference; acquire() hands out CUDA
// pointers laid out for the format.
FormatFrame any_format_frame(PixelFormat f, std::uint32_t w, std::uint32_t h, unsigned seed) {
  if (is_yuv(f)) return yuv_format_frame(f, w, h, Colorimetry{}, seed);
  if (is_rgb(f)) return rgb_format_frame(f, w, h, seed);
  return gray_format_frame(f, w, h, seed, f == PixelFormat::GRAY8 ? std::nullopt : std::optional(ValueRange{-1, 2}));
}

std::size_t off_pixels(const RgbaImage& img, const FormatFrame& f, std::string* first) {
  return count_off(f, [&](std::uint32_t x, std::uint32_t y) { return img.pixel(x, y); }, 1.0, first);
}

TEST_F(ViewerFakeCuda, EveryFormatAsACudaFrameIsCopiedDeviceToDevice) {
  ViewerOptions o = cuda_options();
  o.value_range = ValueRange{-1, 2};
  Viewer v(o);
  unsigned seed = 1;
  for (PixelFormat f : kPixelFormats) {
    const FormatFrame ff = any_format_frame(f, 37, 21, seed++);
    DeviceFrame dev(ff.frame);
    const int async = fake_.call_count("cuMemcpy2DAsync"), to_host = fake_.call_count("cuMemcpyDtoH");
    v.show(dev.frame());
    EXPECT_EQ(fake_.call_count("cuMemcpy2DAsync"), async + plane_count(f)) << to_string(f) << ": one copy per plane";
    EXPECT_EQ(fake_.call_count("cuMemcpyDtoH"), to_host) << to_string(f) << ": no host round trip";
    std::string first;
    EXPECT_EQ(off_pixels(v.snapshot(), ff, &first), 0u) << to_string(f) << ": first off " << first;
  }
  EXPECT_EQ(v.diagnostics().gl_errors, 0u) << v.diagnostics().first_gl_error;
}

TEST_F(ViewerFakeCuda, AcquireInEveryFormatHandsOutCudaPlanes) {
  ViewerOptions o = cuda_options();
  o.value_range = ValueRange{-1, 2};
  Viewer v(o);
  cuda::PrimaryContext ctx(cuda::driver(), 0);
  unsigned seed = 50;
  for (PixelFormat f : kPixelFormats) {
    const FormatFrame ff = any_format_frame(f, 37, 21, seed++);
    ViewerFrame slot = v.acquire(f, 37, 21);
    const Frame& d = slot.frame();
    ASSERT_EQ(d.memory, MemoryKind::Cuda) << to_string(f);
    EXPECT_NO_THROW(validate(d)) << to_string(f);
    cuda::ScopedContext current(ctx);
    for (int p = 0; p < plane_count(f); ++p) {
      cuda::abi::CUDA_MEMCPY2D m{};
      m.srcMemoryType = cuda::abi::CU_MEMORYTYPE_HOST;
      m.srcHost = ff.frame.planes[std::size_t(p)].data;
      m.srcPitch = ff.frame.planes[std::size_t(p)].pitch;
      m.dstMemoryType = cuda::abi::CU_MEMORYTYPE_DEVICE;
      m.dstDevice = reinterpret_cast<cuda::abi::CUdeviceptr>(d.planes[std::size_t(p)].data);
      m.dstPitch = d.planes[std::size_t(p)].pitch;
      m.WidthInBytes = plane_layout(f, 37, 21, p).row_bytes;
      m.Height = d.planes[std::size_t(p)].height;
      HANDOFF_CU_CHECK(cuda::driver().api().cuMemcpy2D(&m));
    }
    v.present(std::move(slot));
    std::string first;
    EXPECT_EQ(off_pixels(v.snapshot(), ff, &first), 0u) << to_string(f) << ": first off " << first;
  }
}

// show(frame, overlays, stream): the viewer's copy waits for the work queued
// on the producer's stream (an event recorded there, waited for on the
// viewer's own stream) instead of requiring it synchronised; a stream of
// another context is an error naming it, and the viewer goes on.
TEST_F(ViewerFakeCuda, ACudaFrameShownWithItsStreamIsCopiedAfterThatStreamsWork) {
  const Colorimetry c{};
  Viewer v(cuda_options());
  const Frame host = quadrant_frame(PixelFormat::NV12, 96, 64, c);
  DeviceFrame dev(host);
  cuda::PrimaryContext ctx(cuda::driver(), 0);
  cuda::abi::CUstream producer = nullptr;
  {
    cuda::ScopedContext current(ctx);
    HANDOFF_CU_CHECK(cuda::driver().api().cuStreamCreate(&producer, cuda::abi::CU_STREAM_NON_BLOCKING));
  }
  const int records = fake_.call_count("cuEventRecord"), waits = fake_.call_count("cuStreamWaitEvent");
  v.show(dev.frame(), {}, CudaStream(producer));
  EXPECT_EQ(fake_.call_count("cuEventRecord"), records + 1) << "an event recorded on the producer's stream";
  EXPECT_EQ(fake_.call_count("cuStreamWaitEvent"), waits + 1) << "the viewer's stream waiting for it";
  expect_quadrants(v.snapshot(), PixelFormat::NV12, c);
  v.show(dev.frame());  // the default value: no event
  EXPECT_EQ(fake_.call_count("cuEventRecord"), records + 1);

  // A stream of a context that is not the viewer device's primary context.
  const auto& api = cuda::driver().api();
  void* lib = ::dlopen(std::getenv("HANDOFF_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  using Create = cuda::abi::CUresult (*)(cuda::abi::CUcontext*, unsigned, cuda::abi::CUdevice);
  using Destroy = cuda::abi::CUresult (*)(cuda::abi::CUcontext);
  const auto create = reinterpret_cast<Create>(::dlsym(lib, "cuCtxCreate_v2"));
  const auto destroy = reinterpret_cast<Destroy>(::dlsym(lib, "cuCtxDestroy_v2"));
  ::dlclose(lib);
  ASSERT_TRUE(create && destroy);
  cuda::abi::CUcontext other = nullptr, popped = nullptr;
  cuda::abi::CUstream foreign = nullptr;
  ASSERT_EQ(create(&other, 0, 0), cuda::abi::CUDA_SUCCESS);  // current on this thread now
  ASSERT_EQ(api.cuStreamCreate(&foreign, cuda::abi::CU_STREAM_NON_BLOCKING), cuda::abi::CUDA_SUCCESS);
  ASSERT_EQ(api.cuCtxPopCurrent(&popped), cuda::abi::CUDA_SUCCESS);
  try {
    v.show(dev.frame(), {}, CudaStream(foreign));
    ADD_FAILURE() << "a stream of another context was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuEventRecord"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the producer's stream"), std::string::npos) << e.what();
  }
  ASSERT_EQ(api.cuCtxPushCurrent(other), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(api.cuStreamDestroy(foreign), cuda::abi::CUDA_SUCCESS);
  ASSERT_EQ(api.cuCtxPopCurrent(&popped), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(destroy(other), cuda::abi::CUDA_SUCCESS);
  v.show(dev.frame(), {}, CudaStream(producer));  // the viewer goes on
  expect_quadrants(v.snapshot(), PixelFormat::NV12, c);
  cuda::ScopedContext current(ctx);
  EXPECT_EQ(cuda::driver().api().cuStreamDestroy(producer), cuda::abi::CUDA_SUCCESS);
}

TEST_F(ViewerFakeCuda, AHostFrameIsOneHostToDeviceCopy) {
  Viewer v(cuda_options());
  const Frame host = quadrant_frame(PixelFormat::NV12, 80, 60, {});
  const int async = fake_.call_count("cuMemcpy2DAsync");
  v.show(host);
  EXPECT_EQ(fake_.call_count("cuMemcpy2DAsync"), async + 2);
  expect_quadrants(v.snapshot(), PixelFormat::NV12, {});
}

TEST_F(ViewerFakeCuda, AcquireHandsOutCudaPointersOfTheRing) {
  const Colorimetry c{ColorMatrix::BT601, ColorRange::Full, ChromaSiting::Left};
  Viewer v(cuda_options());
  cuda::PrimaryContext ctx(cuda::driver(), 0);
  for (int round = 0; round < 4; ++round) {
    ViewerFrame slot = v.acquire(PixelFormat::P010, 90, 50, c);
    const Frame& f = slot.frame();
    ASSERT_EQ(f.memory, MemoryKind::Cuda);
    EXPECT_EQ(f.device, 0);
    EXPECT_EQ(f.cuda_context, ctx.handle()) << "the device's primary context";
    EXPECT_NO_THROW(validate(f));
    // The application's "kernel": a copy into the slot's device planes.
    const Frame host = quadrant_frame(PixelFormat::P010, 90, 50, c);
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

// A copy refused when it is issued (a bad argument, CUDA_ERROR_INVALID_VALUE)
// is an error of that show() only: nothing ran, the context is fine, and the
// viewer goes on with the next frame.
TEST_F(ViewerFakeCuda, ARefusedCopyIsAnErrorAndTheViewerGoesOn) {
  Viewer v(cuda_options());
  v.show(quadrant_frame(PixelFormat::NV12, 64, 48, {}));  // buffers made
  fake_.fail("cuMemcpy2DAsync", cuda::abi::CUDA_ERROR_INVALID_VALUE, 0);
  try {
    v.show(quadrant_frame(PixelFormat::NV12, 64, 48, {}));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.call(), "cuMemcpy2DAsync") << e.what();
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_INVALID_VALUE") << e.what();
  }
  fake_.fail("cuMemcpy2DAsync", 0, 0);
  for (int i = 0; i < 6; ++i) v.show(quadrant_frame(PixelFormat::NV12, 64, 48, {}));  // every buffer came back
  expect_quadrants(v.snapshot(), PixelFormat::NV12, {});
  EXPECT_EQ(fake_.live_mappings(), 0);
}

// An illegal address while the copy runs is a sticky error on a GPU (the
// driver API docs of CUDA_ERROR_ILLEGAL_ADDRESS: "the context cannot be used,
// so it must be destroyed (and a new one should be created)"): the launch
// succeeds, the error surfaces when the viewer waits for its copy, and every
// later CUDA call in that (primary, process-wide) context fails with it. The
// viewer cannot recover on its own (the context is the application's too);
// what it must do is report the error on every CUDA frame, keep what it
// drew, and shut down without hanging. (This test once asserted that the
// viewer went on showing CUDA frames after an illegal address: impossible on
// a GPU.)
TEST_F(ViewerFakeCuda, AnIllegalAddressInTheCopyPoisonsTheContextAndEveryLaterCudaFrameSaysSo) {
  {
    fake_.set_strict(1);  // the copy runs after show() issued it, as on a GPU
    Viewer v(cuda_options());
    v.show(quadrant_frame(PixelFormat::NV12, 64, 48, {}));  // buffers made
    fake_.fail_sticky("cuMemcpy2DAsync", cuda::abi::CUDA_ERROR_ILLEGAL_ADDRESS, 0);
    // The copies wait until both planes are issued (a loaded machine could
    // otherwise run the luma copy first, and the chroma launch would report it).
    fake_.pause_work(1);
    std::thread release([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      fake_.pause_work(0);
    });
    try {
      v.show(quadrant_frame(PixelFormat::NV12, 64, 48, {}));
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code_name(), "CUDA_ERROR_ILLEGAL_ADDRESS") << e.what();
      EXPECT_EQ(e.call(), "cuStreamQuery") << "the launch succeeds; the error comes when the copy is waited for: "
                                           << e.what();
    }
    release.join();
    EXPECT_EQ(fake_.sticky_error(0), cuda::abi::CUDA_ERROR_ILLEGAL_ADDRESS);
    for (int i = 0; i < 3; ++i) {
      try {
        v.show(quadrant_frame(PixelFormat::NV12, 64, 48, {}));
        ADD_FAILURE() << "a CUDA frame shown in a poisoned context";
      } catch (const Error& e) {
        EXPECT_EQ(e.code_name(), "CUDA_ERROR_ILLEGAL_ADDRESS") << e.what();
      }
    }
    expect_quadrants(v.snapshot(), PixelFormat::NV12, {});  // the last frame drawn stays
  }
  // The viewer's last retain went with it: the primary context was reset,
  // which is what clears a sticky error (what it still held went with it).
  EXPECT_EQ(fake_.sticky_error(0), 0);
  fake_.reset();
}

TEST_F(ViewerFakeCuda, ACudaFrameOnAnotherDeviceIsRefused) {
  Viewer v(cuda_options());
  DeviceFrame dev(quadrant_frame(PixelFormat::NV12, 64, 48, {}));
  Frame f = dev.frame();
  f.device = 1;
  try {
    v.show(f);
    ADD_FAILURE() << "no InvalidFrame";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "device") << e.what();
    EXPECT_NE(std::string(e.what()).find("device 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace handoff::view::test
