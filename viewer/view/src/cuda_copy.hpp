#pragma once
// The viewer's CUDA stream and the plane copies show() makes on it: one
// cuMemcpy2DAsync per plane (host to device, device to device, or device to
// host), then a wait for that stream alone, bounded by wait_limit() (polling
// cuStreamQuery), so show() waits for its own copy and nothing else.
//
// Thread safety: copy_plane() and finish() from several threads at once are
// fine (CUDA streams are thread-safe), but a caller's copies and its finish()
// then also wait for the others' copies: callers serialise (PushRing does).
// Ownership: holds the device's primary context (retained) and the stream.
#include <cstddef>
#include <string>

#include <handoff/cuda.hpp>
#include <handoff/frame.hpp>
#include <handoff/unique_handle.hpp>

namespace handoff::view {

struct StreamDestroyer {
  const cuda::PrimaryContext* context = nullptr;  // the stream's context, retained by its owner
  void operator()(void* stream) const noexcept;
};
// A CUstream of the viewer (cuStreamDestroy in its context).
using UniqueCudaStream = UniqueHandle<void*, StreamDestroyer, nullptr>;

class CudaCopier {
 public:
  // Retains device `device`'s primary context and creates a non-blocking
  // stream in it. Throws handoff::Error when CUDA is unusable or refuses.
  explicit CudaCopier(int device);
  CudaCopier(const CudaCopier&) = delete;
  CudaCopier& operator=(const CudaCopier&) = delete;

  int device() const noexcept { return context_.device(); }
  void* context() const noexcept { return context_.handle(); }  // CUcontext
  void* stream() const noexcept { return stream_.get(); }       // CUstream

  // Queues a copy of `rows` rows of `row_bytes` bytes. Host or Cuda memory on
  // either side (Cuda: device pointers of this context's device).
  void copy_plane(const void* src, MemoryKind src_memory, std::size_t src_pitch, void* dst, MemoryKind dst_memory,
                  std::size_t dst_pitch, std::size_t row_bytes, std::size_t rows);
  // Waits until the copies queued so far are done: WaitTimeout naming `what`
  // after wait_limit(), handoff::Error for a failed copy.
  void finish(const std::string& what);

 private:
  cuda::PrimaryContext context_;  // outlives the stream (member order)
  UniqueCudaStream stream_;
};

}  // namespace handoff::view
