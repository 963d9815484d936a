// handoffsink: a GstVideoSink over handoff::Viewer (and handoff::Publisher).
//
// Each buffer is mapped, described as a handoff::Frame (host planes, or CUDA
// device planes for memory:CUDAMemory in the viewer's context) and handed to
// Viewer::show, which copies it into the viewer's ring and returns: the
// streaming thread never waits for the display, and the newest frame wins.
// GstBaseSink does the rest of being a sink: clock sync, QoS and late-buffer
// dropping, latency, preroll, EOS, flushing.
//
// Threads: properties are set from any thread (GObject's rules) and read under
// the state's lock when the viewer opens; show_frame runs on the streaming
// thread; the viewer lives from NULL -> READY to READY -> NULL.
#include <handoff/gst/elements.hpp>

#include <gst/base/gstbasesink.h>
#include <gst/video/gstvideosink.h>
#include <gst/video/video.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include <handoff/frame_validate.hpp>
#include <handoff/publisher.hpp>
#include <handoff/viewer.hpp>

#include "cuda_memory.hpp"
#include "roi_meta.hpp"
#include "sink_testing.hpp"
#include "video_caps.hpp"

GST_DEBUG_CATEGORY_STATIC(handoff_sink_debug);
#define GST_CAT_DEFAULT handoff_sink_debug

namespace handoff::gst {
namespace {

struct SinkSettings {
  std::string title = "handoffsink", publish, record, stream;
  bool window = true, headless = false, show_ui = true, show_overlays = true, vsync = true;
  int width = 1280, height = 720, cuda_device = 0;
};

// What lives between NULL -> READY and READY -> NULL.
struct Outputs {
  std::shared_ptr<Viewer> viewer;
  std::string stream;     // the viewer's tile this sink shows into (empty: a viewer of its own)
  std::string shared_as;  // the title of the shared viewer it joined (its stream given back when it goes)
  std::unique_ptr<Publisher> publisher;
  std::unique_ptr<CudaShare> cuda;  // the viewer's CUDA context, offered to upstream
};

struct SinkState {
  std::mutex lock;  // settings, outputs
  SinkSettings settings;
  Outputs out;
  // Streaming thread only (set_info, show_frame):
  GstVideoInfo info{};
  PixelFormat format = PixelFormat::NV12;
  Colorimetry colorimetry{};
  CapsMemory memory = CapsMemory::System;
  bool have_info = false;
  bool stated_copy = false;  // the one notice that a memory kind is copied through host memory
  // GstBaseSink renders the buffer it prerolled with: shown once, at preroll.
  bool prerolling = false;
  struct Seen {
    const GstBuffer* buffer = nullptr;  // identity only (basesink holds it until it is rendered)
    GstClockTime pts = GST_CLOCK_TIME_NONE;
    guint64 offset = GST_BUFFER_OFFSET_NONE;
    bool operator==(const Seen&) const = default;
  } prerolled;
  std::uint64_t frames = 0;
  std::uint64_t left_out = 0;  // buffers the viewer refused for their size
};

}  // namespace
}  // namespace handoff::gst

using handoff::gst::SinkState;

struct HandoffSink {
  GstVideoSink parent;
  SinkState* state;
};
struct HandoffSinkClass {
  GstVideoSinkClass parent_class;
};

G_DEFINE_TYPE(HandoffSink, handoff_sink, GST_TYPE_VIDEO_SINK)

#define HANDOFF_SINK(o) (reinterpret_cast<HandoffSink*>(o))

namespace handoff::gst {
namespace {

enum SinkProperty {
  PROP_0,
  PROP_TITLE,
  PROP_WINDOW,
  PROP_HEADLESS,
  PROP_SHOW_UI,
  PROP_SHOW_OVERLAYS,
  PROP_VSYNC,
  PROP_WINDOW_WIDTH,
  PROP_WINDOW_HEIGHT,
  PROP_PUBLISH,
  PROP_RECORD,
  PROP_CUDA_DEVICE,
  PROP_VIEWER_STATS,
  PROP_STREAM,
};

enum SinkSignal { SIGNAL_SNAPSHOT, SIGNAL_LAST };
guint sink_signals[SIGNAL_LAST];

std::string template_caps_string() {
  std::string caps = "video/x-raw, format = (string) { " + gst_format_list() +
                     " }, width = (int) [ 1, 32768 ], height = (int) [ 1, 32768 ], framerate = (fraction) [ 0/1, MAX ]";
  std::string out = caps;
  if (cuda_memory_available())
    out += "; " + std::string(caps).insert(std::string("video/x-raw").size(), "(memory:CUDAMemory)");
  out += "; " + std::string(caps).insert(std::string("video/x-raw").size(), "(memory:GLMemory)");
  return out;
}

void set_string(std::string& field, const GValue* v) {
  const char* s = g_value_get_string(v);
  field = s ? s : "";
}

void sink_set_property(GObject* obj, guint id, const GValue* v, GParamSpec* pspec) {
  SinkState& st = *HANDOFF_SINK(obj)->state;
  std::lock_guard<std::mutex> lock(st.lock);
  SinkSettings& s = st.settings;
  switch (id) {
    case PROP_TITLE: set_string(s.title, v); break;
    case PROP_WINDOW: s.window = g_value_get_boolean(v); break;
    case PROP_HEADLESS: s.headless = g_value_get_boolean(v); break;
    case PROP_SHOW_UI: s.show_ui = g_value_get_boolean(v); break;
    case PROP_SHOW_OVERLAYS: s.show_overlays = g_value_get_boolean(v); break;
    case PROP_VSYNC: s.vsync = g_value_get_boolean(v); break;
    case PROP_WINDOW_WIDTH: s.width = g_value_get_int(v); break;
    case PROP_WINDOW_HEIGHT: s.height = g_value_get_int(v); break;
    case PROP_PUBLISH: set_string(s.publish, v); break;
    case PROP_RECORD: set_string(s.record, v); break;
    case PROP_CUDA_DEVICE: s.cuda_device = g_value_get_int(v); break;
    case PROP_STREAM: set_string(s.stream, v); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(obj, id, pspec);
  }
}

// The viewer's counts; with a publisher, what it published; and the counts of
// whichever records (the viewer when there is one, else the publisher).
GstStructure* viewer_stats(const SinkState& st) {
  GstStructure* s = gst_structure_new_empty("handoff-stats");
  if (st.out.viewer) {
    const ViewerStats v = st.out.viewer->stats();
    gst_structure_set(s, "submitted", G_TYPE_UINT64, guint64(v.submitted), "shown", G_TYPE_UINT64, guint64(v.shown),
                      "dropped", G_TYPE_UINT64, guint64(v.dropped), "display-fps", G_TYPE_DOUBLE, v.display_fps,
                      "latency-p50-ms", G_TYPE_DOUBLE, v.latency_p50_ms, "latency-p99-ms", G_TYPE_DOUBLE,
                      v.latency_p99_ms, "copy-ms", G_TYPE_DOUBLE, v.copy_ms, "recorded", G_TYPE_UINT64,
                      guint64(v.recorded), "record-dropped", G_TYPE_UINT64, guint64(v.record_dropped),
                      "record-skipped", G_TYPE_UINT64, guint64(v.record_skipped), nullptr);
  }
  if (st.out.publisher) {
    const PublisherStats p = st.out.publisher->stats();
    gst_structure_set(s, "published", G_TYPE_UINT64, guint64(p.published), nullptr);
    if (!st.out.viewer)
      gst_structure_set(s, "recorded", G_TYPE_UINT64, guint64(p.recorded), "record-dropped", G_TYPE_UINT64,
                        guint64(p.record_dropped), nullptr);
  }
  return s;
}

void sink_get_property(GObject* obj, guint id, GValue* v, GParamSpec* pspec) {
  SinkState& st = *HANDOFF_SINK(obj)->state;
  std::lock_guard<std::mutex> lock(st.lock);
  const SinkSettings& s = st.settings;
  switch (id) {
    case PROP_TITLE: g_value_set_string(v, s.title.c_str()); break;
    case PROP_WINDOW: g_value_set_boolean(v, s.window); break;
    case PROP_HEADLESS: g_value_set_boolean(v, s.headless); break;
    case PROP_SHOW_UI: g_value_set_boolean(v, s.show_ui); break;
    case PROP_SHOW_OVERLAYS: g_value_set_boolean(v, s.show_overlays); break;
    case PROP_VSYNC: g_value_set_boolean(v, s.vsync); break;
    case PROP_WINDOW_WIDTH: g_value_set_int(v, s.width); break;
    case PROP_WINDOW_HEIGHT: g_value_set_int(v, s.height); break;
    case PROP_PUBLISH: g_value_set_string(v, s.publish.empty() ? nullptr : s.publish.c_str()); break;
    case PROP_RECORD: g_value_set_string(v, s.record.empty() ? nullptr : s.record.c_str()); break;
    case PROP_CUDA_DEVICE: g_value_set_int(v, s.cuda_device); break;
    case PROP_STREAM: g_value_set_string(v, s.stream.empty() ? nullptr : s.stream.c_str()); break;
    case PROP_VIEWER_STATS: g_value_take_boxed(v, viewer_stats(st)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(obj, id, pspec);
  }
}

// --- opening and closing -----------------------------------------------------------------

ViewerOptions viewer_options(GstElement* element, const SinkSettings& s) {
  ViewerOptions o;
  o.title = s.title;
  o.width = s.width;
  o.height = s.height;
  o.vsync = s.vsync;
  o.show_ui = s.show_ui;
  o.show_overlays = s.show_overlays;
  o.display = s.headless ? ViewerDisplay::Headless : ViewerDisplay::Auto;
  o.cuda_device = s.cuda_device;
  o.record.path = s.record;
  // Notices ("no display: rendering headless through EGL") as the element's
  // info messages, the text in the debug field too: gst-launch prints only that.
  o.on_notice = [element](std::string_view text) {
    const std::string t(text);
    GST_ELEMENT_INFO(element, RESOURCE, SETTINGS, ("%s", t.c_str()), ("%s", t.c_str()));
  };
  return o;
}

// The properties only a viewer uses that are set away from their defaults,
// as "a, b" (empty when none is).
std::string viewer_properties_set(const SinkSettings& s) {
  const SinkSettings d;
  std::string names;
  auto name_if = [&](bool changed, const char* name) {
    if (changed) names += (names.empty() ? "" : ", ") + std::string(name);
  };
  name_if(s.title != d.title, "title");
  name_if(s.width != d.width, "window-width");
  name_if(s.height != d.height, "window-height");
  name_if(s.show_ui != d.show_ui, "show-ui");
  name_if(s.show_overlays != d.show_overlays, "show-overlays");
  name_if(s.vsync != d.vsync, "vsync");
  return names;
}

// With a viewer, record= is what it shows (ViewerOptions::record); with none
// (window=false publish=NAME), what is published.
PublisherOptions publisher_options(const SinkSettings& s, bool with_viewer) {
  PublisherOptions o;
  if (!with_viewer) o.record.path = s.record;
  return o;
}

// Sinks of one process with a stream and the same title share one viewer, a
// tile each: the first to start opens it with its settings, the last to stop
// closes it. A stream name is one sink's at a time.
struct SharedViewer {
  std::weak_ptr<Viewer> viewer;
  std::set<std::string> streams;
};
std::mutex shared_mutex;
std::map<std::string, SharedViewer> shared_viewers;  // shared_mutex; by title

std::shared_ptr<Viewer> join_shared_viewer(const SinkSettings& s) {
  std::lock_guard lock(shared_mutex);
  SharedViewer& shared = shared_viewers[s.title];
  std::shared_ptr<Viewer> v = shared.viewer.lock();
  if (!v) {
    ViewerOptions o = viewer_options(nullptr, s);
    // Notices go to the debug log: the viewer may outlive the sink that opened it.
    o.on_notice = [title = s.title](std::string_view text) {
      GST_INFO("viewer '%s': %.*s", title.c_str(), int(text.size()), text.data());
    };
    v = std::make_shared<Viewer>(std::move(o));
    shared = SharedViewer{v, {}};
  } else if (shared.streams.count(s.stream)) {
    throw UsageError("stream '" + s.stream + "' is shown by another handoffsink titled '" + s.title +
                     "' already: give each sink sharing a viewer a stream of its own");
  }
  shared.streams.insert(s.stream);
  return v;
}

void leave_shared_viewer(const Outputs& out) {
  if (out.shared_as.empty()) return;
  std::lock_guard lock(shared_mutex);
  const auto it = shared_viewers.find(out.shared_as);
  if (it == shared_viewers.end()) return;
  it->second.streams.erase(out.stream);
  if (it->second.streams.empty()) shared_viewers.erase(it);
}

Outputs open_outputs(GstElement* element, const SinkSettings& s) {
  const bool with_viewer = s.window || s.headless;
  if (!with_viewer && s.publish.empty())
    throw UsageError("window=false with neither headless=true nor publish=NAME: the sink would show frames nowhere");
  if (const std::string unused = viewer_properties_set(s); !with_viewer && !unused.empty())
    throw UsageError(unused + " (a viewer's properties) would be ignored: window=false with publish=NAME opens "
                     "no viewer; set headless=true or window=true for one, or leave them at their defaults");
  if (s.stream.size() > 64) throw UsageError("stream: '" + s.stream.substr(0, 64) + "...' is longer than 64 bytes");
  if (!s.stream.empty() && !with_viewer)
    throw UsageError("stream='" + s.stream + "' names a tile of a viewer: window=false with publish=NAME opens none");
  Outputs out;
  if (with_viewer && !s.stream.empty()) {
    out.viewer = join_shared_viewer(s);
    out.stream = s.stream;
    out.shared_as = s.title;
  } else if (with_viewer) {
    out.viewer = std::make_shared<Viewer>(viewer_options(element, s));
  }
  try {
    if (!s.publish.empty()) out.publisher = std::make_unique<Publisher>(s.publish, publisher_options(s, with_viewer));
    std::string problem;  // null where CUDA is absent (quietly) or the build has no gst/cuda
    out.cuda = CudaShare::open(s.cuda_device, &problem);
    if (!problem.empty())
      GST_ELEMENT_WARNING(element, RESOURCE, SETTINGS,
                          ("handoffsink: cuda-device=%d gives no CUDA context (%s); CUDA memory is not offered",
                           s.cuda_device, problem.c_str()),
                          (nullptr));
  } catch (...) {
    leave_shared_viewer(out);  // the stream is free again for the sink's next start
    throw;
  }
  return out;
}

GstStateChangeReturn sink_change_state(GstElement* element, GstStateChange transition) {
  SinkState& st = *HANDOFF_SINK(element)->state;
  if (transition == GST_STATE_CHANGE_NULL_TO_READY) {
    SinkSettings settings;
    {
      std::lock_guard<std::mutex> lock(st.lock);
      settings = st.settings;
    }
    try {
      Outputs out = open_outputs(element, settings);
      std::lock_guard<std::mutex> lock(st.lock);
      st.out = std::move(out);
    } catch (const UsageError& e) {
      GST_ELEMENT_ERROR(element, RESOURCE, SETTINGS, ("handoffsink could not start: %s", e.what()), (nullptr));
      return GST_STATE_CHANGE_FAILURE;
    } catch (const std::exception& e) {
      GST_ELEMENT_ERROR(element, RESOURCE, OPEN_WRITE, ("handoffsink could not start: %s", e.what()), (nullptr));
      return GST_STATE_CHANGE_FAILURE;
    }
  }
  const GstStateChangeReturn r = GST_ELEMENT_CLASS(handoff_sink_parent_class)->change_state(element, transition);
  if (transition == GST_STATE_CHANGE_READY_TO_NULL) {
    Outputs gone;
    {
      std::lock_guard<std::mutex> lock(st.lock);
      gone = std::move(st.out);
      st.have_info = false;
    }
    leave_shared_viewer(gone);
    // Destroyed outside the lock (the viewer joins its display thread).
  }
  return r;
}

// --- caps ----------------------------------------------------------------------------------

gboolean sink_set_info(GstVideoSink* vs, GstCaps* caps, const GstVideoInfo* info) {
  SinkState& st = *HANDOFF_SINK(vs)->state;
  const auto format = pixel_format(GST_VIDEO_INFO_FORMAT(info));
  if (!format) {
    GST_ELEMENT_ERROR(vs, STREAM, FORMAT, ("handoffsink takes %s", supported_description(cuda_memory_available(), true).c_str()),
                      ("caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  std::string note;
  // Colorimetry turns YUV codes into colour; RGB and grey frames carry none
  // (GStreamer gives RGB formats the identity matrix).
  const auto colorimetry = is_yuv(*format) ? colorimetry_of(*info, &note) : std::optional<Colorimetry>(Colorimetry{});
  if (!colorimetry) {
    GST_ELEMENT_ERROR(vs, STREAM, FORMAT, ("handoffsink cannot draw these frames: %s", note.c_str()),
                      ("caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  if (!note.empty()) GST_ELEMENT_WARNING(vs, STREAM, FORMAT, ("%s", note.c_str()), ("caps %" GST_PTR_FORMAT, caps));
  st.info = *info;
  st.format = *format;
  st.colorimetry = *colorimetry;
  st.memory = caps_memory(caps);
  st.have_info = true;
  GST_DEBUG_OBJECT(vs, "caps %" GST_PTR_FORMAT, caps);
  return TRUE;
}

gboolean sink_propose_allocation(GstBaseSink* bs, GstQuery* query) {
  gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
  gst_query_add_allocation_meta(query, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE, nullptr);
  return TRUE;
}

// Caps upstream proposes and this sink refuses: a warning naming what it
// takes (the not-negotiated error upstream then posts does not).
void name_what_is_taken(GstBaseSink* bs, GstQuery* query) {
  GstCaps* caps = nullptr;
  gboolean accepted = FALSE;
  gst_query_parse_accept_caps(query, &caps);
  gst_query_parse_accept_caps_result(query, &accepted);
  if (accepted || !caps) return;
  gchar* offered = gst_caps_to_string(caps);
  GST_ELEMENT_WARNING(bs, STREAM, FORMAT,
                      ("handoffsink takes %s, not what upstream offers (add videoconvert before it)",
                       supported_description(cuda_memory_available(), true).c_str()),
                      ("offered: %s", offered));
  g_free(offered);
}

gboolean sink_query(GstBaseSink* bs, GstQuery* query) {
  SinkState& st = *HANDOFF_SINK(bs)->state;
  if (GST_QUERY_TYPE(query) == GST_QUERY_CONTEXT) {
    std::lock_guard<std::mutex> lock(st.lock);
    if (st.out.cuda && st.out.cuda->answer_context_query(GST_ELEMENT(bs), query)) return TRUE;
  }
  const gboolean r = GST_BASE_SINK_CLASS(handoff_sink_parent_class)->query(bs, query);
  if (GST_QUERY_TYPE(query) == GST_QUERY_ACCEPT_CAPS) name_what_is_taken(bs, query);
  return r;
}

// --- frames --------------------------------------------------------------------------------

Frame describe(const GstVideoFrame& vf, const SinkState& st, GstBuffer* buf, const CudaShare* cuda) {
  Frame f;
  f.format = st.format;
  f.width = std::uint32_t(GST_VIDEO_FRAME_WIDTH(&vf));
  f.height = std::uint32_t(GST_VIDEO_FRAME_HEIGHT(&vf));
  f.colorimetry = st.colorimetry;
  if (cuda) {
    f.memory = MemoryKind::Cuda;
    f.device = cuda->device();
    f.cuda_context = cuda->context();
  }
  for (int p = 0; p < plane_count(f.format); ++p) {
    const PlaneLayout l = plane_layout(f.format, f.width, f.height, p);
    Plane& pl = f.planes[std::size_t(p)];
    pl.data = GST_VIDEO_FRAME_PLANE_DATA(&vf, p);
    pl.pitch = std::size_t(GST_VIDEO_FRAME_PLANE_STRIDE(&vf, p));
    pl.width = l.width;
    pl.height = l.height;
    pl.components = l.components;
  }
  f.index = GST_BUFFER_OFFSET_IS_VALID(buf) ? std::int64_t(GST_BUFFER_OFFSET(buf)) : std::int64_t(st.frames);
  f.timestamp = GST_BUFFER_PTS_IS_VALID(buf) ? double(GST_BUFFER_PTS(buf)) / double(GST_SECOND) : 0.0;
  return f;
}

// CUDA memory goes device to device when it lives in the context the viewer
// shares with upstream; any other (another context, GL memory) is mapped into
// system memory by its allocator: a copy this says once.
const CudaShare* device_path(HandoffSink* self, GstBuffer* buf, const CudaShare* cuda) {
  SinkState& st = *self->state;
  if (st.memory == CapsMemory::Cuda && cuda && cuda->owns(gst_buffer_peek_memory(buf, 0))) return cuda;
  if (st.memory != CapsMemory::System && !st.stated_copy) {
    st.stated_copy = true;
    const std::string t = std::string("handoffsink: ") +
                          (st.memory == CapsMemory::Cuda ? "memory:CUDAMemory" : "memory:GLMemory") +
                          " buffers are copied through system memory (" +
                          (st.memory == CapsMemory::Cuda ? "they are not in the CUDA context this sink offers"
                                                         : "the viewer's GL context does not share the pipeline's") +
                          ")";
    GST_ELEMENT_INFO(self, STREAM, FORMAT, ("%s", t.c_str()), ("%s", t.c_str()));  // gst-launch prints the debug
  }
  return nullptr;
}

// A buffer the viewer refuses for its size (above its GL's
// GL_MAX_TEXTURE_SIZE) is left out, as the viewer leaves out such frames
// from other sources: one warning on the bus, the rest counted in the debug
// log; the pipeline goes on (and a publish= branch still gets the buffer).
void show_or_leave_out(HandoffSink* self, const Frame& frame, const media::OverlayFrame& overlays, const Outputs& out) {
  SinkState& st = *self->state;
  try {
    out.viewer->show(frame, overlays, out.stream);
  } catch (const InvalidFrame& e) {
    if (e.field() != "width" && e.field() != "height") throw;
    if (st.left_out++ == 0)
      GST_ELEMENT_WARNING(self, STREAM, FORMAT, ("handoffsink leaves out buffers the viewer cannot show: %s", e.what()),
                          (nullptr));
    else
      GST_DEBUG_OBJECT(self, "buffer left out (%" G_GUINT64_FORMAT " so far): %s", st.left_out, e.what());
  }
}

GstFlowReturn show_mapped(HandoffSink* self, const Frame& frame, const media::OverlayFrame& overlays,
                          const Outputs& out) {
  try {
    if (out.viewer) show_or_leave_out(self, frame, overlays, out);
    if (out.publisher) out.publisher->publish(frame, overlays);
    return GST_FLOW_OK;
  } catch (const ViewerClosed& e) {
    // Closed by the user, or stopped on an error (a frame past GL's texture
    // size, a lost context): then the message says that error, not a close.
    std::string failure;
    try {
      // Closed (or closing) already: returns at once, rethrowing its error.
      if (out.viewer) (void)out.viewer->wait_closed_for(std::chrono::seconds(2));
    } catch (const std::exception& x) {
      failure = x.what();
    }
    if (failure.empty())
      GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("Output window was closed"), ("%s", e.what()));
    else
      GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("handoffsink: the viewer stopped: %s", failure.c_str()),
                        ("%s", e.what()));
  } catch (const InvalidFrame& e) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("handoffsink cannot show this buffer: %s", e.what()), (nullptr));
  } catch (const std::exception& e) {
    GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("handoffsink: %s", e.what()), (nullptr));
  }
  return GST_FLOW_ERROR;
}

GstFlowReturn sink_show_frame(GstVideoSink* vs, GstBuffer* buf) {
  HandoffSink* self = HANDOFF_SINK(vs);
  SinkState& st = *self->state;
  if (!st.have_info) return GST_FLOW_NOT_NEGOTIATED;
  const SinkState::Seen seen{buf, GST_BUFFER_PTS(buf), GST_BUFFER_OFFSET(buf)};
  const SinkState::Seen prerolled = std::exchange(st.prerolled, st.prerolling ? seen : SinkState::Seen{});
  if (!st.prerolling && seen == prerolled) return GST_FLOW_OK;  // shown when it prerolled
  Outputs* out = &st.out;  // stable from READY to NULL; streaming stops before READY -> NULL
  const CudaShare* cuda = device_path(self, buf, out->cuda.get());
  GstVideoFrame vf;
  const auto flags = GstMapFlags(GST_MAP_READ | (cuda ? cuda_map_flag() : 0));
  if (!gst_video_frame_map(&vf, &st.info, buf, flags)) {
    GST_ELEMENT_ERROR(self, RESOURCE, READ, ("handoffsink could not map a buffer"), ("%" GST_PTR_FORMAT, buf));
    return GST_FLOW_ERROR;
  }
  media::OverlayFrame overlays;
  overlays_from_buffer(buf, overlays);
  const Frame frame = describe(vf, st, buf, cuda);
  const GstFlowReturn r = show_mapped(self, frame, overlays, *out);
  gst_video_frame_unmap(&vf);
  ++st.frames;
  return r;
}

GstFlowReturn sink_preroll(GstBaseSink* bs, GstBuffer* buf) {
  SinkState& st = *HANDOFF_SINK(bs)->state;
  st.prerolling = true;
  const GstFlowReturn r = GST_BASE_SINK_CLASS(handoff_sink_parent_class)->preroll(bs, buf);
  st.prerolling = false;
  return r;
}

// The "snapshot" action: what the viewer shows, as an RGBA GstSample.
GstSample* sink_snapshot(HandoffSink* self, gboolean view) {
  SinkState& st = *self->state;
  std::shared_ptr<Viewer> v;
  {
    std::lock_guard<std::mutex> lock(st.lock);
    v = st.out.viewer;
  }
  if (!v) return nullptr;
  RgbaImage img;
  try {
    img = v->snapshot(view ? SnapshotKind::View : SnapshotKind::Frame);
  } catch (const std::exception& e) {
    GST_WARNING_OBJECT(self, "snapshot: %s", e.what());
    return nullptr;
  }
  if (img.empty()) return nullptr;
  const gsize size = img.stride() * img.height();
  GstBuffer* buf = gst_buffer_new_memdup(img.data(), size);
  GstCaps* caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "RGBA", "width", G_TYPE_INT,
                                      int(img.width()), "height", G_TYPE_INT, int(img.height()), nullptr);
  GstSample* sample = gst_sample_new(buf, caps, nullptr, nullptr);
  gst_buffer_unref(buf);
  gst_caps_unref(caps);
  return sample;
}

void sink_finalize(GObject* obj) {
  delete HANDOFF_SINK(obj)->state;
  G_OBJECT_CLASS(handoff_sink_parent_class)->finalize(obj);
}

void install_properties(GObjectClass* oc) {
  const auto rw = GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
  g_object_class_install_property(oc, PROP_TITLE,
      g_param_spec_string("title", "Title", "The window's title", "handoffsink", rw));
  g_object_class_install_property(oc, PROP_WINDOW,
      g_param_spec_boolean("window", "Window",
                           "Show the frames in a window (where there is no display: headless, with a notice); "
                           "false with publish= shows nothing here (no viewer: record= records what is published, and "
                           "the viewer's properties set away from their defaults are refused)", TRUE, rw));
  g_object_class_install_property(oc, PROP_HEADLESS,
      g_param_spec_boolean("headless", "Headless",
                           "Draw off-screen through EGL, no window (the snapshot action and record= still work)",
                           FALSE, rw));
  g_object_class_install_property(oc, PROP_SHOW_UI,
      g_param_spec_boolean("show-ui", "Show UI", "Show the viewer's panel (H / Tab toggles it)", TRUE, rw));
  g_object_class_install_property(oc, PROP_SHOW_OVERLAYS,
      g_param_spec_boolean("show-overlays", "Show overlays",
                           "Draw the buffers' regions of interest (O toggles them)", TRUE, rw));
  g_object_class_install_property(oc, PROP_VSYNC,
      g_param_spec_boolean("vsync", "VSync", "Swap the window with the display's refresh (the display thread "
                           "waits, never the pipeline)", TRUE, rw));
  g_object_class_install_property(oc, PROP_WINDOW_WIDTH,
      g_param_spec_int("window-width", "Window width", "The window's width (headless: the view's)", 64, 16384, 1280, rw));
  g_object_class_install_property(oc, PROP_WINDOW_HEIGHT,
      g_param_spec_int("window-height", "Window height", "The window's height (headless: the view's)", 64, 16384, 720, rw));
  g_object_class_install_property(oc, PROP_PUBLISH,
      g_param_spec_string("publish", "Publish",
                          "Also serve the frames to `handoff-view --attach NAME` viewers and handoff.Subscriber "
                          "(a name in $XDG_RUNTIME_DIR/handoff, or a socket path)", nullptr, rw));
  g_object_class_install_property(oc, PROP_RECORD,
      g_param_spec_string("record", "Record",
                          "Record what is shown (frames and overlays) into this MCAP file; with window=false "
                          "publish=NAME, what is published", nullptr, rw));
  g_object_class_install_property(oc, PROP_CUDA_DEVICE,
      g_param_spec_int("cuda-device", "CUDA device",
                       "The CUDA device whose context the sink offers upstream (memory:CUDAMemory)", 0, 1024, 0, rw));
  g_object_class_install_property(oc, PROP_STREAM,
      g_param_spec_string("stream", "Stream",
                          "A tile name: handoffsinks of one process with a stream and the same title share one "
                          "viewer, each stream in a tile of its own side by side (the first to start opens it with "
                          "its settings; the last to stop closes it); unset: a viewer of its own", nullptr, rw));
  g_object_class_install_property(oc, PROP_VIEWER_STATS,
      g_param_spec_boxed("viewer-stats", "Viewer statistics",
                         "The viewer's counts: submitted, shown, dropped (replaced before display), display-fps, "
                         "latency-p50-ms, latency-p99-ms (buffer handed in to displayed), copy-ms, recorded, "
                         "record-dropped, record-skipped (frames of another format or size than the recording's first); with publish=, published (and, with no viewer, the publisher's "
                         "recorded, record-dropped)",
                         GST_TYPE_STRUCTURE, GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));
}

}  // namespace
}  // namespace handoff::gst

using namespace handoff::gst;

static void handoff_sink_class_init(HandoffSinkClass* klass) {
  GObjectClass* oc = G_OBJECT_CLASS(klass);
  GstElementClass* ec = GST_ELEMENT_CLASS(klass);
  GstBaseSinkClass* bc = GST_BASE_SINK_CLASS(klass);
  GstVideoSinkClass* vc = GST_VIDEO_SINK_CLASS(klass);
  GST_DEBUG_CATEGORY_INIT(handoff_sink_debug, "handoffsink", 0, "handoff viewer sink");
  oc->set_property = sink_set_property;
  oc->get_property = sink_get_property;
  oc->finalize = sink_finalize;
  install_properties(oc);
  sink_signals[SIGNAL_SNAPSHOT] = g_signal_new_class_handler(
      "snapshot", G_TYPE_FROM_CLASS(klass), GSignalFlags(G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION),
      G_CALLBACK(sink_snapshot), nullptr, nullptr, nullptr, GST_TYPE_SAMPLE, 1, G_TYPE_BOOLEAN);
  gst_element_class_set_static_metadata(
      ec, "handoff viewer sink", "Sink/Video",
      "Shows NV12, P010, I420, YUY2, UYVY, RGB, BGR, RGBA, BGRA, RGBx, BGRx, GRAY8 and GRAY16_LE frames (system, CUDA or GL memory) with their regions of interest in a handoff viewer "
      "window or headless, and can publish them to handoff-view --attach viewers; action signal "
      "\"snapshot\" (gboolean view) returns what is drawn as an RGBA GstSample",
      "handoff");
  GstCaps* caps = gst_caps_from_string(template_caps_string().c_str());
  gst_element_class_add_pad_template(ec, gst_pad_template_new("sink", GST_PAD_SINK, GST_PAD_ALWAYS, caps));
  gst_caps_unref(caps);
  ec->change_state = sink_change_state;
  bc->preroll = sink_preroll;
  bc->propose_allocation = sink_propose_allocation;
  bc->query = sink_query;
  vc->set_info = sink_set_info;
  vc->show_frame = sink_show_frame;
}

static void handoff_sink_init(HandoffSink* self) { self->state = new SinkState(); }

namespace handoff::gst::testing {

std::shared_ptr<Viewer> sink_viewer(GstElement* sink) {
  if (!sink || !G_TYPE_CHECK_INSTANCE_TYPE(sink, handoff_sink_get_type())) return nullptr;
  SinkState& st = *HANDOFF_SINK(sink)->state;
  std::lock_guard<std::mutex> lock(st.lock);
  return st.out.viewer;
}

}  // namespace handoff::gst::testing
