#pragma once
// NV12 / P010 frames: two pitched planes (luma H x W, interleaved chroma
// ceil(H/2) x ceil(W/2) x 2) on one device, with the colorimetry that says
// how to turn the codes into colour.
//
// A Frame is a description plus a keep-alive: `owner` holds whatever keeps the
// memory valid (a GL buffer, a Vulkan allocation, a producer's DLPack tensor,
// a host allocation). Copying a Frame shares the owner. Frames are immutable
// values and may be passed between threads freely.
//
// See also: frame_validate.hpp (layout math, validate()), host_frame.hpp
// (pitched host frames), dlpack.hpp (DLPack export / import).
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace handoff {

enum class PixelFormat : std::uint8_t { NV12, P010 };
enum class ColorMatrix : std::uint8_t { BT601, BT709, BT2020 };
enum class ColorRange : std::uint8_t { Limited, Full };
// Where chroma samples sit relative to luma (H.273 / "chroma_sample_loc_type"
// 0 = Left (MPEG-2, default for 4:2:0 video), 1 = Center (MPEG-1/JPEG), 2 = TopLeft).
enum class ChromaSiting : std::uint8_t { Left, Center, TopLeft };

struct Colorimetry {
  ColorMatrix matrix = ColorMatrix::BT709;
  ColorRange range = ColorRange::Limited;
  ChromaSiting siting = ChromaSiting::Left;
  bool operator==(const Colorimetry&) const = default;
};

// Where a frame's bytes live.
enum class MemoryKind : std::uint8_t {
  Host,      // ordinary CPU memory (or a GL buffer mapped into host memory)
  Cuda,      // CUDA device memory: `device` ordinal, `cuda_context` (primary context)
  GlBuffer,  // a GL buffer object: `gl_buffer` name, planes at byte offsets
  Vulkan,    // Vulkan device memory: planes at byte offsets of the allocation
};

struct Plane {
  // Host / CUDA: address of the first sample. GlBuffer / Vulkan: byte offset
  // inside the buffer or allocation, stored as an integer in `offset`.
  void* data = nullptr;
  std::size_t offset = 0;
  std::size_t pitch = 0;   // bytes from one row to the next
  std::uint32_t width = 0;   // samples per row, per component group (luma: W, chroma: ceil(W/2))
  std::uint32_t height = 0;  // rows
  std::uint32_t components = 1;  // 1 for luma, 2 for interleaved chroma
};

struct Frame {
  PixelFormat format = PixelFormat::NV12;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  Colorimetry colorimetry{};
  MemoryKind memory = MemoryKind::Host;
  int device = -1;                 // CUDA ordinal (Cuda), -1 otherwise
  void* cuda_context = nullptr;    // CUcontext the pointers belong to (Cuda)
  std::uint32_t gl_buffer = 0;     // GL buffer name (GlBuffer)
  std::array<Plane, 2> planes{};   // [0] luma, [1] chroma
  std::int64_t index = 0;          // frame number in its source
  double timestamp = 0.0;          // seconds
  std::shared_ptr<const void> owner;  // keeps the memory valid

  const Plane& luma() const { return planes[0]; }
  const Plane& chroma() const { return planes[1]; }
};

// Bytes per sample: 1 for NV12, 2 for P010 (little-endian, value in the top 10 bits).
constexpr std::size_t bytes_per_sample(PixelFormat f) { return f == PixelFormat::NV12 ? 1 : 2; }
constexpr std::uint32_t chroma_width(std::uint32_t w) { return (w + 1) / 2; }
constexpr std::uint32_t chroma_height(std::uint32_t h) { return (h + 1) / 2; }

std::string_view to_string(PixelFormat);
std::string_view to_string(ColorMatrix);
std::string_view to_string(ColorRange);
std::string_view to_string(ChromaSiting);

}  // namespace handoff
