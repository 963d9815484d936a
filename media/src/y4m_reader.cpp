// YUV4MPEG2 reader (see y4m_reader.hpp for the accepted header fields).
//
// Frame layout: "FRAME[ params]\n" + planar Y, U, V. 8-bit 4:2:0 becomes
// nv12 (by default) or, asked for, i420 as stored (copied row by row,
// nothing converted); 10-bit 4:2:0 becomes p010 and 8-bit 4:2:2 yuyv. Every
// conversion happens in the one pass that copies the frame into the target. When the file size is a
// whole number of "FRAME\n" + payload strides after the header, frames are
// addressed by arithmetic and each marker is checked as the frame is read;
// otherwise (FRAME parameters, a truncated or damaged file) the FRAME lines
// are scanned once at open, and the first bad one ends the stream with its
// error, which read_into() throws when playback reaches it.
#include <handoff/frame_validate.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/y4m_reader.hpp>

#include "byte_reader.hpp"
#include "rosbag_folder.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>

namespace handoff::media {
namespace {

constexpr std::size_t kMaxLine = 4096;
constexpr std::string_view kMagic = "YUV4MPEG2";
constexpr std::string_view kPlainMarker = "FRAME\n";

std::string printable(std::string_view s, std::size_t max = 16) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n') out += "\\n";
    else if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') out += char(c);
    else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (s.size() > max) out += "...";
  return out + "\"";
}

std::string upper(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = char((c >= 'a' && c <= 'z') ? c - 32 : c);
  return r;
}

class Y4mSource final : public FrameSource {
 public:
  Y4mSource(std::unique_ptr<detail::ByteReader> in, const Y4mOptions& options)
      : in_(std::move(in)), format_420_(options.format_420) {
    info_.name = in_->name();
    if (format_420_ != PixelFormat::I420 && format_420_ != PixelFormat::NV12) {
      throw UsageError(info_.name + ": Y4mOptions::format_420 is " + std::string(to_string(format_420_)) +
                       "; 8-bit 4:2:0 is read as i420 or nv12");
    }
    parse_header();
    const std::uint64_t stride = kPlainMarker.size() + frame_bytes_;
    const std::uint64_t body = in_->size() - header_end_;
    uniform_ = body % stride == 0 && every_marker_is_plain(stride, body / stride);
    if (uniform_) {
      info_.frame_count = static_cast<std::int64_t>(body / stride);
    } else {
      scan_all();
    }
    refuse_if_nothing_to_show();
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

  bool read_into(const FrameWriteTarget& target) override {
    check_target(info_, target);
    if (uniform_ && position_ < info_.frame_count) {
      const std::uint64_t stride = kPlainMarker.size() + frame_bytes_;
      const std::uint64_t offset = header_end_ + static_cast<std::uint64_t>(position_) * stride;
      ensure_scratch(stride);
      const std::size_t got = in_->read_at(offset, scratch_.data(), stride);
      if (got == stride && std::memcmp(scratch_.data(), kPlainMarker.data(), kPlainMarker.size()) == 0) {
        convert(scratch_.data() + kPlainMarker.size(), target);
        ++position_;
        return true;
      }
      // Not the layout checked at open (the file changed since): index for real.
      uniform_ = false;
      scan_all();
      if (position_ > info_.frame_count) position_ = info_.frame_count;
    }
    if (uniform_) return false;  // at the end
    if (position_ >= static_cast<std::int64_t>(payload_.size())) {
      if (stop_error_) throw *stop_error_;
      return false;
    }
    ensure_scratch(frame_bytes_);
    const std::size_t got = in_->read_at(payload_[static_cast<std::size_t>(position_)], scratch_.data(), frame_bytes_);
    if (got != frame_bytes_) {
      throw ParseError(info_.name, "frame " + std::to_string(position_), "data",
                       "truncated: " + std::to_string(got) + " of " + std::to_string(frame_bytes_) + " bytes");
    }
    convert(scratch_.data(), target);
    ++position_;
    return true;
  }

 private:
  [[noreturn]] void header_error(const std::string& field, const std::string& detail) const {
    throw ParseError(info_.name, "header", field, detail);
  }

  std::uint32_t parse_dimension(std::string_view v, const char* field) const {
    std::uint64_t n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc() || p != v.data() + v.size()) {
      header_error(field, "not a positive integer: " + printable(v));
    }
    if (std::string problem = dimension_problem(field[0] == 'W' ? "width" : "height", n); !problem.empty()) {
      header_error(field, problem);
    }
    return static_cast<std::uint32_t>(n);
  }

  void parse_rate(std::string_view v) {
    const auto colon = v.find(':');
    std::int64_t num = 0, den = 0;
    bool ok = colon != std::string_view::npos;
    if (ok) {
      auto r1 = std::from_chars(v.data(), v.data() + colon, num);
      auto r2 = std::from_chars(v.data() + colon + 1, v.data() + v.size(), den);
      ok = colon > 0 && colon + 1 < v.size() && r1.ec == std::errc() && r1.ptr == v.data() + colon &&
           r2.ec == std::errc() && r2.ptr == v.data() + v.size() && num >= 0 && den >= 0;
    }
    if (!ok) header_error("F", "expected <num>:<den>, got " + printable(v));
    if (num == 0 && den == 0) return;  // unknown: keep the default
    if (num == 0 || den == 0) header_error("F", "frame rate " + printable(v) + " has a zero term");
    info_.rate = Rational{num, den};
  }

  void parse_chroma(std::string_view v) {
    if (v == "420jpeg" || v == "420") {
      layout_ = Layout::Yuv420;
      info_.colorimetry.siting = ChromaSiting::Center;
    } else if (v == "420mpeg2") {
      layout_ = Layout::Yuv420;
      info_.colorimetry.siting = ChromaSiting::Left;
    } else if (v == "420paldv") {
      layout_ = Layout::Yuv420;
      info_.colorimetry.siting = ChromaSiting::TopLeft;
    } else if (v == "420p10") {
      layout_ = Layout::Yuv420p10;
      info_.colorimetry.siting = ChromaSiting::Left;
    } else if (v == "422") {
      // 4:2:2 chroma is co-sited with the even luma columns (left).
      layout_ = Layout::Yuv422;
      info_.colorimetry.siting = ChromaSiting::Left;
    } else {
      header_error("C", "unsupported chroma format " + printable(v) +
                            " (supported: 420jpeg, 420, 420mpeg2, 420paldv, 420p10, 422)");
    }
  }

  void parse_extension(std::string_view v) {
    const auto eq = v.find('=');
    if (eq == std::string_view::npos) return;  // flag-style extensions: ignored
    const std::string key = upper(v.substr(0, eq));
    const std::string val = upper(v.substr(eq + 1));
    if (key == "COLORRANGE") {
      if (val == "FULL") info_.colorimetry.range = ColorRange::Full;
      else if (val == "LIMITED") info_.colorimetry.range = ColorRange::Limited;
      else header_error("XCOLORRANGE", "expected FULL or LIMITED, got " + printable(v.substr(eq + 1)));
    } else if (key == "COLORMATRIX" || key == "COLORSPACE" || key == "YUVMATRIX") {
      if (val == "BT601" || val == "601" || val == "BT.601" || val == "SMPTE170M" || val == "BT470BG") {
        matrix_ = ColorMatrix::BT601;
      } else if (val == "BT709" || val == "709" || val == "BT.709") {
        matrix_ = ColorMatrix::BT709;
      } else if (val == "BT2020" || val == "2020" || val == "BT.2020" || val == "BT2020NC") {
        matrix_ = ColorMatrix::BT2020;
      } else {
        header_error("X" + key, "unsupported matrix " + printable(v.substr(eq + 1)) + " (BT601, BT709, BT2020)");
      }
    }
  }

  void parse_header() {
    char buf[kMaxLine + 1];
    const std::size_t got = in_->read_at(0, buf, sizeof buf);
    const std::string_view data(buf, got);
    if (data.substr(0, kMagic.size()) != kMagic ||
        (got > kMagic.size() && data[kMagic.size()] != ' ' && data[kMagic.size()] != '\n')) {
      header_error("signature", "not a YUV4MPEG2 file (starts with " + printable(data) + ")");
    }
    const auto nl = data.find('\n');
    if (nl == std::string_view::npos) {
      if (got <= kMaxLine) header_error("", "truncated: the header line has no end");
      header_error("", "header line longer than " + std::to_string(kMaxLine) + " bytes");
    }
    header_end_ = nl + 1;
    std::string_view rest = data.substr(kMagic.size(), nl - kMagic.size());
    bool have_w = false, have_h = false;
    info_.colorimetry.siting = ChromaSiting::Center;  // C420jpeg, the default when C is absent
    while (!rest.empty()) {
      const auto sp = rest.find(' ');
      const std::string_view tok = rest.substr(0, sp);
      rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
      if (tok.empty()) continue;
      const std::string_view v = tok.substr(1);
      switch (tok[0]) {
        case 'W': info_.width = parse_dimension(v, "W"); have_w = true; break;
        case 'H': info_.height = parse_dimension(v, "H"); have_h = true; break;
        case 'F': parse_rate(v); break;
        case 'C': parse_chroma(v); break;
        case 'X': parse_extension(v); break;
        default: break;  // I (interlacing), A (aspect) and unknown tags: ignored
      }
    }
    if (!have_w) header_error("W", "missing (the width is required)");
    if (!have_h) header_error("H", "missing (the height is required)");
    info_.format = layout_ == Layout::Yuv420 ? format_420_
                   : layout_ == Layout::Yuv420p10 ? PixelFormat::P010
                                                  : PixelFormat::YUYV;
    info_.colorimetry.matrix = matrix_.value_or(info_.height <= 576 ? ColorMatrix::BT601 : ColorMatrix::BT709);
    const std::size_t bps = layout_ == Layout::Yuv420p10 ? 2 : 1;
    const std::size_t chroma_rows = layout_ == Layout::Yuv422 ? info_.height : chroma_height(info_.height);
    frame_bytes_ = bps * (std::size_t(info_.width) * info_.height +
                          2 * std::size_t(chroma_width(info_.width)) * chroma_rows);
  }

  // A file without one complete frame would play as "0 frames" and end at
  // once: refuse it at open, with the first frame's own error when it has one.
  void refuse_if_nothing_to_show() const {
    if (info_.frame_count > 0) return;
    if (stop_error_) throw *stop_error_;
    throw ParseError(info_.name, "", "frames", "the file has a header and no frames (nothing to show)");
  }

  // True when a plain FRAME line starts every one of `count` strides: then
  // the frames are exactly where the uniform layout puts them, and the count
  // known at open never changes (a caller may seek to any frame below it). A
  // 6-byte read a frame, against scan_all's line read a frame.
  bool every_marker_is_plain(std::uint64_t stride, std::uint64_t count) {
    char m[6];
    for (std::uint64_t k = 0; k < count; ++k) {
      if (in_->read_at(header_end_ + k * stride, m, sizeof m) != sizeof m ||
          std::memcmp(m, kPlainMarker.data(), sizeof m) != 0)
        return false;
    }
    return true;
  }

  // Indexes every FRAME line; the first bad one ends the stream with its error.
  void scan_all() {
    payload_.clear();
    stop_error_.reset();
    const std::uint64_t size = in_->size();
    std::uint64_t offset = header_end_;
    char buf[kMaxLine + 1];
    while (offset < size) {
      const std::string where = "frame " + std::to_string(payload_.size());
      const std::size_t got = in_->read_at(offset, buf, std::min<std::uint64_t>(sizeof buf, size - offset));
      const std::string_view line(buf, got);
      if (line.substr(0, 5) != "FRAME" || (got > 5 && line[5] != ' ' && line[5] != '\n')) {
        stop_error_.emplace(info_.name, where, "FRAME",
                            "missing FRAME marker at byte " + std::to_string(offset) + " (found " +
                                printable(line) + ")");
        break;
      }
      const auto nl = line.find('\n');
      if (nl == std::string_view::npos) {
        stop_error_.emplace(info_.name, where, "FRAME",
                            got <= kMaxLine ? "truncated: the FRAME line has no end"
                                            : "FRAME line longer than " + std::to_string(kMaxLine) + " bytes");
        break;
      }
      const std::uint64_t payload = offset + nl + 1;
      if (size - payload < frame_bytes_) {
        stop_error_.emplace(info_.name, where, "data",
                            "truncated: " + std::to_string(size - payload) + " of " +
                                std::to_string(frame_bytes_) + " bytes");
        break;
      }
      payload_.push_back(payload);
      offset = payload + frame_bytes_;
    }
    info_.frame_count = static_cast<std::int64_t>(payload_.size());
  }

  // Grows the scratch buffer once; only called for frames that exist in the
  // file, so its size is bounded by the input.
  void ensure_scratch(std::size_t n) {
    if (scratch_.size() < n) scratch_.resize(n);
  }

  void copy_rows(const std::uint8_t* src, std::size_t row, std::size_t rows, std::uint8_t* dst,
                 std::size_t pitch) const {
    for (std::size_t y = 0; y < rows; ++y) std::memcpy(dst + y * pitch, src + y * row, row);
  }

  void convert(const std::uint8_t* src, const FrameWriteTarget& t) const {
    const std::size_t w = info_.width, h = info_.height;
    const std::size_t cw = chroma_width(info_.width), ch = chroma_height(info_.height);
    if (layout_ == Layout::Yuv420 && format_420_ == PixelFormat::I420) {  // the file's planes as they are
      copy_rows(src, w, h, t.luma, t.luma_pitch);
      copy_rows(src + w * h, cw, ch, t.chroma, t.chroma_pitch);
      copy_rows(src + w * h + cw * ch, cw, ch, t.plane2, t.plane2_pitch);
      return;
    }
    if (layout_ == Layout::Yuv420) {  // nv12: U and V interleaved as the rows are copied
      copy_rows(src, w, h, t.luma, t.luma_pitch);
      const std::uint8_t* u = src + w * h;
      const std::uint8_t* v = u + cw * ch;
      for (std::size_t y = 0; y < ch; ++y) {
        std::uint8_t* row = t.chroma + y * t.chroma_pitch;
        const std::uint8_t* ur = u + y * cw;
        const std::uint8_t* vr = v + y * cw;
        for (std::size_t x = 0; x < cw; ++x) {
          row[2 * x] = ur[x];
          row[2 * x + 1] = vr[x];
        }
      }
      return;
    }
    if (layout_ == Layout::Yuv422) {  // planar 4:2:2 -> yuyv, one interleave
      const std::uint8_t* u = src + w * h;
      const std::uint8_t* v = u + cw * h;
      for (std::size_t y = 0; y < h; ++y) {
        const std::uint8_t* yr = src + y * w;
        const std::uint8_t* ur = u + y * cw;
        const std::uint8_t* vr = v + y * cw;
        std::uint8_t* d = t.luma + y * t.luma_pitch;
        for (std::size_t x = 0; x < cw; ++x) {
          d[4 * x] = yr[2 * x];
          d[4 * x + 1] = ur[x];
          // An odd width's last pair has no second pixel: repeat the first.
          d[4 * x + 2] = 2 * x + 1 < w ? yr[2 * x + 1] : yr[2 * x];
          d[4 * x + 3] = vr[x];
        }
      }
      return;
    }
    // 10-bit little-endian samples (values above 1023 are clamped) -> P010.
    auto p010 = [](const std::uint8_t* s, std::uint8_t* d) {
      unsigned v = unsigned(s[0]) | (unsigned(s[1]) << 8);
      v = (v > 1023u ? 1023u : v) << 6;
      d[0] = std::uint8_t(v & 0xFF);
      d[1] = std::uint8_t(v >> 8);
    };
    for (std::size_t y = 0; y < h; ++y) {
      const std::uint8_t* s = src + 2 * y * w;
      std::uint8_t* d = t.luma + y * t.luma_pitch;
      for (std::size_t x = 0; x < w; ++x) p010(s + 2 * x, d + 2 * x);
    }
    const std::uint8_t* u = src + 2 * w * h;
    const std::uint8_t* v = u + 2 * cw * ch;
    for (std::size_t y = 0; y < ch; ++y) {
      std::uint8_t* row = t.chroma + y * t.chroma_pitch;
      for (std::size_t x = 0; x < cw; ++x) {
        p010(u + 2 * (y * cw + x), row + 4 * x);
        p010(v + 2 * (y * cw + x), row + 4 * x + 2);
      }
    }
  }

  std::unique_ptr<detail::ByteReader> in_;
  SourceInfo info_;
  // The file's sample layout: 8-bit 4:2:0 (read as format_420_: i420 or
  // nv12), 10-bit 4:2:0 (as p010), 8-bit 4:2:2 (as yuyv).
  enum class Layout { Yuv420, Yuv420p10, Yuv422 };
  Layout layout_ = Layout::Yuv420;
  PixelFormat format_420_ = PixelFormat::I420;
  std::optional<ColorMatrix> matrix_;
  std::size_t frame_bytes_ = 0;
  std::uint64_t header_end_ = 0;
  bool uniform_ = false;
  std::vector<std::uint64_t> payload_;
  std::optional<ParseError> stop_error_;
  std::vector<std::uint8_t> scratch_;
  std::int64_t position_ = 0;
};

}  // namespace

bool is_y4m_path(const std::filesystem::path& path) { return lower_extension(path) == ".y4m"; }

std::unique_ptr<FrameSource> open_y4m(const std::filesystem::path& path, const Y4mOptions& options) {
  return std::make_unique<Y4mSource>(detail::open_file_reader(path), options);
}

std::unique_ptr<FrameSource> open_y4m_memory(std::span<const std::uint8_t> bytes, std::string name,
                                             const Y4mOptions& options) {
  return std::make_unique<Y4mSource>(detail::open_memory_reader(bytes, std::move(name)), options);
}

// --- Y4mWriter -------------------------------------------------------------------------

struct Y4mWriter::Impl {
  std::FILE* file = nullptr;
  std::string name;
  PixelFormat format;
  std::uint32_t width, height;
  std::vector<std::uint8_t> planar;
};

Y4mWriter::Y4mWriter(const std::filesystem::path& path, PixelFormat format, std::uint32_t width,
                     std::uint32_t height, Rational rate, std::string chroma_tag, std::string extra)
    : impl_(std::make_unique<Impl>()) {
  require_format(format, {PixelFormat::NV12, PixelFormat::P010, PixelFormat::I420, PixelFormat::YUYV}, "Y4mWriter");
  impl_->name = path.string();
  impl_->format = format;
  impl_->width = width;
  impl_->height = height;
  impl_->file = std::fopen(impl_->name.c_str(), "wb");
  if (!impl_->file) throw Error(Api::System, "fopen", errno, std::strerror(errno), impl_->name);
  if (chroma_tag.empty()) {
    chroma_tag = format == PixelFormat::P010 ? "420p10" : format == PixelFormat::YUYV ? "422" : "420jpeg";
  }
  std::string header = "YUV4MPEG2 W" + std::to_string(width) + " H" + std::to_string(height) + " F" +
                       std::to_string(rate.num) + ":" + std::to_string(rate.den) + " Ip A1:1 C" + chroma_tag;
  if (!extra.empty()) header += " " + extra;
  header += "\n";
  if (std::fwrite(header.data(), 1, header.size(), impl_->file) != header.size()) {
    throw Error(Api::System, "fwrite", errno, std::strerror(errno), impl_->name);
  }
}

Y4mWriter::~Y4mWriter() {
  if (impl_ && impl_->file) std::fclose(impl_->file);
}

void Y4mWriter::write(const HostFrame& f, const std::string& frame_params) {
  if (!impl_->file) throw UsageError("Y4mWriter::write after close");
  if (f.format() != impl_->format || f.width() != impl_->width || f.height() != impl_->height) {
    throw UsageError("Y4mWriter::write: frame format or size differs from the file's");
  }
  const std::size_t w = f.width(), h = f.height(), cw = chroma_width(f.width()), ch = chroma_height(f.height());
  const bool ten = f.format() == PixelFormat::P010;
  auto& out = impl_->planar;
  out.clear();
  auto put = [&](std::uint16_t v) {
    out.push_back(std::uint8_t(v & 0xFF));
    if (ten) out.push_back(std::uint8_t(v >> 8));
  };
  if (f.format() == PixelFormat::YUYV) {  // Y, U, V planes of 4:2:2: pair k's U and V at column k
    for (int k : {0, 1, 3}) {
      for (std::uint32_t y = 0; y < h; ++y) {
        const std::uint8_t* row = f.luma() + y * f.luma_pitch();
        if (k == 0) {
          for (std::size_t x = 0; x < w; ++x) out.push_back(row[2 * x]);
        } else {
          for (std::size_t x = 0; x < cw; ++x) out.push_back(row[4 * x + k]);
        }
      }
    }
  } else {
    for (std::uint32_t y = 0; y < h; ++y)
      for (std::uint32_t x = 0; x < w; ++x) put(f.y(x, y));
    for (std::uint32_t y = 0; y < ch; ++y)
      for (std::uint32_t x = 0; x < cw; ++x) put(f.u(x, y));
    for (std::uint32_t y = 0; y < ch; ++y)
      for (std::uint32_t x = 0; x < cw; ++x) put(f.v(x, y));
  }
  const std::string marker = "FRAME" + frame_params + "\n";
  if (std::fwrite(marker.data(), 1, marker.size(), impl_->file) != marker.size() ||
      std::fwrite(out.data(), 1, out.size(), impl_->file) != out.size()) {
    throw Error(Api::System, "fwrite", errno, std::strerror(errno), impl_->name);
  }
}

void Y4mWriter::close() {
  if (impl_->file) {
    const int rc = std::fclose(impl_->file);
    impl_->file = nullptr;
    if (rc != 0) throw Error(Api::System, "fclose", errno, std::strerror(errno), impl_->name);
  }
}

}  // namespace handoff::media
