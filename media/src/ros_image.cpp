// sensor_msgs/msg/Image (CDR) -> frames, through the RawImage copy path.
#include <handoff/media/ros_image.hpp>

#include "mcap_format.hpp"

#include <handoff/frame_validate.hpp>

#include <handoff/media/video_decoder.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

namespace handoff::media::ros {
namespace {

// sensor_msgs/image_encodings spellings handoff shows. "yuv422" is UYVY byte
// order (U0 Y0 V0 Y1), "yuv422_yuy2" YUYV.
constexpr std::pair<std::string_view, PixelFormat> kEncodings[] = {
    {"rgb8", PixelFormat::RGB8},     {"bgr8", PixelFormat::BGR8},         {"rgba8", PixelFormat::RGBA8},
    {"bgra8", PixelFormat::BGRA8},   {"mono8", PixelFormat::GRAY8},       {"8UC1", PixelFormat::GRAY8},
    {"mono16", PixelFormat::GRAY16}, {"16UC1", PixelFormat::GRAY16},      {"32FC1", PixelFormat::GRAY32F},
    {"yuv422", PixelFormat::UYVY},   {"uyvy", PixelFormat::UYVY},         {"yuv422_yuy2", PixelFormat::YUYV},
    {"yuyv", PixelFormat::YUYV},     {"nv12", PixelFormat::NV12},
};

std::uint32_t u32_field(const CdrMessage& m, const char* path) {
  const std::uint64_t v = m.at(path).as_uint();
  if (v > 0xFFFFFFFFu) {
    throw ParseError(m.place().file, m.place().location, m.type_name() + "." + path, std::to_string(v) + " is past uint32");
  }
  return std::uint32_t(v);
}

// Reverses each `size`-byte sample of the target's rows (a big-endian image
// on this little-endian frame model).
void swap_samples(const FrameWriteTarget& target, std::uint32_t width, std::uint32_t height, std::size_t size) {
  for (std::uint32_t y = 0; y < height; ++y) {
    std::uint8_t* row = target.luma + std::size_t(y) * target.luma_pitch;
    for (std::uint32_t x = 0; x < width; ++x) std::reverse(row + x * size, row + (x + 1) * size);
  }
}

}  // namespace

ImageView image_view(const CdrMessage& m) {
  ImageView v;
  const std::int64_t sec = m.at("header.stamp.sec").as_int();
  const std::uint64_t nanosec = m.at("header.stamp.nanosec").as_uint();
  v.image.has_timestamp = true;
  v.image.timestamp_ns = std::uint64_t(sec) * 1'000'000'000u + nanosec;  // wraps as RawImage's does for negative times
  v.image.width = u32_field(m, "width");
  v.image.height = u32_field(m, "height");
  v.image.step = u32_field(m, "step");
  v.image.encoding = m.at("encoding").as_string();
  v.image.data = m.at("data").as_bytes();
  v.big_endian = m.at("is_bigendian").as_uint() != 0;
  return v;
}

bool is_image_type(std::string_view type) {
  const std::string t = normalize_type_name(type);
  return t == kImageType || t == kCompressedImageType || t == kCompressedVideoType;
}

ImageView any_image_view(const CdrMessage& m, DecodedPicture& picture, const MessagePlace& where, bool pixels) {
  if (m.type_name() != kCompressedImageType) return image_view(m);
  CompressedImageView c;
  c.has_timestamp = true;
  c.timestamp_ns = std::uint64_t(m.at("header.stamp.sec").as_int()) * 1'000'000'000u + m.at("header.stamp.nanosec").as_uint();
  ImageView v;
  v.compressed = true;
  v.image.has_timestamp = true;
  v.image.timestamp_ns = c.timestamp_ns;
  if (!pixels) return v;
  c.format = m.at("format").as_string();
  c.data = m.at("data").as_bytes();
  if (video_codec(c.format)) {  // the first message decides what the topic is
    throw ParseError(std::string(where.file), where.location(), "CompressedImage.format",
                     mcap::detail::quoted(c.format) + " is video, but the topic's first message is a picture " +
                         "(a topic plays as pictures or as video, as its first message is)");
  }
  if (!image_codec(c.format)) {
    throw ParseError(std::string(where.file), where.location(), "CompressedImage.format",
                     "unsupported format " + mcap::detail::quoted(c.format) +
                         " (handoff decodes jpeg and png pictures, h264 and h265 video)");
  }
  v.image = decode_compressed_image(c, picture, where);
  return v;
}

void blank_frame(const SourceInfo& info, const FrameWriteTarget& target) {
  const std::size_t row = plane_layout(info.format, info.width, info.height, 0).row_bytes;  // one-plane formats
  for (std::uint32_t y = 0; y < info.height; ++y) std::memset(target.luma + std::size_t(y) * target.luma_pitch, 0, row);
}

std::optional<PixelFormat> image_format(std::string_view encoding) {
  for (const auto& [name, format] : kEncodings)
    if (name == encoding) return format;
  return std::nullopt;
}

std::string image_encodings() {
  std::string out;
  for (const auto& [name, format] : kEncodings) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

PixelFormat first_image_format(const RawImageView& image, bool ros, const MessagePlace& where,
                               std::string_view message) {
  const std::string type(message);
  const auto format = ros ? image_format(image.encoding) : raw_image_format(image.encoding);
  if (!format) {
    throw ParseError(std::string(where.file), where.location(), type + ".encoding",
                     "unsupported encoding " + mcap::detail::quoted(image.encoding) + " (supported: " +
                         (ros ? image_encodings() : raw_image_encodings()) + ")");
  }
  for (auto [name, v] : {std::pair{"width", image.width}, std::pair{"height", image.height}}) {
    if (std::string problem = dimension_problem(name, v); !problem.empty())
      throw ParseError(std::string(where.file), where.location(), type + "." + name, problem);
  }
  check_raw_image(image, *format, image.width, image.height, where, message);
  return *format;
}

void check_image(const ImageView& v, PixelFormat format, std::uint32_t width, std::uint32_t height,
                 const MessagePlace& where) {
  const std::string_view type = v.compressed ? "CompressedImage" : "Image";
  if (!image_format(v.image.encoding)) {
    throw ParseError(std::string(where.file), where.location(), std::string(type) + ".encoding",
                     "unsupported encoding " + mcap::detail::quoted(v.image.encoding) + " (supported: " +
                         image_encodings() + ")");
  }
  check_raw_image(v.image, format, width, height, where, type);
}

void copy_image(const ImageView& v, PixelFormat format, std::uint32_t width, std::uint32_t height,
                const FrameWriteTarget& target, const MessagePlace& where) {
  check_image(v, format, width, height, where);
  copy_raw_image(v.image, format, width, height, target, where, v.compressed ? "CompressedImage" : "Image");
  const bool host_big = std::endian::native == std::endian::big;
  if (v.big_endian == host_big) return;
  if (format == PixelFormat::GRAY16) swap_samples(target, width, height, 2);
  if (format == PixelFormat::GRAY32F) swap_samples(target, width, height, 4);
}

}  // namespace handoff::media::ros
