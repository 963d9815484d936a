#pragma once
// A CUDA stream handed to handoff: the one way every public signature takes
// one (instead of an untyped void*).
//
// Not owned: handoff never creates or destroys a stream it is given; the
// caller keeps it alive until the call returns (and, for work handoff queues
// on it, until that work has run). The default value is the null stream: the
// legacy default stream of the context the work runs in. A stream belongs to
// one context: where the caller knows it, it comes along, and handoff runs the
// work queued on the stream in that context (see copy_frame).
//
// Thread safety: a plain value; copy it freely.
namespace handoff {

class CudaStream {
 public:
  constexpr CudaStream() noexcept = default;
  // A CUstream, or a framework's stream handle, which is the same pointer
  // (torch.cuda.Stream.cuda_stream, cupy.cuda.Stream.ptr).
  // `context`: the CUcontext the stream was created in, when known.
  explicit constexpr CudaStream(void* handle, void* context = nullptr) noexcept
      : handle_(handle), context_(context) {}

  constexpr void* handle() const noexcept { return handle_; }
  constexpr void* context() const noexcept { return context_; }  // null: not given
  constexpr bool is_default() const noexcept { return handle_ == nullptr; }
  friend constexpr bool operator==(CudaStream, CudaStream) noexcept = default;

 private:
  void* handle_ = nullptr;
  void* context_ = nullptr;
};

}  // namespace handoff
