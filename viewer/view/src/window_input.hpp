#pragma once
// Keyboard and mouse of a viewer's window, read once per frame from the
// window's ImGui context (when ImGui does not want them): the keys of the
// help window, zoom around the cursor, pan by dragging, fit / 1:1.
//
// Thread safety: the GLFW thread, the window's ImGui context current.
#include <cstdint>

#include "ui.hpp"
#include "view_transform.hpp"
#include "viewer_state.hpp"
#include "window_session.hpp"

namespace handoff::view {

// What the keys ask of the display (it owns pause, step and closing).
struct InputActions {
  bool toggle_play = false;
  int step = 0;  // -1 / +1
  std::int64_t seek = -1;  // Home / End / Page Up / Page Down in a file or recording: the frame to show
  bool quit = false;
  bool cycle_tile = false;  // G: a grid's next tile alone, then all again
  bool tile_click = false;  // a double click: the tile under the cursor alone (or all again)
};

// One frame of the mouse over the view (handle() reads it from ImGui and the
// window), in framebuffer pixels.
struct MouseInput {
  double x = 0, y = 0;              // the cursor now
  float wheel = 0;                  // scroll steps (up: zoom in)
  bool pressed = false;             // left or middle went down since the last frame
  double press_x = 0, press_y = 0;  // where it went down (the point a drag grabs)
  bool down = false;                // left or middle is held
  bool captured = false;            // ImGui takes the mouse (over the panel): no zoom, no new drag
};

// The + and - keys: twice and half the speed within Viewer::kMinSpeed ..
// kMaxSpeed; + never slows and - never speeds up (a speed set outside stays).
double faster(double speed);
double slower(double speed);

class WindowInput {
 public:
  // Applies one frame of input to the view, the live controls and the UI
  // state; `fb_w` x `fb_h` framebuffer pixels, `px_scale` framebuffer pixels
  // per window unit.
  InputActions handle(const WindowSession& session, view::ViewerState& state, view::UiState& ui, int fb_w, int fb_h,
                      double px_scale);
  // Wheel zoom around the cursor and drag to pan: the view point grabbed at
  // the press stays under the cursor (part of handle()).
  void mouse(const MouseInput& m);
  const view::ViewTransform& view() const { return view_; }
  // The cursor in framebuffer pixels (valid after handle()).
  double cursor_x() const { return mx_; }
  double cursor_y() const { return my_; }

 private:
  void keys(view::ViewerState& state, view::UiState& ui, InputActions& out);

  view::ViewTransform view_;
  bool fit_ = true;  // keep fitting until the user zooms or pans
  bool dragging_ = false;
  double last_x_ = 0, last_y_ = 0;
  double mx_ = 0, my_ = 0;
};

}  // namespace handoff::view
