// Two machines simulated on loopback: a sending pipeline (RTP over UDP to
// 127.0.0.1) and a receiving one ending in handoffsink, raw video (RFC 4175)
// and H.264 where the packages provide an encoder and a decoder. Every frame
// sent must arrive at the sink, the last one must be on display, and its
// pixels must be those sent: the sink's buffer against the same frame made
// locally (exact for raw video, within the codec's error for H.264), and the
// viewer's RGB against the colour reference of the sink's codes.
//
// UDP may lose packets when the receiver's socket buffer overflows, so the
// streams are sized to fit in it whole (raw: 30 64x48 frames, 138 KB in
// about 120 packets; H.264: 60 160x120 frames, about 180 KB): the receiver
// asks for 8 MB, and even where the kernel holds it to its default (about
// 416 KB of packet memory) either stream fits. A receiver that falls behind
// under load then loses nothing, and the counts below are exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <handoff/media/color.hpp>

#include "gst_fixture.hpp"
#include "wait_support.hpp"

namespace handoff::gst::test {
namespace {

using handoff::test::wait_until;

// An NV12 frame's codes, copied out of a sample, with the colorimetry of its caps.
struct Nv12 {
  int w = 0, h = 0;
  std::vector<std::uint8_t> luma, chroma;  // w * h; (w / 2) * (h / 2) Cb,Cr pairs
  ColorMatrix matrix = ColorMatrix::BT601;
  ColorRange range = ColorRange::Limited;
  int y(int x, int row) const { return luma[std::size_t(row) * std::size_t(w) + std::size_t(x)]; }
  int c(int cx, int cy, int k) const {  // k 0: Cb, 1: Cr; clamped to the plane
    cx = std::clamp(cx, 0, w / 2 - 1);
    cy = std::clamp(cy, 0, h / 2 - 1);
    return chroma[(std::size_t(cy) * std::size_t(w / 2) + std::size_t(cx)) * 2 + std::size_t(k)];
  }
};

Nv12 nv12_of(GstSample* sample) {
  Nv12 f;
  GstVideoInfo info;
  if (!sample || !gst_video_info_from_caps(&info, gst_sample_get_caps(sample))) return f;
  EXPECT_EQ(GST_VIDEO_INFO_FORMAT(&info), GST_VIDEO_FORMAT_NV12);
  GstVideoFrame vf;
  if (!gst_video_frame_map(&vf, &info, gst_sample_get_buffer(sample), GST_MAP_READ)) return f;
  f.w = GST_VIDEO_INFO_WIDTH(&info);
  f.h = GST_VIDEO_INFO_HEIGHT(&info);
  for (int row = 0; row < f.h; ++row) {
    const auto* p = static_cast<const std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&vf, 0)) +
                    row * GST_VIDEO_FRAME_PLANE_STRIDE(&vf, 0);
    f.luma.insert(f.luma.end(), p, p + f.w);
  }
  for (int row = 0; row < f.h / 2; ++row) {
    const auto* p = static_cast<const std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&vf, 1)) +
                    row * GST_VIDEO_FRAME_PLANE_STRIDE(&vf, 1);
    f.chroma.insert(f.chroma.end(), p, p + (f.w / 2) * 2);
  }
  gst_video_frame_unmap(&vf);
  const GstVideoColorimetry& col = GST_VIDEO_INFO_COLORIMETRY(&info);
  f.matrix = col.matrix == GST_VIDEO_COLOR_MATRIX_BT709    ? ColorMatrix::BT709
             : col.matrix == GST_VIDEO_COLOR_MATRIX_BT2020 ? ColorMatrix::BT2020
                                                           : ColorMatrix::BT601;
  f.range = col.range == GST_VIDEO_COLOR_RANGE_0_255 ? ColorRange::Full : ColorRange::Limited;
  return f;
}

// Luma within `r` pixels and chroma within `r / 2 + 1` samples of (x, y) all equal to (x, y)'s.
bool flat_around(const Nv12& f, int x, int y, int r) {
  for (int dy = -r; dy <= r; ++dy)
    for (int dx = -r; dx <= r; ++dx) {
      const int xx = std::clamp(x + dx, 0, f.w - 1), yy = std::clamp(y + dy, 0, f.h - 1);
      if (f.y(xx, yy) != f.y(x, y)) return false;
    }
  const int cr = r / 2 + 1;
  for (int dy = -cr; dy <= cr; ++dy)
    for (int dx = -cr; dx <= cr; ++dx)
      for (int k = 0; k < 2; ++k)
        if (f.c(x / 2 + dx, y / 2 + dy, k) != f.c(x / 2, y / 2, k)) return false;
  return true;
}

// Frame `index` of `source` (a videotestsrc description up to its caps), made
// locally and converted to NV12 as the receiver does: what the sender sent.
Nv12 reference_frame(const std::string& source, int index) {
  Pipeline p(source + " ! videoconvert ! video/x-raw,format=NV12 ! appsink name=ref sync=false");
  ElementPtr ref = p.element("ref");
  if (!ref || p.start() == GST_STATE_CHANGE_FAILURE) {
    ADD_FAILURE() << "the reference pipeline did not start";
    return {};
  }
  Nv12 out;
  for (int i = 0; i <= index; ++i) {
    GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(ref.get()), 20 * GST_SECOND);
    if (!s) {
      ADD_FAILURE() << "the reference pipeline ended at frame " << i;
      return {};
    }
    if (i == index) out = nv12_of(s);
    gst_sample_unref(s);
  }
  return out;
}

// What the receiving sink ended with.
struct Received {
  std::uint64_t submitted = 0, shown = 0, dropped = 0;
  std::int64_t last_index = -1;
  Nv12 last;  // the sink's last sample
  Rgba view;  // the viewer's snapshot
};

// The viewer's RGB equals the colour reference of `f`'s codes at every pixel
// whose surroundings are flat (so that chroma filtering cannot matter);
// returns how many pixels were checked.
std::size_t expect_viewer_shows(const Rgba& view, const Nv12& f) {
  EXPECT_EQ(view.width, std::uint32_t(f.w));
  EXPECT_EQ(view.height, std::uint32_t(f.h));
  if (view.width != std::uint32_t(f.w) || view.height != std::uint32_t(f.h)) return 0;
  std::size_t checked = 0, wrong = 0;
  for (int y = 0; y < f.h; ++y)
    for (int x = 0; x < f.w; ++x) {
      if (!flat_around(f, x, y, 1)) continue;
      ++checked;
      const auto want = media::yuv_to_rgb8(f.y(x, y), f.c(x / 2, y / 2, 0), f.c(x / 2, y / 2, 1), f.matrix, f.range,
                                            PixelFormat::NV12);
      const std::uint8_t* got = view.at(std::uint32_t(x), std::uint32_t(y));
      for (int k = 0; k < 3; ++k)
        if (std::abs(int(got[k]) - int(want[std::size_t(k)])) > 1 && wrong++ < 5)
          ADD_FAILURE() << "viewer pixel (" << x << ", " << y << ") channel " << k << ": " << int(got[k])
                        << ", the colour reference says " << int(want[std::size_t(k)]);
    }
  EXPECT_EQ(wrong, 0u) << "viewer pixels off the colour reference by more than 1 code";
  return checked;
}

class NetworkTest : public GstTest {
 protected:
  static bool have(const char* factory) {
    GstElementFactory* f = gst_element_factory_find(factory);
    if (f) gst_object_unref(f);
    return f != nullptr;
  }
  // Starts `receiver` (its udpsrc named "udp", bound to port 0), then the
  // sender with the port the receiver got; once the sender ended, waits
  // until the receiver's sink was handed `frames` frames and returns what
  // it shows.
  Received run(const std::string& receiver, const std::string& sender_head, const std::string& sender_tail,
               std::uint64_t frames) {
    Received got;
    Pipeline rx(receiver);
    if (rx.start() == GST_STATE_CHANGE_FAILURE) {  // live: nothing to preroll until the sender runs
      ADD_FAILURE() << "the receiver did not start";
      return got;
    }
    ElementPtr udp = rx.element("udp");
    gint port = 0;
    g_object_get(udp.get(), "port", &port, nullptr);
    EXPECT_GT(port, 0) << "udpsrc reports the port it bound";
    Pipeline tx(sender_head + " ! udpsink host=127.0.0.1 port=" + std::to_string(port) + " " + sender_tail);
    EXPECT_NE(tx.set_state(GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
    EXPECT_EQ(tx.wait_for(GST_MESSAGE_EOS, 60s).type, GST_MESSAGE_EOS);
    auto v = viewer_of(rx);
    if (!v) return got;
    // Every frame sent reaches the sink (the stream fits in the socket buffer).
    (void)wait_until([&] { return v->stats().submitted >= frames; }, "every frame sent reaching the sink", 60s);
    ElementPtr sink = rx.element("sink");
    got.view = snapshot(sink.get());  // drawn once the newest frame is on display
    const ViewerStats s = v->stats();
    got.submitted = s.submitted;
    got.shown = s.shown;
    got.dropped = s.dropped;
    got.last_index = s.last_index;
    GstSample* last = nullptr;
    g_object_get(sink.get(), "last-sample", &last, nullptr);
    EXPECT_NE(last, nullptr);
    got.last = nv12_of(last);
    if (last) gst_sample_unref(last);
    rx.drain();
    EXPECT_EQ(rx.find(GST_MESSAGE_ERROR, ""), nullptr);
    return got;
  }
};

// Each frame scrolls 8 pixels (horizontal-speed): the last frame is told
// from the one before it.
const std::string kRawSource =
    "videotestsrc num-buffers=30 pattern=smpte horizontal-speed=8 ! "
    "video/x-raw,format=I420,width=64,height=48,framerate=30/1";

TEST_F(NetworkTest, RawVideoOverRtpUdpIsShown) {
  const std::string rtp_caps =
      "application/x-rtp,media=video,clock-rate=90000,encoding-name=RAW,sampling=YCbCr-4:2:0,depth=(string)8,"
      "width=(string)64,height=(string)48,colorimetry=(string)BT601-5,payload=96";
  const Received r =
      run("udpsrc name=udp port=0 buffer-size=8388608 caps=\"" + rtp_caps +
              "\" ! rtpvrawdepay ! videoconvert ! video/x-raw,format=NV12 ! handoffsink name=sink headless=true "
              "sync=false",
          kRawSource + " ! rtpvrawpay pt=96", "sync=true", 30);
  EXPECT_EQ(r.submitted, 30u) << "of 30 sent";
  EXPECT_EQ(r.shown + r.dropped, r.submitted) << "each frame is shown or replaced by a newer one";
  const Nv12 sent = reference_frame(kRawSource, 29);
  ASSERT_EQ(r.last.w, 64);
  ASSERT_EQ(sent.w, 64);
  // Raw video is lossless: the sink's last buffer is frame 29, sample for sample.
  EXPECT_TRUE(r.last.luma == sent.luma) << "the luma of the last frame shown is not that of frame 29";
  EXPECT_TRUE(r.last.chroma == sent.chroma) << "the chroma of the last frame shown is not that of frame 29";
  const std::size_t checked = expect_viewer_shows(r.view, r.last);
  EXPECT_GE(checked, std::size_t(64 * 48 / 4)) << "too few flat pixels to check";
}

TEST_F(NetworkTest, H264OverRtpUdpIsDecodedAndShown) {
  const char* enc = have("x264enc") ? "x264enc tune=zerolatency speed-preset=ultrafast key-int-max=10"
                    : have("openh264enc") ? "openh264enc" : nullptr;
  const char* dec = have("avdec_h264") ? "avdec_h264" : have("openh264dec") ? "openh264dec" : nullptr;
  if (!enc || !dec)
    GTEST_SKIP() << "no H.264 encoder and decoder installed (gstreamer1.0-plugins-ugly's x264enc, "
                    "gstreamer1.0-libav's avdec_h264)";
  // 160x120: about 180 KB for the 60 frames.
  constexpr int kW = 160, kH = 120;
  const std::string source =
      "videotestsrc num-buffers=60 pattern=smpte horizontal-speed=8 ! video/x-raw,format=I420,width=" +
      std::to_string(kW) + ",height=" + std::to_string(kH) + ",framerate=30/1";
  const std::string rtp_caps = "application/x-rtp,media=video,clock-rate=90000,encoding-name=H264,payload=96";
  const Received r =
      run("udpsrc name=udp port=0 buffer-size=8388608 caps=\"" + rtp_caps + "\" ! rtph264depay ! " + dec +
              " ! videoconvert ! video/x-raw,format=NV12 ! handoffsink name=sink headless=true sync=false",
          source + " ! " + enc + " ! rtph264pay pt=96 config-interval=1", "sync=true", 60);
  EXPECT_EQ(r.submitted, 60u) << "of 60 sent";
  EXPECT_EQ(r.shown + r.dropped, r.submitted) << "each frame is shown or replaced by a newer one";
  const Nv12 sent = reference_frame(source, 59);
  ASSERT_EQ(r.last.w, kW);
  ASSERT_EQ(sent.w, kW);
  // H.264 is lossy: where frame 59 is flat for 4 pixels around (away from
  // the edges the codec blurs), the decoded codes are within kCodec of it.
  // Frame 58 (8 pixels to the right) differs there by whole bars.
  constexpr int kCodec = 2;  // 0 measured with x264enc + avdec_h264
  std::size_t checked = 0, wrong = 0;
  for (int y = 0; y < sent.h; ++y)
    for (int x = 0; x < sent.w; ++x) {
      if (!flat_around(sent, x, y, 4)) continue;
      ++checked;
      const int d[3] = {r.last.y(x, y) - sent.y(x, y), r.last.c(x / 2, y / 2, 0) - sent.c(x / 2, y / 2, 0),
                        r.last.c(x / 2, y / 2, 1) - sent.c(x / 2, y / 2, 1)};
      for (int k = 0; k < 3; ++k)
        if (std::abs(d[k]) > kCodec && wrong++ < 5)
          ADD_FAILURE() << "decoded (" << x << ", " << y << ") component " << k << " is " << d[k]
                        << " codes from frame 59's";
    }
  EXPECT_EQ(wrong, 0u) << "decoded codes further than " << kCodec << " from frame 59's";
  EXPECT_GE(checked, std::size_t(kW * kH / 4)) << "too few flat pixels to check";
  EXPECT_GE(expect_viewer_shows(r.view, r.last), std::size_t(kW * kH / 8)) << "too few flat pixels to check";
}

}  // namespace
}  // namespace handoff::gst::test
