#include <handoff/frame_copy.hpp>

#include <handoff/cuda.hpp>
#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_copy_2d.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/cuda_check.hpp>

#include <cstring>
#include <string>

namespace handoff {

namespace {

void check_pair(const Frame& src, const Frame& dst) {
  for (const auto& [frame, side] : {std::pair{&src, "src"}, std::pair{&dst, "dst"}}) {
    if (frame->memory != MemoryKind::Host && frame->memory != MemoryKind::Cuda)
      throw UsageError(std::string("copy_frame: ") + side + ".memory is " +
                       (frame->memory == MemoryKind::GlBuffer ? "a GL buffer" : "Vulkan memory") +
                       ", addressed by offset; map it into host or CUDA memory first");
    try {
      validate(*frame);
    } catch (const InvalidFrame& e) {
      // what() is "<field>: <detail>": the detail under the side's name.
      std::string detail = e.what();
      if (detail.rfind(e.field() + ": ", 0) == 0) detail.erase(0, e.field().size() + 2);
      throw InvalidFrame(side + ("." + e.field()), detail);
    }
  }
  if (dst.format != src.format)
    throw InvalidFrame("dst.format", std::string(to_string(dst.format)) + ", the source's is " +
                                         std::string(to_string(src.format)));
  if (dst.width != src.width || dst.height != src.height)
    throw InvalidFrame(dst.width != src.width ? "dst.width" : "dst.height",
                       std::to_string(dst.width) + "x" + std::to_string(dst.height) + ", the source's is " +
                           std::to_string(src.width) + "x" + std::to_string(src.height));
}

void copy_host_plane(const Plane& s, const Plane& d, const PlaneLayout& l) {
  const auto* from = static_cast<const std::byte*>(s.data);
  auto* to = static_cast<std::byte*>(d.data);
  if (s.pitch == d.pitch) {
    std::memcpy(to, from, plane_span_bytes(s.pitch, l.height, l.row_bytes));
    return;
  }
  for (std::uint32_t y = 0; y < l.height; ++y) std::memcpy(to + y * d.pitch, from + y * s.pitch, l.row_bytes);
}

cuda::Pitched side(const Frame& f, int p) {
  const Plane& pl = f.planes[static_cast<std::size_t>(p)];
  return {f.memory == MemoryKind::Cuda, pl.data, pl.pitch};
}

void copy_with_cuda(const Frame& src, const Frame& dst, CudaStream stream, CopyCompletion completion) {
  const Frame& device_side = src.memory == MemoryKind::Cuda ? src : dst;
  void* context = stream.context() ? stream.context() : device_side.cuda_context;
  if (context == nullptr)
    throw InvalidFrame(&device_side == &src ? "src.cuda_context" : "dst.cuda_context",
                       "a CUDA frame without the context its pointers belong to");
  const cuda::Driver& drv = cuda::driver();
  cuda::ScopedContext current(drv, static_cast<cuda::abi::CUctx_st*>(context));
  for (int p = 0; p < plane_count(src.format); ++p) {
    const PlaneLayout l = plane_layout(src.format, src.width, src.height, p);
    cuda::copy_2d_async(drv, side(src, p), side(dst, p), l.row_bytes, l.height, stream.handle(),
                        std::string("copy_frame: the ") + std::string(plane_name(src.format, p)));
  }
  if (completion == CopyCompletion::Finished)
    HANDOFF_CU_CHECK(drv.api().cuStreamSynchronize(static_cast<cuda::abi::CUstream>(stream.handle())), "copy_frame");
}

}  // namespace

void copy_frame(const Frame& src, const Frame& dst, CudaStream stream, CopyCompletion completion) {
  check_pair(src, dst);
  if (src.memory == MemoryKind::Cuda || dst.memory == MemoryKind::Cuda) {
    copy_with_cuda(src, dst, stream, completion);
    return;
  }
  for (int p = 0; p < plane_count(src.format); ++p) {
    const auto i = static_cast<std::size_t>(p);
    copy_host_plane(src.planes[i], dst.planes[i], plane_layout(src.format, src.width, src.height, p));
  }
}

}  // namespace handoff
