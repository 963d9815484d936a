#pragma once
// Plane layout math and validation for frames (frame.hpp, which lists every
// format's planes). Each plane has its own pitch (bytes from one row to the
// next).
//
// Thread safety: every function here is pure and may be called from any thread.
#include <handoff/error.hpp>
#include <handoff/frame.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace handoff {

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

// "luma" / "chroma": the planes of nv12 / p010.
std::string_view plane_name(int plane) noexcept;
// Plane `plane` of a `format` frame: "luma" / "chroma" (nv12, p010), "luma" /
// "u" / "v" (i420), "pixels" (the one plane of the packed formats); "plane?"
// outside the format's planes.
std::string_view plane_name(PixelFormat format, int plane) noexcept;

// Checks width and height (not 0, not above kMaxFrameDimension); throws
// InvalidFrame naming "width" or "height", its what() the field and
// dimension_problem's text ("width: width 32769 exceeds the maximum 32768").
void validate_dimensions(std::uint32_t width, std::uint32_t height);

// The one description of a bad frame dimension, for every path that refuses
// one ("width 32769 exceeds the maximum 32768", "height is 0"); empty when
// `value` is in 1..kMaxFrameDimension. `name` says which dimension.
std::string dimension_problem(std::string_view name, std::uint64_t value);

// Bytes a plane spans from its first sample to just past its last one:
// pitch * (rows - 1) + row_bytes. Throws InvalidFrame on overflow.
std::size_t plane_span_bytes(std::size_t pitch, std::uint32_t rows, std::size_t row_bytes,
                             std::string_view field = "pitch");

// Throws InvalidFrame("format", "<who> takes nv12 or p010 frames, not rgb8")
// unless `format` is one of `accepted`: for the consumers that handle some
// formats only (Vulkan frame memory, the 4:2:0 scene), naming what they take.
void require_format(PixelFormat format, std::initializer_list<PixelFormat> accepted, std::string_view who);

// Checks everything a consumer relies on: format and colorimetry values,
// dimensions, each plane's shape against the format, pitch (at least the
// packed row, a whole number of samples, no overflow), pointers (non-null and
// sample-aligned for host / CUDA memory, offsets for GL / Vulkan) and the
// memory kind's own fields. Throws InvalidFrame naming the field and values.
void validate(const Frame& frame);

}  // namespace handoff
