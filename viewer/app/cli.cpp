#include "cli.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include <handoff/error.hpp>
#include <handoff/frame.hpp>
#include <handoff/live/endpoint.hpp>
#include <handoff/media/raw_reader.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/media/y4m_reader.hpp>

namespace handoff::app {
namespace {

std::string lower(std::string t) {
  for (char& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return t;
}

int usage_error(const std::string& text) {
  std::fprintf(stderr, "handoff-view: %s\n", text.c_str());
  return 2;
}

// A recording: MCAP, a ROS 2 bag's SQLite3 file, or a rosbag2 folder.
bool is_mcap(const std::string& path) { return media::is_recording_path(path); }

// A decimal number of digits only (no sign, no spaces) that fits an int, or nothing.
std::optional<int> parse_count(std::string_view text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || text[0] == '-' || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// "WxH" within lo..hi, or nothing.
std::optional<std::pair<int, int>> parse_wxh(const std::string& text, int lo, int hi) {
  const auto x = text.find('x');
  if (x == std::string::npos) return std::nullopt;
  const auto w = parse_count(std::string_view(text).substr(0, x)), h = parse_count(std::string_view(text).substr(x + 1));
  if (!w || !h || *w < lo || *h < lo || *w > hi || *h > hi) return std::nullopt;
  return std::make_pair(*w, *h);
}

// "LO,HI", two finite numbers with LO < HI, or nothing.
std::optional<ValueRange> parse_value_range(const std::string& text) {
  const auto comma = text.find(',');
  if (comma == std::string::npos) return std::nullopt;
  const std::string lo = text.substr(0, comma), hi = text.substr(comma + 1);
  char* end = nullptr;
  ValueRange r;
  r.lo = std::strtod(lo.c_str(), &end);
  if (lo.empty() || *end) return std::nullopt;
  r.hi = std::strtod(hi.c_str(), &end);
  if (hi.empty() || *end) return std::nullopt;
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi) || !(r.lo < r.hi)) return std::nullopt;
  return r;
}

// An option naming an enum value (frame.hpp's from_string): sets `out` when
// given, or returns the usage error naming the option, the text and the spellings.
template <typename E>
std::optional<int> parse_name(const char* option, const std::string& text, std::optional<E>& out) {
  if (text.empty()) return std::nullopt;
  try {
    out = from_string<E>(text);
  } catch (const UsageError& e) {
    return usage_error(std::string(option) + ": " + e.what());
  }
  return std::nullopt;
}

// CLI11's NonNegativeNumber / Range would name DBL_MAX as the upper bound.
std::string at_least_one(const std::string& v) {
  const auto n = parse_count(v);
  return n && *n >= 1 ? "" : "'" + v + "' is not a whole number of frames, 1 or more";
}

struct Raw {  // option values before they are checked against each other
  std::string source = "scene", size, format, matrix, range, window = "1280x800", record_compression, record_codec, convert = "auto", value_range;
  bool headless = false, no_vsync = false, loop = false, no_loop = false, hide_ui = false, hide_overlays = false;
};

void add_options(CLI::App& cli, CommandLine& o, Raw& r) {
  Viewer::PlayOptions& p = o.play;
  cli.add_option("file", p.file,
                 "Y4M file, MCAP recording (.mcap), ROS 2 bag (its folder, .mcap or .db3), or a raw file of any "
                 "--format with --size (default: the built-in scene)");
  cli.add_option("--source", r.source,
                 "scene (default: the built-in scene, CPU/CUDA -> GL buffers) | vulkan (a Vulkan compute shader "
                 "writes the scene into memory GL imports: no upload, no copy); a FILE implies file")
      ->check(CLI::IsMember({"scene", "vulkan", "file"}, CLI::ignore_case));
  cli.add_option("--overlays", p.overlays, "JSON Lines overlay file (one line per frame)");
  cli.add_option("--size", r.size, "WxH of a raw file (or of the scene)");
  cli.add_option("--format", r.format, "pixel format of a raw file: " + spellings<PixelFormat>(" | ") +
                                           "; of the scene: nv12 | p010");
  cli.add_option("--matrix", r.matrix, "override the colour matrix: " + spellings<ColorMatrix>(" | "));
  cli.add_option("--range", r.range, "override the range: " + spellings<ColorRange>(" | "));
  cli.add_flag("--headless", r.headless, "render through EGL with no window (chosen anyway when there is no display)");
  cli.add_option("--frames", p.frames, "stop after N frames (N >= 1)")
      ->check(CLI::Validator([](std::string& v) { return at_least_one(v); }, "N >= 1"));
  cli.add_option("--output", o.viewer.output_dir,
                 "write each frame as rendered (frame size, overlays, no UI) as PNG into DIR");
  cli.add_option("--screenshot", o.viewer.screenshot, "write the window (UI included) as PNG at the end");
  cli.add_flag("--no-vsync", r.no_vsync, "play as fast as possible");
  cli.add_option("--convert", r.convert,
                 "where NV12/P010 becomes RGB: auto (default: cpu on a software rasteriser such as llvmpipe, else gpu) "
                 "| gpu (the fragment shader) | cpu (at the size shown, copied into the framebuffer)")
      ->check(CLI::IsMember({"auto", "gpu", "cpu"}, CLI::ignore_case));
  cli.add_option("--value-range", r.value_range,
                 "LO,HI: gray16 / gray32f frames shown from LO (black) to HI (white), in the frame's values "
                 "(gray16: codes 0..65535). Default: gray16 over 0..65535, gray32f over a range picked from "
                 "the data (1st..99th percentile, smoothed from frame to frame)");
  cli.add_flag("--loop", r.loop, "loop files (default in a window)");
  cli.add_flag("--no-loop", r.no_loop, "play files once (default headless)");
  cli.add_option("--speed", p.speed, "playback speed factor")->check(CLI::Range(Viewer::kMinSpeed, Viewer::kMaxSpeed));
  cli.add_option("--window", r.window, "window size WxH (headless: the view each frame is drawn into, and the screenshot)");
  cli.add_flag("--hide-ui", r.hide_ui, "start with the panel hidden");
  cli.add_flag("--hide-overlays", r.hide_overlays, "start with overlays hidden");
  cli.add_option("--bench-boxes", p.bench_boxes, "draw N synthetic boxes on every frame (benchmarks; N <= 1000000)")
      ->check(CLI::Range(0u, Viewer::kMaxBenchBoxes));
  cli.add_option("--record", o.viewer.record.path,
                 "record what is shown (frames and overlays) into this MCAP file (docs/recording.md)");
  cli.add_option("--record-compression", r.record_compression, "chunk compression of --record: zstd (default) | lz4 | none")
      ->check(CLI::IsMember({"zstd", "lz4", "none"}, CLI::ignore_case));
  cli.add_option("--record-codec", r.record_codec,
                 "frames of --record as: raw (default, foxglove.RawImage) | h264 | h265 (foxglove.CompressedVideo, "
                 "libx264 / libx265 on the CPU)")
      ->check(CLI::IsMember({"raw", "h264", "h265"}, CLI::ignore_case));
  cli.add_option("--topic", p.topics,
                 "a recording's image topic to play (default: the first); repeated: the topics side by side in a "
                 "grid on one timeline")
      ->allow_extra_args(false);
  cli.add_flag("--all-images", p.all_images, "a recording's every image topic side by side in a grid on one timeline");
  cli.add_option("--overlay-topic", p.overlay_topics,
                 "a ROS 2 bag's Detection2DArray / ImageAnnotations topic to draw (repeatable; default: those in "
                 "the image topic's namespace)")
      ->allow_extra_args(false);
  cli.add_flag("--fast", p.fast, "play a file or recording as fast as possible (not at its rate or recorded times)");
  cli.add_option("--ring", o.viewer.ring, "frame buffers in flight (3..16)")->check(CLI::Range(3, 16));
  cli.add_option("--attach", o.attach,
                 "show a live publisher's frames (handoff::Publisher in another process): a NAME in "
                 "$XDG_RUNTIME_DIR/handoff, or a socket PATH; repeated: the publishers side by side in a grid")
      ->allow_extra_args(false);  // one value per --attach: a FILE after it stays the FILE
  cli.add_flag("--list,--topics", o.list,
               "with a recording FILE: list its topics (type, messages, rate, shown or why not) and exit; "
               "without: list the live publishers in $XDG_RUNTIME_DIR/handoff and exit");
  cli.add_flag("--quiet", o.quiet, "no notices on stderr");
  cli.add_flag("--gl-debug", o.viewer.gl_debug,
               "GL debug contexts; any KHR_debug error makes the exit status 3 (tests)");
  cli.add_flag("--vk-debug", o.vk_debug,
               "--source vulkan: Vulkan validation layer on; any validation message makes the exit status 3");
}

// --record, --record-compression and --topic against the rest.
std::optional<int> apply_recording(CommandLine& o, const Raw& r) {
  const Viewer::PlayOptions& p = o.play;
  // A FILE that is not there is said to be missing (exit 1) as it is without
  // these options, not taken for a file that is no recording.
  std::error_code ec;
  const bool missing = p.source == Viewer::Source::File && !std::filesystem::exists(p.file, ec);
  const bool recording = p.source == Viewer::Source::File && (missing || is_mcap(p.file));
  if ((!p.topics.empty() || p.all_images) && !recording)
    return usage_error(std::string(p.all_images ? "--all-images" : "--topic") +
                       " picks a recording's image topics; it needs an .mcap or .db3 FILE");
  for (const auto* list : {&p.topics, &p.overlay_topics})
    if (std::find(list->begin(), list->end(), std::string()) != list->end())
      return usage_error(std::string(list == &p.topics ? "--topic" : "--overlay-topic") + ": an empty topic name");
  for (const std::string& t : p.topics)  // one tile per topic: a topic named twice would be two identical tiles
    if (std::count(p.topics.begin(), p.topics.end(), t) > 1) return usage_error("--topic: '" + t + "' is named twice");
  if (p.topics.size() > Viewer::kMaxStreams)
    return usage_error("--topic: " + std::to_string(p.topics.size()) + " topics; at most " +
                       std::to_string(Viewer::kMaxStreams) + " side by side");
  if (!p.overlay_topics.empty() && !recording)
    return usage_error("--overlay-topic picks a ROS 2 bag's overlay topics; it needs an .mcap or .db3 FILE or a bag folder");
  if (missing && (!p.topics.empty() || p.all_images || !p.overlay_topics.empty())) {
    std::fprintf(stderr, "handoff-view: error: %s: no such file\n", p.file.c_str());
    return 1;
  }
  if (!r.record_compression.empty() && o.viewer.record.path.empty())
    return usage_error("--record-compression needs --record FILE");
  if (!r.record_codec.empty() && o.viewer.record.path.empty()) return usage_error("--record-codec needs --record FILE");
  if (!r.record_codec.empty()) o.viewer.record.codec = media::parse_video_codec(lower(r.record_codec));
  if (!r.record_compression.empty()) o.viewer.record.compression = media::mcap::parse_compression(lower(r.record_compression));
  // Here, before the viewer is made: it creates the --record file.
  if (const auto clash = output_over_input(o.viewer, p)) {
    using In = OutputOverInput::Input;
    return usage_error(std::string(clash->output == OutputOverInput::Output::Record ? "--record " : "--screenshot ") +
                       clash->path + " is " +
                       (clash->input == In::File       ? (std::filesystem::is_directory(p.file)
                                                              ? "in the bag folder being played, named as its files are"
                                                              : "the file being played")
                        : clash->input == In::Overlays ? "the --overlays file"
                                                       : "the --record file"));
  }
  return std::nullopt;
}

// Checks the values against each other and turns them into typed options.
std::optional<int> apply(CommandLine& o, const Raw& r) {
  Viewer::PlayOptions& p = o.play;
  const std::string source = lower(r.source);
  p.source = source == "vulkan" ? Viewer::Source::VulkanScene : Viewer::Source::Scene;
  if (!p.file.empty() && source == "scene") p.source = Viewer::Source::File;
  if (source == "file") p.source = Viewer::Source::File;
  if (p.source == Viewer::Source::File && p.file.empty()) return usage_error("--source file needs a FILE argument");
  if (p.source == Viewer::Source::VulkanScene && !p.file.empty())
    return usage_error("--source vulkan draws the built-in scene; it takes no FILE ('" + p.file + "')");
  for (const std::string& a : o.attach) {
    if (a.find('/') == std::string::npos && !live::is_publisher_name(a))
      return usage_error("--attach: '" + a + "' is neither a publisher name (1-64 of A-Z a-z 0-9 . _ -, "
                         "not starting with '.') nor a socket path");
    if (std::count(o.attach.begin(), o.attach.end(), a) > 1)
      return usage_error("--attach: '" + a + "' is named twice");
  }
  if (o.attach.size() > Viewer::kMaxStreams)
    return usage_error("--attach: " + std::to_string(o.attach.size()) + " publishers; at most " +
                       std::to_string(Viewer::kMaxStreams) + " side by side");
  if (!o.attach.empty()) {
    if (!p.file.empty() || source != "scene")
      return usage_error("--attach shows a publisher's frames; it takes no FILE or --source");
  }
  if (!r.size.empty()) {
    const auto wh = parse_wxh(r.size, 1, int(kMaxFrameDimension));
    if (!wh) return usage_error("--size: '" + r.size + "' is not WxH (1.." + std::to_string(kMaxFrameDimension) + ")");
    p.width = std::uint32_t(wh->first);
    p.height = std::uint32_t(wh->second);
  }
  if (auto e = parse_name("--format", r.format, p.format)) return e;
  if (p.source == Viewer::Source::File && !is_mcap(p.file) && !media::is_y4m_path(p.file) && r.size.empty() &&
      !std::filesystem::is_directory(p.file) && std::filesystem::exists(p.file))
    return usage_error(p.file + ": a raw file needs --size WxH, and --format unless it is nv12 (" +
                       spellings<PixelFormat>(" | ") + "); Y4M files end in .y4m");
  if (auto e = parse_name("--matrix", r.matrix, p.matrix)) return e;
  if (auto e = parse_name("--range", r.range, p.range)) return e;
  if (!r.value_range.empty()) {
    o.viewer.value_range = parse_value_range(r.value_range);
    if (!o.viewer.value_range)
      return usage_error("--value-range: '" + r.value_range + "' is not LO,HI (two finite numbers, LO below HI)");
  }
  if (r.loop) p.loop = true;
  if (r.no_loop) p.loop = false;
  const auto window = parse_wxh(r.window, 64, int(kMaxFrameDimension));
  if (!window)
    return usage_error("--window: '" + r.window + "' is not WxH (64.." + std::to_string(kMaxFrameDimension) + ")");
  o.viewer.width = window->first;
  o.viewer.height = window->second;
  o.viewer.title = "handoff-view";
  o.viewer.display = r.headless ? ViewerDisplay::Headless : ViewerDisplay::Auto;
  o.viewer.vsync = !r.no_vsync;
  const std::string convert = lower(r.convert);
  o.viewer.convert = convert == "cpu" ? ViewerConvert::Cpu : convert == "gpu" ? ViewerConvert::Gpu : ViewerConvert::Auto;
  o.viewer.show_ui = !r.hide_ui;
  o.viewer.show_overlays = !r.hide_overlays;
  p.vulkan_validation = o.vk_debug;
  return apply_recording(o, r);
}

}  // namespace

std::optional<int> parse_command_line(int argc, char** argv, CommandLine& out) {
  CLI::App cli{"handoff-view: video frames (YUV, RGB, grey) with inference overlays and layers, in a window or headless (EGL)"};
  Raw raw;
  add_options(cli, out, raw);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help); its own exit codes (105, 109,
    // ...) become the documented 2 for a bad command line.
    return cli.exit(e) == 0 ? 0 : 2;
  }
  return apply(out, raw);
}

}  // namespace handoff::app
