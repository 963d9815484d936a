#pragma once
// The CUDA side of the frame path, used when the ring's buffers map to CUDA
// device pointers: the built-in scene is rendered by its CUDA kernel straight
// into the mapped buffer; other sources are read into a host staging frame
// (allocated once) and copied in (copy_frame). Where the kernel cannot be
// loaded the scene takes the staging path too, and description() says why.
//
// Thread safety: one producer thread at a time.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <handoff/cuda.hpp>
#include <handoff/media/frame_source.hpp>
#include <handoff/media/scene.hpp>

namespace handoff::view {

class CudaProducer {
 public:
  // `scene`: the scene's options when the source is the built-in scene.
  CudaProducer(const media::SourceInfo& info, std::optional<media::SceneOptions> scene, int device);
  ~CudaProducer();
  CudaProducer(const CudaProducer&) = delete;
  CudaProducer& operator=(const CudaProducer&) = delete;

  // Writes frame source.position() into `device` (the CUDA planes of a mapped
  // buffer, every plane of the source's format) and advances the source;
  // false at the end of a finite source.
  bool write(media::FrameSource& source, const Frame& device, std::int64_t& index);
  const std::string& description() const { return description_; }

 private:
  media::SourceInfo info_;
  std::optional<media::SceneOptions> scene_;
  cuda::PrimaryContext context_;
  void* module_ = nullptr;    // CUmodule
  void* function_ = nullptr;  // CUfunction
  media::HostFrame staging_;
  std::string description_;
};

}  // namespace handoff::view
