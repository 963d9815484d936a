#pragma once
// ROS 2 sensor_msgs/msg/Image messages (CDR) as frames: the decoded message
// read into the RawImageView the recording code copies from, and the
// byte-order swap of 16-bit and float samples stored big-endian.
#include <handoff/media/cdr.hpp>
#include <handoff/media/image_codec.hpp>
#include <handoff/media/recording.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace handoff::media::ros {

inline constexpr std::string_view kImageType = "sensor_msgs/Image";  // normalised (the schema says sensor_msgs/msg/Image)
inline constexpr std::string_view kCompressedImageType = "sensor_msgs/CompressedImage";
// Foxglove's ROS 2 video message (played by VideoTrack, recording_video.hpp).
inline constexpr std::string_view kCompressedVideoType = "foxglove_msgs/CompressedVideo";

// An image topic's type: sensor_msgs/Image, sensor_msgs/CompressedImage or
// foxglove_msgs/CompressedVideo (any spelling).
bool is_image_type(std::string_view type);

struct ImageView {
  RawImageView image;  // width, height, step, encoding, data (pointing into the message bytes), header stamp
  bool big_endian = false;  // is_bigendian
  bool compressed = false;  // a CompressedImage, its picture decoded (fields named "CompressedImage.*")
};

// Reads a decoded sensor_msgs/Image. ParseError naming the field (from the
// CdrMessage's place) when a field is missing or of another type.
ImageView image_view(const CdrMessage& m);

// The frame format of an Image encoding: rgb8 bgr8 rgba8 bgra8 mono8 8UC1
// mono16 16UC1 32FC1 yuv422 (uyvy byte order) uyvy yuv422_yuy2 yuyv nv12;
// std::nullopt for others (bayer_*, 8UC3, ...). image_encodings() lists them.
std::optional<PixelFormat> image_format(std::string_view encoding);

// Reads a decoded sensor_msgs/Image or CompressedImage. A CompressedImage's
// data is decoded into `picture` (JPEG, PNG; the view then points into it,
// encoding "rgb8", "mono8" or "mono16") unless `pixels` is false (only the
// header stamp is wanted). ParseError at `where` naming the field
// (CompressedImage.format, CompressedImage.data) when it does not decode
// (an h264 / h265 message among pictures included: a CompressedImage topic
// whose first message is video plays through VideoTrack instead).
ImageView any_image_view(const CdrMessage& m, DecodedPicture& picture, const MessagePlace& where, bool pixels = true);

// What a frame whose image cannot be shown becomes (a compressed image that
// does not decode: the recording plays on): black, `info`'s format and size.
void blank_frame(const SourceInfo& info, const FrameWriteTarget& target);
std::string image_encodings();

// The checks a topic's first image passes before the topic plays (it sets
// the stream's format and size), shared by playing and --list: an encoding
// handoff shows (image_format; raw_image_format when `ros` is false: a
// foxglove.RawImage, a decoded foxglove.CompressedImage), a width and height
// within the frame limits, a step and data holding every row. ParseError at
// `where` naming "<message>.<field>" otherwise ("Image.width": "width is 0");
// the format.
PixelFormat first_image_format(const RawImageView& image, bool ros, const MessagePlace& where,
                               std::string_view message);

// Checks an image against the stream (as check_raw_image, fields named
// "Image.*"; an encoding outside image_format() is refused) and copies it
// into `target`, swapping 16-bit and float samples of a big-endian image.
void check_image(const ImageView& v, PixelFormat format, std::uint32_t width, std::uint32_t height,
                 const MessagePlace& where);
void copy_image(const ImageView& v, PixelFormat format, std::uint32_t width, std::uint32_t height,
                const FrameWriteTarget& target, const MessagePlace& where);

}  // namespace handoff::media::ros
