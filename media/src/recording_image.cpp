// foxglove.RawImage <-> frames of every format, written and read with protobuf's
// wire-format primitives so the pixels are copied once (rows straight into
// the message; out of it straight into the caller's buffer), and the
// colorimetry's channel metadata.
#include "mcap_format.hpp"

#include <handoff/frame_validate.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <cstring>

namespace handoff::media {

namespace detail {
extern const unsigned char kRawImageDescriptorSet[];
extern const std::size_t kRawImageDescriptorSetSize;
extern const unsigned char kImageAnnotationsDescriptorSet[];
extern const std::size_t kImageAnnotationsDescriptorSetSize;
extern const unsigned char kCompressedVideoDescriptorSet[];
extern const std::size_t kCompressedVideoDescriptorSetSize;
}  // namespace detail

std::span<const std::uint8_t> raw_image_descriptor_set() {
  return {detail::kRawImageDescriptorSet, detail::kRawImageDescriptorSetSize};
}
std::span<const std::uint8_t> compressed_video_descriptor_set() {
  return {detail::kCompressedVideoDescriptorSet, detail::kCompressedVideoDescriptorSetSize};
}
std::span<const std::uint8_t> image_annotations_descriptor_set() {
  return {detail::kImageAnnotationsDescriptorSet, detail::kImageAnnotationsDescriptorSetSize};
}

namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using WFL = google::protobuf::internal::WireFormatLite;

// RawImage field numbers (foxglove/RawImage.proto) and google.protobuf.Timestamp's.
enum : int { kTimestamp = 1, kWidth = 2, kHeight = 3, kEncoding = 4, kStep = 5, kData = 6 };
enum : int { kSeconds = 1, kNanos = 2 };

// What each RawImage encoding reads as. The first spelling of a format is
// what encode_raw_image writes (i420, which RawImage has no encoding for, is
// written as nv12). Encodings are case-sensitive, as Foxglove spells them.
struct Encoding {
  std::string_view name;
  PixelFormat format;
};
constexpr Encoding kEncodings[] = {
    {"nv12", PixelFormat::NV12},  {"p010", PixelFormat::P010},          {"rgb8", PixelFormat::RGB8},
    {"bgr8", PixelFormat::BGR8},  {"rgba8", PixelFormat::RGBA8},        {"bgra8", PixelFormat::BGRA8},
    {"mono8", PixelFormat::GRAY8}, {"8UC1", PixelFormat::GRAY8},        {"mono16", PixelFormat::GRAY16},
    {"16UC1", PixelFormat::GRAY16}, {"32FC1", PixelFormat::GRAY32F},    {"yuyv", PixelFormat::YUYV},
    {"yuv422_yuy2", PixelFormat::YUYV}, {"uyvy", PixelFormat::UYVY},    {"yuv422", PixelFormat::UYVY},
};

// The rows of a RawImage's data: the 4:2:0 formats as nv12 / p010 lay them out
// (H luma rows, then ceil(H/2) interleaved chroma rows, one step for both),
// the others their one plane's H rows.
struct ImageRows {
  std::size_t luma_row = 0, chroma_row = 0, step = 0, rows = 0;
  bool two_planes = false;
};

ImageRows image_rows(PixelFormat stored, std::uint32_t width, std::uint32_t height) {
  ImageRows r;
  const PlaneLayout luma = plane_layout(stored, width, height, 0);
  r.luma_row = luma.row_bytes;
  r.rows = height;
  r.step = r.luma_row;
  if (plane_count(stored) > 1) {  // nv12, p010 (i420 is stored as nv12)
    r.two_planes = true;
    r.chroma_row = std::size_t(chroma_width(width)) * 2 * luma.sample_bytes;
    r.step = std::max(r.luma_row, r.chroma_row);
    r.rows += chroma_height(height);
  }
  return r;
}

// The format a frame of `format` is stored as: itself, i420 as nv12.
PixelFormat stored_format(PixelFormat format) { return format == PixelFormat::I420 ? PixelFormat::NV12 : format; }

std::size_t timestamp_size(std::uint64_t ns) {
  const auto seconds = std::int64_t(ns / 1'000'000'000u);
  const auto nanos = std::int32_t(ns % 1'000'000'000u);
  return (seconds ? 1 + WFL::Int64Size(seconds) : 0) + (nanos ? 1 + WFL::Int32Size(nanos) : 0);
}

std::uint8_t* write_timestamp(std::uint64_t ns, std::uint8_t* p) {
  const auto seconds = std::int64_t(ns / 1'000'000'000u);
  const auto nanos = std::int32_t(ns % 1'000'000'000u);
  p = WFL::WriteTagToArray(kTimestamp, WFL::WIRETYPE_LENGTH_DELIMITED, p);
  p = CodedOutputStream::WriteVarint32ToArray(std::uint32_t(timestamp_size(ns)), p);
  if (seconds) p = WFL::WriteInt64NoTagToArray(seconds, WFL::WriteTagToArray(kSeconds, WFL::WIRETYPE_VARINT, p));
  if (nanos) p = WFL::WriteInt32NoTagToArray(nanos, WFL::WriteTagToArray(kNanos, WFL::WIRETYPE_VARINT, p));
  return p;
}

std::uint8_t* write_fixed32(int field, std::uint32_t v, std::uint8_t* p) {
  return WFL::WriteFixed32NoTagToArray(v, WFL::WriteTagToArray(field, WFL::WIRETYPE_FIXED32, p));
}

std::uint8_t* write_length(int field, std::size_t n, std::uint8_t* p) {
  p = WFL::WriteTagToArray(field, WFL::WIRETYPE_LENGTH_DELIMITED, p);
  return CodedOutputStream::WriteVarint32ToArray(std::uint32_t(n), p);
}

}  // namespace

std::uint64_t mcap::detail::protobuf_timestamp_ns(std::span<const std::uint8_t> bytes, const char*& error) {
  CodedInputStream ts(bytes.data(), int(bytes.size()));
  std::uint64_t seconds = 0, nanos = 0;
  while (const std::uint32_t t = ts.ReadTag()) {
    const int f = WFL::GetTagFieldNumber(t);
    if (WFL::GetTagWireType(t) == WFL::WIRETYPE_VARINT && (f == kSeconds || f == kNanos)) {
      if (!ts.ReadVarint64(f == kSeconds ? &seconds : &nanos)) {
        error = "truncated timestamp";
        return 0;
      }
    } else if (!WFL::SkipField(&ts, t)) {
      error = "malformed timestamp";
      return 0;
    }
  }
  return std::uint64_t(std::int64_t(seconds)) * 1'000'000'000u + std::uint64_t(std::int32_t(nanos));
}

std::optional<PixelFormat> raw_image_format(std::string_view encoding) {
  for (const Encoding& e : kEncodings)
    if (e.name == encoding) return e.format;
  return std::nullopt;
}

std::string raw_image_encodings() {
  std::string out;
  for (const Encoding& e : kEncodings) out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

std::string_view raw_image_encoding(PixelFormat format) {
  const PixelFormat stored = stored_format(format);
  for (const Encoding& e : kEncodings)
    if (e.format == stored) return e.name;
  throw InvalidFrame("format", "pixel format " + std::to_string(int(format)) + " is not one of " +
                                   spellings<PixelFormat>());
}

namespace {

// Writes the frame's rows into `p` as image_rows(stored_format) lays them out;
// returns the end. i420's U and V are interleaved here, in the one pass that
// copies the frame into the message.
std::uint8_t* write_rows(const Frame& frame, const ImageRows& r, std::uint8_t* p) {
  const auto* luma = static_cast<const std::uint8_t*>(frame.planes[0].data);
  for (std::uint32_t y = 0; y < frame.height; ++y, p += r.step) {
    std::memcpy(p, luma + std::size_t(y) * frame.planes[0].pitch, r.luma_row);
    std::memset(p + r.luma_row, 0, r.step - r.luma_row);
  }
  if (!r.two_planes) return p;
  const std::uint32_t cw = chroma_width(frame.width);
  for (std::uint32_t y = 0; y < chroma_height(frame.height); ++y, p += r.step) {
    if (frame.format != PixelFormat::I420) {
      std::memcpy(p, static_cast<const std::uint8_t*>(frame.planes[1].data) + std::size_t(y) * frame.planes[1].pitch,
                  r.chroma_row);
    } else {
      const auto* u = static_cast<const std::uint8_t*>(frame.planes[1].data) + std::size_t(y) * frame.planes[1].pitch;
      const auto* v = static_cast<const std::uint8_t*>(frame.planes[2].data) + std::size_t(y) * frame.planes[2].pitch;
      for (std::uint32_t x = 0; x < cw; ++x) {
        p[2 * x] = u[x];
        p[2 * x + 1] = v[x];
      }
    }
    std::memset(p + r.chroma_row, 0, r.step - r.chroma_row);
  }
  return p;
}

}  // namespace

std::uint64_t raw_image_message_bytes(PixelFormat format, std::uint32_t width, std::uint32_t height) {
  const ImageRows r = image_rows(stored_format(format), width, height);
  // The fields around the data: a timestamp (at most 19 bytes), width,
  // height and step (15), the encoding (at most 13) and data's tag and length (6).
  return std::uint64_t(r.step) * r.rows + 64;
}

std::uint64_t max_recorded_message_bytes(std::uint64_t max_chunk_bytes) {
  return max_chunk_bytes > kChunkRecordsReserve ? max_chunk_bytes - kChunkRecordsReserve : 0;
}

void check_message_size(const std::string& field, std::string_view what, std::uint64_t message_bytes,
                        std::uint64_t max_chunk_bytes) {
  const std::uint64_t limit = max_recorded_message_bytes(max_chunk_bytes);
  if (message_bytes <= limit) return;
  throw InvalidFrame(field, std::string(what) + " is a message of " + std::to_string(message_bytes) +
                                " bytes; a recording holds messages of at most " + std::to_string(limit) +
                                " bytes (a chunk readers accept, max_chunk_bytes " + std::to_string(max_chunk_bytes) +
                                ", less " + std::to_string(kChunkRecordsReserve) + " for the records before it)");
}

void check_recorded_frame(VideoCodec codec, PixelFormat format, std::uint32_t width, std::uint32_t height,
                          std::uint64_t max_chunk_bytes) {
  if (codec != VideoCodec::Raw) return check_video_frame(codec, format, width, height);
  check_message_size("frame",
                     "a " + std::string(to_string(format)) + " " + std::to_string(width) + "x" +
                         std::to_string(height) + " frame's foxglove.RawImage",
                     raw_image_message_bytes(format, width, height), max_chunk_bytes);
}

void encode_raw_image(const Frame& frame, std::uint64_t timestamp_ns, std::vector<std::uint8_t>& out) {
  validate(frame);
  if (frame.memory != MemoryKind::Host) throw UsageError("encode_raw_image: the frame is not in host memory");
  const ImageRows r = image_rows(stored_format(frame.format), frame.width, frame.height);
  const std::size_t data_bytes = r.step * r.rows;
  if (data_bytes > std::size_t(INT_MAX) - 64) throw UsageError("encode_raw_image: frame larger than 2 GiB");
  const std::string_view encoding = raw_image_encoding(frame.format);
  const std::size_t ts = timestamp_size(timestamp_ns);
  const std::size_t total = 1 + CodedOutputStream::VarintSize32(std::uint32_t(ts)) + ts + 3 * 5 + 1 +
                            CodedOutputStream::VarintSize32(std::uint32_t(encoding.size())) + encoding.size() + 1 +
                            CodedOutputStream::VarintSize32(std::uint32_t(data_bytes)) + data_bytes;
  out.resize(total);
  std::uint8_t* p = write_timestamp(timestamp_ns, out.data());
  p = write_fixed32(kWidth, frame.width, p);
  p = write_fixed32(kHeight, frame.height, p);
  p = write_length(kEncoding, encoding.size(), p);
  p = std::copy(encoding.begin(), encoding.end(), p);
  p = write_fixed32(kStep, std::uint32_t(r.step), p);
  p = write_length(kData, data_bytes, p);
  p = write_rows(frame, r, p);
  if (std::size_t(p - out.data()) != total) throw std::logic_error("encode_raw_image: size miscounted");
}

// --- foxglove.CompressedVideo ------------------------------------------------------

std::string_view to_string(VideoCodec codec) {
  switch (codec) {
    case VideoCodec::Raw: return "raw";
    case VideoCodec::H264: return "h264";
    case VideoCodec::H265: return "h265";
  }
  return "?";
}

VideoCodec parse_video_codec(std::string_view name) {
  for (VideoCodec c : {VideoCodec::Raw, VideoCodec::H264, VideoCodec::H265})
    if (name == to_string(c)) return c;
  throw UsageError("unknown video codec " + mcap::detail::quoted(name) + " (h264, h265 or raw)");
}

void encode_compressed_video(std::span<const std::uint8_t> access_unit, VideoCodec codec, std::uint64_t timestamp_ns,
                             std::vector<std::uint8_t>& out) {
  enum : int { kVideoData = 3, kVideoFormat = 4 };
  if (codec == VideoCodec::Raw) throw UsageError("encode_compressed_video: codec raw is not compressed video");
  if (access_unit.size() > std::size_t(INT_MAX) - 64) throw UsageError("encode_compressed_video: larger than 2 GiB");
  const std::string_view format = to_string(codec);
  const std::size_t ts = timestamp_size(timestamp_ns);
  const std::size_t total = 1 + CodedOutputStream::VarintSize32(std::uint32_t(ts)) + ts + 1 +
                            CodedOutputStream::VarintSize32(std::uint32_t(access_unit.size())) + access_unit.size() +
                            1 + CodedOutputStream::VarintSize32(std::uint32_t(format.size())) + format.size();
  out.resize(total);
  std::uint8_t* p = write_timestamp(timestamp_ns, out.data());
  p = write_length(kVideoData, access_unit.size(), p);
  p = std::copy(access_unit.begin(), access_unit.end(), p);
  p = write_length(kVideoFormat, format.size(), p);
  p = std::copy(format.begin(), format.end(), p);
  if (std::size_t(p - out.data()) != total) throw std::logic_error("encode_compressed_video: size miscounted");
}

RawImageView parse_raw_image(std::span<const std::uint8_t> bytes, const MessagePlace& where) {
  auto fail = [&](const std::string& detail) -> RawImageView {
    throw ParseError(std::string(where.file), where.location(), "RawImage", detail);
  };
  if (bytes.size() > std::size_t(INT_MAX)) return fail("message larger than 2 GiB");
  CodedInputStream in(bytes.data(), int(bytes.size()));
  RawImageView v;
  auto span_of = [&](std::uint32_t n) {
    const int at = in.CurrentPosition();
    if (!in.Skip(int(n))) fail("a length-delimited field runs past the end of the message");
    return bytes.subspan(std::size_t(at), n);
  };
  while (const std::uint32_t tag = in.ReadTag()) {
    const int field = WFL::GetTagFieldNumber(tag);
    const auto type = WFL::GetTagWireType(tag);
    std::uint32_t u32 = 0;
    if (type == WFL::WIRETYPE_FIXED32 && (field == kWidth || field == kHeight || field == kStep)) {
      if (!in.ReadLittleEndian32(&u32)) fail("truncated fixed32 field");
      (field == kWidth ? v.width : field == kHeight ? v.height : v.step) = u32;
    } else if (type == WFL::WIRETYPE_LENGTH_DELIMITED && (field == kEncoding || field == kData || field == kTimestamp)) {
      if (!in.ReadVarint32(&u32)) fail("truncated length");
      const auto s = span_of(u32);
      if (field == kEncoding) v.encoding = {reinterpret_cast<const char*>(s.data()), s.size()};
      if (field == kData) v.data = s;
      if (field == kTimestamp) {
        const char* error = nullptr;
        v.timestamp_ns = mcap::detail::protobuf_timestamp_ns(s, error);
        if (error) fail(error);
        v.has_timestamp = true;
      }
    } else if (!WFL::SkipField(&in, tag)) {
      fail("malformed field " + std::to_string(field));
    }
  }
  if (!in.ConsumedEntireMessage() || in.CurrentPosition() != int(bytes.size())) fail("malformed protobuf message");
  return v;
}

void check_raw_image(const RawImageView& image, PixelFormat format, std::uint32_t width, std::uint32_t height,
                     const MessagePlace& where, std::string_view message) {
  auto fail = [&](std::string_view field, const std::string& detail) {
    // field is "RawImage.x"; the message type may be another's.
    throw ParseError(std::string(where.file), where.location(),
                     std::string(message) + std::string(field.substr(field.find('.'))), detail);
  };
  const auto f = raw_image_format(image.encoding);
  if (!f) {
    fail("RawImage.encoding",
         "unsupported encoding " + mcap::detail::quoted(image.encoding) + " (supported: " + raw_image_encodings() + ")");
  }
  if (*f != format) {
    fail("RawImage.encoding", mcap::detail::quoted(image.encoding) + ", but the stream is " + std::string(to_string(format)));
  }
  if (image.width != width || image.height != height) {
    fail("RawImage.width", std::to_string(image.width) + "x" + std::to_string(image.height) +
                               ", but the stream is " + std::to_string(width) + "x" + std::to_string(height));
  }
  const ImageRows r = image_rows(format, width, height);
  if (image.step < r.step) {
    fail("RawImage.step", std::to_string(image.step) + " is below the " + std::to_string(r.step) +
                              "-byte rows of a " + std::string(image.encoding) + " image " + std::to_string(width) +
                              " wide");
  }
  const std::uint64_t need = std::uint64_t(image.step) * r.rows;
  if (image.data.size() < need) {
    fail("RawImage.data", std::to_string(image.data.size()) + " bytes, shorter than step * " +
                              (r.two_planes ? "(height + ceil(height/2))" : "height") + " = " +
                              std::to_string(image.step) + " * " + std::to_string(r.rows) + " = " + std::to_string(need));
  }
}

void copy_raw_image(const RawImageView& image, PixelFormat format, std::uint32_t width, std::uint32_t height,
                    const FrameWriteTarget& target, const MessagePlace& where, std::string_view message) {
  check_raw_image(image, format, width, height, where, message);
  const ImageRows r = image_rows(format, width, height);
  const std::uint8_t* p = image.data.data();
  for (std::uint32_t y = 0; y < height; ++y, p += image.step) {
    std::memcpy(target.luma + std::size_t(y) * target.luma_pitch, p, r.luma_row);
  }
  if (!r.two_planes) return;
  for (std::uint32_t y = 0; y < chroma_height(height); ++y, p += image.step) {
    std::memcpy(target.chroma + std::size_t(y) * target.chroma_pitch, p, r.chroma_row);
  }
}

// --- Colorimetry as channel metadata --------------------------------------------------

namespace {
constexpr std::string_view kMatrixKey = "handoff.color_matrix";
constexpr std::string_view kRangeKey = "handoff.color_range";
constexpr std::string_view kSitingKey = "handoff.chroma_siting";
}  // namespace

mcap::StringMap colorimetry_metadata(const Colorimetry& c) {
  return {{std::string(kMatrixKey), std::string(to_string(c.matrix))},
          {std::string(kRangeKey), std::string(to_string(c.range))},
          {std::string(kSitingKey), std::string(to_string(c.siting))}};
}

Colorimetry colorimetry_from_metadata(const mcap::StringMap& metadata, std::uint32_t height) {
  Colorimetry c;
  c.matrix = height <= 576 ? ColorMatrix::BT601 : ColorMatrix::BT709;
  c.range = ColorRange::Limited;
  c.siting = ChromaSiting::Left;
  for (const auto& [k, v] : metadata) {
    if (k == kMatrixKey) {
      for (ColorMatrix m : {ColorMatrix::BT601, ColorMatrix::BT709, ColorMatrix::BT2020})
        if (v == to_string(m)) c.matrix = m;
    } else if (k == kRangeKey) {
      for (ColorRange r : {ColorRange::Limited, ColorRange::Full})
        if (v == to_string(r)) c.range = r;
    } else if (k == kSitingKey) {
      for (ChromaSiting s : {ChromaSiting::Left, ChromaSiting::Center, ChromaSiting::TopLeft})
        if (v == to_string(s)) c.siting = s;
    }
  }
  return c;
}

}  // namespace handoff::media
