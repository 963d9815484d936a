#pragma once
// Frame sources: things that write frames (any PixelFormat) into a caller's buffer
// (typically a GL pixel-buffer object mapped into host memory), so a frame is
// copied once, from the file (or the scene) into the buffer. Once a source is
// open, read_into() does no allocation.
//
// Sources: Y4M files (y4m_reader.hpp), raw files (raw_reader.hpp), recordings
// (recording.hpp), the synthetic scene (scene.hpp).
#include <handoff/frame.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace handoff::media {

struct OverlayFrame;  // overlay.hpp

// Where read_into() writes one frame: up to three planes, each with its own
// row pitch in bytes, shaped as plane_layout(format, width, height, i) says
// (frame.hpp). `luma` is plane 0 (luma, or the one plane of the packed
// formats: yuyv, uyvy, rgb*, gray*), `chroma` plane 1 (nv12 / p010's
// interleaved UV, i420's U) and `plane2` plane 2 (i420's V). Planes a format
// does not have are ignored. Samples are little-endian (p010: the 10-bit value
// in the top bits).
struct FrameWriteTarget {
  std::uint8_t* luma = nullptr;
  std::size_t luma_pitch = 0;
  std::uint8_t* chroma = nullptr;
  std::size_t chroma_pitch = 0;
  std::uint8_t* plane2 = nullptr;
  std::size_t plane2_pitch = 0;

  std::uint8_t* plane(int i) const { return i == 0 ? luma : i == 1 ? chroma : plane2; }
  std::size_t pitch(int i) const { return i == 0 ? luma_pitch : i == 1 ? chroma_pitch : plane2_pitch; }
};

// Frame rate as a fraction (frames per second = num / den).
struct Rational {
  std::int64_t num = 30;
  std::int64_t den = 1;
  double value() const { return den ? double(num) / double(den) : 0.0; }
  bool operator==(const Rational&) const = default;
};

struct SourceInfo {
  std::string name;  // file path or "scene"
  PixelFormat format = PixelFormat::NV12;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  Colorimetry colorimetry{};
  Rational rate{};
  // Number of frames, or -1 for an endless source (the scene). For Y4M this is
  // the number of complete frames (the file is indexed on first use).
  std::int64_t frame_count = -1;
};

// Bytes a packed frame of this format and size occupies (its planes one after
// the other, no padding: FrameLayout::packed's rows).
std::size_t packed_frame_bytes(PixelFormat format, std::uint32_t width, std::uint32_t height);

// Throws UsageError when the target cannot hold a frame of `info`'s format and
// size (a null plane the format has, a pitch below its packed row).
void check_target(const SourceInfo& info, const FrameWriteTarget& target);

// The target for a host-memory handoff::Frame (e.g. from
// handoff::allocate_host_frame, or a GL buffer mapped into host memory and
// described as MemoryKind::Host). UsageError for other memory kinds or null planes.
FrameWriteTarget write_target(const Frame& host_frame);

// A source of frames. Not thread-safe: use one from one thread at a time (it
// may be handed between threads). Errors in the data throw ParseError (a
// handoff::Error); misuse (a bad target, seek past the end) throws UsageError.
class FrameSource {
 public:
  virtual ~FrameSource() = default;
  FrameSource() = default;
  FrameSource(const FrameSource&) = delete;
  FrameSource& operator=(const FrameSource&) = delete;

  virtual const SourceInfo& info() const = 0;

  // Writes frame position() into `target` and advances. Returns false (target
  // untouched) at the end of a finite source. Throws ParseError on bad data
  // (e.g. a truncated Y4M frame) naming the file and the frame; a source that
  // can go on past that frame (a recording's messages) has then advanced.
  virtual bool read_into(const FrameWriteTarget& target) = 0;

  // Makes `index` the next frame read_into() writes. 0 <= index; for finite
  // sources index <= frame_count (== frame_count means "at the end").
  virtual void seek(std::int64_t index) = 0;

  // Index of the frame the next read_into() writes.
  virtual std::int64_t position() const = 0;

  // Ground-truth overlays the source knows for frame `index` (the scene has
  // them; files do not). Returns false when there are none; `out` is then
  // cleared. Reuses `out`'s capacity.
  virtual bool overlays_for(std::int64_t index, OverlayFrame& out) const;
};

// A host frame buffer of any format (tests, the CPU path, PNG output): the
// planes one after the other, each row padded to `row_align` bytes (1:
// packed). Allocates once.
class HostFrame {
 public:
  HostFrame() = default;
  HostFrame(PixelFormat format, std::uint32_t width, std::uint32_t height, std::size_t row_align = 1);

  FrameWriteTarget target() { return {plane(0), pitch_[0], plane(1), pitch_[1], plane(2), pitch_[2]}; }
  // Plane i (0 .. plane_count(format) - 1); nullptr past the format's planes.
  const std::uint8_t* plane(int i) const { return i < plane_count(format_) ? storage_.data() + offset_[i] : nullptr; }
  std::uint8_t* plane(int i) { return i < plane_count(format_) ? storage_.data() + offset_[i] : nullptr; }
  std::size_t pitch(int i) const { return pitch_[i]; }
  const std::uint8_t* luma() const { return plane(0); }
  const std::uint8_t* chroma() const { return plane(1); }
  std::uint8_t* luma() { return plane(0); }
  std::uint8_t* chroma() { return plane(1); }
  std::size_t luma_pitch() const { return pitch_[0]; }
  std::size_t chroma_pitch() const { return pitch_[1]; }
  PixelFormat format() const { return format_; }
  std::uint32_t width() const { return width_; }
  std::uint32_t height() const { return height_; }
  // Sample accessors of the 4:2:0 formats (nv12, p010, i420; 10-bit value for
  // p010, i.e. the stored value >> 6).
  std::uint16_t y(std::uint32_t x, std::uint32_t row) const;
  std::uint16_t u(std::uint32_t cx, std::uint32_t crow) const;
  std::uint16_t v(std::uint32_t cx, std::uint32_t crow) const;
  // A handoff::Frame describing this buffer (memory Host, owner empty: keep
  // the HostFrame alive while the Frame is used).
  Frame frame(const Colorimetry& c = {}) const;

 private:
  std::vector<std::uint8_t> storage_;
  PixelFormat format_ = PixelFormat::NV12;
  std::uint32_t width_ = 0, height_ = 0;
  std::size_t pitch_[kMaxPlanes] = {}, offset_[kMaxPlanes] = {};
};

}  // namespace handoff::media
