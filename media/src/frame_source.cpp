#include <handoff/error.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/media/frame_source.hpp>
#include <handoff/media/overlay.hpp>

#include <string>

namespace handoff::media {

std::size_t packed_frame_bytes(PixelFormat format, std::uint32_t width, std::uint32_t height) {
  const std::size_t bps = bytes_per_sample(format);
  return bps * (std::size_t(width) * height +
                2 * std::size_t(chroma_width(width)) * chroma_height(height));
}

void check_target(const SourceInfo& info, const FrameWriteTarget& t) {
  const std::size_t bps = bytes_per_sample(info.format);
  if (!t.luma || !t.chroma) {
    throw UsageError("FrameWriteTarget: null " + std::string(!t.luma ? "luma" : "chroma") + " pointer");
  }
  if (t.luma_pitch < bps * info.width) {
    throw UsageError("FrameWriteTarget: luma_pitch " + std::to_string(t.luma_pitch) + " is below the row of " +
                     std::to_string(bps * info.width) + " bytes");
  }
  if (t.chroma_pitch < 2 * bps * chroma_width(info.width)) {
    throw UsageError("FrameWriteTarget: chroma_pitch " + std::to_string(t.chroma_pitch) +
                     " is below the row of " + std::to_string(2 * bps * chroma_width(info.width)) + " bytes");
  }
}

FrameWriteTarget write_target(const Frame& f) {
  if (f.memory != MemoryKind::Host) throw UsageError("write_target: the frame is not in host memory");
  if (!f.planes[0].data || !f.planes[1].data) throw UsageError("write_target: null plane pointer");
  return {static_cast<std::uint8_t*>(f.planes[0].data), f.planes[0].pitch,
          static_cast<std::uint8_t*>(f.planes[1].data), f.planes[1].pitch};
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
  const std::size_t bps = bytes_per_sample(format);
  auto align = [&](std::size_t v) { return (v + row_align - 1) / row_align * row_align; };
  luma_pitch_ = align(bps * width);
  chroma_pitch_ = align(2 * bps * chroma_width(width));
  chroma_offset_ = luma_pitch_ * height;
  storage_.assign(chroma_offset_ + chroma_pitch_ * chroma_height(height), 0);
}

namespace {
std::uint16_t sample(const std::uint8_t* row, std::size_t i, PixelFormat f) {
  if (f == PixelFormat::NV12) return row[i];
  return std::uint16_t((row[2 * i] | (row[2 * i + 1] << 8)) >> 6);
}
}  // namespace

std::uint16_t HostFrame::y(std::uint32_t x, std::uint32_t row) const {
  return sample(luma() + row * luma_pitch_, x, format_);
}
std::uint16_t HostFrame::u(std::uint32_t cx, std::uint32_t crow) const {
  return sample(chroma() + crow * chroma_pitch_, 2 * std::size_t(cx), format_);
}
std::uint16_t HostFrame::v(std::uint32_t cx, std::uint32_t crow) const {
  return sample(chroma() + crow * chroma_pitch_, 2 * std::size_t(cx) + 1, format_);
}

Frame HostFrame::frame(const Colorimetry& c) const {
  return host_planes_frame(format_, width_, height_, const_cast<std::uint8_t*>(luma()), luma_pitch_,
                           const_cast<std::uint8_t*>(chroma()), chroma_pitch_, c);
}

}  // namespace handoff::media
