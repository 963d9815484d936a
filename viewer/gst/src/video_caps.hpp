#pragma once
// GStreamer video caps <-> handoff frames: formats, colorimetry, memory.
// Pure functions over GstVideoInfo / GstCaps; no element state.
#include <gst/gst.h>
#include <gst/video/video.h>

#include <optional>
#include <string>
#include <string_view>

#include <handoff/frame.hpp>

namespace handoff::gst {

// Caps features a handoff element takes or makes.
enum class CapsMemory : std::uint8_t {
  System,  // plain system memory
  Cuda,    // memory:CUDAMemory (GstCudaMemory, gst-plugins-bad's gst/cuda)
  Gl,      // memory:GLMemory (GstGLMemory)
};

// The GStreamer format handoffsrc makes of `f` ("NV12", "P010_10LE", "I420",
// "YUY2", "UYVY", "RGB", "BGR", "RGBA", "BGRA", "GRAY8", "GRAY16_LE"); null
// for gray32f, which GStreamer has no video format for.
const char* gst_format_name(PixelFormat f);
// The handoff format of a GStreamer video format (the names above, and RGBx /
// BGRx as rgba8 / bgra8: the x byte is never drawn); nullopt for any other.
std::optional<PixelFormat> pixel_format(GstVideoFormat f);
// Every GStreamer format handoff takes, joined by `separator` (caps strings,
// messages): "NV12, P010_10LE, I420, ...".
std::string gst_format_list(std::string_view separator = ", ");

// What the caps' colorimetry and chroma siting mean for the viewer's colour
// maths: matrix (BT.601 / 709 / 2020; FCC and SMPTE 240M to their nearest,
// with `note` saying so), range (unknown: limited), siting (mpeg2: left, jpeg:
// center, cosited / dv: top-left, unknown: left). An RGB (identity) matrix has
// no YCbCr meaning: nullopt, with `note` naming it.
std::optional<Colorimetry> colorimetry_of(const GstVideoInfo& info, std::string* note = nullptr);

// The caps' colorimetry fields for a handoff colorimetry (primaries and
// transfer those of the matrix's standard), and its chroma site.
GstVideoColorimetry gst_colorimetry(const Colorimetry& c);
GstVideoChromaSite gst_chroma_site(ChromaSiting s);

// The memory a caps structure's features name.
CapsMemory caps_memory(const GstCaps* caps, guint index = 0);

// Fixed caps for frames of `format`, `width` x `height`, `colorimetry`, at
// `fps_n` / `fps_d` (0/1: variable); the colorimetry is set for the YUV
// formats only. Transfer: full. Null for dimensions outside
// 1..kMaxFrameDimension and for gray32f (no GStreamer format).
GstCaps* caps_for(PixelFormat format, std::uint32_t width, std::uint32_t height, const Colorimetry& colorimetry,
                  int fps_n = 0, int fps_d = 1);

// What the sink and the source say they take / make, for messages:
// "NV12, P010_10LE, ..., GRAY16_LE (system memory, memory:CUDAMemory, memory:GLMemory)".
std::string supported_description(bool cuda, bool gl);

}  // namespace handoff::gst
