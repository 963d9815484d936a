#include "window_input.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include <handoff/viewer.hpp>

namespace handoff::view {

double faster(double speed) { return std::max(speed, std::min(speed * 2, Viewer::kMaxSpeed)); }
double slower(double speed) { return std::min(speed, std::max(speed / 2, Viewer::kMinSpeed)); }

void WindowInput::keys(view::ViewerState& v, view::UiState& ui, InputActions& out) {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantCaptureKeyboard) return;
  if (ImGui::IsKeyPressed(GLFW_KEY_SPACE)) out.toggle_play = true;
  if (ImGui::IsKeyPressed(GLFW_KEY_RIGHT)) out.step = +1;
  if (ImGui::IsKeyPressed(GLFW_KEY_LEFT)) out.step = -1;
  const std::int64_t n = v.info().frame_count, at = std::max<std::int64_t>(v.frame_index(), 0);
  if (v.paced() && v.info().seekable && n > 0) {
    if (ImGui::IsKeyPressed(GLFW_KEY_HOME)) out.seek = 0;
    if (ImGui::IsKeyPressed(GLFW_KEY_END)) out.seek = n - 1;
    if (ImGui::IsKeyPressed(GLFW_KEY_PAGE_UP)) out.seek = std::max<std::int64_t>(at - 10, 0);
    if (ImGui::IsKeyPressed(GLFW_KEY_PAGE_DOWN)) out.seek = std::min<std::int64_t>(at + 10, n - 1);
  }
  if (ImGui::IsKeyPressed(GLFW_KEY_F)) fit_ = true;
  if (ImGui::IsKeyPressed(GLFW_KEY_G)) out.cycle_tile = true;
  if (ImGui::IsKeyPressed(GLFW_KEY_1)) ui.actual_size_requested = true;
  if (ImGui::IsKeyPressed(GLFW_KEY_N)) v.nearest_when_zoomed = !v.nearest_when_zoomed;
  if (ImGui::IsKeyPressed(GLFW_KEY_O)) v.show_overlays = !v.show_overlays;
  if (ImGui::IsKeyPressed(GLFW_KEY_H) || ImGui::IsKeyPressed(GLFW_KEY_TAB)) ui.show_panel = !ui.show_panel;
  if (ImGui::IsKeyPressed(GLFW_KEY_Q) || ImGui::IsKeyPressed(GLFW_KEY_ESCAPE)) out.quit = true;
  if (ImGui::IsKeyPressed(GLFW_KEY_EQUAL) || ImGui::IsKeyPressed(GLFW_KEY_KP_ADD)) v.speed = faster(v.speed);
  if (ImGui::IsKeyPressed(GLFW_KEY_MINUS) || ImGui::IsKeyPressed(GLFW_KEY_KP_SUBTRACT)) v.speed = slower(v.speed);
  for (unsigned int c : io.InputQueueCharacters)
    if (c == '?') ui.show_help = !ui.show_help;
}

void WindowInput::mouse(const MouseInput& m) {
  mx_ = m.x;
  my_ = m.y;
  if (!m.captured) {
    if (m.wheel != 0.0f) {
      fit_ = false;
      view_ = view::zoom_around(view_, std::pow(1.25, m.wheel), mx_, my_);
    }
    if (m.pressed) {  // the point under the press is the one grabbed, wherever the cursor is by now
      dragging_ = true;
      last_x_ = m.press_x;
      last_y_ = m.press_y;
    }
  }
  if (!dragging_) return;
  if (!m.down) {
    dragging_ = false;
  } else if (mx_ != last_x_ || my_ != last_y_) {
    fit_ = false;
    view_ = view::pan(view_, mx_ - last_x_, my_ - last_y_);
    last_x_ = mx_;
    last_y_ = my_;
  }
}

InputActions WindowInput::handle(const WindowSession& session, view::ViewerState& v, view::UiState& ui, int fb_w,
                                 int fb_h, double px_scale) {
  InputActions out;
  keys(v, ui, out);
  const ImGuiIO& io = ImGui::GetIO();
  if (!io.WantCaptureMouse && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) out.tile_click = true;
  MouseInput m;
  glfwGetCursorPos(session.window(), &m.x, &m.y);
  m.x *= px_scale;
  m.y *= px_scale;
  m.wheel = io.MouseWheel;
  m.captured = io.WantCaptureMouse;
  const bool left = ImGui::IsMouseClicked(ImGuiMouseButton_Left);
  m.pressed = left || ImGui::IsMouseClicked(ImGuiMouseButton_Middle);
  if (m.pressed) {
    // Where the button went down (GLFW's events), not where the cursor is by now.
    const WindowSession::Point at = session.pressed_at(left ? GLFW_MOUSE_BUTTON_LEFT : GLFW_MOUSE_BUTTON_MIDDLE);
    m.press_x = at.x * px_scale;
    m.press_y = at.y * px_scale;
  }
  m.down = ImGui::IsMouseDown(ImGuiMouseButton_Left) || ImGui::IsMouseDown(ImGuiMouseButton_Middle);
  const view::FeedInfo& info = v.info();
  if (ui.fit_requested) {
    fit_ = true;
    ui.fit_requested = false;
  }
  if (ui.actual_size_requested) {
    fit_ = false;
    view_ = view::actual_size_view(info.width, info.height, fb_w, fb_h);
    ui.actual_size_requested = false;
  }
  if (fit_) view_ = view::fit_view(info.width, info.height, fb_w, fb_h);
  mouse(m);
  return out;
}

}  // namespace handoff::view
