#pragma once
// Frame sources: things that write NV12 / P010 frames into a caller's buffer
// (typically a GL pixel-buffer object mapped into host memory), so a frame is
// copied once, from the file (or the scene) into the buffer. Once a source is
// open, read_into() does no allocation.
//
// Sources: Y4M files (y4m_reader.hpp), raw NV12 / P010 files (raw_reader.hpp),
// the synthetic scene (scene.hpp).
#include <handoff/frame.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace handoff::media {

struct OverlayFrame;  // overlay.hpp

// Where read_into() writes one frame: luma rows (width samples) and
// interleaved chroma rows (chroma_width(width) UV pairs), each with its own
// row pitch in bytes. Samples are 1 byte (NV12) or 2 bytes little-endian with
// the 10-bit value in the top bits (P010). The target must hold
// height rows of luma and chroma_height(height) rows of chroma.
struct FrameWriteTarget {
  std::uint8_t* luma = nullptr;
  std::size_t luma_pitch = 0;
  std::uint8_t* chroma = nullptr;
  std::size_t chroma_pitch = 0;
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

// Bytes a packed frame of this format and size occupies (luma + chroma, no padding).
std::size_t packed_frame_bytes(PixelFormat format, std::uint32_t width, std::uint32_t height);

// Throws UsageError when the target cannot hold a frame of `info`'s size
// (null pointer, pitch below the packed row).
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
  // (e.g. a truncated Y4M frame) naming the file and the frame.
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

// A host frame buffer (tests, the CPU path, PNG output): packed pitches by
// default. Allocates once.
class HostFrame {
 public:
  HostFrame() = default;
  HostFrame(PixelFormat format, std::uint32_t width, std::uint32_t height, std::size_t row_align = 1);

  FrameWriteTarget target() { return {storage_.data(), luma_pitch_, storage_.data() + chroma_offset_, chroma_pitch_}; }
  const std::uint8_t* luma() const { return storage_.data(); }
  const std::uint8_t* chroma() const { return storage_.data() + chroma_offset_; }
  std::uint8_t* luma() { return storage_.data(); }
  std::uint8_t* chroma() { return storage_.data() + chroma_offset_; }
  std::size_t luma_pitch() const { return luma_pitch_; }
  std::size_t chroma_pitch() const { return chroma_pitch_; }
  PixelFormat format() const { return format_; }
  std::uint32_t width() const { return width_; }
  std::uint32_t height() const { return height_; }
  // Sample accessors (10-bit value for P010, i.e. the stored value >> 6).
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
  std::size_t luma_pitch_ = 0, chroma_pitch_ = 0, chroma_offset_ = 0;
};

}  // namespace handoff::media
