#include "cli.hpp"

#include <CLI/CLI.hpp>

#include <cctype>
#include <cstdio>
#include <map>
#include <string>

#include <handoff/error.hpp>
#include <handoff/viewer/raw_reader.hpp>

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

// "WxH" within lo..hi, or nothing.
std::optional<std::pair<int, int>> parse_wxh(const std::string& text, int lo, int hi) {
  unsigned w = 0, h = 0;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%u%c%u%c", &w, &x, &h, &extra) != 3 || x != 'x') return std::nullopt;
  if (int(w) < lo || int(h) < lo || int(w) > hi || int(h) > hi) return std::nullopt;
  return std::make_pair(int(w), int(h));
}

struct Raw {  // option values before they are checked against each other
  std::string source = "scene", size, format, matrix, range, window = "1280x800";
  bool headless = false, no_vsync = false, loop = false, no_loop = false, hide_ui = false, hide_overlays = false;
};

void add_options(CLI::App& cli, CommandLine& o, Raw& r) {
  Viewer::PlayOptions& p = o.play;
  cli.add_option("file", p.file, "Y4M file, or raw NV12/P010 with --size and --format (default: the built-in scene)");
  cli.add_option("--source", r.source,
                 "scene (default: the built-in scene, CPU/CUDA -> GL buffers) | vulkan (a Vulkan compute shader "
                 "writes the scene into memory GL imports: no upload, no copy); a FILE implies file")
      ->check(CLI::IsMember({"scene", "vulkan", "file"}, CLI::ignore_case));
  cli.add_option("--overlays", p.overlays, "JSON Lines overlay file (one line per frame)");
  cli.add_option("--size", r.size, "WxH of a raw file (or of the scene)");
  cli.add_option("--format", r.format, "pixel format of a raw file (or of the scene): nv12 | p010")
      ->check(CLI::IsMember({"nv12", "p010"}, CLI::ignore_case));
  cli.add_option("--matrix", r.matrix, "override the colour matrix: bt601 | bt709 | bt2020")
      ->check(CLI::IsMember({"bt601", "bt709", "bt2020"}, CLI::ignore_case));
  cli.add_option("--range", r.range, "override the range: limited | full")
      ->check(CLI::IsMember({"limited", "full"}, CLI::ignore_case));
  cli.add_flag("--headless", r.headless, "render through EGL with no window (chosen anyway when there is no display)");
  cli.add_option("--frames", p.frames, "stop after N frames")->check(CLI::NonNegativeNumber);
  cli.add_option("--output", o.viewer.output_dir,
                 "write each frame as rendered (frame size, overlays, no UI) as PNG into DIR");
  cli.add_option("--screenshot", o.viewer.screenshot, "write the window (UI included) as PNG at the end");
  cli.add_flag("--no-vsync", r.no_vsync, "play as fast as possible");
  cli.add_flag("--loop", r.loop, "loop files (default in a window)");
  cli.add_flag("--no-loop", r.no_loop, "play files once (default headless)");
  cli.add_option("--speed", p.speed, "playback speed factor")->check(CLI::Range(0.01, 64.0));
  cli.add_option("--window", r.window, "window size WxH (headless: the view each frame is drawn into, and the screenshot)");
  cli.add_flag("--hide-ui", r.hide_ui, "start with the panel hidden");
  cli.add_flag("--hide-overlays", r.hide_overlays, "start with overlays hidden");
  cli.add_option("--bench-boxes", p.bench_boxes, "draw N synthetic boxes on every frame (benchmarks)");
  cli.add_option("--ring", o.viewer.ring, "frame buffers in flight (>= 3)")->check(CLI::Range(3, 16));
  cli.add_flag("--quiet", o.quiet, "no notices on stderr");
  cli.add_flag("--gl-debug", o.viewer.gl_debug,
               "GL debug contexts; any KHR_debug error makes the exit status 3 (tests)");
  cli.add_flag("--vk-debug", o.vk_debug,
               "--source vulkan: Vulkan validation layer on; any validation message makes the exit status 3");
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
  if (!r.size.empty()) {
    const auto wh = parse_wxh(r.size, 1, 16384);
    if (!wh) return usage_error("--size: '" + r.size + "' is not WxH (1..16384)");
    p.width = std::uint32_t(wh->first);
    p.height = std::uint32_t(wh->second);
  }
  if (!r.format.empty()) p.format = lower(r.format) == "p010" ? PixelFormat::P010 : PixelFormat::NV12;
  const std::map<std::string, ColorMatrix> matrices{
      {"bt601", ColorMatrix::BT601}, {"bt709", ColorMatrix::BT709}, {"bt2020", ColorMatrix::BT2020}};
  if (!r.matrix.empty()) p.matrix = matrices.at(lower(r.matrix));
  if (!r.range.empty()) p.range = lower(r.range) == "full" ? ColorRange::Full : ColorRange::Limited;
  if (r.loop) p.loop = true;
  if (r.no_loop) p.loop = false;
  const auto window = parse_wxh(r.window, 64, 16384);
  if (!window) return usage_error("--window: '" + r.window + "' is not WxH (64..16384)");
  o.viewer.width = window->first;
  o.viewer.height = window->second;
  o.viewer.title = "handoff-view";
  o.viewer.display = r.headless ? ViewerDisplay::Headless : ViewerDisplay::Auto;
  o.viewer.vsync = !r.no_vsync;
  o.viewer.show_ui = !r.hide_ui;
  o.viewer.show_overlays = !r.hide_overlays;
  p.vulkan_validation = o.vk_debug;
  return std::nullopt;
}

}  // namespace

std::optional<int> parse_command_line(int argc, char** argv, CommandLine& out) {
  CLI::App cli{"handoff-view: NV12 / P010 frames and inference overlays, in a window or headless (EGL)"};
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
