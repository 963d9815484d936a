#pragma once
// Compressed still images in recordings (ROS 2 sensor_msgs/CompressedImage,
// foxglove.CompressedImage): JPEG through libjpeg-turbo, PNG through libspng,
// decoded into a frame format the viewer shows.
#include <handoff/frame.hpp>
#include <handoff/media/recording.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::media {

enum class ImageCodec : std::uint8_t { Jpeg, Png };

// The codec a format string names: ROS's "jpeg", "png", "rgb8; jpeg
// compressed bgr8", "mono16; png compressed mono16", foxglove's "jpeg" /
// "png" (case-insensitive; "jpg" too). std::nullopt for others ("h264",
// "bgr8; compressedDepth png", ...).
std::optional<ImageCodec> image_codec(std::string_view format);

// Decoded pictures are at most this many pixels (a 16k x 4k image), so a
// corrupt header cannot ask for gigabytes.
inline constexpr std::uint64_t kMaxDecodedPixels = std::uint64_t(1) << 26;

// A decoded picture: GRAY8 (grayscale JPEG, PNG gray up to 8 bits), GRAY16
// (16-bit gray PNG, host byte order) or RGB8 (everything else; alpha is
// dropped). Rows are packed (stride = width * bytes per pixel).
struct DecodedPicture {
  PixelFormat format = PixelFormat::RGB8;
  std::uint32_t width = 0, height = 0;
  std::size_t stride = 0;
  std::vector<std::uint8_t> pixels;  // reused from call to call
  // The ROS encoding naming `format` ("rgb8", "mono8", "mono16").
  std::string_view encoding() const;
};

// Decodes `data` into `out`. ParseError(where.file, where.location(), field,
// "corrupt JPEG: <libjpeg's message>" / "corrupt PNG: <libspng's>") for data
// the decoder refuses or warns about (cut short, bad markers, bad CRC), a
// CMYK JPEG, or a size past kMaxFrameDimension / kMaxDecodedPixels.
void decode_picture(ImageCodec codec, std::span<const std::uint8_t> data, DecodedPicture& out,
                    const MessagePlace& where, const std::string& field);

// A compressed image message (foxglove.CompressedImage, ROS 2
// CompressedImage) as read, pointing into the message bytes.
struct CompressedImageView {
  bool has_timestamp = false;
  std::uint64_t timestamp_ns = 0;
  std::string_view format;
  std::span<const std::uint8_t> data;
};

// foxglove.CompressedImage (protobuf: timestamp 1, data 2, format 3,
// frame_id 4), the Foxglove schema handoff reads.
inline constexpr std::string_view kCompressedImageSchema = "foxglove.CompressedImage";
// Parses its bytes without copying the data. ParseError at `where` (field
// "CompressedImage") when the bytes are not such a message.
CompressedImageView parse_compressed_image(std::span<const std::uint8_t> bytes, const MessagePlace& where);

// Decodes the message's picture into `picture` and returns it as a
// RawImageView over it (encoding "rgb8", "mono8" or "mono16"; its timestamp
// the message's). ParseError naming CompressedImage.format (a codec other
// than jpeg / png) or CompressedImage.data (decode_picture).
RawImageView decode_compressed_image(const CompressedImageView& message, DecodedPicture& picture,
                                     const MessagePlace& where);

}  // namespace handoff::media
