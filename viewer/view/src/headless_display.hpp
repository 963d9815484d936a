#pragma once
// A display without a window: its own thread with a headless EGL context
// (and the worker's, in one share group). Each frame is drawn, as soon as it
// is there, fitted into a view of the options' size with its overlays: what
// the window would show, without the panel. Nothing reaches a screen; the
// snapshots and the PNG output show what it draws.
#include <thread>

#include "display.hpp"

namespace handoff::view {

class HeadlessDisplay final : public Display {
 public:
  // Starts the thread and waits (bounded) until its contexts and worker are
  // up; throws what that threw (handoff::Error naming the EGL call).
  HeadlessDisplay(DisplayOptions options, std::shared_ptr<DisplayLink> link);
  ~HeadlessDisplay() override;  // close()
  void close() noexcept override;

 private:
  void run(const std::shared_ptr<std::promise<void>>& started) noexcept;
  void loop() noexcept;
  void check_view_size() const;  // UsageError past GL_MAX_TEXTURE_SIZE
  void draw_view();
  RgbaImage view_image();
  void release_gl() noexcept;

  std::unique_ptr<view::FrameTarget> view_target_;
  std::unique_ptr<view::ImGuiOffscreen> view_painter_;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace handoff::view
