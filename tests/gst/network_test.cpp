// Two machines simulated on loopback: a sending pipeline (RTP over UDP to
// 127.0.0.1) and a receiving one ending in handoffsink, raw video (RFC 4175)
// and H.264 where the packages provide an encoder and a decoder. Frames must
// arrive and be shown.
#include <gtest/gtest.h>

#include <thread>

#include "gst_fixture.hpp"
#include "wait_support.hpp"

namespace handoff::gst::test {
namespace {

using handoff::test::wait_until;

class NetworkTest : public GstTest {
 protected:
  static bool have(const char* factory) {
    GstElementFactory* f = gst_element_factory_find(factory);
    if (f) gst_object_unref(f);
    return f != nullptr;
  }
  // Starts `receiver` (its udpsrc named "udp", bound to port 0), then the
  // sender with the port the receiver got; returns the frames shown by the
  // receiver's sink once the sender ended.
  std::uint64_t run(const std::string& receiver, const std::string& sender_head, const std::string& sender_tail) {
    Pipeline rx(receiver);
    if (rx.start() == GST_STATE_CHANGE_FAILURE) {  // live: nothing to preroll until the sender runs
      ADD_FAILURE() << "the receiver did not start";
      return 0;
    }
    ElementPtr udp = rx.element("udp");
    gint port = 0;
    g_object_get(udp.get(), "port", &port, nullptr);
    EXPECT_GT(port, 0) << "udpsrc reports the port it bound";
    Pipeline tx(sender_head + " ! udpsink host=127.0.0.1 port=" + std::to_string(port) + " " + sender_tail);
    EXPECT_NE(tx.set_state(GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
    EXPECT_EQ(tx.wait_for(GST_MESSAGE_EOS, 60s).type, GST_MESSAGE_EOS);
    auto v = viewer_of(rx);
    if (!v) return 0;
    (void)wait_until([&] { return v->stats().shown > 0; }, "a frame shown by the receiver", 20s);
    std::this_thread::sleep_for(200ms);  // the last packets in flight
    rx.drain();
    EXPECT_EQ(rx.find(GST_MESSAGE_ERROR, ""), nullptr);
    return v->stats().shown;
  }
};

TEST_F(NetworkTest, RawVideoOverRtpUdpIsShown) {
  const std::string rtp_caps =
      "application/x-rtp,media=video,clock-rate=90000,encoding-name=RAW,sampling=YCbCr-4:2:0,depth=(string)8,"
      "width=(string)320,height=(string)240,colorimetry=(string)BT601-5,payload=96";
  const std::uint64_t shown =
      run("udpsrc name=udp port=0 buffer-size=8388608 caps=\"" + rtp_caps +
              "\" ! rtpvrawdepay ! videoconvert ! video/x-raw,format=NV12 ! handoffsink name=sink headless=true "
              "sync=false",
          "videotestsrc num-buffers=30 ! video/x-raw,format=I420,width=320,height=240,framerate=30/1 ! "
          "rtpvrawpay pt=96",
          "sync=true");
  EXPECT_GE(shown, 5u) << "of 30 sent";
}

TEST_F(NetworkTest, H264OverRtpUdpIsDecodedAndShown) {
  const char* enc = have("x264enc") ? "x264enc tune=zerolatency speed-preset=ultrafast key-int-max=10"
                    : have("openh264enc") ? "openh264enc" : nullptr;
  const char* dec = have("avdec_h264") ? "avdec_h264" : have("openh264dec") ? "openh264dec" : nullptr;
  if (!enc || !dec)
    GTEST_SKIP() << "no H.264 encoder and decoder installed (gstreamer1.0-plugins-ugly's x264enc, "
                    "gstreamer1.0-libav's avdec_h264)";
  const std::string rtp_caps = "application/x-rtp,media=video,clock-rate=90000,encoding-name=H264,payload=96";
  const std::uint64_t shown =
      run("udpsrc name=udp port=0 caps=\"" + rtp_caps + "\" ! rtph264depay ! " + dec +
              " ! videoconvert ! video/x-raw,format=NV12 ! handoffsink name=sink headless=true sync=false",
          std::string("videotestsrc num-buffers=60 ! video/x-raw,format=I420,width=320,height=240,framerate=30/1 ! ") +
              enc + " ! rtph264pay pt=96 config-interval=1",
          "sync=true");
  EXPECT_GE(shown, 5u) << "of 60 sent";
}

}  // namespace
}  // namespace handoff::gst::test
