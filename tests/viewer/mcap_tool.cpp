// handoff_mcap_tool: the recording core driven from the python tier's tests
// (tests/python/mcap), which check it against the reference MCAP packages.
//
//   handoff_mcap_tool write OUT.mcap (--y4m FILE | --scene WxH --frames N [--format nv12|p010])
//       [--overlays FILE.jsonl] [--topic /camera] [--compression none|zstd|lz4] [--chunk-size BYTES]
//       [--no-summary] [--start-ns N] [--step-ns N]
//   handoff_mcap_tool dump IN.mcap OUTDIR [--topic T] [--annotations-topic T]
//       writes OUTDIR/recording.json (stream info, per-frame log time and overlays)
//       and OUTDIR/frame_NNNNNN.yuv (packed luma rows, then packed chroma rows)
// Exit status 0 on success, 1 with the error on stderr otherwise.
#include <handoff/error.hpp>
#include <handoff/media/overlay.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/media/raw_reader.hpp>
#include <handoff/media/scene.hpp>
#include <handoff/media/y4m_reader.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace handoff;
using namespace handoff::media;

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;  // "--name" -> value ("" for flags)
  std::string get(const std::string& k, const std::string& d = {}) const {
    auto it = options.find(k);
    return it == options.end() ? d : it->second;
  }
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s.rfind("--", 0) != 0) {
      a.positional.push_back(s);
    } else if (s == "--no-summary") {
      a.options[s] = "";
    } else if (i + 1 < argc) {
      a.options[s] = argv[++i];
    } else {
      throw UsageError("option " + s + " needs a value");
    }
  }
  return a;
}

std::uint64_t to_u64(const std::string& s) {
  std::uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) throw UsageError("not a number: " + s);
  return v;
}

int write(const Args& a) {
  if (a.positional.size() != 2) throw UsageError("write OUT.mcap (--y4m FILE | --scene WxH --frames N)");
  std::unique_ptr<FrameSource> src;
  std::int64_t frames = 0;
  if (!a.get("--y4m").empty()) {
    src = open_y4m(a.get("--y4m"));
    frames = src->info().frame_count;
  } else {
    SceneOptions o;
    parse_size(a.get("--scene", "64x48"), o.width, o.height);
    o.format = from_string<PixelFormat>(a.get("--format", "nv12"));
    src = make_scene_source(o);
    frames = std::int64_t(to_u64(a.get("--frames", "3")));
  }
  const SourceInfo& info = src->info();
  OverlayStore store;
  if (!a.get("--overlays").empty()) {
    OverlayParseOptions po;
    po.frame_width = float(info.width);
    po.frame_height = float(info.height);
    store.load_jsonl(a.get("--overlays"), po);
  }
  RecordingOptions ro;
  ro.compression = mcap::parse_compression(a.get("--compression", "zstd"));
  ro.chunk_size = std::size_t(to_u64(a.get("--chunk-size", std::to_string(ro.chunk_size))));
  ro.summary = !a.options.count("--no-summary");
  ro.block_when_full = true;  // a file tool records every frame
  RecordingWriter rec(a.positional[1], ro);
  HostFrame host(info.format, info.width, info.height);
  OverlayFrame overlays;
  const std::string topic = a.get("--topic", "/camera");
  const std::uint64_t start = to_u64(a.get("--start-ns", "1000000000")), step = to_u64(a.get("--step-ns", "33333333"));
  for (std::int64_t i = 0; i < frames && src->read_into(host.target()); ++i) {
    if (const OverlayFrame* o = store.find(i)) overlays = *o;
    else src->overlays_for(i, overlays);
    rec.write(host.frame(info.colorimetry), overlays, topic, start + std::uint64_t(i) * step);
  }
  rec.close();
  const RecordingStats s = rec.stats();
  std::printf("wrote %llu frames, %llu bytes\n", (unsigned long long)s.frames_written, (unsigned long long)s.bytes_written);
  return 0;
}

// --- dump ---------------------------------------------------------------------------

// JSON is built by appending (GCC 12 warns falsely on `"literal" + std::string`).
void num(std::string& o, float v) {
  if (std::isnan(v)) {
    o += "null";
    return;
  }
  char b[32];
  o.append(b, std::to_chars(b, b + sizeof b, v).ptr);
}

void str(std::string& o, std::string_view s) {
  o += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += c;
    }
  }
  o += '"';
}

void color(std::string& o, bool has, Color8 c) {
  if (!has) {
    o += "null";
    return;
  }
  o += '[';
  o += std::to_string(c.r);
  o += ',';
  o += std::to_string(c.g);
  o += ',';
  o += std::to_string(c.b);
  o += ',';
  o += std::to_string(c.a);
  o += ']';
}

void point(std::string& o, bool comma, float x, float y) {
  o += comma ? ",[" : "[";
  num(o, x);
  o += ',';
  num(o, y);
  o += ']';
}

void shape_json(std::string& o, const OverlayFrame& f, const OverlayShape& s) {
  o += s.closed ? "{\"closed\":true,\"points\":[" : "{\"closed\":false,\"points\":[";
  for (std::uint32_t k = 0; k < s.point_count; ++k) point(o, k > 0, f.points[s.point_first + k].x, f.points[s.point_first + k].y);
  o += "]}";
}

void object_json(std::string& j, const OverlayFrame& f, const OverlayObject& o) {
  j += "{\"box\":";
  if (o.has_box) {
    point(j, false, o.x0, o.y0);
    j.pop_back();
    j += ',';
    num(j, o.x1);
    j += ',';
    num(j, o.y1);
    j += ']';
  } else {
    j += "null";
  }
  j += ",\"color\":";
  color(j, o.has_color, o.color);
  j += ",\"score\":";
  num(j, o.score);
  j += ",\"class_id\":";
  j += std::to_string(o.class_id);
  j += ",\"track_id\":";
  j += std::to_string(o.track_id);
  j += ",\"label\":";
  str(j, f.text(o.label));
  j += ",\"keypoints\":[";
  for (std::uint32_t k = 0; k < o.keypoint_count; ++k) {
    const Keypoint& p = f.keypoints[o.keypoint_first + k];
    point(j, k > 0, p.x, p.y);
    j.pop_back();
    j += ',';
    num(j, p.conf);
    j += ']';
  }
  j += "],\"skeleton\":[";
  for (std::uint32_t k = 0; k < o.edge_count; ++k) {
    const auto& e = f.edges[o.edge_first + k];
    j += k ? ",[" : "[";
    j += std::to_string(e[0]);
    j += ',';
    j += std::to_string(e[1]);
    j += ']';
  }
  j += "],\"shapes\":[";
  for (std::uint32_t k = 0; k < o.shape_count; ++k) {
    if (k) j += ',';
    shape_json(j, f, f.shapes[o.shape_first + k]);
  }
  j += "]}";
}

std::string overlays_json(const OverlayFrame& f) {
  std::string j = "{\"objects\":[";
  for (std::size_t i = 0; i < f.objects.size(); ++i) {
    if (i) j += ',';
    object_json(j, f, f.objects[i]);
  }
  j += "],\"shapes\":[";
  bool first = true;
  for (const OverlayShape& s : f.shapes) {
    if (s.object >= 0) continue;
    if (!first) j += ',';
    shape_json(j, f, s);
    first = false;
  }
  j += "],\"texts\":[";
  for (std::size_t i = 0; i < f.texts.size(); ++i) {
    const OverlayText& t = f.texts[i];
    j += i ? ",{\"text\":" : "{\"text\":";
    str(j, f.text(t.text));
    j += ",\"pos\":";
    point(j, false, t.x, t.y);
    j += ",\"color\":";
    color(j, t.has_color, t.color);
    j += '}';
  }
  return j + "]}";
}

int dump(const Args& a) {
  if (a.positional.size() != 3) throw UsageError("dump IN.mcap OUTDIR");
  RecordingOpenOptions o;
  o.topic = a.get("--topic");
  o.annotations_topic = a.get("--annotations-topic");
  auto src = open_recording(a.positional[1], o);
  const SourceInfo& info = src->info();
  const std::filesystem::path dir = a.positional[2];
  std::filesystem::create_directories(dir);
  HostFrame host(info.format, info.width, info.height);
  OverlayFrame overlays;
  auto quoted = [](std::string_view v) {
    std::string q;
    str(q, v);
    return q;
  };
  std::ostringstream j;
  j << "{\"format\":" << quoted(to_string(info.format)) << ",\"width\":" << info.width << ",\"height\":" << info.height
    << ",\"frame_count\":" << info.frame_count << ",\"topic\":" << quoted(src->topic())
    << ",\"annotations_topic\":" << quoted(src->annotations_topic()) << ",\"indexed\":" << (src->indexed() ? "true" : "false")
    << ",\"matrix\":" << quoted(to_string(info.colorimetry.matrix)) << ",\"range\":" << quoted(to_string(info.colorimetry.range))
    << ",\"siting\":" << quoted(to_string(info.colorimetry.siting)) << ",\"warnings\":" << src->warnings().size()
    << ",\"frames\":[";
  for (std::int64_t i = 0; src->read_into(host.target()); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "frame_%06lld.yuv", (long long)i);
    std::ofstream out(dir / name, std::ios::binary);
    const std::size_t bytes = packed_frame_bytes(info.format, info.width, info.height);
    out.write(reinterpret_cast<const char*>(host.luma()), std::streamsize(bytes));
    j << (i ? "," : "") << "{\"log_time\":" << src->log_time(i) << ",\"overlays\":"
      << (src->overlays_for(i, overlays) ? overlays_json(overlays) : "null") << "}";
  }
  // What played anyway (a compressed image that does not decode), after playing.
  j << "],\"played_warnings\":[";
  for (std::size_t k = 0; k < src->warnings().size(); ++k) j << (k ? "," : "") << quoted(src->warnings()[k]);
  j << "]}";
  std::ofstream(dir / "recording.json") << j.str();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse_args(argc, argv);
    if (!a.positional.empty() && a.positional[0] == "write") return write(a);
    if (!a.positional.empty() && a.positional[0] == "dump") return dump(a);
    std::fprintf(stderr, "usage: handoff_mcap_tool write|dump ... (see the source)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "handoff_mcap_tool: %s\n", e.what());
    return 1;
  }
}
