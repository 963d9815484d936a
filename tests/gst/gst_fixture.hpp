#pragma once
// The GStreamer tier's fixture: GStreamer initialised once with handoff's
// elements registered statically (the plugin module is tested separately,
// through gst-inspect-1.0 and gst-launch-1.0), pipelines owned by RAII, and
// bus waits that are bounded (a pipeline that hangs fails its test).
#include <gtest/gtest.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <handoff/gst/elements.hpp>
#include <handoff/viewer.hpp>

#include "sink_testing.hpp"

namespace handoff::gst::test {

using namespace std::chrono_literals;

struct GstUnref {
  void operator()(gpointer p) const noexcept {
    if (p) gst_object_unref(p);
  }
};
using ElementPtr = std::unique_ptr<GstElement, GstUnref>;

// One message taken off a bus (type, source element name, text of errors / warnings / infos).
struct BusMessage {
  GstMessageType type = GST_MESSAGE_UNKNOWN;
  std::string source, text, debug;
};

// A pipeline from a gst-launch description, set to NULL and freed on destruction.
class Pipeline {
 public:
  explicit Pipeline(const std::string& description);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  GstElement* get() const { return pipeline_; }
  ElementPtr element(const std::string& name) const;  // by name; fails the test when missing
  // Sets the state and waits (bounded) for the change; the return of get_state
  // (live pipelines: NO_PREROLL at once, not waited for).
  GstStateChangeReturn set_state(GstState state, std::chrono::seconds limit = 20s);
  // Sets PLAYING without waiting for it (a live source with nothing to send
  // yet, a non-live appsrc): what gst_element_set_state returned.
  GstStateChangeReturn start();
  // The next message of `types` (EOS / ERROR by default) not returned by an
  // earlier wait_for: among those already taken off the bus, else popped
  // until one comes or the limit; every message seen is kept in messages().
  BusMessage wait_for(GstMessageType types = GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR),
                      std::chrono::seconds limit = 30s);
  // Drains what is on the bus now into messages().
  void drain();
  const std::vector<BusMessage>& messages() const { return seen_; }
  // The first message of `type` whose text contains `needle`, or null.
  const BusMessage* find(GstMessageType type, const std::string& needle) const;

 private:
  BusMessage keep(GstMessage* m);
  GstElement* pipeline_ = nullptr;
  std::vector<BusMessage> seen_;
  std::size_t waited_ = 0;  // seen_[0 .. waited_) were looked at by wait_for
};

class GstTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  void SetUp() override;
  void TearDown() override;
  // A runtime folder of this test's own (XDG_RUNTIME_DIR, mode 0700) for publishers.
  const std::string& runtime() const { return runtime_; }
  // A publisher name unique to this test.
  std::string publisher_name() const;

 private:
  std::string runtime_, saved_;
  bool had_ = false;
};

// The viewer of a handoffsink in `pipeline` named `name` (fails the test when there is none).
std::shared_ptr<Viewer> viewer_of(const Pipeline& p, const std::string& name = "sink");
// The sink's "snapshot" action: what it shows, as RGBA rows (width * 4 bytes each).
struct Rgba {
  std::uint32_t width = 0, height = 0;
  std::vector<std::uint8_t> pixels;
  const std::uint8_t* at(std::uint32_t x, std::uint32_t y) const { return pixels.data() + (std::size_t(y) * width + x) * 4; }
};
Rgba snapshot(GstElement* sink, bool view = false);

// A system-memory NV12 / P010 buffer of `info`'s layout, every sample set by `code(plane, x, y, component)`.
template <typename Code>
GstBuffer* make_buffer(const GstVideoInfo& info, Code code);

// GStreamer's leaks tracer (GST_TRACERS=leaks in the tier's environment), or null.
GstTracer* leaks_tracer();
// Starts tracking (activity-start-tracking); then, per type, the objects
// created since less those destroyed since (activity-get-checkpoint lists
// both), and tracking stops.
void start_leak_tracking(GstTracer* tracer);
std::map<std::string, int> net_objects_since_start(GstTracer* tracer);

// --- template definitions --------------------------------------------------------------------

template <typename Code>
GstBuffer* make_buffer(const GstVideoInfo& info, Code code) {
  GstBuffer* buf = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
  GstVideoFrame vf;
  if (!gst_video_frame_map(&vf, &info, buf, GST_MAP_WRITE)) return buf;
  const bool p010 = GST_VIDEO_INFO_FORMAT(&info) == GST_VIDEO_FORMAT_P010_10LE;
  for (int p = 0; p < 2; ++p) {
    const int rows = p == 0 ? GST_VIDEO_INFO_HEIGHT(&info) : (GST_VIDEO_INFO_HEIGHT(&info) + 1) / 2;
    const int cols = p == 0 ? GST_VIDEO_INFO_WIDTH(&info) : (GST_VIDEO_INFO_WIDTH(&info) + 1) / 2;
    const int comps = p == 0 ? 1 : 2;
    for (int y = 0; y < rows; ++y) {
      auto* row = static_cast<std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&vf, p)) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&vf, p);
      for (int x = 0; x < cols; ++x)
        for (int c = 0; c < comps; ++c) {
          const int v = code(p, x, y, c);
          const int i = x * comps + c;
          if (p010) {
            const auto s = std::uint16_t(v << 6);
            row[i * 2] = std::uint8_t(s & 0xff);
            row[i * 2 + 1] = std::uint8_t(s >> 8);
          } else {
            row[i] = std::uint8_t(v);
          }
        }
    }
  }
  gst_video_frame_unmap(&vf);
  return buf;
}

}  // namespace handoff::gst::test
