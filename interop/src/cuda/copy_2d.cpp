#include <handoff/cuda_copy_2d.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>

namespace handoff::cuda {

namespace {

abi::CUmemorytype memory_type(const Pitched& side) {
  return side.device ? abi::CU_MEMORYTYPE_DEVICE : abi::CU_MEMORYTYPE_HOST;
}

abi::CUdeviceptr device_address(const Pitched& side) {
  return side.device ? reinterpret_cast<abi::CUdeviceptr>(side.data) : abi::CUdeviceptr{0};
}

}  // namespace

void copy_2d_async(const Driver& drv, const Pitched& src, const Pitched& dst, std::size_t row_bytes,
                   std::size_t rows, void* stream, const std::string& what) {
  abi::CUDA_MEMCPY2D m{};
  m.srcMemoryType = memory_type(src);
  m.srcHost = src.device ? nullptr : src.data;
  m.srcDevice = device_address(src);
  m.srcPitch = src.pitch;
  m.dstMemoryType = memory_type(dst);
  // The destination is written: the caller's memory, passed as const only
  // so one Pitched type serves both sides.
  m.dstHost = dst.device ? nullptr : const_cast<void*>(dst.data);
  m.dstDevice = device_address(dst);
  m.dstPitch = dst.pitch;
  m.WidthInBytes = row_bytes;
  m.Height = rows;
  HANDOFF_CU_CHECK(drv.api().cuMemcpy2DAsync(&m, static_cast<abi::CUstream>(stream)), what);
}

}  // namespace handoff::cuda
