#pragma once
// DLPack export and import of frames in every format (frame.hpp).
//
// Export: each plane (or, for a stacked NV12 / P010 frame, the whole frame)
// becomes a tensor. A plane of one sample per element is 2-D (rows, width),
// one of several is 3-D (rows, width, components), always packed inside a row
// with the row stride free (the pitch):
//   nv12, p010     luma (H, W), chroma (ceil(H/2), ceil(W/2), 2); stacked
//                  (H + ceil(H/2), W) when is_stacked()
//   i420           luma (H, W), u and v (ceil(H/2), ceil(W/2)); no stacked
//                  tensor (U and V rows are half as wide as luma's: one
//                  stride cannot step through all three)
//   yuyv, uyvy     pixels (H, W', 2), W' = W rounded up to even
//   rgb8 ... bgra8 pixels (H, W, 3 or 4) (HWC)
//   gray8, gray16  pixels (H, W)
//   gray32f        pixels (H, W), float32
// dtype: uint8, uint16 (p010, gray16) or float32 (gray32f); strides in
// elements; device (kDLCPU, 0) for host memory, (kDLCUDA, n) for CUDA memory.
// Other memory kinds are refused: map them first. The tensor holds a copy of
// the frame, so the frame's memory stays valid until the deleter runs.
//
// Import: a producer's tensors, one per plane (plane_count(format)), become a
// frame's planes after checking ndim, shape, channels, dtype, packed elements
// (only the row stride may be free), pitch, byte_offset and device; the
// producer's deleters run exactly once, when the last copy of the frame is
// gone. A grey frame's plane may also come as (rows, width, 1) (an image
// with a channel axis). A yuyv / uyvy tensor (H, W', 2) gives a frame W' wide
// (W' even): an odd-width frame exported and imported back is one pixel wider.
#include <handoff/dlpack_v1.hpp>
#include <handoff/frame.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace handoff {

// What a tensor exports: plane 0, 1 or 2 of a frame (Frame::planes), or the
// whole stacked NV12 / P010 frame (is_stacked()). The plane names are aliases:
// Luma and Pixels (the one plane of yuyv, uyvy, RGB and grey frames) are plane
// 0, Chroma and U plane 1, V plane 2.
enum class FramePart : std::uint8_t {
  Plane0 = 0,
  Plane1 = 1,
  Plane2 = 2,
  Stacked = 3,
  Luma = Plane0,
  Pixels = Plane0,
  Chroma = Plane1,
  U = Plane1,
  V = Plane2,
};

// Plane `index` (0 .. kMaxPlanes - 1) as a part; the plane index of a part
// (-1 for Stacked).
constexpr FramePart plane_part(int index) noexcept { return static_cast<FramePart>(index); }
constexpr int plane_index(FramePart part) noexcept {
  return part == FramePart::Stacked ? -1 : static_cast<int>(part);
}

// "luma", "chroma", "v" (plane 2), "stacked frame": the names of the NV12 /
// I420 planes. part_name(format, part) names a part of a frame of that format
// (plane_name(format, i): "pixels" for one-plane formats, "u" / "v" for i420).
std::string_view to_string(FramePart part) noexcept;
std::string_view part_name(PixelFormat format, FramePart part) noexcept;

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
// InvalidFrame / UsageError (GL / Vulkan memory, Stacked on a frame that is not,
// a plane the format does not have).
TensorLayout tensor_layout(const Frame& frame, FramePart part);

// Export. Transfer: the caller owns the returned tensor and must call its
// deleter exactly once. The versioned tensor has version 1.0 and the
// read-only flag set (the producer still owns the surface).
// Thread safety: any thread; the deleter may run on any thread.
DLManagedTensor* export_dlpack(const Frame& frame, FramePart part);
DLManagedTensorVersioned* export_dlpack_versioned(const Frame& frame, FramePart part);
// The same with a layout computed earlier by tensor_layout(frame, part), for
// callers that export one plane many times (the Python Plane caches it). The
// layout is checked against the frame, cheaply (its data pointer, device,
// dtype, shape and strides against the frame's planes; no revalidation):
// UsageError naming what differs when it describes another frame or plane.
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

// Describes producer tensors, one per plane of options.format in plane order
// (nv12: luma, chroma; i420: luma, u, v; the others: pixels), as a frame
// without taking ownership of anything but options.keep_alive (the frame's
// owner holds it). For producers whose lifetime the caller manages (CUDA
// Array Interface, buffer protocol). Throws InvalidFrame naming the plane and
// field ("pixels.shape": "shape (4, 6, 3) does not fit rgba8: 4 channels ...";
// "planes" when the count does not fit the format).
Frame frame_from_dltensors(std::span<const DLTensor* const> planes, const ImportOptions& options);
// The two-plane formats (nv12, p010).
Frame frame_from_dltensors(const DLTensor& luma, const DLTensor& chroma, const ImportOptions& options);

// Imports producer tensors, one per plane as above. On success the frame's
// owner takes them all (they are left empty) and calls each deleter exactly
// once when the last copy of the frame is gone; on failure (InvalidFrame) all
// are left untouched. A versioned tensor must have major version 1.
Frame import_dlpack(std::span<ProducerTensor> planes, const ImportOptions& options);
// The two-plane formats (nv12, p010).
Frame import_dlpack(ProducerTensor& luma, ProducerTensor& chroma, const ImportOptions& options);

// Byte strides (CUDA Array Interface, buffer protocol) to element strides;
// throws InvalidFrame(field) when one is not a whole number of samples.
std::array<std::int64_t, 3> element_strides(std::string_view field, const std::int64_t* byte_strides, int ndim,
                                            std::size_t sample_bytes);

}  // namespace handoff
