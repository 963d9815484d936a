// handoffsrc: a live GstPushSrc over handoff::Subscriber.
//
// Frames a handoff::Publisher in another process shares become buffers in
// system memory, in the GStreamer format of the frames' own (NV12, P010_10LE,
// I420, YUY2, UYVY, RGB, BGR, RGBA, BGRA, GRAY8, GRAY16_LE; gray32f frames,
// which GStreamer has no format for, are an error on the bus): host slots are wrapped without a copy
// (read-only, with a GstVideoMeta for their pitches) where downstream takes
// video metas, else copied into a buffer of GStreamer's default layout; CUDA
// slots are copied device to host. The caps follow the frames (size, format
// and colorimetry may change mid-stream); overlays become regions of interest.
//
// Timestamps: PTS is the running time at which the frame arrived (a live
// source); the publisher's own timestamp travels in a GstReferenceTimestampMeta
// (caps "timestamp/x-handoff-publisher"), its frame index as the buffer offset.
#include <handoff/gst/elements.hpp>

#include <gst/base/gstpushsrc.h>
#include <gst/video/video.h>

#include <atomic>
#include <cmath>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <handoff/frame_copy.hpp>
#include <handoff/subscriber.hpp>

#include "roi_meta.hpp"
#include "video_caps.hpp"

GST_DEBUG_CATEGORY_STATIC(handoff_src_debug);
#define GST_CAT_DEFAULT handoff_src_debug

namespace handoff::gst {
namespace {

struct SrcSettings {
  std::string attach;
  int allow_group = -1;
  bool wait = true;
};

struct StreamShape {
  PixelFormat format;
  std::uint32_t width, height;
  Colorimetry colorimetry;
  bool operator==(const StreamShape&) const = default;
};

struct SrcState {
  std::mutex lock;  // settings, subscriber
  SrcSettings settings;
  std::shared_ptr<Subscriber> subscriber;  // READY -> PAUSED .. PAUSED -> READY
  std::atomic<bool> flushing{false};
  // Streaming thread only:
  std::optional<StreamShape> shape;
  GstVideoInfo info{};
  bool video_meta = false;  // downstream takes GstVideoMeta (decide_allocation)
  // Wrapped buffers downstream still holds (each holds a slot), counted down
  // as they are freed, on any thread; shared with them, as they may outlive the element.
  std::shared_ptr<std::atomic<int>> wrapped = std::make_shared<std::atomic<int>>(0);
};

}  // namespace
}  // namespace handoff::gst

using handoff::gst::SrcState;

struct HandoffSrc {
  GstPushSrc parent;
  SrcState* state;
};
struct HandoffSrcClass {
  GstPushSrcClass parent_class;
};

G_DEFINE_TYPE(HandoffSrc, handoff_src, GST_TYPE_PUSH_SRC)

#define HANDOFF_SRC(o) (reinterpret_cast<HandoffSrc*>(o))

namespace handoff::gst {
namespace {

enum SrcProperty { PROP_0, PROP_ATTACH, PROP_ALLOW_GROUP, PROP_WAIT };

// The formats handoffsrc makes: one GStreamer name per PixelFormat (gray32f
// has none; RGBx / BGRx are only taken, by handoffsink).
std::string src_formats() {
  std::string formats;
  for (PixelFormat f : kPixelFormats)
    if (const char* name = gst_format_name(f)) formats += (formats.empty() ? "" : ", ") + std::string(name);
  return formats;
}

std::string template_caps_string() {
  return "video/x-raw, format = (string) { " + src_formats() +
         " }, width = (int) [ 1, 32768 ], height = (int) [ 1, 32768 ], framerate = (fraction) [ 0/1, MAX ]";
}

GstCaps* reference_caps() {
  static GstCaps* caps = gst_caps_new_empty_simple("timestamp/x-handoff-publisher");  // lives for the process
  return caps;
}

void src_set_property(GObject* obj, guint id, const GValue* v, GParamSpec* pspec) {
  SrcState& st = *HANDOFF_SRC(obj)->state;
  std::lock_guard<std::mutex> lock(st.lock);
  switch (id) {
    case PROP_ATTACH: {
      const char* s = g_value_get_string(v);
      st.settings.attach = s ? s : "";
      break;
    }
    case PROP_ALLOW_GROUP: st.settings.allow_group = g_value_get_int(v); break;
    case PROP_WAIT: st.settings.wait = g_value_get_boolean(v); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(obj, id, pspec);
  }
}

void src_get_property(GObject* obj, guint id, GValue* v, GParamSpec* pspec) {
  SrcState& st = *HANDOFF_SRC(obj)->state;
  std::lock_guard<std::mutex> lock(st.lock);
  switch (id) {
    case PROP_ATTACH: g_value_set_string(v, st.settings.attach.empty() ? nullptr : st.settings.attach.c_str()); break;
    case PROP_ALLOW_GROUP: g_value_set_int(v, st.settings.allow_group); break;
    case PROP_WAIT: g_value_set_boolean(v, st.settings.wait); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(obj, id, pspec);
  }
}

gboolean src_start(GstBaseSrc* bs) {
  SrcState& st = *HANDOFF_SRC(bs)->state;
  std::lock_guard<std::mutex> lock(st.lock);
  if (st.settings.attach.empty()) {
    GST_ELEMENT_ERROR(bs, RESOURCE, NOT_FOUND, ("handoffsrc needs attach=NAME (a publisher's name or socket path)"),
                      (nullptr));
    return FALSE;
  }
  SubscriberOptions o;
  o.wait = st.settings.wait;
  o.reconnect = true;
  o.accepts = std::uint8_t(live::memory_bit(live::SlotMemory::Host) | live::memory_bit(live::SlotMemory::Cuda));
  if (st.settings.allow_group >= 0) o.allow_group = unsigned(st.settings.allow_group);
  o.client = "handoffsrc";
  try {
    st.subscriber = std::make_shared<Subscriber>(st.settings.attach, o);
  } catch (const std::exception& e) {
    GST_ELEMENT_ERROR(bs, RESOURCE, OPEN_READ, ("handoffsrc cannot attach to '%s': %s", st.settings.attach.c_str(),
                                                e.what()), (nullptr));
    return FALSE;
  }
  st.shape.reset();
  return TRUE;
}

gboolean src_stop(GstBaseSrc* bs) {
  SrcState& st = *HANDOFF_SRC(bs)->state;
  std::shared_ptr<Subscriber> gone;
  {
    std::lock_guard<std::mutex> lock(st.lock);
    gone = std::move(st.subscriber);
  }
  return TRUE;  // the subscriber closes its connection as it goes
}

gboolean src_unlock(GstBaseSrc* bs) {
  HANDOFF_SRC(bs)->state->flushing = true;
  return TRUE;
}

gboolean src_unlock_stop(GstBaseSrc* bs) {
  HANDOFF_SRC(bs)->state->flushing = false;
  return TRUE;
}

// Caps are set from the frames themselves (create): until the first frame
// there is nothing to negotiate.
gboolean src_negotiate(GstBaseSrc* bs) {
  SrcState& st = *HANDOFF_SRC(bs)->state;
  if (!st.shape) return TRUE;
  GstCaps* caps = gst_video_info_to_caps(&st.info);
  const gboolean ok = gst_base_src_set_caps(bs, caps);
  gst_caps_unref(caps);
  return ok;
}

gboolean src_decide_allocation(GstBaseSrc* bs, GstQuery* query) {
  SrcState& st = *HANDOFF_SRC(bs)->state;
  st.video_meta = gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
  return GST_BASE_SRC_CLASS(handoff_src_parent_class)->decide_allocation(bs, query);
}

// --- frames into buffers -------------------------------------------------------------------

struct HeldFrame {
  HeldFrame(LiveFrame f, std::shared_ptr<std::atomic<int>> count) : frame(std::move(f)), wrapped(std::move(count)) {
    ++*wrapped;
  }
  ~HeldFrame() { --*wrapped; }
  HeldFrame(const HeldFrame&) = delete;
  HeldFrame& operator=(const HeldFrame&) = delete;
  LiveFrame frame;  // keeps the slot until the buffer's memory goes
  std::shared_ptr<std::atomic<int>> wrapped;
};

void release_held(gpointer p) { delete static_cast<HeldFrame*>(p); }

// Host planes in one mapping, each after the first: one read-only memory over
// all of them, no copy. Null where they are not laid out so.
GstBuffer* wrap_host(const LiveFrame& f, const std::shared_ptr<std::atomic<int>>& wrapped) {
  const int planes = plane_count(f.frame.format);
  auto* base = static_cast<std::uint8_t*>(f.frame.planes[0].data);
  if (!base) return nullptr;
  gsize offsets[GST_VIDEO_MAX_PLANES] = {};
  gint strides[GST_VIDEO_MAX_PLANES] = {};
  std::size_t size = 0;
  for (int p = 0; p < planes; ++p) {
    const Plane& pl = f.frame.planes[std::size_t(p)];
    auto* data = static_cast<std::uint8_t*>(pl.data);
    if (!data || data < base) return nullptr;
    const PlaneLayout l = plane_layout(f.frame.format, f.frame.width, f.frame.height, p);
    offsets[p] = gsize(data - base);
    strides[p] = gint(pl.pitch);
    size = std::max(size, std::size_t(data - base) + pl.pitch * (l.height - 1) + l.row_bytes);
  }
  GstBuffer* buf = gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY, base, size, 0, size, new HeldFrame(f, wrapped),
                                               release_held);
  const char* name = gst_format_name(f.frame.format);
  const GstVideoFormat fmt = name ? gst_video_format_from_string(name) : GST_VIDEO_FORMAT_UNKNOWN;
  gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE, fmt, f.frame.width, f.frame.height, guint(planes),
                                 offsets, strides);
  return buf;
}

// A new buffer of `info`'s layout with `f`'s planes (host or CUDA memory) copied in.
GstBuffer* copy_into_new_buffer(const Frame& f, const GstVideoInfo& info) {
  GstBuffer* buf = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
  GstVideoFrame vf;
  if (!gst_video_frame_map(&vf, &info, buf, GST_MAP_WRITE)) {
    gst_buffer_unref(buf);
    throw Error("handoffsrc: could not map a new buffer for writing");
  }
  try {
    Frame into = f;
    into.memory = MemoryKind::Host;
    into.device = -1;
    into.cuda_context = nullptr;
    for (int p = 0; p < plane_count(f.format); ++p) {
      into.planes[std::size_t(p)].data = GST_VIDEO_FRAME_PLANE_DATA(&vf, p);
      into.planes[std::size_t(p)].pitch = std::size_t(GST_VIDEO_FRAME_PLANE_STRIDE(&vf, p));
    }
    handoff::copy_frame(f, into);
  } catch (...) {
    gst_video_frame_unmap(&vf);
    gst_buffer_unref(buf);
    throw;
  }
  gst_video_frame_unmap(&vf);
  return buf;
}

// New caps when the frames change shape. False when negotiation failed.
bool follow_shape(GstBaseSrc* bs, SrcState& st, const Frame& f) {
  const StreamShape shape{f.format, f.width, f.height, f.colorimetry};
  if (st.shape && *st.shape == shape) return true;
  GstCaps* caps = caps_for(f.format, f.width, f.height, f.colorimetry);
  if (!caps) {
    GST_ELEMENT_ERROR(bs, STREAM, FORMAT,
                      ("handoffsrc: %s %ux%u frames have no GStreamer video format (it makes %s)",
                       std::string(to_string(f.format)).c_str(), f.width, f.height, src_formats().c_str()),
                      (nullptr));
    return false;
  }
  gst_video_info_from_caps(&st.info, caps);
  st.shape = shape;
  // Asked first: a caps event downstream refuses is found out only when the
  // buffer is pushed, and basesrc's message then says only "not-negotiated".
  if (gst_pad_peer_query_accept_caps(GST_BASE_SRC_PAD(bs), caps) && gst_base_src_negotiate(bs)) {
    gst_caps_unref(caps);
    return true;
  }
  gchar* text = gst_caps_to_string(caps);
  GST_ELEMENT_ERROR(bs, CORE, NEGOTIATION,
                    ("handoffsrc: downstream refused the publisher's %s %ux%u frames (%s); put a videoconvert after "
                     "handoffsrc, or let the caps after it allow this format",
                     std::string(to_string(f.format)).c_str(), f.width, f.height, text),
                    (nullptr));
  g_free(text);
  gst_caps_unref(caps);
  st.shape.reset();  // ask again with the next frame's shape
  return false;
}

void stamp(GstBaseSrc* bs, GstBuffer* buf, const LiveFrame& f) {
  GstClock* clock = gst_element_get_clock(GST_ELEMENT(bs));
  if (clock) {
    const GstClockTime now = gst_clock_get_time(clock), base = gst_element_get_base_time(GST_ELEMENT(bs));
    GST_BUFFER_PTS(buf) = now > base ? now - base : 0;
    gst_object_unref(clock);
  }
  GST_BUFFER_OFFSET(buf) = f.frame.index >= 0 ? guint64(f.frame.index) : GST_BUFFER_OFFSET_NONE;
  // A peer's number: only a finite, non-negative time within GstClockTime's range becomes a meta.
  if (std::isfinite(f.frame.timestamp) && f.frame.timestamp >= 0 && f.frame.timestamp < 1e10)
    gst_buffer_add_reference_timestamp_meta(buf, reference_caps(), GstClockTime(f.frame.timestamp * GST_SECOND),
                                            GST_CLOCK_TIME_NONE);
  if (f.overlays) add_roi_metas(buf, *f.overlays);
}

// Waits for the next frame: FLUSHING when unlocked, an error when the
// subscriber failed for good, EOS when its publisher stopped for good.
GstFlowReturn next_frame(GstBaseSrc* bs, SrcState& st, LiveFrame& out) {
  std::shared_ptr<Subscriber> sub;
  {
    std::lock_guard<std::mutex> lock(st.lock);
    sub = st.subscriber;
  }
  if (!sub) return GST_FLOW_FLUSHING;
  while (!st.flushing) {
    out = sub->next(std::chrono::milliseconds(20));
    if (out) return GST_FLOW_OK;
    const SubscriberStatus s = sub->status();
    if (s.state == LinkState::Failed) {
      GST_ELEMENT_ERROR(bs, RESOURCE, READ, ("handoffsrc: %s", s.message.c_str()), (nullptr));
      return GST_FLOW_ERROR;
    }
    if (s.state == LinkState::Stopped) return GST_FLOW_EOS;
  }
  return GST_FLOW_FLUSHING;
}

// The frames the subscriber may hold at once (1 when unknown).
std::uint16_t sub_max_held(SrcState& st) {
  std::shared_ptr<Subscriber> sub;
  {
    std::lock_guard<std::mutex> lock(st.lock);
    sub = st.subscriber;
  }
  const std::uint16_t n = sub ? sub->status().max_held : 0;
  return n ? n : 1;
}

GstFlowReturn src_create(GstPushSrc* ps, GstBuffer** out) {
  GstBaseSrc* bs = GST_BASE_SRC(ps);
  SrcState& st = *HANDOFF_SRC(ps)->state;
  LiveFrame f;
  if (const GstFlowReturn r = next_frame(bs, st, f); r != GST_FLOW_OK) return r;
  if (!follow_shape(bs, st, f.frame)) return GST_FLOW_NOT_NEGOTIATED;
  GstBuffer* buf = nullptr;
  try {
    // Wrapped only while the slots held stay below what the publisher allows:
    // an element that keeps buffers (an encoder's lookahead, an aggregator)
    // would otherwise hold them all, the publisher would skip every frame for
    // this source, and the pipeline would wait for ever. Past that, copies.
    const int allowed = int(sub_max_held(st)) - 1;  // the frame in hand counts too
    if (f.frame.memory == MemoryKind::Host && st.video_meta && st.wrapped->load() < allowed)
      buf = wrap_host(f, st.wrapped);
    if (!buf) buf = copy_into_new_buffer(f.frame, st.info);
  } catch (const std::exception& e) {
    GST_ELEMENT_ERROR(bs, RESOURCE, READ, ("%s", e.what()), (nullptr));
    return GST_FLOW_ERROR;
  }
  stamp(bs, buf, f);
  *out = buf;
  return GST_FLOW_OK;
}

void src_finalize(GObject* obj) {
  delete HANDOFF_SRC(obj)->state;
  G_OBJECT_CLASS(handoff_src_parent_class)->finalize(obj);
}

}  // namespace
}  // namespace handoff::gst

using namespace handoff::gst;

static void handoff_src_class_init(HandoffSrcClass* klass) {
  GObjectClass* oc = G_OBJECT_CLASS(klass);
  GstElementClass* ec = GST_ELEMENT_CLASS(klass);
  GstBaseSrcClass* bc = GST_BASE_SRC_CLASS(klass);
  GstPushSrcClass* pc = GST_PUSH_SRC_CLASS(klass);
  GST_DEBUG_CATEGORY_INIT(handoff_src_debug, "handoffsrc", 0, "handoff live source");
  oc->set_property = src_set_property;
  oc->get_property = src_get_property;
  oc->finalize = src_finalize;
  const auto rw = GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
  g_object_class_install_property(oc, PROP_ATTACH,
      g_param_spec_string("attach", "Attach",
                          "The handoff::Publisher to take frames from: a name in $XDG_RUNTIME_DIR/handoff, or a "
                          "socket path", nullptr, rw));
  g_object_class_install_property(oc, PROP_ALLOW_GROUP,
      g_param_spec_int("allow-group", "Allow group",
                       "Also trust publishers running with this group id (-1: only the same user)", -1, G_MAXINT, -1, rw));
  g_object_class_install_property(oc, PROP_WAIT,
      g_param_spec_boolean("wait", "Wait",
                           "Wait for a publisher that is not there yet (false: an error at once); once attached, "
                           "a publisher that goes is waited for again", TRUE, rw));
  gst_element_class_set_static_metadata(
      ec, "handoff live source", "Source/Video",
      "Frames a handoff::Publisher in another process shares (handoff-view --attach's feed), as NV12, P010_10LE, I420, "
      "YUY2, UYVY, RGB, BGR, RGBA, BGRA, GRAY8 or GRAY16_LE buffers (the frames' own format) in system memory with their overlays as regions of interest",
      "handoff");
  GstCaps* caps = gst_caps_from_string(template_caps_string().c_str());
  gst_element_class_add_pad_template(ec, gst_pad_template_new("src", GST_PAD_SRC, GST_PAD_ALWAYS, caps));
  gst_caps_unref(caps);
  bc->start = src_start;
  bc->stop = src_stop;
  bc->unlock = src_unlock;
  bc->unlock_stop = src_unlock_stop;
  bc->negotiate = src_negotiate;
  bc->decide_allocation = src_decide_allocation;
  pc->create = src_create;
}

static void handoff_src_init(HandoffSrc* self) {
  self->state = new SrcState();
  gst_base_src_set_live(GST_BASE_SRC(self), TRUE);
  gst_base_src_set_format(GST_BASE_SRC(self), GST_FORMAT_TIME);
}
