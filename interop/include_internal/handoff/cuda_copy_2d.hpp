#pragma once
// One pitched 2-D copy through cuMemcpy2DAsync, host or device memory on
// either side: the one place handoff fills a CUDA_MEMCPY2D (copy_frame's
// planes, the viewer's CUDA layers).
// Private: interop/include_internal, target handoff::interop_private.
#include <cstddef>
#include <string>

#include <handoff/cuda.hpp>

namespace handoff::cuda {

// One side of the copy.
struct Pitched {
  bool device = false;        // CUDA device memory (data is a CUdeviceptr), else host memory
  const void* data = nullptr; // the first byte of the first row
  std::size_t pitch = 0;      // bytes from one row to the next
};

// Queues the copy of `rows` rows of `row_bytes` bytes from `src` to `dst` on
// `stream` (a CUstream of the current context; null: the default stream).
// Throws handoff::Error naming the call and `what` when the driver refuses.
void copy_2d_async(const Driver& drv, const Pitched& src, const Pitched& dst, std::size_t row_bytes,
                   std::size_t rows, void* stream, const std::string& what);

}  // namespace handoff::cuda
