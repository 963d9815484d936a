#pragma once
// DLPack export and import of NV12 / P010 frames.
//
// Export: each plane (or, for a stacked frame, the whole frame) becomes a
// tensor: luma (H, W), chroma (ceil(H/2), ceil(W/2), 2), stacked
// (H + ceil(H/2), W); dtype uint8 (NV12) or uint16 (P010); strides in
// elements; device (kDLCPU, 0) for host memory, (kDLCUDA, n) for CUDA memory.
// Other memory kinds are refused: map them first. The tensor holds a copy of
// the frame, so the frame's memory stays valid until the deleter runs.
//
// Import: a producer's two tensors become a frame's planes after checking
// ndim, shape, dtype, packed rows (only the row stride may be free), pitch,
// byte_offset and device; the producer's deleters run exactly once, when the
// last copy of the frame is gone.
#include <handoff/dlpack_v1.hpp>
#include <handoff/frame.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace handoff {

// What a tensor exports: one plane, or the whole stacked frame (is_stacked()).
enum class FramePart : std::uint8_t { Luma = 0, Chroma = 1, Stacked = 2 };

std::string_view to_string(FramePart part) noexcept;

// A part of a frame as a strided array (what DLPack and the array interfaces describe).
struct TensorLayout {
  void* data = nullptr;
  DLDevice device{kDLCPU, 0};
  DLDataType dtype{kDLUInt, 8, 1};
  int ndim = 0;
  std::array<std::int64_t, 3> shape{};
  std::array<std::int64_t, 3> strides{};  // elements
  std::size_t sample_bytes = 1;
};

// The DLPack device of a frame: (kDLCPU, 0) for host memory, (kDLCUDA, n) for
// CUDA memory. Throws UsageError for GL buffer or Vulkan memory.
DLDevice dlpack_device(const Frame& frame);

// Validates the frame (frame_validate.hpp) and describes `part`. Throws
// InvalidFrame / UsageError (GL / Vulkan memory, Stacked on a frame that is not).
TensorLayout tensor_layout(const Frame& frame, FramePart part);

// Export. Transfer: the caller owns the returned tensor and must call its
// deleter exactly once. The versioned tensor has version 1.0 and the
// read-only flag set (the producer still owns the surface).
// Thread safety: any thread; the deleter may run on any thread.
DLManagedTensor* export_dlpack(const Frame& frame, FramePart part);
DLManagedTensorVersioned* export_dlpack_versioned(const Frame& frame, FramePart part);
// The same with a layout computed earlier by tensor_layout(frame, part), for
// callers that export one plane many times (the Python Plane caches it).
// Precondition: `layout` came from this frame (not checked again).
DLManagedTensor* export_dlpack(const Frame& frame, const TensorLayout& layout);
DLManagedTensorVersioned* export_dlpack_versioned(const Frame& frame, const TensorLayout& layout);

// One tensor received from a producer, legacy or versioned. Owns it: the
// destructor (or reset()) calls the producer's deleter once; release() hands
// it back untouched. Move-only. Not thread-safe (one owner at a time).
class ProducerTensor {
 public:
  ProducerTensor() noexcept = default;
  explicit ProducerTensor(DLManagedTensor* t) noexcept : legacy_(t) {}
  explicit ProducerTensor(DLManagedTensorVersioned* t) noexcept : versioned_(t) {}
  ProducerTensor(ProducerTensor&& o) noexcept;
  ProducerTensor& operator=(ProducerTensor&& o) noexcept;
  ProducerTensor(const ProducerTensor&) = delete;
  ProducerTensor& operator=(const ProducerTensor&) = delete;
  ~ProducerTensor() { reset(); }

  explicit operator bool() const noexcept { return legacy_ || versioned_; }
  bool versioned() const noexcept { return versioned_ != nullptr; }
  // nullptr when empty.
  const DLTensor* tensor() const noexcept;
  // The versioned tensor's flags; 0 for a legacy one.
  std::uint64_t flags() const noexcept { return versioned_ ? versioned_->flags : 0; }
  DLPackVersion version() const noexcept;
  // Calls the producer's deleter (if any) and empties this.
  void reset() noexcept;
  // Gives the tensor back without calling its deleter (the caller owns it again).
  void release() noexcept { legacy_ = nullptr, versioned_ = nullptr; }

 private:
  DLManagedTensor* legacy_ = nullptr;
  DLManagedTensorVersioned* versioned_ = nullptr;
};

struct ImportOptions {
  PixelFormat format = PixelFormat::NV12;
  Colorimetry colorimetry{};
  // The CUcontext the pointers belong to, for CUDA tensors (the device's
  // primary context is assumed when null; DLPack does not carry one).
  void* cuda_context = nullptr;
  // Kept alive by the frame as well (e.g. the Python producer objects).
  std::shared_ptr<const void> keep_alive;
};

// Describes two producer tensors as a frame without taking ownership of
// anything but options.keep_alive (the frame's owner holds it). For
// producers whose lifetime the caller manages (CUDA Array Interface, buffer
// protocol). Throws InvalidFrame naming the plane and field.
Frame frame_from_dltensors(const DLTensor& luma, const DLTensor& chroma, const ImportOptions& options);

// Imports two producer tensors. On success the frame's owner takes both (they
// are left empty) and calls each deleter exactly once when the last copy of
// the frame is gone; on failure (InvalidFrame) both are left untouched.
// A versioned tensor must have major version 1.
Frame import_dlpack(ProducerTensor& luma, ProducerTensor& chroma, const ImportOptions& options);

// Byte strides (CUDA Array Interface, buffer protocol) to element strides;
// throws InvalidFrame(field) when one is not a whole number of samples.
std::array<std::int64_t, 3> element_strides(std::string_view field, const std::int64_t* byte_strides, int ndim,
                                            std::size_t sample_bytes);

}  // namespace handoff
