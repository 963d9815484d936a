#pragma once
// Raw files of any PixelFormat: frames back to back, each packed as
// FrameLayout::packed lays it out (its planes one after the other with no row
// padding: nv12 / p010 luma then interleaved chroma, i420 Y then U then V,
// the packed formats one plane), multi-byte samples little-endian. The file size must be a whole
// number of frames, else open_raw throws a ParseError naming the file, its
// size and the expected frame size; an empty file (nothing to show) is refused
// the same way.
#include <handoff/media/frame_source.hpp>

#include <filesystem>
#include <memory>

namespace handoff::media {

struct RawOptions {
  PixelFormat format = PixelFormat::NV12;
  std::uint32_t width = 0;   // required, 1..kMaxFrameDimension
  std::uint32_t height = 0;  // required
  Colorimetry colorimetry{};
  Rational rate{};
};

std::unique_ptr<FrameSource> open_raw(const std::filesystem::path& path, const RawOptions& options);

// Parses "WxH" (e.g. "1920x1080"); ParseError naming the text otherwise.
void parse_size(const std::string& text, std::uint32_t& width, std::uint32_t& height);

}  // namespace handoff::media
