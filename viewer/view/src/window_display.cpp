#include "window_display.hpp"

#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_opengl3.h>

#include <chrono>

#include <handoff/error.hpp>
#include <handoff/log.hpp>
#include <handoff/unique_handle.hpp>

#include "imgui_lock.hpp"
#include "shared_contexts.hpp"

namespace handoff::view {
namespace {
struct HiddenWindowDestroyer {
  void operator()(GLFWwindow* w) const noexcept { glfwDestroyWindow(w); }
};
using UniqueHiddenWindow = UniqueHandle<GLFWwindow*, HiddenWindowDestroyer, nullptr>;
}  // namespace

WindowDisplay::WindowDisplay(DisplayOptions options, std::shared_ptr<DisplayLink> link)
    : Display(std::move(options), std::move(link), false), loop_(WindowLoop::get()) {
  loop_->call([this] { open(); }, link_->name + ": opening its window on the GLFW thread");
  link_->set_extra_wake([loop = std::weak_ptr<WindowLoop>(loop_)] {
    if (auto l = loop.lock()) l->wake();
  });
}

WindowDisplay::~WindowDisplay() { close(); }

// GLFW thread: the window, its contexts, the worker on a hidden window sharing
// with it; then the loop draws it every round.
void WindowDisplay::open() {
  WindowSessionOptions wo;
  wo.title = options_.title;
  wo.width = options_.width;
  wo.height = options_.height;
  wo.vsync = options_.vsync;
  wo.gl_debug = options_.gl_debug;
  wo.debug_sink = &gl_sink_;
  auto session = std::make_unique<WindowSession>(wo);
  view::SharedContexts contexts = view::make_window_contexts(session->window());
  UniqueHiddenWindow hidden(contexts.hidden);  // ours until the worker holds it
  start_worker(std::move(contexts.worker_factory), [loop = loop_, h = hidden.get()] {
    loop->post([h] { glfwDestroyWindow(h); });  // the GLFW thread's, once the worker let go of it
  });
  (void)hidden.release();  // the worker's share destroys it now
  session_ = std::move(session);
  ui_.show_panel = options_.show_ui;
  ui_.title = options_.title;
  loop_->add(this);
}

void WindowDisplay::close() noexcept {
  link_->request_close();
  if (loop_ && loop_->on_loop_thread()) return;  // the round in progress closes it
  if (!link_->wait_closed_for(std::chrono::duration_cast<std::chrono::milliseconds>(wait_limit())))
    log(LogLevel::Error, link_->name + ": its window did not close within " + format_duration(wait_limit()));
}

void WindowDisplay::apply(const InputActions& a) {
  if (a.quit) glfwSetWindowShouldClose(session_->window(), 1);
  if (a.toggle_play && state_) set_playing(!state_->playing());
  if (a.step) step(a.step);
  if (a.seek >= 0) seek(a.seek);
  if (a.cycle_tile) cycle_focus();
  if (a.tile_click) {
    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(session_->window(), &fb_w, &fb_h);
    focus_at(input_.cursor_x(), input_.cursor_y(), fb_w, fb_h);
  }
  if (ui_.toggle_play && state_) set_playing(!state_->playing());
  ui_.toggle_play = false;
  if (ui_.step) {
    step(ui_.step);
    ui_.step = 0;
  }
  if (ui_.seek >= 0) {
    seek(ui_.seek);
    ui_.seek = -1;
  }
}

// Frame, overlays (ImGui's background list, in window units), panel.
void WindowDisplay::draw(int fb_w, int fb_h, int win_w, int win_h, double px_scale, bool fresh) {
  using clock = std::chrono::steady_clock;
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  const auto t0 = clock::now();
  const view::ViewTransform& view = input_.view();
  if (grid()) draw_grid_view(fb_w, fb_h, 0);  // the grid fits every tile (no zoom or pan)
  else state_->draw_frame(view, fb_w, fb_h);
  session_->new_frame();
  view::ViewTransform ui_view = view;
  ui_view.scale /= px_scale;
  ui_view.offset_x /= px_scale;
  ui_view.offset_y /= px_scale;
  if (grid()) draw_grid_overlays(fb_w, fb_h, *ImGui::GetBackgroundDrawList(), px_scale);
  else
    state_->draw_overlays_into(*ImGui::GetBackgroundDrawList(), ui_view,
                               media::RectF{0, 0, float(win_w), float(win_h)});
  ui_.view = view;
  fill_tile_lines();
  // The probe reads two texels back (a GPU sync): only while the cursor is over the window.
  if (glfwGetWindowAttrib(session_->window(), GLFW_HOVERED)) probe_at(input_.cursor_x(), input_.cursor_y(), fb_w, fb_h, view);
  else clear_probe();
  view::draw_ui(*state_, ui_);
  ImGui::Render();
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  if (fresh) state_->stats().draw_ms.add(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
}

// View snapshots (and the screenshot at close) read the back buffer before the swap.
void WindowDisplay::capture_views() {
  int fb_w = 0, fb_h = 0;
  glfwGetFramebufferSize(session_->window(), &fb_w, &fb_h);
  serve_snapshots(SnapshotKind::View, [&] {
    std::vector<std::uint8_t> px;
    view::read_framebuffer_rgba(0, GL_BACK, fb_w, fb_h, px);
    return RgbaImage(std::uint32_t(fb_w), std::uint32_t(fb_h), std::move(px));
  });
}

bool WindowDisplay::frame() noexcept {
  if (!session_) return false;
  bool fresh = false;
  try {
    GLFWwindow* win = session_->window();
    glfwMakeContextCurrent(win);
    if (glfwWindowShouldClose(win)) link_->request_close();
    if (link_->close_requested()) {
      teardown();
      return false;
    }
    run_tasks();
    int fb_w = 0, fb_h = 0, win_w = 0, win_h = 0;
    glfwGetFramebufferSize(win, &fb_w, &fb_h);
    glfwGetWindowSize(win, &win_w, &win_h);
    if (fb_w <= 0 || fb_h <= 0 || !state_) return false;  // minimised
    const double px_scale = win_w > 0 ? double(fb_w) / win_w : 1.0;
    {
      auto lock = view::imgui_lock();
      session_->make_current();
      apply(input_.handle(*session_, *state_, ui_, fb_w, fb_h, px_scale));
      fresh = advance(state_->no_vsync || !presented_any_);
      draw(fb_w, fb_h, win_w, win_h, px_scale, fresh);
      apply(InputActions{});
      capture_views();
    }
    glfwSwapBuffers(win);
    if (fresh) {
      presented_any_ = true;
      displayed();
    }
    serve_snapshots(SnapshotKind::Frame, [&] { return frame_image(); });
  } catch (...) {
    fail(std::current_exception());
  }
  return fresh;
}

// GLFW thread: the screenshot (the view drawn once more, read before any
// swap), the feed and GL objects, the window; then the viewer is closed.
void WindowDisplay::teardown() noexcept {
  loop_->remove(this);
  try {
    GLFWwindow* win = session_->window();
    auto lock = view::imgui_lock();
    session_->make_current();
    if (!options_.screenshot.empty() && state_) {
      int fb_w = 0, fb_h = 0, win_w = 0, win_h = 0;
      glfwGetFramebufferSize(win, &fb_w, &fb_h);
      glfwGetWindowSize(win, &win_w, &win_h);
      if (fb_w > 0 && fb_h > 0) {
        draw(fb_w, fb_h, win_w, win_h, win_w > 0 ? double(fb_w) / win_w : 1.0, false);
        std::vector<std::uint8_t> px;
        view::read_framebuffer_rgba(0, GL_BACK, fb_w, fb_h, px);
        write_png_now(options_.screenshot, RgbaImage(std::uint32_t(fb_w), std::uint32_t(fb_h), std::move(px)));
      }
    }
  } catch (const std::exception& e) {
    link_->set_output(0, {options_.screenshot + ": " + e.what()});
  }
  finish();
  share_.reset();  // the worker stops here unless a ViewerFrame or the ring still holds it
  session_.reset();
  // Last: once the viewer is marked closed, close() returns on the application's
  // thread, which may destroy this display (and its link) at once. The local
  // copy keeps the link alive through the call; nothing here is touched after.
  const std::shared_ptr<DisplayLink> link = link_;
  link->mark_closed(error_);
}

}  // namespace handoff::view
