#include "app.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>

#include <handoff/error.hpp>
#include <handoff/gl_check.hpp>
#include <handoff/gl_context.hpp>
#include <handoff/log.hpp>
#include <handoff/viewer/png.hpp>

#include "frame_target.hpp"
#include "imgui_offscreen.hpp"
#include "shared_contexts.hpp"
#include "ui.hpp"
#include "viewer_state.hpp"

namespace handoff::viewer {
namespace {

using clock = std::chrono::steady_clock;

void say(const AppOptions& o, const std::string& text) {
  if (!o.quiet) std::fprintf(stderr, "handoff-view: %s\n", text.c_str());
}

std::filesystem::path frame_png(const std::string& dir, std::int64_t n) {
  char name[32];
  std::snprintf(name, sizeof name, "frame_%06lld.png", static_cast<long long>(n));
  return std::filesystem::path(dir) / name;
}

void prepare_output_dir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(Api::System, "create_directories", ec.value(), ec.message(), "--output " + dir, HANDOFF_WHERE);
}

// Renders the current frame through `view` with its overlays into a w x h
// `target` (left bound when `keep_bound`, e.g. to read it back).
void render_into(ViewerState& v, FrameTarget& target, ImGuiOffscreen& painter, int w, int h,
                 const ViewTransform& view, bool keep_bound) {
  target.resize(w, h);
  target.bind();
  const auto t0 = clock::now();
  v.draw_frame(view, w, h);
  const OverlayFrame* f = v.show_overlays ? v.current_overlays() : nullptr;
  if (f && !f->empty()) {
    painter.begin(w, h);
    v.draw_overlays_into(painter.background(), view,
                         RectF{float(view.offset_x), float(view.offset_y), float(v.info().width * view.scale),
                               float(v.info().height * view.scale)});
    painter.end();
  }
  v.stats().draw_ms.add(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
  if (!keep_bound) FrameTarget::unbind();
}

// The current frame at its own size with overlays (what --output writes),
// read back as RGBA rows (top-down).
void render_frame_image(ViewerState& v, FrameTarget& target, ImGuiOffscreen& painter,
                        std::vector<std::uint8_t>& rgba) {
  render_into(v, target, painter, int(v.info().width), int(v.info().height), ViewTransform{}, true);
  target.read_rgba(rgba);
  FrameTarget::unbind();
}

// Headless without --output: the frame fitted to a w x h view with its
// overlays, like the window shows it (without the panel). Nothing reads it
// back; it is what the benchmarks time.
void render_view_image(ViewerState& v, FrameTarget& target, ImGuiOffscreen& painter, int w, int h) {
  render_into(v, target, painter, w, h, fit_view(v.info().width, v.info().height, w, h), false);
}

void write_rgba_png(const std::filesystem::path& path, std::vector<std::uint8_t> rgba, int w, int h,
                    PngEncoder* encoder) {
  Image8 img;
  img.width = static_cast<std::uint32_t>(w);
  img.height = static_cast<std::uint32_t>(h);
  img.channels = 4;
  img.pixels = std::move(rgba);
  if (encoder) encoder->submit(path, std::move(img));
  else write_png(path, img);
}

void print_summary(const AppOptions& o, ViewerState& v, double seconds) {
  Stats& s = v.stats();
  char line[512];
  std::snprintf(line, sizeof line,
                "%lld frames %ux%u %s in %.2f s: %.1f fps (frame p50 %.2f ms, p99 %.2f ms; map %.2f, write %.2f, "
                "upload %.2f, draw %.2f ms mean)",
                static_cast<long long>(s.frames), v.info().width, v.info().height,
                std::string(to_string(v.info().format)).c_str(), seconds,
                seconds > 0 ? double(s.frames) / seconds : 0.0, s.frame_ms.percentile(50),
                s.frame_ms.percentile(99), s.map_ms.mean(), s.produce_ms.mean() - s.map_ms.mean(),
                s.upload_ms.mean(), s.draw_ms.mean());
  say(o, line);
}

// --gl-debug: counts KHR_debug errors from both contexts (render thread and
// GL worker), keeps the first message.
struct GlErrorCount {
  std::mutex mutex;
  std::size_t errors = 0;
  std::string first;
  std::function<void(const GlDebugMessage&)> sink = [this](const GlDebugMessage& m) {
    if (!m.is_error()) return;
    std::lock_guard lock(mutex);
    if (errors++ == 0) first = m.describe();
  };
  // Exit status 3 when there were errors.
  int report(const AppOptions& o) {
    std::lock_guard lock(mutex);
    if (errors == 0) return 0;
    say(o, std::to_string(errors) + " KHR_debug error(s); the first: " + first);
    return 3;
  }
};

// --source vulkan with --vk-debug / --gl-debug: counts Vulkan validation
// messages (any thread, possibly inside a Vulkan call), keeps the first.
struct VkMessageCount {
  std::mutex mutex;
  std::size_t messages = 0;
  std::string first;
  std::function<void(const std::string&)> sink = [this](const std::string& m) {
    log(LogLevel::Warning, "Vulkan validation: " + m);
    std::lock_guard lock(mutex);
    if (messages++ == 0) first = m;
  };
  // Exit status 3 when there were messages and the options ask for it.
  int report(const AppOptions& o) {
    if (!(o.vk_debug || o.gl_debug)) return 0;
    std::lock_guard lock(mutex);
    if (messages == 0) return 0;
    say(o, std::to_string(messages) + " Vulkan validation message(s); the first: " + first);
    return 3;
  }
};

std::unique_ptr<ViewerState> make_viewer_state(const AppOptions& o, SharedContexts& contexts, GlErrorCount& gl_errors,
                                               VkMessageCount& vk_messages) {
  auto v = std::make_unique<ViewerState>(o, std::move(contexts.worker_factory),
                                         o.gl_debug ? gl_errors.sink : nullptr, vk_messages.sink);
  if (!v->source_description().empty()) say(o, "source: " + v->source_description() + "; " + v->memory_description());
  return v;
}

// --- headless -------------------------------------------------------------------

int run_headless(const AppOptions& o) {
  SharedContexts contexts = make_headless_contexts(o.gl_debug);
  GlContext& ctx = *contexts.render;
  ctx.make_current();
  GlErrorCount gl_errors;
  struct Done {
    GlContext& c;
    bool debug;
    ~Done() {
      if (debug) disable_gl_debug_output();
      c.done_current();
    }
  } done{ctx, o.gl_debug};
  load_gl(ctx);
  if (o.gl_debug) enable_gl_debug_output(&gl_errors.sink);

  prepare_output_dir(o.output);
  VkMessageCount vk_messages;
  std::unique_ptr<ViewerState> state = make_viewer_state(o, contexts, gl_errors, vk_messages);
  ViewerState& v = *state;
  FrameTarget target;
  ImGuiOffscreen painter;
  PngEncoder encoder(4);
  std::vector<std::uint8_t> rgba;
  // Frames: --frames N, else a file once through, else 60 of the scene.
  const std::int64_t limit = o.frames >= 0 ? o.frames : (v.info().frame_count > 0 ? v.info().frame_count : 60);
  const auto start = clock::now();
  std::int64_t n = 0;
  for (; n < limit; ++n) {
    if (!v.advance(true)) break;  // end of a finite source
    if (o.output.empty()) {
      render_view_image(v, target, painter, o.window_width, o.window_height);
    } else {  // each frame at its own size, read back and encoded
      render_frame_image(v, target, painter, rgba);
      write_rgba_png(frame_png(o.output, n), rgba, target.width(), target.height(), &encoder);
    }
  }
  glFinish();  // the last frames are drawn before the clock stops
  if (!o.screenshot.empty()) {
    // No window: the screenshot is the UI drawn offscreen over the fitted frame.
    const int w = o.window_width, h = o.window_height;
    FrameTarget shot;
    shot.resize(w, h);
    shot.bind();
    const ViewTransform view = fit_view(v.info().width, v.info().height, w, h);
    v.draw_frame(view, w, h);
    ImGuiOffscreen ui_ctx;
    UiState ui;
    ui.view = view;
    ui.status = "headless (EGL)";
    // Two frames so auto-sized windows settle.
    for (int pass = 0; pass < 2; ++pass) {
      ui_ctx.begin(w, h);
      v.draw_overlays_into(ui_ctx.background(), view, RectF{float(view.offset_x), float(view.offset_y),
                                                            float(v.info().width * view.scale),
                                                            float(v.info().height * view.scale)});
      if (!o.hide_ui) draw_ui(v, ui);
      if (pass == 0) ui_ctx.discard();
      else ui_ctx.end();
    }
    std::vector<std::uint8_t> pixels;
    shot.read_rgba(pixels);
    FrameTarget::unbind();
    write_rgba_png(o.screenshot, std::move(pixels), w, h, nullptr);
    say(o, "screenshot written to " + o.screenshot);
  }
  encoder.flush();
  const double secs = std::chrono::duration<double>(clock::now() - start).count();
  print_summary(o, v, secs);
  if (!o.output.empty())
    say(o, std::to_string(encoder.written()) + " frames written to " + std::filesystem::absolute(o.output).string());
  int rc = 0;
  for (const std::string& e : encoder.take_errors()) {
    say(o, "PNG: " + e);
    rc = 1;
  }
  state.reset();  // messages from the teardown (Vulkan objects) count too
  if (const int gl = gl_errors.report(o)) rc = gl;
  if (const int vk = vk_messages.report(o)) rc = vk;
  return rc;
}

// --- window ---------------------------------------------------------------------

struct WindowInput {
  ViewTransform view;
  bool fit = true;         // keep fitting until the user zooms or pans
  bool dragging = false;
  double last_x = 0, last_y = 0;
};

int run_window(const AppOptions& o, GLFWwindow* win) {
  SharedContexts contexts = make_window_contexts(win);
  contexts.render->make_current();
  load_gl(*contexts.render);
  GlErrorCount gl_errors;
  if (o.gl_debug) enable_gl_debug_output(&gl_errors.sink);
  struct DebugDone {
    bool debug;
    ~DebugDone() {
      if (debug) disable_gl_debug_output();
    }
  } debug_done{o.gl_debug};
  glfwSwapInterval(o.no_vsync ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGuiContext* imgui = ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(win, true);
  ImGui_ImplOpenGL3_Init("#version 410 core");
  struct ImGuiDone {
    ImGuiContext* c;
    ~ImGuiDone() {
      ImGui::SetCurrentContext(c);
      ImGui_ImplOpenGL3_Shutdown();
      ImGui_ImplGlfw_Shutdown();
      ImGui::DestroyContext(c);
    }
  } imgui_done{imgui};

  prepare_output_dir(o.output);
  VkMessageCount vk_messages;
  std::unique_ptr<ViewerState> state = make_viewer_state(o, contexts, gl_errors, vk_messages);
  ViewerState& v = *state;
  FrameTarget target;
  std::unique_ptr<ImGuiOffscreen> painter;
  std::unique_ptr<PngEncoder> encoder;
  if (!o.output.empty()) {
    painter = std::make_unique<ImGuiOffscreen>();
    encoder = std::make_unique<PngEncoder>(4);
  }
  std::vector<std::uint8_t> rgba;
  UiState ui;
  ui.show_panel = !o.hide_ui;
  WindowInput in;
  std::int64_t presented = 0;
  const auto start = clock::now();
  int rc = 0;

  while (!glfwWindowShouldClose(win)) {
    glfwPollEvents();
    int fb_w = 0, fb_h = 0, win_w = 0, win_h = 0;
    glfwGetFramebufferSize(win, &fb_w, &fb_h);
    glfwGetWindowSize(win, &win_w, &win_h);
    if (fb_w <= 0 || fb_h <= 0) {
      glfwWaitEventsTimeout(0.05);
      continue;
    }
    const double px_scale = win_w > 0 ? double(fb_w) / win_w : 1.0;
    ImGuiIO& io = ImGui::GetIO();

    // Keyboard and mouse (when ImGui does not want them).
    if (!io.WantCaptureKeyboard) {
      if (ImGui::IsKeyPressed(GLFW_KEY_SPACE)) v.playing = !v.playing;
      if (ImGui::IsKeyPressed(GLFW_KEY_RIGHT)) v.step(+1);
      if (ImGui::IsKeyPressed(GLFW_KEY_LEFT)) v.step(-1);
      if (ImGui::IsKeyPressed(GLFW_KEY_F)) in.fit = true;
      if (ImGui::IsKeyPressed(GLFW_KEY_1)) ui.actual_size_requested = true;
      if (ImGui::IsKeyPressed(GLFW_KEY_N)) v.nearest_when_zoomed = !v.nearest_when_zoomed;
      if (ImGui::IsKeyPressed(GLFW_KEY_O)) v.show_overlays = !v.show_overlays;
      if (ImGui::IsKeyPressed(GLFW_KEY_H) || ImGui::IsKeyPressed(GLFW_KEY_TAB)) ui.show_panel = !ui.show_panel;
      if (ImGui::IsKeyPressed(GLFW_KEY_Q) || ImGui::IsKeyPressed(GLFW_KEY_ESCAPE)) glfwSetWindowShouldClose(win, 1);
      if (ImGui::IsKeyPressed(GLFW_KEY_EQUAL) || ImGui::IsKeyPressed(GLFW_KEY_KP_ADD)) v.speed = std::min(v.speed * 2, 8.0);
      if (ImGui::IsKeyPressed(GLFW_KEY_MINUS) || ImGui::IsKeyPressed(GLFW_KEY_KP_SUBTRACT)) v.speed = std::max(v.speed / 2, 0.125);
      for (unsigned int c : io.InputQueueCharacters)
        if (c == '?') ui.show_help = !ui.show_help;
    }
    double mx = 0, my = 0;
    glfwGetCursorPos(win, &mx, &my);
    mx *= px_scale;
    my *= px_scale;
    if (ui.fit_requested) { in.fit = true; ui.fit_requested = false; }
    if (ui.actual_size_requested) {
      in.fit = false;
      in.view = actual_size_view(v.info().width, v.info().height, fb_w, fb_h);
      ui.actual_size_requested = false;
    }
    if (in.fit) in.view = fit_view(v.info().width, v.info().height, fb_w, fb_h);
    if (!io.WantCaptureMouse) {
      if (io.MouseWheel != 0.0f) {
        in.fit = false;
        in.view = zoom_around(in.view, std::pow(1.25, io.MouseWheel), mx, my);
      }
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) || ImGui::IsMouseClicked(ImGuiMouseButton_Middle)) {
        in.dragging = true;
        in.last_x = mx;
        in.last_y = my;
      }
    }
    if (in.dragging) {
      if (!ImGui::IsMouseDown(ImGuiMouseButton_Left) && !ImGui::IsMouseDown(ImGuiMouseButton_Middle)) {
        in.dragging = false;
      } else if (mx != in.last_x || my != in.last_y) {
        in.fit = false;
        in.view = pan(in.view, mx - in.last_x, my - in.last_y);
        in.last_x = mx;
        in.last_y = my;
      }
    }

    // A new frame when one is due.
    bool fresh = false;
    if (v.playing || presented == 0) fresh = v.advance(v.no_vsync || presented == 0);
    if (fresh && encoder) {
      render_frame_image(v, target, *painter, rgba);
      write_rgba_png(frame_png(o.output, presented), rgba, target.width(), target.height(), encoder.get());
    }

    // Draw: frame, overlays (background list, screen space), UI.
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    const auto t0 = clock::now();
    v.draw_frame(in.view, fb_w, fb_h);
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    // ImGui coordinates are window coordinates; the view is in framebuffer pixels.
    ViewTransform ui_view = in.view;
    ui_view.scale /= px_scale;
    ui_view.offset_x /= px_scale;
    ui_view.offset_y /= px_scale;
    v.draw_overlays_into(*ImGui::GetBackgroundDrawList(), ui_view,
                         RectF{0, 0, float(win_w), float(win_h)});
    ui.view = in.view;
    // The probe reads two texels back (a GPU sync): only while the cursor is over the window.
    if (glfwGetWindowAttrib(win, GLFW_HOVERED)) ui.probe = v.probe(in.view.to_frame_x(mx), in.view.to_frame_y(my));
    else ui.probe = PixelProbe{};
    draw_ui(v, ui);
    ImGui::Render();
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (fresh) v.stats().draw_ms.add(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    if (fresh) ++presented;

    const bool last = o.frames >= 0 && presented >= o.frames;
    if ((last || (v.finished() && o.frames >= 0)) && !o.screenshot.empty()) {
      std::vector<std::uint8_t> px;
      read_framebuffer_rgba(0, GL_BACK, fb_w, fb_h, px);
      write_rgba_png(o.screenshot, std::move(px), fb_w, fb_h, nullptr);
      say(o, "screenshot written to " + o.screenshot);
    }
    glfwSwapBuffers(win);
    if (last || (v.finished() && o.frames >= 0)) break;
    if (!fresh && !v.no_vsync) glfwWaitEventsTimeout(0.002);
  }
  if (encoder) {
    encoder->flush();
    for (const std::string& e : encoder->take_errors()) {
      say(o, "PNG: " + e);
      rc = 1;
    }
  }
  print_summary(o, v, std::chrono::duration<double>(clock::now() - start).count());
  state.reset();  // messages from the teardown (Vulkan objects) count too
  if (const int gl = gl_errors.report(o)) rc = gl;
  if (const int vk = vk_messages.report(o)) rc = vk;
  return rc;
}

}  // namespace

bool display_available() {
  const char* d = std::getenv("DISPLAY");
  const char* w = std::getenv("WAYLAND_DISPLAY");
  return (d && *d) || (w && *w);
}

int run_app(const AppOptions& options) {
  AppOptions o = options;
  if (!o.headless && !display_available()) {
    say(o, "no display (DISPLAY is not set): rendering headless through EGL");
    o.headless = true;
  }
  if (!o.headless) {
    if (!glfwInit()) {
      const char* why = nullptr;
      glfwGetError(&why);
      say(o, std::string("cannot open a window (") + (why ? why : "glfwInit failed") +
                 "): rendering headless through EGL");
      o.headless = true;
    }
  }
  if (o.headless) return run_headless(o);

  struct GlfwDone {
    ~GlfwDone() { glfwTerminate(); }
  } glfw_done;
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 4);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 5);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_OPENGL_DEBUG_CONTEXT, o.gl_debug ? GLFW_TRUE : GLFW_FALSE);
  GLFWwindow* win = glfwCreateWindow(o.window_width, o.window_height, "handoff-view", nullptr, nullptr);
  if (!win) {
    const char* why = nullptr;
    glfwGetError(&why);
    say(o, std::string("cannot create a GL 4.5 window (") + (why ? why : "unknown") +
               "): rendering headless through EGL");
    glfwTerminate();
    o.headless = true;
    return run_headless(o);
  }
  struct WindowDone {
    GLFWwindow* w;
    ~WindowDone() { glfwDestroyWindow(w); }
  } window_done{win};
  return run_window(o, win);
}

}  // namespace handoff::viewer
