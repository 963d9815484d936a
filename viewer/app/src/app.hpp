#pragma once
// handoff-view's application: options (what the command line says), and the
// two ways of running it: a GLFW window with the Dear ImGui UI, or headless
// through EGL (no display), writing PNGs.
#include <cstdint>
#include <optional>
#include <string>

#include <handoff/frame.hpp>

namespace handoff::viewer {

struct AppOptions {
  std::string file;                 // Y4M or raw file; empty: the built-in scene
  // "scene" (the built-in scene through the frame pipeline), "vulkan" (a Vulkan
  // compute shader writes the scene into memory GL imports: handoff::GlVkSource,
  // drawn with no upload and no copy) or "file" (implied by `file`).
  std::string source = "scene";
  std::string overlays;             // JSON Lines overlay file
  std::string size;                 // "WxH": raw files (required) or the scene's size
  std::string format;               // "nv12" | "p010": raw files or the scene
  std::optional<ColorMatrix> matrix;  // overrides the source's colorimetry
  std::optional<ColorRange> range;
  bool headless = false;            // asked for; also chosen when there is no display
  std::int64_t frames = -1;         // stop after N frames (-1: window: never; headless: see app.cpp)
  std::string output;               // headless / window: write each frame as rendered (PNG) here
  std::string screenshot;           // write the window (UI included) here at the end
  bool no_vsync = false;            // as fast as possible
  std::optional<bool> loop;         // default: loop in a window, play once headless
  double speed = 1.0;
  int window_width = 1280, window_height = 800;
  bool hide_ui = false;
  bool hide_overlays = false;
  std::uint32_t bench_boxes = 0;    // synthetic boxes per frame (benchmarks)
  std::size_t ring = 3;
  bool quiet = false;
  bool gl_debug = false;            // debug contexts; any KHR_debug error makes the exit status 3
  // --source vulkan: the Vulkan validation layer on (an error where it is not
  // installed). With vk_debug or gl_debug, any validation message (the layer
  // is also on with HANDOFF_VK_VALIDATION=1) makes the exit status 3.
  bool vk_debug = false;
};

// Runs the viewer; returns the process exit code. Throws handoff::Error /
// ParseError for bad input (main prints them and exits non-zero).
int run_app(const AppOptions& options);

// True when a display seems usable (DISPLAY or WAYLAND_DISPLAY set).
bool display_available();

}  // namespace handoff::viewer
