#include <handoff/error.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/media/frame_source.hpp>
#include <handoff/media/overlay.hpp>

#include <string>

namespace handoff::media {

std::size_t packed_frame_bytes(PixelFormat format, std::uint32_t width, std::uint32_t height) {
  std::size_t bytes = 0;
  for (int i = 0; i < plane_count(format); ++i) {
    const PlaneLayout p = plane_layout(format, width, height, i);
    bytes += p.row_bytes * p.height;
  }
  return bytes;
}

void check_target(const SourceInfo& info, const FrameWriteTarget& t) {
  static constexpr const char* kNames[] = {"luma", "chroma", "plane2"};
  for (int i = 0; i < plane_count(info.format); ++i) {
    if (!t.plane(i)) throw UsageError("FrameWriteTarget: null " + std::string(kNames[i]) + " pointer");
    const std::size_t row = plane_layout(info.format, info.width, info.height, i).row_bytes;
    if (t.pitch(i) < row) {
      throw UsageError("FrameWriteTarget: " + std::string(kNames[i]) + "_pitch " + std::to_string(t.pitch(i)) +
                       " is below the row of " + std::to_string(row) + " bytes");
    }
  }
}

FrameWriteTarget write_target(const Frame& f) {
  if (f.memory != MemoryKind::Host) throw UsageError("write_target: the frame is not in host memory");
  FrameWriteTarget t;
  std::uint8_t** data[] = {&t.luma, &t.chroma, &t.plane2};
  std::size_t* pitch[] = {&t.luma_pitch, &t.chroma_pitch, &t.plane2_pitch};
  for (int i = 0; i < plane_count(f.format); ++i) {
    if (!f.planes[i].data) throw UsageError("write_target: null plane pointer (plane " + std::to_string(i) + ")");
    *data[i] = static_cast<std::uint8_t*>(f.planes[i].data);
    *pitch[i] = f.planes[i].pitch;
  }
  return t;
}

bool FrameSource::overlays_for(std::int64_t, OverlayFrame& out) const {
  out.clear();
  return false;
}

HostFrame::HostFrame(PixelFormat format, std::uint32_t width, std::uint32_t height, std::size_t row_align)
    : format_(format), width_(width), height_(height) {
  if (width == 0 || height == 0 || row_align == 0) {
    throw UsageError("HostFrame: width, height and row_align must be positive");
  }
  auto align = [&](std::size_t v) { return (v + row_align - 1) / row_align * row_align; };
  std::size_t at = 0;
  for (int i = 0; i < plane_count(format); ++i) {
    const PlaneLayout p = plane_layout(format, width, height, i);
    pitch_[i] = align(p.row_bytes);
    offset_[i] = at;
    at += pitch_[i] * p.height;
  }
  storage_.assign(at, 0);
}

namespace {
std::uint16_t sample(const std::uint8_t* row, std::size_t i, PixelFormat f) {
  if (f != PixelFormat::P010) return row[i];
  return std::uint16_t((row[2 * i] | (row[2 * i + 1] << 8)) >> 6);
}
}  // namespace

std::uint16_t HostFrame::y(std::uint32_t x, std::uint32_t row) const {
  return sample(luma() + row * pitch_[0], x, format_);
}
std::uint16_t HostFrame::u(std::uint32_t cx, std::uint32_t crow) const {
  if (format_ == PixelFormat::I420) return plane(1)[crow * pitch_[1] + cx];
  return sample(chroma() + crow * pitch_[1], 2 * std::size_t(cx), format_);
}
std::uint16_t HostFrame::v(std::uint32_t cx, std::uint32_t crow) const {
  if (format_ == PixelFormat::I420) return plane(2)[crow * pitch_[2] + cx];
  return sample(chroma() + crow * pitch_[1], 2 * std::size_t(cx) + 1, format_);
}

Frame HostFrame::frame(const Colorimetry& c) const {
  FrameLayout l = FrameLayout::packed(format_, width_, height_);
  l.colorimetry = c;
  for (int i = 0; i < plane_count(format_); ++i) l.planes[i] = PlanePlacement{pitch_[i], offset_[i], 0};
  return l.describe(MemoryKind::Host, {const_cast<std::uint8_t*>(storage_.data())});
}

}  // namespace handoff::media
