// handoff-view: shows NV12 / P010 frames (the built-in scene, Y4M or raw files)
// with inference overlays, in a window or headless.
#include <CLI/CLI.hpp>

#include <cctype>
#include <cstdio>
#include <exception>
#include <map>
#include <string>

#include <handoff/error.hpp>

#include "app.hpp"

int main(int argc, char** argv) {
  using namespace handoff;
  viewer::AppOptions o;
  CLI::App cli{"handoff-view: NV12 / P010 frames and inference overlays, in a window or headless (EGL)"};
  cli.add_option("file", o.file, "Y4M file, or raw NV12/P010 with --size and --format (default: the built-in scene)");
  cli.add_option("--source", o.source,
                 "scene (default: the built-in scene, CPU/CUDA -> GL buffers) | vulkan (a Vulkan compute shader "
                 "writes the scene into memory GL imports: no upload, no copy); a FILE implies file")
      ->check(CLI::IsMember({"scene", "vulkan", "file"}, CLI::ignore_case));
  cli.add_option("--overlays", o.overlays, "JSON Lines overlay file (one line per frame)");
  cli.add_option("--size", o.size, "WxH of a raw file (or of the scene)");
  cli.add_option("--format", o.format, "pixel format of a raw file (or of the scene): nv12 | p010")
      ->check(CLI::IsMember({"nv12", "p010", "NV12", "P010"}));
  const std::map<std::string, ColorMatrix> matrices{
      {"bt601", ColorMatrix::BT601}, {"bt709", ColorMatrix::BT709}, {"bt2020", ColorMatrix::BT2020}};
  const std::map<std::string, ColorRange> ranges{{"limited", ColorRange::Limited}, {"full", ColorRange::Full}};
  std::string matrix, range;
  cli.add_option("--matrix", matrix, "override the colour matrix: bt601 | bt709 | bt2020")
      ->check(CLI::IsMember({"bt601", "bt709", "bt2020"}, CLI::ignore_case));
  cli.add_option("--range", range, "override the range: limited | full")
      ->check(CLI::IsMember({"limited", "full"}, CLI::ignore_case));
  cli.add_flag("--headless", o.headless, "render through EGL with no window (chosen anyway when there is no display)");
  cli.add_option("--frames", o.frames, "stop after N frames")->check(CLI::NonNegativeNumber);
  cli.add_option("--output", o.output, "write each frame as rendered (frame size, overlays, no UI) as PNG into DIR");
  cli.add_option("--screenshot", o.screenshot, "write the window (UI included) as PNG at the end");
  cli.add_flag("--no-vsync", o.no_vsync, "play as fast as possible");
  bool loop = false, no_loop = false;
  cli.add_flag("--loop", loop, "loop files (default in a window)");
  cli.add_flag("--no-loop", no_loop, "play files once (default headless)");
  cli.add_option("--speed", o.speed, "playback speed factor")->check(CLI::Range(0.01, 64.0));
  std::string window = "1280x800";
  cli.add_option("--window", window, "window size WxH (headless: the view each frame is drawn into, and the screenshot)");
  cli.add_flag("--hide-ui", o.hide_ui, "start with the panel hidden");
  cli.add_flag("--hide-overlays", o.hide_overlays, "start with overlays hidden");
  cli.add_option("--bench-boxes", o.bench_boxes, "draw N synthetic boxes on every frame (benchmarks)");
  cli.add_option("--ring", o.ring, "frame buffers in flight (>= 3)")->check(CLI::Range(3, 16));
  cli.add_flag("--quiet", o.quiet, "no notices on stderr");
  cli.add_flag("--gl-debug", o.gl_debug, "GL debug contexts; any KHR_debug error makes the exit status 3 (tests)");
  cli.add_flag("--vk-debug", o.vk_debug,
               "--source vulkan: Vulkan validation layer on; any validation message makes the exit status 3");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help); its own exit codes (105, 109,
    // ...) become the documented 2 for a bad command line.
    return cli.exit(e) == 0 ? 0 : 2;
  }
  auto lower = [](std::string t) {
    for (char& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return t;
  };
  o.source = lower(o.source);
  if (!o.file.empty() && o.source == "scene") o.source = "file";
  if (o.source == "file" && o.file.empty()) {
    std::fprintf(stderr, "handoff-view: --source file needs a FILE argument\n");
    return 2;
  }
  if (o.source == "vulkan" && !o.file.empty()) {
    std::fprintf(stderr, "handoff-view: --source vulkan draws the built-in scene; it takes no FILE ('%s')\n",
                 o.file.c_str());
    return 2;
  }
  if (!matrix.empty()) o.matrix = matrices.at(lower(matrix));
  if (!range.empty()) o.range = ranges.at(lower(range));
  if (loop) o.loop = true;
  if (no_loop) o.loop = false;
  {
    unsigned w = 0, h = 0;
    char x = 0;
    if (std::sscanf(window.c_str(), "%u%c%u", &w, &x, &h) != 3 || x != 'x' || w < 64 || h < 64 || w > 16384 || h > 16384) {
      std::fprintf(stderr, "handoff-view: --window: '%s' is not WxH (64..16384)\n", window.c_str());
      return 2;
    }
    o.window_width = int(w);
    o.window_height = int(h);
  }
  try {
    return viewer::run_app(o);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "handoff-view: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "handoff-view: error: %s\n", e.what());
    return 1;
  }
}
