#include "window_session.hpp"

#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <handoff/error.hpp>

#include "imgui_lock.hpp"

namespace handoff::view {

// Each callback runs with its window's ImGui context current (GLFW calls it
// from glfwPollEvents on the GLFW thread, whichever window is current).
struct WindowCallbacks {
  struct Scope {
    std::unique_lock<std::recursive_mutex> lock = view::imgui_lock();
    ImGuiContext* previous;
    explicit Scope(GLFWwindow* w) : previous(ImGui::GetCurrentContext()) {
      ImGui::SetCurrentContext(static_cast<WindowSession*>(glfwGetWindowUserPointer(w))->imgui_.get());
    }
    ~Scope() { ImGui::SetCurrentContext(previous); }
  };
  static void focus(GLFWwindow* w, int f) { Scope s(w); ImGui_ImplGlfw_WindowFocusCallback(w, f); }
  static void enter(GLFWwindow* w, int e) { Scope s(w); ImGui_ImplGlfw_CursorEnterCallback(w, e); }
  static WindowSession& session(GLFWwindow* w) { return *static_cast<WindowSession*>(glfwGetWindowUserPointer(w)); }
  static void cursor(GLFWwindow* w, double x, double y) {
    session(w).cursor_ = {x, y};
    session(w).cursor_seen_ = true;
  }
  static void button(GLFWwindow* w, int b, int a, int m) {
    WindowSession& ws = session(w);
    if (a == GLFW_PRESS && b >= 0 && b < int(ws.pressed_at_.size())) {
      if (!ws.cursor_seen_) glfwGetCursorPos(w, &ws.cursor_.x, &ws.cursor_.y);  // no motion since the window opened
      ws.pressed_at_[std::size_t(b)] = ws.cursor_;
    }
    Scope s(w);
    ImGui_ImplGlfw_MouseButtonCallback(w, b, a, m);
  }
  static void scroll(GLFWwindow* w, double x, double y) { Scope s(w); ImGui_ImplGlfw_ScrollCallback(w, x, y); }
  static void key(GLFWwindow* w, int k, int sc, int a, int m) { Scope s(w); ImGui_ImplGlfw_KeyCallback(w, k, sc, a, m); }
  static void character(GLFWwindow* w, unsigned c) { Scope s(w); ImGui_ImplGlfw_CharCallback(w, c); }
};

namespace {
void install_callbacks(GLFWwindow* w) {
  glfwSetWindowFocusCallback(w, &WindowCallbacks::focus);
  glfwSetCursorEnterCallback(w, &WindowCallbacks::enter);
  glfwSetMouseButtonCallback(w, &WindowCallbacks::button);
  glfwSetCursorPosCallback(w, &WindowCallbacks::cursor);
  glfwSetScrollCallback(w, &WindowCallbacks::scroll);
  glfwSetKeyCallback(w, &WindowCallbacks::key);
  glfwSetCharCallback(w, &WindowCallbacks::character);
}

GLFWwindow* create_window(const WindowSessionOptions& o) {
  glfwDefaultWindowHints();
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 4);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 5);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_OPENGL_DEBUG_CONTEXT, o.gl_debug ? GLFW_TRUE : GLFW_FALSE);
  GLFWwindow* w = glfwCreateWindow(o.width, o.height, o.title.c_str(), nullptr, nullptr);
  if (!w) {
    const char* why = nullptr;
    glfwGetError(&why);
    throw Error(Api::Gl, "glfwCreateWindow", 0, "", std::string("a GL 4.5 core window: ") + (why ? why : "unknown"),
                HANDOFF_WHERE);
  }
  return w;
}
}  // namespace

void WindowSession::WindowDestroyer::operator()(GLFWwindow* w) const noexcept {
  if (glfwGetCurrentContext() == w) glfwMakeContextCurrent(nullptr);
  glfwDestroyWindow(w);
}

void WindowSession::ImGuiDestroyer::operator()(ImGuiContext* c) const noexcept {
  auto lock = view::imgui_lock();
  ImGuiContext* previous = ImGui::GetCurrentContext();
  ImGui::DestroyContext(c);
  ImGui::SetCurrentContext(previous == c ? nullptr : previous);
}

WindowSession::DebugOutput::~DebugOutput() {
  if (!window) return;
  glfwMakeContextCurrent(window);
  disable_gl_debug_output();
}

WindowSession::Backend::~Backend() {
  if (!shutdown) return;
  auto lock = view::imgui_lock();
  glfwMakeContextCurrent(window);
  ImGuiContext* previous = ImGui::GetCurrentContext();
  ImGui::SetCurrentContext(context);
  shutdown();
  ImGui::SetCurrentContext(previous);
}

WindowSession::WindowSession(const WindowSessionOptions& o) : window_(create_window(o)) {
  GLFWwindow* w = window_.get();
  glfwSetWindowUserPointer(w, this);
  glfwMakeContextCurrent(w);
  load_gl(*wrap_context(ExternalContext{[w] { glfwMakeContextCurrent(w); }, {},
                                        [](const char* n) { return reinterpret_cast<void*>(glfwGetProcAddress(n)); },
                                        {}, "GLFW window"}));
  if (o.gl_debug && o.debug_sink && enable_gl_debug_output(o.debug_sink)) debug_.window = w;
  glfwSwapInterval(o.vsync ? 1 : 0);
  auto lock = view::imgui_lock();
  imgui_ = UniqueImGui(ImGui::CreateContext());
  ImGui::SetCurrentContext(imgui_.get());
  ImGui::GetIO().IniFilename = nullptr;
  ImGui::StyleColorsDark();
  glfw_backend_.window = gl_backend_.window = w;
  glfw_backend_.context = gl_backend_.context = imgui_.get();
  if (!ImGui_ImplGlfw_InitForOpenGL(w, false))
    throw Error(Api::Gl, "ImGui_ImplGlfw_InitForOpenGL", 0, "", "the ImGui GLFW backend did not start", HANDOFF_WHERE);
  glfw_backend_.shutdown = &ImGui_ImplGlfw_Shutdown;
  install_callbacks(w);
  if (!ImGui_ImplOpenGL3_Init("#version 410 core"))
    throw Error(Api::Gl, "ImGui_ImplOpenGL3_Init", 0, "", "the ImGui OpenGL3 backend did not start", HANDOFF_WHERE);
  gl_backend_.shutdown = &ImGui_ImplOpenGL3_Shutdown;
}

WindowSession::~WindowSession() = default;

void WindowSession::make_current() const {
  glfwMakeContextCurrent(window_.get());
  ImGui::SetCurrentContext(imgui_.get());  // the caller holds the ImGui lock
}

WindowSession::Point WindowSession::pressed_at(int button) const {
  return button >= 0 && button < int(pressed_at_.size()) ? pressed_at_[std::size_t(button)] : Point{};
}

void WindowSession::new_frame() const {
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
}

}  // namespace handoff::view
