// copy_frame with CUDA memory on one or both sides, against the fake driver:
// host -> device -> device -> host with four different pitches arrives
// sample for sample, one cuMemcpy2DAsync per plane on the stream given, a
// stream synchronisation only when asked to finish, in the stream's context
// where it says one.
#include "fake_test_util.hpp"

#include <handoff/frame_copy.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/cuda_check.hpp>

#include <gmock/gmock.h>

#include <vector>

namespace handoff::test {
namespace {

// A device frame of `format` over cuMemAllocPitch memory, freed with it.
class DeviceFrame {
 public:
  DeviceFrame(const cuda::PrimaryContext& ctx, PixelFormat format, std::uint32_t w, std::uint32_t h,
              std::size_t extra_pitch)
      : ctx_(ctx) {
    const cuda::Driver& d = cuda::driver();
    cuda::ScopedContext current(ctx);
    for (int p = 0; p < 2; ++p) {
      const PlaneLayout l = plane_layout(format, w, h, p);
      std::size_t pitch = 0;
      HANDOFF_CU_CHECK(d.api().cuMemAllocPitch(&ptr_[p], &pitch, l.row_bytes + extra_pitch, l.height, 4));
      frame.planes[std::size_t(p)] =
          Plane{reinterpret_cast<void*>(ptr_[p]), 0, pitch, l.width, l.height, l.components};
    }
    frame.format = format;
    frame.width = w;
    frame.height = h;
    frame.memory = MemoryKind::Cuda;
    frame.device = 0;
    frame.cuda_context = ctx.handle();
    validate(frame);
  }
  ~DeviceFrame() {
    cuda::ScopedContext current(ctx_);
    for (auto p : ptr_) cuda::driver().api().cuMemFree(p);
  }
  DeviceFrame(const DeviceFrame&) = delete;
  DeviceFrame& operator=(const DeviceFrame&) = delete;
  Frame frame;

 private:
  const cuda::PrimaryContext& ctx_;
  abi::CUdeviceptr ptr_[2] = {};
};

std::vector<std::uint8_t> packed_bytes(const Frame& f) {
  std::vector<std::uint8_t> out;
  for (int p = 0; p < 2; ++p) {
    const PlaneLayout l = plane_layout(f.format, f.width, f.height, p);
    const auto* base = static_cast<const std::uint8_t*>(f.planes[std::size_t(p)].data);
    for (std::uint32_t y = 0; y < l.height; ++y)
      out.insert(out.end(), base + y * f.planes[std::size_t(p)].pitch,
                 base + y * f.planes[std::size_t(p)].pitch + l.row_bytes);
  }
  return out;
}

class FrameCopyFake : public FakeCudaTest {};

TEST_F(FrameCopyFake, HostToDeviceToDeviceToHostCarriesEverySample) {
  for (PixelFormat format : {PixelFormat::NV12, PixelFormat::P010}) {
    SCOPED_TRACE(std::string(to_string(format)));
    cuda::PrimaryContext ctx(0);
    HostFrameOptions packed;
    packed.alignment = 2;
    const Frame src = allocate_host_frame(format, 37, 19, packed);
    fill_test_pattern(src, 3);
    DeviceFrame a(ctx, format, 37, 19, 64), b(ctx, format, 37, 19, 320);
    const Frame back = allocate_host_frame(format, 37, 19);
    const int async = fake_.call_count("cuMemcpy2DAsync"), sync = fake_.call_count("cuStreamSynchronize");
    copy_frame(src, a.frame);
    copy_frame(a.frame, b.frame);
    copy_frame(b.frame, back);
    EXPECT_EQ(packed_bytes(back), packed_bytes(src));
    EXPECT_EQ(fake_.call_count("cuMemcpy2DAsync") - async, 6) << "one per plane";
    EXPECT_EQ(fake_.call_count("cuStreamSynchronize") - sync, 3) << "each copy finished before it returned";
  }
}

TEST_F(FrameCopyFake, QueuedCopiesRunOnTheGivenStreamInItsContext) {
  cuda::PrimaryContext ctx(0);
  const cuda::Driver& d = cuda::driver();
  abi::CUstream stream = nullptr;
  {
    cuda::ScopedContext current(ctx);
    HANDOFF_CU_CHECK(d.api().cuStreamCreate(&stream, abi::CU_STREAM_NON_BLOCKING));
  }
  const Frame src = allocate_host_frame(PixelFormat::NV12, 64, 32);
  fill_test_pattern(src, 9);
  DeviceFrame dev(ctx, PixelFormat::NV12, 64, 32, 0);
  Frame foreign = dev.frame;
  foreign.cuda_context = nullptr;  // the stream's context is the one used
  const int sync = fake_.call_count("cuStreamSynchronize");
  copy_frame(src, foreign, CudaStream(stream, ctx.handle()), CopyCompletion::Queued);
  EXPECT_EQ(fake_.call_count("cuStreamSynchronize"), sync) << "Queued does not wait";
  {
    cuda::ScopedContext current(ctx);
    HANDOFF_CU_CHECK(d.api().cuStreamSynchronize(stream));
  }
  const Frame back = allocate_host_frame(PixelFormat::NV12, 64, 32);
  copy_frame(dev.frame, back);
  EXPECT_EQ(packed_bytes(back), packed_bytes(src));
  cuda::ScopedContext current(ctx);
  HANDOFF_CU_CHECK(d.api().cuStreamDestroy(stream));
}

TEST_F(FrameCopyFake, ACudaFrameWithoutItsContextAndADriverFailureAreErrors) {
  cuda::PrimaryContext ctx(0);
  DeviceFrame dev(ctx, PixelFormat::NV12, 16, 8, 0);
  const Frame host = allocate_host_frame(PixelFormat::NV12, 16, 8);
  Frame no_context = dev.frame;
  no_context.cuda_context = nullptr;
  try {
    copy_frame(host, no_context);
    FAIL() << "accepted";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "dst.cuda_context");
  }
  fake_.fail("cuMemcpy2DAsync", 700, 0);  // CUDA_ERROR_ILLEGAL_ADDRESS, next call
  try {
    copy_frame(host, dev.frame);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("cuMemcpy2DAsync"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("copy_frame: the luma"));
  }
}

}  // namespace
}  // namespace handoff::test
