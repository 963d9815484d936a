// The elements' conversions on their own: caps <-> formats and colorimetry
// (every matrix, range and chroma site GStreamer can say, the RGB matrix
// refused with its name), and regions of interest <-> overlays, with
// parameters of the wrong types, out of range or not numbers at all.
#include <gtest/gtest.h>

#include <cmath>

#include "gst_fixture.hpp"
#include "roi_meta.hpp"
#include "video_caps.hpp"

namespace handoff::gst::test {
namespace {

class GstConvert : public GstTest {};

GstVideoInfo info_with(GstVideoColorMatrix m, GstVideoColorRange r, GstVideoChromaSite site) {
  GstVideoInfo info;
  gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, 64, 48);
  info.colorimetry.matrix = m;
  info.colorimetry.range = r;
  info.chroma_site = site;
  return info;
}

TEST_F(GstConvert, FormatsOfIssue23MapBothWays) {
  const std::pair<GstVideoFormat, PixelFormat> taken[] = {
      {GST_VIDEO_FORMAT_NV12, PixelFormat::NV12},  {GST_VIDEO_FORMAT_P010_10LE, PixelFormat::P010},
      {GST_VIDEO_FORMAT_I420, PixelFormat::I420},  {GST_VIDEO_FORMAT_YUY2, PixelFormat::YUYV},
      {GST_VIDEO_FORMAT_UYVY, PixelFormat::UYVY},  {GST_VIDEO_FORMAT_RGB, PixelFormat::RGB8},
      {GST_VIDEO_FORMAT_BGR, PixelFormat::BGR8},   {GST_VIDEO_FORMAT_RGBA, PixelFormat::RGBA8},
      {GST_VIDEO_FORMAT_BGRA, PixelFormat::BGRA8}, {GST_VIDEO_FORMAT_RGBx, PixelFormat::RGBA8},
      {GST_VIDEO_FORMAT_BGRx, PixelFormat::BGRA8}, {GST_VIDEO_FORMAT_GRAY8, PixelFormat::GRAY8},
      {GST_VIDEO_FORMAT_GRAY16_LE, PixelFormat::GRAY16}};
  for (auto [g, f] : taken) EXPECT_EQ(pixel_format(g), f) << gst_video_format_to_string(g);
  for (GstVideoFormat f : {GST_VIDEO_FORMAT_P010_10BE, GST_VIDEO_FORMAT_NV21, GST_VIDEO_FORMAT_GRAY16_BE,
                           GST_VIDEO_FORMAT_ARGB, GST_VIDEO_FORMAT_YV12, GST_VIDEO_FORMAT_UNKNOWN})
    EXPECT_FALSE(pixel_format(f)) << gst_video_format_to_string(f);
  // What handoffsrc makes of each format reads back as that format.
  for (PixelFormat f : kPixelFormats) {
    const char* name = gst_format_name(f);
    if (f == PixelFormat::GRAY32F) {
      EXPECT_EQ(name, nullptr) << "GStreamer has no 32-bit float grey format";
      EXPECT_EQ(caps_for(f, 8, 8, {}), nullptr);
      continue;
    }
    ASSERT_NE(name, nullptr) << to_string(f);
    EXPECT_EQ(pixel_format(gst_video_format_from_string(name)), f) << name;
    GstCaps* caps = caps_for(f, 33, 17, {ColorMatrix::BT2020, ColorRange::Full, ChromaSiting::Center});
    ASSERT_NE(caps, nullptr) << name;
    GstVideoInfo info;
    ASSERT_TRUE(gst_video_info_from_caps(&info, caps)) << name;
    EXPECT_EQ(pixel_format(GST_VIDEO_INFO_FORMAT(&info)), f) << name;
    EXPECT_EQ(GST_VIDEO_INFO_WIDTH(&info), 33);
    if (is_yuv(f)) {
      EXPECT_EQ(info.colorimetry.matrix, GST_VIDEO_COLOR_MATRIX_BT2020) << name;
    }
    gst_caps_unref(caps);
  }
  EXPECT_STREQ(gst_format_name(PixelFormat::P010), "P010_10LE");
  EXPECT_STREQ(gst_format_name(PixelFormat::RGBA8), "RGBA") << "handoffsrc makes RGBA, not RGBx";
}

TEST_F(GstConvert, ColorimetryMapsEveryMatrixRangeAndSite) {
  std::string note;
  auto c = colorimetry_of(info_with(GST_VIDEO_COLOR_MATRIX_BT2020, GST_VIDEO_COLOR_RANGE_0_255,
                                    GST_VIDEO_CHROMA_SITE_COSITED), &note);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->matrix, ColorMatrix::BT2020);
  EXPECT_EQ(c->range, ColorRange::Full);
  EXPECT_EQ(c->siting, ChromaSiting::TopLeft);
  EXPECT_EQ(note, "");
  c = colorimetry_of(info_with(GST_VIDEO_COLOR_MATRIX_BT601, GST_VIDEO_COLOR_RANGE_UNKNOWN, GST_VIDEO_CHROMA_SITE_JPEG));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->range, ColorRange::Limited) << "unknown range: limited, as video is";
  EXPECT_EQ(c->siting, ChromaSiting::Center);
  c = colorimetry_of(info_with(GST_VIDEO_COLOR_MATRIX_BT709, GST_VIDEO_COLOR_RANGE_16_235, GST_VIDEO_CHROMA_SITE_MPEG2));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->siting, ChromaSiting::Left);
  c = colorimetry_of(info_with(GST_VIDEO_COLOR_MATRIX_BT709, GST_VIDEO_COLOR_RANGE_16_235, GST_VIDEO_CHROMA_SITE_DV));
  EXPECT_EQ(c->siting, ChromaSiting::TopLeft);
  note.clear();
  c = colorimetry_of(info_with(GST_VIDEO_COLOR_MATRIX_SMPTE240M, GST_VIDEO_COLOR_RANGE_16_235,
                               GST_VIDEO_CHROMA_SITE_UNKNOWN), &note);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->matrix, ColorMatrix::BT709);
  EXPECT_NE(note.find("SMPTE 240M"), std::string::npos) << note;
  note.clear();
  c = colorimetry_of(info_with(GST_VIDEO_COLOR_MATRIX_FCC, GST_VIDEO_COLOR_RANGE_16_235, GST_VIDEO_CHROMA_SITE_UNKNOWN),
                     &note);
  EXPECT_EQ(c->matrix, ColorMatrix::BT601);
  EXPECT_NE(note.find("FCC"), std::string::npos) << note;
  note.clear();
  EXPECT_FALSE(colorimetry_of(info_with(GST_VIDEO_COLOR_MATRIX_RGB, GST_VIDEO_COLOR_RANGE_0_255,
                                        GST_VIDEO_CHROMA_SITE_UNKNOWN), &note));
  EXPECT_NE(note.find("'rgb'"), std::string::npos) << note;
}

TEST_F(GstConvert, CapsForAFrameRoundTripItsColorimetry) {
  for (ColorMatrix m : {ColorMatrix::BT601, ColorMatrix::BT709, ColorMatrix::BT2020})
    for (ColorRange r : {ColorRange::Limited, ColorRange::Full})
      for (ChromaSiting s : {ChromaSiting::Left, ChromaSiting::Center, ChromaSiting::TopLeft}) {
        const Colorimetry want{m, r, s};
        GstCaps* caps = caps_for(PixelFormat::P010, 33, 17, want, 30, 1);
        ASSERT_NE(caps, nullptr);
        GstVideoInfo info;
        ASSERT_TRUE(gst_video_info_from_caps(&info, caps));
        gst_caps_unref(caps);
        EXPECT_EQ(GST_VIDEO_INFO_FORMAT(&info), GST_VIDEO_FORMAT_P010_10LE);
        EXPECT_EQ(GST_VIDEO_INFO_WIDTH(&info), 33);
        EXPECT_EQ(info.fps_n, 30);
        const auto got = colorimetry_of(info);
        ASSERT_TRUE(got);
        EXPECT_EQ(*got, want) << to_string(m) << " " << to_string(r) << " " << to_string(s);
      }
  EXPECT_EQ(caps_for(PixelFormat::NV12, 0, 48, {}), nullptr) << "a zero width makes no caps";
}

TEST_F(GstConvert, CapsFeaturesNameTheMemory) {
  GstCaps* c = gst_caps_from_string("video/x-raw(memory:CUDAMemory),format=NV12");
  EXPECT_EQ(caps_memory(c), CapsMemory::Cuda);
  gst_caps_unref(c);
  c = gst_caps_from_string("video/x-raw(memory:GLMemory),format=NV12");
  EXPECT_EQ(caps_memory(c), CapsMemory::Gl);
  gst_caps_unref(c);
  c = gst_caps_from_string("video/x-raw,format=NV12");
  EXPECT_EQ(caps_memory(c), CapsMemory::System);
  gst_caps_unref(c);
}

TEST_F(GstConvert, RegionsOfInterestBecomeBoxesWithTheirParameters) {
  GstBuffer* b = gst_buffer_new();
  auto* m = gst_buffer_add_video_region_of_interest_meta(b, "dog", 10, 20, 30, 40);
  gst_video_region_of_interest_meta_add_param(
      m, gst_structure_new("detection", "confidence", G_TYPE_FLOAT, 0.5f, "label_id", G_TYPE_UINT, 7u, nullptr));
  gst_video_region_of_interest_meta_add_param(
      m, gst_structure_new("tracking", "tracking-id", G_TYPE_UINT64, guint64(42), "label", G_TYPE_STRING, "terrier",
                           nullptr));
  gst_buffer_add_video_region_of_interest_meta(b, "cat", 0, 0, 5, 5);  // no parameters
  media::OverlayFrame o;
  overlays_from_buffer(b, o);
  gst_buffer_unref(b);
  ASSERT_EQ(o.objects.size(), 2u);
  const media::OverlayObject& dog = o.objects[0];
  EXPECT_EQ(o.text(dog.label), "terrier") << "a label parameter overrides the region's type";
  EXPECT_FLOAT_EQ(dog.x0, 10.f);
  EXPECT_FLOAT_EQ(dog.y1, 60.f);
  EXPECT_FLOAT_EQ(dog.score, 0.5f);
  EXPECT_EQ(dog.class_id, 7);
  EXPECT_EQ(dog.track_id, 42);
  EXPECT_EQ(o.text(o.objects[1].label), "cat");
  EXPECT_FALSE(o.objects[1].has_score());
  EXPECT_EQ(o.objects[1].class_id, -1);
}

TEST_F(GstConvert, ParametersOfTheWrongTypeOrRangeAreIgnored) {
  GstBuffer* b = gst_buffer_new();
  auto* m = gst_buffer_add_video_region_of_interest_meta(b, "x", 1, 1, 2, 2);
  gst_video_region_of_interest_meta_add_param(
      m, gst_structure_new("detection", "confidence", G_TYPE_STRING, "high", "class-id", G_TYPE_INT, -5, "track-id",
                           G_TYPE_INT64, gint64(1) << 40, nullptr));
  gst_video_region_of_interest_meta_add_param(m, gst_structure_new("d", "score", G_TYPE_DOUBLE, double(NAN), nullptr));
  media::OverlayFrame o;
  overlays_from_buffer(b, o);
  gst_buffer_unref(b);
  ASSERT_EQ(o.objects.size(), 1u);
  EXPECT_FALSE(o.objects[0].has_score()) << "a string or NaN is no score";
  EXPECT_EQ(o.objects[0].class_id, -1) << "a negative class is none";
  EXPECT_EQ(o.objects[0].track_id, -1) << "a track beyond int32 is none";
}

TEST_F(GstConvert, OverlaysBecomeRegionsOfInterestThatReadBack) {
  media::OverlayFrame in;
  in.add_box(-3.f, 2.4f, 20.6f, 30.f, "car", 0.75f, 2, 9);
  in.add_box(5, 5, 6, 6);  // no label: "object"
  in.add_label_text(1, 1, "not a box");
  GstBuffer* b = gst_buffer_new();
  add_roi_metas(b, in);
  media::OverlayFrame out;
  overlays_from_buffer(b, out);
  gst_buffer_unref(b);
  ASSERT_EQ(out.objects.size(), 2u);
  EXPECT_EQ(out.text(out.objects[0].label), "car");
  EXPECT_FLOAT_EQ(out.objects[0].x0, 0.f) << "clamped to the frame's edge";
  EXPECT_FLOAT_EQ(out.objects[0].y0, 2.f);
  EXPECT_FLOAT_EQ(out.objects[0].x1, 21.f);
  EXPECT_FLOAT_EQ(out.objects[0].score, 0.75f);
  EXPECT_EQ(out.objects[0].class_id, 2);
  EXPECT_EQ(out.objects[0].track_id, 9);
  EXPECT_EQ(out.text(out.objects[1].label), "object");
}

}  // namespace
}  // namespace handoff::gst::test
