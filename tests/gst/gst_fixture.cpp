#include "gst_fixture.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <handoff/log.hpp>

namespace handoff::gst::test {

Pipeline::Pipeline(const std::string& description) {
  GError* err = nullptr;
  pipeline_ = gst_parse_launch(description.c_str(), &err);
  if (err) {
    ADD_FAILURE() << "gst_parse_launch(" << description << "): " << err->message;
    g_error_free(err);
  }
  if (pipeline_) gst_object_ref_sink(pipeline_);
}

Pipeline::~Pipeline() {
  if (!pipeline_) return;
  gst_element_set_state(pipeline_, GST_STATE_NULL);
  // Messages left on the bus hold their sources (the pipeline among them):
  // flushed, or the pipeline and its bus keep each other alive.
  GstBus* bus = gst_element_get_bus(pipeline_);
  gst_bus_set_flushing(bus, TRUE);
  gst_object_unref(bus);
  gst_object_unref(pipeline_);
}

ElementPtr Pipeline::element(const std::string& name) const {
  GstElement* e = pipeline_ && GST_IS_BIN(pipeline_) ? gst_bin_get_by_name(GST_BIN(pipeline_), name.c_str()) : nullptr;
  if (!e) ADD_FAILURE() << "no element named " << name << " in the pipeline";
  return ElementPtr(e);
}

GstStateChangeReturn Pipeline::set_state(GstState state, std::chrono::seconds limit) {
  if (!pipeline_) return GST_STATE_CHANGE_FAILURE;
  const GstStateChangeReturn r = gst_element_set_state(pipeline_, state);
  if (r == GST_STATE_CHANGE_FAILURE || r == GST_STATE_CHANGE_NO_PREROLL) {
    drain();
    return r;
  }
  GstState now = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING;
  const GstStateChangeReturn got =
      gst_element_get_state(pipeline_, &now, &pending, GstClockTime(std::chrono::nanoseconds(limit).count()));
  drain();
  return got;
}

GstStateChangeReturn Pipeline::start() {
  if (!pipeline_) return GST_STATE_CHANGE_FAILURE;
  const GstStateChangeReturn r = gst_element_set_state(pipeline_, GST_STATE_PLAYING);
  drain();
  return r;
}

BusMessage Pipeline::keep(GstMessage* m) {
  BusMessage b;
  b.type = GST_MESSAGE_TYPE(m);
  b.source = GST_MESSAGE_SRC(m) ? GST_OBJECT_NAME(GST_MESSAGE_SRC(m)) : "";
  GError* err = nullptr;
  gchar* dbg = nullptr;
  if (b.type == GST_MESSAGE_ERROR) gst_message_parse_error(m, &err, &dbg);
  if (b.type == GST_MESSAGE_WARNING) gst_message_parse_warning(m, &err, &dbg);
  if (b.type == GST_MESSAGE_INFO) gst_message_parse_info(m, &err, &dbg);
  if (err) {
    b.text = err->message;
    g_error_free(err);
  }
  if (dbg) {
    b.debug = dbg;
    g_free(dbg);
  }
  seen_.push_back(b);
  return b;
}

BusMessage Pipeline::wait_for(GstMessageType types, std::chrono::seconds limit) {
  // Messages already taken off the bus (by set_state or drain) count first.
  for (; waited_ < seen_.size(); ++waited_)
    if ((seen_[waited_].type & types) != 0) return seen_[waited_++];
  GstBus* bus = gst_element_get_bus(pipeline_);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  BusMessage found;
  while (std::chrono::steady_clock::now() < deadline) {
    GstMessage* m = gst_bus_timed_pop(bus, 50 * GST_MSECOND);
    if (!m) continue;
    const BusMessage b = keep(m);
    waited_ = seen_.size();
    const bool done = (GST_MESSAGE_TYPE(m) & types) != 0;
    gst_message_unref(m);
    if (done) {
      found = b;
      break;
    }
  }
  gst_object_unref(bus);
  if (found.type == GST_MESSAGE_UNKNOWN) ADD_FAILURE() << "the pipeline posted none of the awaited messages in time";
  return found;
}

void Pipeline::drain() {
  if (!pipeline_) return;
  GstBus* bus = gst_element_get_bus(pipeline_);
  while (GstMessage* m = gst_bus_pop(bus)) {
    keep(m);
    gst_message_unref(m);
  }
  gst_object_unref(bus);
}

const BusMessage* Pipeline::find(GstMessageType type, const std::string& needle) const {
  for (const BusMessage& m : seen_)
    if (m.type == type && (m.text.find(needle) != std::string::npos || m.debug.find(needle) != std::string::npos))
      return &m;
  return nullptr;
}

void GstTest::SetUpTestSuite() {
  static const bool once = [] {
    gst_init(nullptr, nullptr);
    return handoff_gst_register_elements(nullptr) != FALSE;
  }();
  ASSERT_TRUE(once) << "handoffsink / handoffsrc could not be registered";
}

void GstTest::SetUp() {
  char tmpl[] = "/tmp/handoff-gst-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  runtime_ = tmpl;
  ASSERT_EQ(::chmod(tmpl, 0700), 0);
  had_ = std::getenv("XDG_RUNTIME_DIR") != nullptr;
  if (had_) saved_ = std::getenv("XDG_RUNTIME_DIR");
  ::setenv("XDG_RUNTIME_DIR", tmpl, 1);
  set_log_level(LogLevel::Error);
}

void GstTest::TearDown() {
  if (had_) ::setenv("XDG_RUNTIME_DIR", saved_.c_str(), 1);
  else ::unsetenv("XDG_RUNTIME_DIR");
  std::error_code ec;
  std::filesystem::remove_all(runtime_, ec);
  set_log_level(LogLevel::Warning);
}

std::string GstTest::publisher_name() const {
  return std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()).substr(0, 40);
}

std::shared_ptr<Viewer> viewer_of(const Pipeline& p, const std::string& name) {
  ElementPtr sink = p.element(name);
  auto v = testing::sink_viewer(sink.get());
  if (!v) ADD_FAILURE() << name << " has no viewer";
  return v;
}

Rgba snapshot(GstElement* sink, bool view) {
  GstSample* sample = nullptr;
  g_signal_emit_by_name(sink, "snapshot", gboolean(view), &sample);
  Rgba out;
  if (!sample) return out;
  GstCaps* caps = gst_sample_get_caps(sample);
  const GstStructure* s = gst_caps_get_structure(caps, 0);
  int w = 0, h = 0;
  gst_structure_get_int(s, "width", &w);
  gst_structure_get_int(s, "height", &h);
  out.width = std::uint32_t(w);
  out.height = std::uint32_t(h);
  GstMapInfo map;
  if (gst_buffer_map(gst_sample_get_buffer(sample), &map, GST_MAP_READ)) {
    out.pixels.assign(map.data, map.data + map.size);
    gst_buffer_unmap(gst_sample_get_buffer(sample), &map);
  }
  gst_sample_unref(sample);
  return out;
}

GstTracer* leaks_tracer() {
  GstTracer* found = nullptr;
  GList* all = gst_tracing_get_active_tracers();
  for (GList* l = all; l; l = l->next)
    if (!found && std::string(G_OBJECT_TYPE_NAME(l->data)) == "GstLeaksTracer") found = GST_TRACER(gst_object_ref(l->data));
  g_list_free_full(all, gst_object_unref);
  return found;  // the tracing framework keeps it alive for the process; this ref is the caller's
}

void start_leak_tracking(GstTracer* tracer) { g_signal_emit_by_name(tracer, "activity-start-tracking"); }

namespace {

void count_types(const GValue* list, int sign, std::map<std::string, int>& out) {
  for (guint i = 0; list && i < gst_value_list_get_size(list); ++i) {
    const GstStructure* o = gst_value_get_structure(gst_value_list_get_value(list, i));
    if (const char* type = gst_structure_get_string(o, "type-name")) out[type] += sign;
  }
}

}  // namespace

std::map<std::string, int> net_objects_since_start(GstTracer* tracer) {
  GstStructure* checkpoint = nullptr;
  g_signal_emit_by_name(tracer, "activity-get-checkpoint", &checkpoint);
  std::map<std::string, int> net;
  if (!checkpoint) return net;
  count_types(gst_structure_get_value(checkpoint, "objects-created-list"), +1, net);
  count_types(gst_structure_get_value(checkpoint, "objects-removed-list"), -1, net);
  gst_structure_free(checkpoint);
  // Stopped, so that the next start starts afresh (GStreamer 1.22's tracer
  // returns from a second start with its lock still held).
  g_signal_emit_by_name(tracer, "activity-stop-tracking");
  for (auto it = net.begin(); it != net.end();) it = it->second == 0 ? net.erase(it) : std::next(it);
  return net;
}

}  // namespace handoff::gst::test
