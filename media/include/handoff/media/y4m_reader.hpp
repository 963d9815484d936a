#pragma once
// YUV4MPEG2 (.y4m) reader: streams 8-bit 4:2:0 files as I420 (the file's own
// planes, copied row by row: no conversion) or, with Y4mOptions::format_420 =
// NV12, as NV12 (planar U, V -> interleaved UV); 10-bit 4:2:0 as P010 (UV
// interleaved; samples -> value << 6, little-endian) and 8-bit 4:2:2 as YUYV
// (planar Y, U, V -> Y0 U Y1 V pairs; an odd width's last pair repeats its Y).
// Each conversion happens in the one pass that copies the frame into the
// caller's buffer: a frame is copied once either way.
// The file is never loaded whole: one frame's worth of scratch is allocated at
// open and reused.
//
// Header fields honoured:
//   W, H        size (1..kMaxFrameDimension each); required.
//   F n:d       frame rate; "0:0" or absent -> 30:1.
//   C           420jpeg / 420 (siting Center), 420mpeg2 (Left), 420paldv (TopLeft),
//               all i420 (or nv12); 420p10 (10-bit, siting Left): p010; 422 (8-bit,
//               siting Left): yuyv. Absent -> 420jpeg. Anything else (444,
//               mono, 422p10, 420p12, ...) is refused with a ParseError.
//   I, A        accepted and ignored (interlaced frames are shown as progressive).
//   XCOLORRANGE=FULL|LIMITED            range (default LIMITED).
//   XCOLORMATRIX=BT601|BT709|BT2020     matrix (also accepted: XCOLORSPACE=, XYUVMATRIX=
//               with the same values, and 601 / 709 / 2020 / BT2020NC spellings).
//               Default: BT601 when H <= 576, else BT709.
//   other X... extensions are ignored.
// Each frame is "FRAME" + optional parameters + '\n' + the planes. Frame
// offsets are indexed lazily (as frames are read or sought), so FRAME lines
// carrying parameters are handled. Header and FRAME lines are capped (4 KiB).
#include <handoff/media/frame_source.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

namespace handoff::media {

struct Y4mOptions {
  // What 8-bit 4:2:0 is read as: I420 (the default: the file's own planes,
  // unconverted; the viewer, its recorder and live slots take it) or NV12
  // (U and V interleaved while copying, for consumers that want two planes).
  // UsageError for any other format.
  PixelFormat format_420 = PixelFormat::I420;
};

// Opens `path`; parses the header now (ParseError naming the file and the
// field on a bad header). frame_count in info() counts complete frames; a
// truncated or damaged frame makes read_into() throw when it is reached. A
// file without one complete frame has nothing to show: ParseError naming the
// file (the first frame's own error when it is damaged).
// When the file size fits the plain layout ("FRAME\n" + payload, repeated),
// frames are located by arithmetic and each marker is checked as it is read:
// a damaged marker found then lowers info().frame_count to the good frames.
std::unique_ptr<FrameSource> open_y4m(const std::filesystem::path& path, const Y4mOptions& options = {});

// A Y4M file by its name: it ends in .y4m (any case). Other files are raw.
bool is_y4m_path(const std::filesystem::path& path);

// Same, reading from memory (the bytes are copied). `name` is used in messages.
// For tests and fuzzing.
std::unique_ptr<FrameSource> open_y4m_memory(std::span<const std::uint8_t> bytes,
                                             std::string name = "<memory>", const Y4mOptions& options = {});

// Writes a Y4M file from NV12 / P010 / I420 / YUYV host frames (tests, sample
// generation): C420jpeg (nv12, i420), C420p10 (p010) or C422 (yuyv) unless
// `chroma_tag` says otherwise.
// `extra` is appended to the header verbatim (e.g. "XCOLORRANGE=FULL").
class Y4mWriter {
 public:
  Y4mWriter(const std::filesystem::path& path, PixelFormat format, std::uint32_t width,
            std::uint32_t height, Rational rate = {}, std::string chroma_tag = {},
            std::string extra = {});
  ~Y4mWriter();
  Y4mWriter(const Y4mWriter&) = delete;
  Y4mWriter& operator=(const Y4mWriter&) = delete;
  // Appends one frame; `frame_params` go after "FRAME" (e.g. " Ixyz").
  void write(const HostFrame& frame, const std::string& frame_params = {});
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace handoff::media
