#pragma once
// A Dear ImGui context of its own, rendered by the OpenGL3 backend into
// whatever framebuffer is bound, with no window: used to draw overlays (and
// their text) into the frame-sized target, and the UI when headless.
//
// Thread safety: construct, use and destroy on one thread with a GL 4.5 core
// context current. Switches ImGui's current context only inside begin()/end()
// and restores the previous one; holds the ImGui lock (imgui_lock.hpp) from
// begin() to end() / discard(), so other threads' ImGui work waits meanwhile.
#include <mutex>

struct ImGuiContext;
struct ImDrawList;

namespace handoff::view {

class ImGuiOffscreen {
 public:
  ImGuiOffscreen();
  ~ImGuiOffscreen();
  ImGuiOffscreen(const ImGuiOffscreen&) = delete;
  ImGuiOffscreen& operator=(const ImGuiOffscreen&) = delete;

  // Starts a frame of size w x h (pixels); the context is current until end().
  void begin(int width, int height, float delta_seconds = 1.0f / 60.0f);
  // The background draw list of the current frame (overlays go here).
  ImDrawList& background();
  // Renders the frame into the bound framebuffer (GL state saved / restored by the backend).
  void end();
  // Ends the frame without drawing it (e.g. a layout pass).
  void discard();
  ImGuiContext* context() const { return context_; }

 private:
  ImGuiContext* context_ = nullptr;
  ImGuiContext* previous_ = nullptr;
  std::unique_lock<std::recursive_mutex> lock_;  // held between begin() and end() / discard()
};

}  // namespace handoff::view
