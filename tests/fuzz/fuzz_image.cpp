// Fuzz target: the compressed-image path of ROS 2 bags. The input is decoded
// as a JPEG and as a PNG (libjpeg-turbo, libspng through decode_picture), and
// as a sensor_msgs/CompressedImage CDR message and as a foxglove.CompressedImage
// protobuf message whose format string picks the codec for its data
// (any_image_view / decode_compressed_image, as a recording's frame is read). Any
// handoff::Error (ParseError) is an accepted outcome; a crash, a sanitizer
// report, a hang or another exception type is a bug.
#include <handoff/media/cdr.hpp>
#include <handoff/media/image_codec.hpp>
#include <handoff/media/ros_image.hpp>

#include "fuzz_common.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace {

using namespace handoff::media;

const MessagePlace kPlace{"fuzz", [] { return std::string("frame 0"); }};

void decode_as(ImageCodec codec, std::span<const std::uint8_t> bytes, DecodedPicture& picture) {
  try {
    decode_picture(codec, bytes, picture, kPlace, "CompressedImage.data");
    // Every row is there: touch the last byte.
    if (picture.stride * picture.height != picture.pixels.size()) __builtin_trap();
    if (!picture.pixels.empty()) (void)picture.pixels.back();
  } catch (const handoff::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::quiet_log();
  const std::span<const std::uint8_t> bytes(data, size);
  DecodedPicture picture;
  decode_as(ImageCodec::Jpeg, bytes, picture);
  decode_as(ImageCodec::Png, bytes, picture);
  static const auto definition = ros::MessageDefinition::builtin("sensor_msgs/msg/CompressedImage");
  try {
    const ros::CdrMessage m = ros::CdrMessage::decode(definition, bytes, {"fuzz", "frame 0"});
    const ros::ImageView v = ros::any_image_view(m, picture, kPlace);
    if (v.image.data.size() != std::size_t(v.image.step) * v.image.height) __builtin_trap();
  } catch (const handoff::Error&) {
  }
  try {
    const RawImageView v = decode_compressed_image(parse_compressed_image(bytes, kPlace), picture, kPlace);
    if (v.data.size() != std::size_t(v.step) * v.height) __builtin_trap();
  } catch (const handoff::Error&) {
  }
  return 0;
}
