#pragma once
// A display in a GLFW window with the Dear ImGui panel, drawn by the
// process's GLFW thread (WindowLoop) in turn with the other windows. Its GL
// worker's context is a hidden window sharing objects with it, destroyed on
// the GLFW thread once the worker stopped.
#include <memory>

#include "display.hpp"
#include "window_input.hpp"
#include "window_loop.hpp"
#include "window_session.hpp"

namespace handoff::view {

class WindowDisplay final : public Display, public WindowClient {
 public:
  // Opens the window on the GLFW thread (waiting, bounded); handoff::Error
  // when GLFW or the window cannot be made (the viewer then goes headless).
  WindowDisplay(DisplayOptions options, std::shared_ptr<DisplayLink> link);
  ~WindowDisplay() override;  // close()
  void close() noexcept override;
  bool frame() noexcept override;

 private:
  void open();
  void draw(int fb_w, int fb_h, int win_w, int win_h, double px_scale, bool fresh);
  void apply(const InputActions& actions);
  void capture_views();
  void teardown() noexcept;

  std::shared_ptr<WindowLoop> loop_;
  std::unique_ptr<WindowSession> session_;
  WindowInput input_;
  bool presented_any_ = false;
};

}  // namespace handoff::view
