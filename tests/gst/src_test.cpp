// handoffsrc: frames of a handoff::Publisher in another process (the live
// tier's peer program) into appsink, checked byte for byte; caps following
// the frames; overlays as regions of interest; the publisher's timestamps;
// the zero-copy path where downstream takes video metas; a missing publisher.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include <handoff/publisher.hpp>

#include "gst_fixture.hpp"
#include "video_caps.hpp"
#include "live_support.hpp"
#include "peer_process.hpp"
#include "wait_support.hpp"

namespace handoff::gst::test {
namespace {

using handoff::test::wait_until;
using live::test::PeerProcess;

class HandoffSrcTest : public GstTest {};

// A received buffer as a host Frame (its video meta's layout where it has one).
struct Received {
  Frame frame;
  GstVideoFrame vf{};
  bool mapped = false;
  GstSample* sample = nullptr;
  ~Received() {
    if (mapped) gst_video_frame_unmap(&vf);
    if (sample) gst_sample_unref(sample);
  }
};

bool receive(GstElement* appsink, Received& r, std::chrono::seconds limit = 20s) {
  r.sample = gst_app_sink_try_pull_sample(GST_APP_SINK(appsink), GstClockTime(limit.count()) * GST_SECOND);
  if (!r.sample) return false;
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, gst_sample_get_caps(r.sample))) return false;
  GstBuffer* b = gst_sample_get_buffer(r.sample);
  r.mapped = gst_video_frame_map(&r.vf, &info, b, GST_MAP_READ);
  if (!r.mapped) return false;
  Frame& f = r.frame;
  const auto format = pixel_format(GST_VIDEO_INFO_FORMAT(&info));
  if (!format) return false;
  f.format = *format;
  f.width = std::uint32_t(GST_VIDEO_INFO_WIDTH(&info));
  f.height = std::uint32_t(GST_VIDEO_INFO_HEIGHT(&info));
  for (int p = 0; p < plane_count(f.format); ++p) {
    f.planes[std::size_t(p)].data = GST_VIDEO_FRAME_PLANE_DATA(&r.vf, p);
    f.planes[std::size_t(p)].pitch = std::size_t(GST_VIDEO_FRAME_PLANE_STRIDE(&r.vf, p));
  }
  f.index = std::int64_t(GST_BUFFER_OFFSET(b));
  return true;
}

media::OverlayFrame rois_of(GstBuffer* b) {
  media::OverlayFrame o;
  gpointer state = nullptr;
  while (GstMeta* m = gst_buffer_iterate_meta_filtered(b, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    const auto* roi = reinterpret_cast<const GstVideoRegionOfInterestMeta*>(m);
    gint track = -1;
    for (GList* l = roi->params; l; l = l->next) gst_structure_get_int(static_cast<GstStructure*>(l->data), "track-id", &track);
    o.add_box(float(roi->x), float(roi->y), float(roi->x + roi->w), float(roi->y + roi->h),
              g_quark_to_string(roi->roi_type), NAN, -1, track);
  }
  return o;
}

// The appsink the tests pull from. Without the last sample kept: a kept
// sample holds its frame's slot, and with the preroll buffer appsink keeps and
// a release still on its way to the publisher, the subscriber could hold the
// publisher's max_held (3 of 4 slots) when the next frame is published, which
// is then skipped for it (subscriber.hpp) and never arrives: the likely cause
// of frame 4 of 5 not coming in one loaded run (not reproduced in 80 more; a
// failure now prints the peer's skipped count).
constexpr const char* kAppSink = " ! appsink name=out sync=false enable-last-sample=false";

// An in-process Publisher and `handoffsrc ! appsink` attached to it (handoffsrc
// is a subscriber like any other). `prepare` may touch the appsink before the
// pipeline starts; the constructor returns once the source has subscribed.
struct AttachedSource {
  template <typename Prepare>
  AttachedSource(const std::string& name, Prepare prepare)
      : pub(name), p("handoffsrc attach=" + name + kAppSink), out(p.element("out")) {
    prepare(out.get());
    EXPECT_NE(p.start(), GST_STATE_CHANGE_FAILURE);
    subscribed = wait_until([&] { return pub.stats().subscribers == 1; }, "handoffsrc subscribed");
  }
  explicit AttachedSource(const std::string& name) : AttachedSource(name, [](GstElement*) {}) {}
  Publisher pub;
  Pipeline p;
  ElementPtr out;
  bool subscribed = false;
};

// The publisher's subscriber count, as the peer reports it.
bool peer_has_subscriber(PeerProcess& peer) {
  return wait_until([&] {
    peer.send("stats");
    return peer.expect("STATS").find("subscribers=1") != std::string::npos;
  }, "the handoffsrc subscribed to the peer's publisher", 20s);
}

TEST_F(HandoffSrcTest, FramesOfAPublisherInAnotherProcessArriveByteForByte) {
  const std::string name = publisher_name();
  PeerProcess peer({"publish", name, "--format", "nv12", "--size", "161x91", "--boxes", "3"});
  peer.expect("READY");
  Pipeline p("handoffsrc attach=" + name + kAppSink);
  ASSERT_NE(p.start(), GST_STATE_CHANGE_FAILURE);
  ASSERT_TRUE(peer_has_subscriber(peer));
  ElementPtr out = p.element("out");
  for (int i = 0; i < 5; ++i) {
    peer.send("publish 1");  // one at a time: the newest frame wins, a burst would skip some
    Received r;
    if (!receive(out.get(), r)) {
      peer.send("stats");
      FAIL() << "frame " << i << " did not come; the peer says " << peer.expect("STATS");
    }
    EXPECT_EQ(r.frame.width, 161u);
    EXPECT_EQ(r.frame.height, 91u);
    EXPECT_EQ(live::test::check_pattern(r.frame), "") << "frame " << r.frame.index;
    GstBuffer* b = gst_sample_get_buffer(r.sample);
    EXPECT_TRUE(GST_BUFFER_PTS_IS_VALID(b));
    GstCaps* ref = gst_caps_new_empty_simple("timestamp/x-handoff-publisher");
    GstReferenceTimestampMeta* ts = gst_buffer_get_reference_timestamp_meta(b, ref);
    gst_caps_unref(ref);
    ASSERT_NE(ts, nullptr);
    EXPECT_NEAR(double(ts->timestamp) / GST_SECOND, double(r.frame.index) / 30.0, 1e-6) << "the publisher's timestamp";
    const media::OverlayFrame got = rois_of(b);
    const media::OverlayFrame want = live::test::overlays_for(r.frame.index, 3);
    ASSERT_EQ(got.objects.size(), 3u);
    for (std::size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(got.text(got.objects[k].label), want.text(want.objects[k].label));
      EXPECT_FLOAT_EQ(got.objects[k].x0, want.objects[k].x0);
      EXPECT_FLOAT_EQ(got.objects[k].y1, want.objects[k].y1);
      EXPECT_EQ(got.objects[k].track_id, want.objects[k].track_id);
    }
  }
  peer.send("quit");
}

TEST_F(HandoffSrcTest, CapsFollowTheFramesSizeFormatAndColorimetry) {
  AttachedSource s(publisher_name());
  ASSERT_TRUE(s.subscribed);
  Publisher& pub = s.pub;
  ElementPtr& out = s.out;
  Frame a = live::test::pattern_frame(PixelFormat::NV12, 64, 48, 1);
  ASSERT_TRUE(pub.publish(a));
  Received ra;
  ASSERT_TRUE(receive(out.get(), ra));
  EXPECT_EQ(live::test::check_pattern(ra.frame), "");
  Frame b = live::test::pattern_frame(PixelFormat::P010, 33, 17, 2);
  b.colorimetry = Colorimetry{ColorMatrix::BT2020, ColorRange::Full, ChromaSiting::TopLeft};
  ASSERT_TRUE(pub.publish(b));
  Received rb;
  ASSERT_TRUE(receive(out.get(), rb));
  EXPECT_EQ(rb.frame.format, PixelFormat::P010);
  EXPECT_EQ(live::test::check_pattern(rb.frame), "");
  GstVideoInfo info;
  ASSERT_TRUE(gst_video_info_from_caps(&info, gst_sample_get_caps(rb.sample)));
  EXPECT_EQ(info.colorimetry.matrix, GST_VIDEO_COLOR_MATRIX_BT2020);
  EXPECT_EQ(info.colorimetry.range, GST_VIDEO_COLOR_RANGE_0_255);
  EXPECT_EQ(info.chroma_site, GST_VIDEO_CHROMA_SITE_COSITED);
}

// Makes `appsink` answer the allocation query with GstVideoMeta: handoffsrc
// then wraps host slots instead of copying them.
void take_video_metas(GstElement* appsink) {
  GstPad* pad = gst_element_get_static_pad(appsink, "sink");
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM,
                    [](GstPad*, GstPadProbeInfo* info, gpointer) {
                      GstQuery* q = GST_PAD_PROBE_INFO_QUERY(info);
                      if (GST_QUERY_TYPE(q) != GST_QUERY_ALLOCATION) return GST_PAD_PROBE_OK;
                      gst_query_add_allocation_meta(q, GST_VIDEO_META_API_TYPE, nullptr);
                      return GST_PAD_PROBE_HANDLED;
                    },
                    nullptr, nullptr);
  gst_object_unref(pad);
}

// Issue 23: the caps follow every format a publisher sends (gray32f, which
// GStreamer has no format for, is an error naming it), copied into a buffer
// of GStreamer's layout or, where downstream takes video metas, wrapped.
void expect_every_format(bool metas, const std::string& name) {
  AttachedSource s(name, [metas](GstElement* appsink) {
    if (metas) take_video_metas(appsink);
  });
  ASSERT_TRUE(s.subscribed);
  std::int64_t i = 0;
  for (PixelFormat format : kPixelFormats) {
    if (format == PixelFormat::GRAY32F) continue;
    // A wrapped buffer holds its slot until freed (the frame before may still
    // be appsink's last sample, its Release in flight): publish once the
    // earlier ones are back, or the subscriber at its hold limit is skipped.
    ASSERT_TRUE(wait_until([&] { return s.pub.stats().held_frames <= 1; }, "the earlier frames' slots back"));
    ASSERT_TRUE(s.pub.publish(live::test::pattern_frame(format, 37, 21, ++i))) << to_string(format);
    Received r;
    ASSERT_TRUE(receive(s.out.get(), r)) << to_string(format);
    EXPECT_EQ(r.frame.format, format);
    EXPECT_EQ(live::test::check_pattern(r.frame), "") << to_string(format) << (metas ? " wrapped" : " copied");
    EXPECT_EQ(gst_buffer_get_video_meta(gst_sample_get_buffer(r.sample)) != nullptr, metas) << to_string(format);
  }
  ASSERT_TRUE(s.pub.publish(live::test::pattern_frame(PixelFormat::GRAY32F, 8, 8, 0)));
  const BusMessage m = s.p.wait_for(GST_MESSAGE_ERROR);
  EXPECT_EQ(m.type, GST_MESSAGE_ERROR);
  EXPECT_NE(m.text.find("gray32f 8x8 frames have no GStreamer video format"), std::string::npos) << m.text;
}

TEST_F(HandoffSrcTest, EveryFormatIsCopiedIntoBuffersOfItsCaps) { expect_every_format(false, publisher_name()); }
TEST_F(HandoffSrcTest, EveryFormatIsWrappedWhereDownstreamTakesVideoMetas) { expect_every_format(true, publisher_name()); }

// Downstream that takes GstVideoMeta gets the slot's memory itself (read-only,
// with the slot's pitches), not a copy; the bytes are the same.
TEST_F(HandoffSrcTest, HostSlotsAreWrappedWithoutACopyWhereDownstreamTakesVideoMetas) {
  AttachedSource s(publisher_name(), take_video_metas);
  ASSERT_TRUE(s.subscribed);
  Publisher& pub = s.pub;
  ElementPtr& out = s.out;
  ASSERT_TRUE(pub.publish(live::test::pattern_frame(PixelFormat::NV12, 100, 60, 7)));
  Received r;
  ASSERT_TRUE(receive(out.get(), r));
  EXPECT_EQ(live::test::check_pattern(r.frame), "");
  GstBuffer* b = gst_sample_get_buffer(r.sample);
  ASSERT_NE(gst_buffer_get_video_meta(b), nullptr);
  EXPECT_TRUE(GST_MEMORY_IS_READONLY(gst_buffer_peek_memory(b, 0))) << "the slot's read-only mapping";
  EXPECT_GT(pub.stats().held_frames, 0u) << "the buffer holds its slot";
}

// Downstream that keeps buffers (an encoder's lookahead, an aggregator) gets
// copies once the wrapped ones it holds reach what the publisher lets this
// source hold. Before, every buffer was a slot: with 3 kept, the publisher
// skipped every later frame for the source and the pipeline waited for ever.
TEST_F(HandoffSrcTest, BuffersKeptDownstreamDoNotStallTheSource) {
  AttachedSource s(publisher_name(), take_video_metas);
  ASSERT_TRUE(s.subscribed);
  std::vector<std::unique_ptr<Received>> kept;  // none released until the end
  std::size_t wrapped = 0;
  for (int i = 0; i < 8; ++i) {
    // Only the kept wrapped buffers hold slots once a copied frame's release is back.
    ASSERT_TRUE(wait_until([&] { return s.pub.stats().held_frames <= wrapped; }, "the copied frames' slots back"));
    ASSERT_TRUE(s.pub.publish(live::test::pattern_frame(PixelFormat::NV12, 48, 32, i)));
    auto r = std::make_unique<Received>();
    ASSERT_TRUE(receive(s.out.get(), *r, 10s)) << "frame " << i << " with " << kept.size() << " kept";
    EXPECT_EQ(live::test::check_pattern(r->frame), "") << "frame " << i;
    if (GST_MEMORY_IS_READONLY(gst_buffer_peek_memory(gst_sample_get_buffer(r->sample), 0))) ++wrapped;
    kept.push_back(std::move(r));
  }
  EXPECT_GE(wrapped, 1u) << "the first frames are the slots themselves";
  EXPECT_LE(wrapped, 2u) << "a default publisher lets a subscriber hold 3 slots, one for the frame in hand";
}

// A publisher's timestamp is a peer's number: one GstClockTime cannot hold
// (huge, negative, not a number) gives no reference timestamp meta, and the
// frame still flows.
TEST_F(HandoffSrcTest, TimestampsNoClockTimeCanHoldGiveNoMeta) {
  AttachedSource s(publisher_name());
  ASSERT_TRUE(s.subscribed);
  Publisher& pub = s.pub;
  ElementPtr& out = s.out;
  GstCaps* ref = gst_caps_new_empty_simple("timestamp/x-handoff-publisher");
  for (double t : {1e300, -5.0, double(NAN), 2.5}) {
    Frame f = live::test::pattern_frame(PixelFormat::NV12, 32, 16, 4);
    f.timestamp = t;
    // The frame before may still hold its slot (appsink's last sample) and
    // the ones before it their Releases in flight: wait for them, not for luck.
    ASSERT_TRUE(wait_until([&] { return pub.stats().held_frames <= 1; }, "the earlier frames' slots back"));
    ASSERT_TRUE(pub.publish(f));
    Received r;
    ASSERT_TRUE(receive(out.get(), r)) << "timestamp " << t;
    EXPECT_EQ(live::test::check_pattern(r.frame), "");
    GstReferenceTimestampMeta* m = gst_buffer_get_reference_timestamp_meta(gst_sample_get_buffer(r.sample), ref);
    if (t == 2.5) {
      ASSERT_NE(m, nullptr);
      EXPECT_EQ(m->timestamp, 2500 * GST_MSECOND);
    } else {
      EXPECT_EQ(m, nullptr) << "timestamp " << t;
    }
  }
  gst_caps_unref(ref);
}

TEST_F(HandoffSrcTest, NoPublisherWithoutWaitIsAnErrorNamingIt) {
  Pipeline p("handoffsrc name=src attach=nobody-" + publisher_name() + " wait=false ! fakesink");
  ASSERT_NE(p.start(), GST_STATE_CHANGE_FAILURE);
  const BusMessage m = p.wait_for(GST_MESSAGE_ERROR);
  EXPECT_EQ(m.source, "src");
  EXPECT_NE(m.text.find("nobody-"), std::string::npos) << m.text;
}

// Caps after the source that leave out the publisher's format: the error says
// which frames were refused, where basesrc's own says only "not-negotiated".
TEST_F(HandoffSrcTest, RefusedCapsAreAnErrorNamingTheFrames) {
  const std::string name = publisher_name();
  Publisher pub(name);
  Pipeline p("handoffsrc name=src attach=" + name + " ! video/x-raw,format=RGB ! fakesink");
  ASSERT_NE(p.start(), GST_STATE_CHANGE_FAILURE);
  ASSERT_TRUE(wait_until([&] { return pub.stats().subscribers == 1; }, "handoffsrc subscribed"));
  ASSERT_TRUE(pub.publish(live::test::pattern_frame(PixelFormat::NV12, 48, 32, 0)));
  const BusMessage m = p.wait_for(GST_MESSAGE_ERROR);
  EXPECT_EQ(m.source, "src");
  EXPECT_NE(m.text.find("nv12 48x32"), std::string::npos) << m.text;
  EXPECT_NE(m.text.find("videoconvert"), std::string::npos) << m.text;
}

TEST_F(HandoffSrcTest, WithoutAttachTheSourceDoesNotStart) {
  Pipeline p("handoffsrc name=src ! fakesink");
  EXPECT_EQ(p.set_state(GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(p.find(GST_MESSAGE_ERROR, "attach=NAME"), nullptr) << "the error names the missing property";
}

TEST_F(HandoffSrcTest, APublisherThatComesBackIsFollowed) {
  const std::string name = publisher_name();
  Pipeline p("handoffsrc attach=" + name + kAppSink);
  ASSERT_NE(p.start(), GST_STATE_CHANGE_FAILURE);  // waits for the publisher
  ElementPtr out = p.element("out");
  for (int round = 0; round < 2; ++round) {
    Publisher pub(name);
    ASSERT_TRUE(wait_until([&] { return pub.stats().subscribers == 1; }, "handoffsrc (re)subscribed"));
    ASSERT_TRUE(pub.publish(live::test::pattern_frame(PixelFormat::NV12, 48, 32, round)));
    Received r;
    ASSERT_TRUE(receive(out.get(), r)) << "round " << round;
    EXPECT_EQ(r.frame.index, round);
  }
  p.drain();
  EXPECT_EQ(p.find(GST_MESSAGE_ERROR, ""), nullptr) << "a publisher going is not an error";
}

}  // namespace
}  // namespace handoff::gst::test
