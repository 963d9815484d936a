// Fuzz target: the ROS 2 message definition parser and the CDR decoder.
// An input is "pkg/Type\n<definition text>" NUL <CDR bytes>; without a NUL
// the whole input is CDR bytes. The bytes are decoded by the input's own
// definition (when it parses) and by each built-in one, every value of the
// tree is read, detections / annotations are mapped to overlays, and
// CompressedImage / foxglove_msgs CompressedVideo messages are read as video
// messages (their stamp, format and access unit) and their access unit
// scanned as H.264 and H.265. Any handoff::Error (ParseError) is an accepted outcome; a
// crash, a sanitizer report, a hang or another exception type is a bug.
#include <handoff/media/cdr.hpp>
#include <handoff/media/ros_image.hpp>

#include "../../media/src/recording_video.hpp"
#include "../../media/src/ros_overlay.hpp"

#include "fuzz_common.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace {

using namespace handoff::media::ros;

// Reads every value below `v` (of type `type`), at most 64 elements per array.
void walk(const CdrValue& v, const MessageDefinition& d, const FieldType& type, int depth);

void walk_single(const CdrValue& v, const MessageDefinition& d, const FieldType& type, int depth) {
  if (!type.primitive) {
    for (const Field& f : d.types()[type.nested].fields) walk(v.at(f.name), d, f.type, depth + 1);
    return;
  }
  try {
    if (*type.primitive == Primitive::String) (void)v.as_string();
    else (void)v.as_double();
  } catch (const handoff::Error&) {
  }
}

void walk(const CdrValue& v, const MessageDefinition& d, const FieldType& type, int depth) {
  if (depth > 100) __builtin_trap();  // definitions are limited to 64 levels
  if (type.array == ArrayKind::None) return walk_single(v, d, type, depth);
  if (type.primitive && *type.primitive != Primitive::String && *type.primitive != Primitive::WString) {
    (void)v.as_bytes();
  }
  FieldType element = type;
  element.array = ArrayKind::None;
  for (std::size_t i = 0; i < std::min<std::size_t>(v.size(), 64); ++i) walk_single(v[i], d, element, depth);
}

void decode_and_walk(const std::shared_ptr<const MessageDefinition>& d, std::span<const std::uint8_t> bytes) {
  try {
    const CdrMessage m = CdrMessage::decode(d, bytes, {"fuzz", "message 0"});
    FieldType root;
    root.nested = 0;
    walk_single(m.root(), *d, root, 0);
    if (is_overlay_type(m.type_name())) {  // the overlay mapping of detections and annotations
      handoff::media::OverlayFrame out;
      append_overlays(m, out);
    }
    if (m.type_name() == kCompressedImageType || m.type_name() == kCompressedVideoType) {  // the ROS video path
      (void)handoff::media::is_ros_video(m);
      const handoff::media::CompressedVideoView v = handoff::media::ros_video_view(m);
      for (auto codec : {handoff::media::VideoCodec::H264, handoff::media::VideoCodec::H265}) {
        try {
          (void)handoff::media::scan_access_unit(codec, v.data);
        } catch (const handoff::media::VideoDecodeError&) {
        }
      }
    }
  } catch (const handoff::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  handoff::media::fuzz::quiet_log();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::span<const std::uint8_t> cdr(data, size);
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    const std::string_view head = text.substr(0, nul);
    const auto nl = std::min(head.find('\n'), head.size());
    cdr = cdr.subspan(nul + 1);
    try {
      decode_and_walk(MessageDefinition::parse(head.substr(0, nl), head.substr(std::min(nl + 1, head.size())), "fuzz"), cdr);
    } catch (const handoff::Error&) {
    }
  }
  for (const char* t : {"sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage", "vision_msgs/msg/Detection2DArray",
                        "foxglove_msgs/msg/ImageAnnotations", "foxglove_msgs/msg/CompressedVideo"}) {
    decode_and_walk(MessageDefinition::builtin(t), cdr);
  }
  return 0;
}
