#pragma once
// The GLFW window of one viewer, with what lives and dies with it: its GL 4.5
// core context (loaded, with KHR_debug output when asked), its own Dear ImGui
// context with the GLFW and OpenGL3 backends, and the GLFW callbacks that
// feed that ImGui context (several windows share the GLFW thread, so each
// callback makes its window's ImGui context current first). Destruction order
// is the reverse of construction: ImGui backends, debug output, window.
//
// Thread safety: the GLFW thread only.
#include <array>
#include <functional>
#include <memory>
#include <string>

#include <handoff/gl_context.hpp>
#include <handoff/unique_handle.hpp>

struct GLFWwindow;
struct ImGuiContext;

namespace handoff::view {

struct WindowSessionOptions {
  std::string title = "handoff";
  int width = 1280, height = 720;
  bool vsync = true;
  bool gl_debug = false;
  const std::function<void(const GlDebugMessage&)>* debug_sink = nullptr;  // outlives the session
};

class WindowSession {
 public:
  // Throws handoff::Error (Api::Gl, "glfwCreateWindow") naming GLFW's reason.
  explicit WindowSession(const WindowSessionOptions& options);
  ~WindowSession();
  WindowSession(const WindowSession&) = delete;
  WindowSession& operator=(const WindowSession&) = delete;

  GLFWwindow* window() const noexcept { return window_.get(); }
  // Makes the window's GL context and ImGui context current; hold the ImGui
  // lock (imgui_lock.hpp) while the ImGui context is used.
  void make_current() const;
  // ImGui frame start for this window (after make_current()).
  void new_frame() const;
  // Where mouse button `button` (GLFW_MOUSE_BUTTON_*, 0..7) last went down, in window units: the cursor
  // of the events before the press, not where it is when the press is read.
  struct Point {
    double x = 0, y = 0;
  };
  Point pressed_at(int button) const;

 private:
  struct WindowDestroyer {
    void operator()(GLFWwindow* window) const noexcept;
  };
  struct ImGuiDestroyer {
    void operator()(ImGuiContext* context) const noexcept;
  };
  using UniqueWindow = UniqueHandle<GLFWwindow*, WindowDestroyer, nullptr>;
  using UniqueImGui = UniqueHandle<ImGuiContext*, ImGuiDestroyer, nullptr>;
  // KHR_debug output of the window's context, turned off when it goes.
  struct DebugOutput {
    GLFWwindow* window = nullptr;  // set when on
    DebugOutput() = default;
    DebugOutput(const DebugOutput&) = delete;
    DebugOutput& operator=(const DebugOutput&) = delete;
    ~DebugOutput();
  };
  // An initialised ImGui backend, shut down with its window's GL and ImGui
  // contexts current.
  struct Backend {
    GLFWwindow* window = nullptr;
    ImGuiContext* context = nullptr;
    void (*shutdown)() = nullptr;  // set once initialised
    Backend() = default;
    Backend(const Backend&) = delete;
    Backend& operator=(const Backend&) = delete;
    ~Backend();
  };
  // Member order is destruction order, reversed.
  UniqueWindow window_;
  DebugOutput debug_;
  UniqueImGui imgui_;
  Backend glfw_backend_;
  Backend gl_backend_;
  Point cursor_;  // the cursor as the events left it (GLFW's cursor position callback)
  bool cursor_seen_ = false;
  std::array<Point, 8> pressed_at_{};
  friend struct WindowCallbacks;
};

}  // namespace handoff::view
