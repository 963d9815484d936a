#pragma once
// Plane layout math and validation for NV12 / P010 frames (frame.hpp).
//
// Layout: luma is H rows of W samples, chroma ceil(H/2) rows of ceil(W/2)
// interleaved (U, V) pairs; a sample is 1 byte (NV12) or 2 bytes little-endian
// (P010). Each plane has its own pitch (bytes from one row to the next).
//
// Thread safety: every function here is pure and may be called from any thread.
#include <handoff/error.hpp>
#include <handoff/frame.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace handoff {

// Largest width or height handoff accepts (frames beyond 8K are refused as
// "over-large"; it also keeps every product below in 64-bit range).
inline constexpr std::uint32_t kMaxFrameDimension = 32768;

// A frame that breaks the layout rules. `field()` names the offending field
// ("width", "planes[1].pitch", "luma.strides", ...); what() says the values.
class InvalidFrame : public UsageError {
 public:
  InvalidFrame(std::string field, const std::string& message)
      : UsageError(field + ": " + message), field_(std::move(field)) {}
  const std::string& field() const noexcept { return field_; }

 private:
  std::string field_;
};

// The packed shape of one plane (0 = luma, 1 = chroma).
struct PlaneLayout {
  std::uint32_t width = 0;       // samples per row per component group
  std::uint32_t height = 0;      // rows
  std::uint32_t components = 1;  // 1 (luma) or 2 (chroma U, V)
  std::size_t sample_bytes = 1;  // 1 (NV12) or 2 (P010)
  std::size_t row_bytes = 0;     // width * components * sample_bytes: the packed row
};

// "luma" / "chroma".
std::string_view plane_name(int plane) noexcept;

// Checks width and height (not 0, not above kMaxFrameDimension); throws
// InvalidFrame naming "width" or "height".
void validate_dimensions(std::uint32_t width, std::uint32_t height);

// The packed layout of `plane` for a frame of `format`, `width` x `height`.
// Throws InvalidFrame for bad dimensions or a plane index other than 0 / 1.
PlaneLayout plane_layout(PixelFormat format, std::uint32_t width, std::uint32_t height, int plane);

// Bytes a plane spans from its first sample to just past its last one:
// pitch * (rows - 1) + row_bytes. Throws InvalidFrame on overflow.
std::size_t plane_span_bytes(std::size_t pitch, std::uint32_t rows, std::size_t row_bytes,
                             std::string_view field = "pitch");

// Checks everything a consumer relies on: format and colorimetry values,
// dimensions, each plane's shape against the format, pitch (at least the
// packed row, a whole number of samples, no overflow), pointers (non-null and
// sample-aligned for host / CUDA memory, offsets for GL / Vulkan) and the
// memory kind's own fields. Throws InvalidFrame naming the field and values.
void validate(const Frame& frame);

}  // namespace handoff
