// handoffsink against glimagesink: `videotestsrc ! NV12 ! <sink> sync=false`
// in a window (Xvfb), 1080p and 4K, the same stream for both, the sinks
// interleaved round by round in one run. Prints a Markdown table for
// BENCHMARKS.md (bench/gst_bench.sh runs it under Xvfb).
//
//   bench_gst [--frames N] [--rounds R] [--sizes 1920x1080,3840x2160]
//
// Frame rate = frames drawn / seconds from PLAYING to EOS. glimagesink draws
// every buffer it renders (its render waits for the draw), so its count is
// GstBaseSink's "rendered". handoffsink never makes the pipeline wait: its
// drawn count is the viewer's own ("viewer-stats" shown; buffers replaced
// before they were drawn are counted as dropped), and its buffer rate (what
// the pipeline could push) is given too. handoffsink's window is the frame's
// size, as glimagesink's is; its panel is hidden in the like-for-like row.
#include <gst/gst.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <handoff/gst/elements.hpp>

namespace {

struct Result {
  double seconds = 0;
  guint64 buffers = 0, drawn = 0;
  bool ok = false;
};

guint64 structure_u64(GstStructure* s, const char* field) {
  guint64 v = 0;
  if (s) gst_structure_get_uint64(s, field, &v);
  return v;
}

// The element whose GstBaseSink stats count what was rendered: glimagesink is
// a bin around its "sink" element.
GstElement* rendering_sink(GstElement* sink) {
  if (GST_IS_BIN(sink) && g_object_class_find_property(G_OBJECT_GET_CLASS(sink), "sink")) {
    GstElement* inner = nullptr;
    g_object_get(sink, "sink", &inner, nullptr);
    if (inner) return inner;
  }
  return GST_ELEMENT(gst_object_ref(sink));
}

Result run(const std::string& sink_desc, int w, int h, int frames) {
  const std::string desc = "videotestsrc num-buffers=" + std::to_string(frames) +
                           " pattern=smpte ! video/x-raw,format=NV12,width=" + std::to_string(w) +
                           ",height=" + std::to_string(h) + ",framerate=30/1 ! " + sink_desc;
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(desc.c_str(), &err);
  Result r;
  if (!p) {
    std::fprintf(stderr, "bench_gst: %s: %s\n", desc.c_str(), err ? err->message : "?");
    if (err) g_error_free(err);
    return r;
  }
  GstElement* sink = gst_bin_get_by_name(GST_BIN(p), "sink");
  GstBus* bus = gst_element_get_bus(p);
  const auto t0 = std::chrono::steady_clock::now();
  gst_element_set_state(p, GST_STATE_PLAYING);
  GstMessage* m = gst_bus_timed_pop_filtered(bus, 600 * GST_SECOND, GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  const auto t1 = std::chrono::steady_clock::now();
  r.seconds = std::chrono::duration<double>(t1 - t0).count();
  r.ok = m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS;
  if (m && !r.ok) {
    GError* e = nullptr;
    gst_message_parse_error(m, &e, nullptr);
    std::fprintf(stderr, "bench_gst: %s: %s\n", sink_desc.c_str(), e ? e->message : "?");
    if (e) g_error_free(e);
  }
  if (m) gst_message_unref(m);
  GstElement* renderer = rendering_sink(sink);
  GstStructure* stats = nullptr;
  g_object_get(renderer, "stats", &stats, nullptr);
  r.buffers = structure_u64(stats, "rendered");
  r.drawn = r.buffers;
  if (stats) gst_structure_free(stats);
  if (g_object_class_find_property(G_OBJECT_GET_CLASS(sink), "viewer-stats")) {
    GstStructure* v = nullptr;
    g_object_get(sink, "viewer-stats", &v, nullptr);
    r.drawn = structure_u64(v, "shown");
    if (v) gst_structure_free(v);
  }
  gst_object_unref(renderer);
  gst_object_unref(sink);
  gst_object_unref(bus);
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(p);
  return r;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string join(const std::vector<double>& v) {
  std::string s;
  char b[32];
  for (double x : v) {
    std::snprintf(b, sizeof b, "%s%.1f", s.empty() ? "" : " ", x);
    s += b;
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  if (!handoff_gst_register_elements(nullptr)) {
    std::fprintf(stderr, "bench_gst: could not register handoff's elements\n");
    return 1;
  }
  int frames = 300, rounds = 3;
  std::vector<std::pair<int, int>> sizes{{1920, 1080}, {3840, 2160}};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--frames")) frames = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--sizes")) {
      sizes.clear();
      for (const char* p = argv[i + 1]; *p;) {
        int w = 0, h = 0, n = 0;
        if (std::sscanf(p, "%dx%d%n", &w, &h, &n) != 2) return 2;
        sizes.emplace_back(w, h);
        p += n;
        if (*p == ',') ++p;
      }
    } else {
      std::fprintf(stderr, "usage: bench_gst [--frames N] [--rounds R] [--sizes WxH,...]\n");
      return 2;
    }
  }
  struct Sink {
    const char* name;
    std::string desc;  // {W} {H}: the frame size
  };
  std::printf("| size | sink | drawn fps (median of %d) | runs | buffers / s (median) | ratio to glimagesink |\n", rounds);
  std::printf("|---|---|---|---|---|---|\n");
  for (auto [w, h] : sizes) {
    const std::string wh = "window-width=" + std::to_string(w) + " window-height=" + std::to_string(h);
    const std::vector<Sink> sinks{
        {"glimagesink", "glimagesink name=sink sync=false"},
        {"handoffsink, panel hidden", "handoffsink name=sink sync=false vsync=false show-ui=false " + wh},
        {"handoffsink, panel shown", "handoffsink name=sink sync=false vsync=false " + wh},
    };
    std::vector<std::vector<double>> drawn(sinks.size()), rate(sinks.size());
    for (int round = 0; round < rounds; ++round)
      for (std::size_t k = 0; k < sinks.size(); ++k) {
        const Result r = run(sinks[k].desc, w, h, frames);
        if (!r.ok) return 1;
        drawn[k].push_back(double(r.drawn) / r.seconds);
        rate[k].push_back(double(r.buffers) / r.seconds);
      }
    const double base = median(drawn[0]);
    for (std::size_t k = 0; k < sinks.size(); ++k)
      std::printf("| %dx%d | %s | %.1f | %s | %.1f | %.2f |\n", w, h, sinks[k].name, median(drawn[k]),
                  join(drawn[k]).c_str(), median(rate[k]), base > 0 ? median(drawn[k]) / base : 0.0);
    std::fflush(stdout);
  }
  return 0;
}
