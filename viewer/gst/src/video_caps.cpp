#include "video_caps.hpp"

namespace handoff::gst {

namespace {

// Each GStreamer format handoff takes, in the order caps list them. The first
// row of a PixelFormat is what handoffsrc makes of it; RGBx / BGRx are taken
// as rgba8 / bgra8 (the x byte is carried, and never drawn: the viewer ignores
// alpha). gray32f has no GStreamer video format.
struct FormatRow {
  GstVideoFormat gst;
  const char* name;
  PixelFormat format;
};
constexpr FormatRow kFormats[] = {
    {GST_VIDEO_FORMAT_NV12, "NV12", PixelFormat::NV12},
    {GST_VIDEO_FORMAT_P010_10LE, "P010_10LE", PixelFormat::P010},
    {GST_VIDEO_FORMAT_I420, "I420", PixelFormat::I420},
    {GST_VIDEO_FORMAT_YUY2, "YUY2", PixelFormat::YUYV},
    {GST_VIDEO_FORMAT_UYVY, "UYVY", PixelFormat::UYVY},
    {GST_VIDEO_FORMAT_RGB, "RGB", PixelFormat::RGB8},
    {GST_VIDEO_FORMAT_BGR, "BGR", PixelFormat::BGR8},
    {GST_VIDEO_FORMAT_RGBA, "RGBA", PixelFormat::RGBA8},
    {GST_VIDEO_FORMAT_BGRA, "BGRA", PixelFormat::BGRA8},
    {GST_VIDEO_FORMAT_RGBx, "RGBx", PixelFormat::RGBA8},
    {GST_VIDEO_FORMAT_BGRx, "BGRx", PixelFormat::BGRA8},
    {GST_VIDEO_FORMAT_GRAY8, "GRAY8", PixelFormat::GRAY8},
    {GST_VIDEO_FORMAT_GRAY16_LE, "GRAY16_LE", PixelFormat::GRAY16},
};

const FormatRow* row_of(PixelFormat f) {
  for (const FormatRow& r : kFormats)
    if (r.format == f) return &r;
  return nullptr;
}

}  // namespace

const char* gst_format_name(PixelFormat f) {
  const FormatRow* r = row_of(f);
  return r ? r->name : nullptr;
}

std::optional<PixelFormat> pixel_format(GstVideoFormat f) {
  for (const FormatRow& r : kFormats)
    if (r.gst == f) return r.format;
  return std::nullopt;
}

std::string gst_format_list(std::string_view separator) {
  std::string out;
  for (const FormatRow& r : kFormats) out += (out.empty() ? "" : std::string(separator)) + r.name;
  return out;
}

namespace {

std::optional<ColorMatrix> matrix_of(GstVideoColorMatrix m, std::string* note) {
  auto say = [note](const char* text) {
    if (note) *note = text;
  };
  switch (m) {
    case GST_VIDEO_COLOR_MATRIX_BT601: return ColorMatrix::BT601;
    case GST_VIDEO_COLOR_MATRIX_BT709: return ColorMatrix::BT709;
    case GST_VIDEO_COLOR_MATRIX_BT2020: return ColorMatrix::BT2020;
    case GST_VIDEO_COLOR_MATRIX_FCC:  // Kr 0.30, Kb 0.11: within 0.004 of BT.601's
      say("colour matrix FCC drawn as BT.601 (its nearest)");
      return ColorMatrix::BT601;
    case GST_VIDEO_COLOR_MATRIX_SMPTE240M:  // Kr 0.212, Kb 0.087: nearest BT.709's
      say("colour matrix SMPTE 240M drawn as BT.709 (its nearest)");
      return ColorMatrix::BT709;
    case GST_VIDEO_COLOR_MATRIX_RGB:
      say("colour matrix 'rgb' (identity) is not a YCbCr matrix");
      return std::nullopt;
    default:
      say("colour matrix unknown: drawn as BT.709");
      return ColorMatrix::BT709;
  }
}

ChromaSiting siting_of(GstVideoChromaSite s) {
  if (s == GST_VIDEO_CHROMA_SITE_UNKNOWN) return ChromaSiting::Left;
  const bool h = (s & GST_VIDEO_CHROMA_SITE_H_COSITED) != 0, v = (s & GST_VIDEO_CHROMA_SITE_V_COSITED) != 0;
  if (h && v) return ChromaSiting::TopLeft;
  if (h) return ChromaSiting::Left;
  return ChromaSiting::Center;
}

}  // namespace

std::optional<Colorimetry> colorimetry_of(const GstVideoInfo& info, std::string* note) {
  const auto m = matrix_of(info.colorimetry.matrix, note);
  if (!m) return std::nullopt;
  Colorimetry c;
  c.matrix = *m;
  c.range = info.colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255 ? ColorRange::Full : ColorRange::Limited;
  c.siting = siting_of(info.chroma_site);
  return c;
}

GstVideoColorimetry gst_colorimetry(const Colorimetry& c) {
  GstVideoColorimetry g{};
  g.range = c.range == ColorRange::Full ? GST_VIDEO_COLOR_RANGE_0_255 : GST_VIDEO_COLOR_RANGE_16_235;
  switch (c.matrix) {
    case ColorMatrix::BT601:
      g.matrix = GST_VIDEO_COLOR_MATRIX_BT601;
      g.transfer = GST_VIDEO_TRANSFER_BT601;
      g.primaries = GST_VIDEO_COLOR_PRIMARIES_SMPTE170M;
      break;
    case ColorMatrix::BT709:
      g.matrix = GST_VIDEO_COLOR_MATRIX_BT709;
      g.transfer = GST_VIDEO_TRANSFER_BT709;
      g.primaries = GST_VIDEO_COLOR_PRIMARIES_BT709;
      break;
    case ColorMatrix::BT2020:
      g.matrix = GST_VIDEO_COLOR_MATRIX_BT2020;
      g.transfer = GST_VIDEO_TRANSFER_BT2020_10;
      g.primaries = GST_VIDEO_COLOR_PRIMARIES_BT2020;
      break;
  }
  return g;
}

GstVideoChromaSite gst_chroma_site(ChromaSiting s) {
  switch (s) {
    case ChromaSiting::Left: return GST_VIDEO_CHROMA_SITE_MPEG2;
    case ChromaSiting::Center: return GST_VIDEO_CHROMA_SITE_JPEG;
    case ChromaSiting::TopLeft: return GST_VIDEO_CHROMA_SITE_COSITED;
  }
  return GST_VIDEO_CHROMA_SITE_MPEG2;
}

CapsMemory caps_memory(const GstCaps* caps, guint index) {
  const GstCapsFeatures* f = gst_caps_get_features(caps, index);
  if (f && gst_caps_features_contains(f, "memory:CUDAMemory")) return CapsMemory::Cuda;
  if (f && gst_caps_features_contains(f, "memory:GLMemory")) return CapsMemory::Gl;
  return CapsMemory::System;
}

GstCaps* caps_for(PixelFormat format, std::uint32_t width, std::uint32_t height, const Colorimetry& colorimetry,
                  int fps_n, int fps_d) {
  if (width == 0 || height == 0 || width > kMaxFrameDimension || height > kMaxFrameDimension) return nullptr;
  GstVideoInfo info;
  gst_video_info_init(&info);
  const FormatRow* row = row_of(format);
  if (!row || !gst_video_info_set_format(&info, row->gst, width, height)) return nullptr;
  if (is_yuv(format)) {  // RGB and grey frames keep the colorimetry GStreamer gives their format
    info.colorimetry = gst_colorimetry(colorimetry);
    info.chroma_site = gst_chroma_site(colorimetry.siting);
  }
  info.fps_n = fps_n;
  info.fps_d = fps_d;
  return gst_video_info_to_caps(&info);
}

std::string supported_description(bool cuda, bool gl) {
  std::string s = gst_format_list(", ") + " (system memory";
  if (cuda) s += ", memory:CUDAMemory";
  if (gl) s += ", memory:GLMemory";
  return s + ")";
}

}  // namespace handoff::gst
