#pragma once
// Two GL 4.5 core contexts in one share group: the render thread's, and the
// GL worker's (where the interop library maps and fences the frame buffers).
// Buffers made on the worker are then visible to the renderer, and GL fences
// order the work across the two.
//  - headless: two EGL surfaceless contexts (no display, no X);
//  - window:   the GLFW window's context plus a hidden GLFW window sharing it
//              (made on the main thread, as GLFW requires; made current on the
//              worker thread, which GLFW allows).
#include <functional>
#include <memory>

#include <handoff/gl_context.hpp>

struct GLFWwindow;

namespace handoff::view {

struct SharedContexts {
  std::unique_ptr<GlContext> render;  // make current on the render thread
  // Hands the worker its context (GlWorkerOptions::context_factory); call once.
  std::function<std::unique_ptr<GlContext>()> worker_factory;
  // Window contexts: the hidden window holding the worker's context. Destroy
  // it on the GLFW thread once the worker stopped.
  GLFWwindow* hidden = nullptr;
};

// Throws handoff::Error (Api::Egl) naming the failing call.
SharedContexts make_headless_contexts(bool debug = false);
// `window` must have a current-able GL 4.5 context; call on the main thread.
// Throws handoff::Error when the hidden window cannot be made.
SharedContexts make_window_contexts(GLFWwindow* window);

}  // namespace handoff::view
