#include <handoff/frame_validate.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/raw_reader.hpp>

#include "byte_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace handoff::media {
namespace {

class RawSource final : public FrameSource {
 public:
  RawSource(std::unique_ptr<detail::ByteReader> in, const RawOptions& o) : in_(std::move(in)) {
    const std::string name = in_->name();
    for (auto [v, field] : {std::pair{o.width, "width"}, std::pair{o.height, "height"}}) {
      if (std::string problem = dimension_problem(field, v); !problem.empty()) throw ParseError(name, "", field, problem);
    }
    if (o.rate.num <= 0 || o.rate.den <= 0) throw UsageError(name + ": frame rate terms must be positive");
    if (std::ranges::find(kPixelFormats, o.format) == std::end(kPixelFormats))
      throw UsageError(name + ": pixel format " + std::to_string(int(o.format)) + " is not one of " +
                       spellings<PixelFormat>());
    info_ = SourceInfo{name, o.format, o.width, o.height, o.colorimetry, o.rate, 0};
    frame_bytes_ = packed_frame_bytes(o.format, o.width, o.height);
    const std::uint64_t size = in_->size();
    if (size == 0) throw ParseError(name, "", "size", "the file is empty (0 bytes): no frames to show");
    if (size % frame_bytes_ != 0) {
      throw ParseError(name, "", "size",
                       "file size " + std::to_string(size) + " bytes is not a whole number of " +
                           std::string(to_string(o.format)) + " " + std::to_string(o.width) + "x" +
                           std::to_string(o.height) + " frames (" + std::to_string(frame_bytes_) +
                           " bytes each)");
    }
    info_.frame_count = static_cast<std::int64_t>(size / frame_bytes_);
  }

  const SourceInfo& info() const override { return info_; }
  std::int64_t position() const override { return position_; }

  void seek(std::int64_t index) override {
    if (index < 0 || index > info_.frame_count) {
      throw UsageError(info_.name + ": seek to frame " + std::to_string(index) + " outside 0.." +
                       std::to_string(info_.frame_count));
    }
    position_ = index;
  }

  bool read_into(const FrameWriteTarget& t) override {
    check_target(info_, t);
    if (position_ >= info_.frame_count) return false;
    // Planes back to back, as FrameLayout::packed lays them out.
    std::uint64_t at = static_cast<std::uint64_t>(position_) * frame_bytes_;
    for (int i = 0; i < plane_count(info_.format); ++i) {
      const PlaneLayout p = plane_layout(info_.format, info_.width, info_.height, i);
      read_plane(at, t.plane(i), t.pitch(i), p.row_bytes, p.height);
      at += std::uint64_t(p.row_bytes) * p.height;
    }
    ++position_;
    return true;
  }

 private:
  void read_plane(std::uint64_t at, std::uint8_t* dst, std::size_t pitch, std::size_t row, std::uint32_t rows) {
    const std::size_t bytes = row * rows;
    std::uint8_t* into = dst;
    if (pitch != row) {
      if (scratch_.size() < bytes) scratch_.resize(bytes);
      into = scratch_.data();
    }
    const std::size_t got = in_->read_at(at, into, bytes);
    if (got != bytes) {
      throw ParseError(info_.name, "frame " + std::to_string(position_), "data",
                       "truncated: " + std::to_string(at - std::uint64_t(position_) * frame_bytes_ + got) + " of " +
                           std::to_string(frame_bytes_) + " bytes (did the file shrink?)");
    }
    if (into == dst) return;
    const std::uint8_t* src = scratch_.data();
    for (std::uint32_t y = 0; y < rows; ++y, src += row) std::memcpy(dst + y * pitch, src, row);
  }

  std::unique_ptr<detail::ByteReader> in_;
  SourceInfo info_;
  std::size_t frame_bytes_ = 0;
  std::vector<std::uint8_t> scratch_;
  std::int64_t position_ = 0;
};

}  // namespace

std::unique_ptr<FrameSource> open_raw(const std::filesystem::path& path, const RawOptions& options) {
  return std::make_unique<RawSource>(detail::open_file_reader(path), options);
}

void parse_size(const std::string& text, std::uint32_t& width, std::uint32_t& height) {
  const auto x = text.find_first_of("xX");
  std::uint64_t w = 0, h = 0;
  bool ok = x != std::string::npos && x > 0 && x + 1 < text.size();
  if (ok) {
    auto r1 = std::from_chars(text.data(), text.data() + x, w);
    auto r2 = std::from_chars(text.data() + x + 1, text.data() + text.size(), h);
    ok = r1.ec == std::errc() && r1.ptr == text.data() + x && r2.ec == std::errc() &&
         r2.ptr == text.data() + text.size();
  }
  if (!ok) throw ParseError("", "", "size", "expected WIDTHxHEIGHT (e.g. 1920x1080), got \"" + text + "\"");
  for (auto [name, v] : {std::pair{"width", w}, std::pair{"height", h}}) {
    if (std::string problem = dimension_problem(name, v); !problem.empty())
      throw ParseError("", "", "size", "\"" + text + "\": " + problem);
  }
  width = static_cast<std::uint32_t>(w);
  height = static_cast<std::uint32_t>(h);
}

}  // namespace handoff::media
