// FrameLayout (frame.hpp): where a frame's planes sit, and the Frame it describes.
#include <handoff/error.hpp>
#include <handoff/frame.hpp>
#include <handoff/frame_validate.hpp>

#include <algorithm>
#include <string>

namespace handoff {

namespace {

std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

}  // namespace

FrameLayout FrameLayout::packed(PixelFormat format, std::uint32_t width, std::uint32_t height) {
  FrameLayout l;
  l.format = format;
  l.width = width;
  l.height = height;
  // No checks here (a plain value); describe() and validate() name bad dimensions.
  for (int i = 0; i < plane_count(format); ++i) {
    // The packed row, without plane_layout's checks (0 for bad dimensions).
    std::size_t row = 0;
    if (width > 0 && width <= kMaxFrameDimension && height > 0 && height <= kMaxFrameDimension)
      row = l.plane(i).row_bytes;
    l.planes[std::size_t(i)] = {row, 0, std::size_t(i)};
  }
  return l;
}

FrameLayout FrameLayout::contiguous(PixelFormat format, std::uint32_t width, std::uint32_t height,
                                    std::size_t alignment, bool shared_pitch) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096)
    throw UsageError("FrameLayout::contiguous: alignment " + std::to_string(alignment) +
                     " is not a power of two in 1..4096");
  FrameLayout l;
  l.format = format;
  l.width = width;
  l.height = height;
  // Rows are at most 32770 * 4 bytes and heights at most 32768: no overflow.
  const int n = plane_count(format);
  std::size_t pitch[kMaxPlanes] = {};
  std::size_t widest = 0;
  for (int i = 0; i < n; ++i) widest = std::max(widest, pitch[i] = align_up(l.plane(i).row_bytes, alignment));
  std::size_t offset = 0;
  for (int i = 0; i < n; ++i) {
    const std::size_t p = shared_pitch ? widest : pitch[i];
    l.planes[std::size_t(i)] = {p, offset, 0};
    offset = align_up(offset + p * l.plane(i).height, alignment);
  }
  return l;
}

PlaneLayout FrameLayout::plane(int i) const { return plane_layout(format, width, height, i); }

std::size_t FrameLayout::pitch(int i) const {
  const std::size_t p = planes.at(std::size_t(i)).pitch;
  return p ? p : plane(i).row_bytes;
}

std::size_t FrameLayout::span(int i) const {
  const PlaneLayout l = plane(i);
  return plane_span_bytes(pitch(i), l.height, l.row_bytes, std::string(plane_name(format, i)) + " pitch");
}

std::size_t FrameLayout::buffer_bytes(std::size_t buffer) const {
  std::size_t bytes = 0;
  for (int i = 0; i < plane_count(format); ++i) {
    if (planes[std::size_t(i)].buffer != buffer) continue;
    std::size_t rows = 0, end = 0;
    span(i);  // checks the pitch for overflow
    if (__builtin_mul_overflow(pitch(i), std::size_t(plane(i).height), &rows) ||
        __builtin_add_overflow(rows, planes[std::size_t(i)].offset, &end))
      throw InvalidFrame(std::string(plane_name(format, i)) + ".offset", "offset + pitch x rows overflows");
    bytes = std::max(bytes, end);
  }
  return bytes;
}

Frame FrameLayout::describe(MemoryKind memory, std::array<void*, kMaxPlanes> bases) const {
  Frame f;
  f.format = format;
  f.width = width;
  f.height = height;
  f.colorimetry = colorimetry;
  f.memory = memory;
  const bool pointers = memory == MemoryKind::Host || memory == MemoryKind::Cuda;
  for (int i = 0; i < plane_count(format); ++i) {
    const PlaneLayout l = plane(i);
    const PlanePlacement& at = planes[std::size_t(i)];
    Plane& p = f.planes[std::size_t(i)];
    p.pitch = pitch(i);
    p.width = l.width;
    p.height = l.height;
    p.components = l.components;
    if (pointers) {
      void* base = at.buffer < bases.size() ? bases[at.buffer] : nullptr;
      p.data = base ? static_cast<std::byte*>(base) + at.offset : nullptr;  // null: validate() names it
    } else {
      p.offset = at.offset;
    }
  }
  return f;
}

}  // namespace handoff
