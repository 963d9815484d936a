#pragma once
// The viewer's CUDA stream, on which show() queues its copies (copy_frame),
// and the wait for that stream alone, bounded by wait_limit() (polling
// cuStreamQuery), so show() waits for its own copy and nothing else.
//
// Thread safety: copies and finish() from several threads at once are fine
// (CUDA streams are thread-safe), but a caller's finish() then also waits for
// the others' copies: callers serialise (PushRing does).
// Ownership: holds the device's primary context (retained) and the stream.
#include <cstddef>
#include <string>

#include <handoff/cuda.hpp>
#include <handoff/cuda_stream.hpp>
#include <handoff/detail/cuda_handles.hpp>
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
  CudaStream stream() const noexcept { return CudaStream(stream_.get(), context_.handle()); }

  // Orders the copies queued next after the work queued on `producer` so far
  // (an event recorded there, waited for on this stream; nothing for the
  // default value). The producer's stream must be of this device's primary
  // context (or say its context). Throws handoff::Error naming the call.
  void after(CudaStream producer);
  // Waits until the copies queued so far are done: WaitTimeout naming `what`
  // after wait_limit(), handoff::Error for a failed copy.
  void finish(const std::string& what);

 private:
  cuda::PrimaryContext context_;  // outlives the stream and the event (member order)
  UniqueCudaStream stream_;
  cuda::detail::UniqueEvent event_;  // made at the first after()
};

}  // namespace handoff::view
