#include "shared_contexts.hpp"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <string>

#include <handoff/detail/egl_handles.hpp>
#include <handoff/error.hpp>

namespace handoff::view {
namespace {

[[noreturn]] void egl_fail(const char* call) {
  const EGLint e = eglGetError();
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%04X", static_cast<unsigned>(e));
  throw Error(Api::Egl, call, e, hex, "headless GL 4.5 core context pair (EGL surfaceless)", HANDOFF_WHERE);
}

// Two contexts in one share group. The display stays initialised when the
// pair goes: other parts of the process may use it.
struct EglPair {
  EGLDisplay display = EGL_NO_DISPLAY;
  handoff::detail::UniqueEglContext render;
  handoff::detail::UniqueEglContext worker;  // member order is destruction order: the shared one first
};

// The surfaceless platform (Mesa), else an EGL device, preferably CUDA device
// 0's (NVIDIA has no surfaceless platform). Initialised; `platform` says which.
EGLDisplay open_headless_display(std::string& platform) {
  auto get_display =
      reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
  if (!get_display)
    throw Error(Api::Egl, "eglGetProcAddress", 0, "", "eglGetPlatformDisplayEXT is missing", HANDOFF_WHERE);
  platform = "EGL surfaceless";
  const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  const std::string ext = client ? client : "";
  if (ext.find("EGL_MESA_platform_surfaceless") != std::string::npos) {
    EGLDisplay d = get_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (d != EGL_NO_DISPLAY && eglInitialize(d, nullptr, nullptr)) return d;
  }
  if (ext.find("EGL_EXT_platform_device") == std::string::npos) return EGL_NO_DISPLAY;
  auto query_devices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
  auto query_attrib = reinterpret_cast<PFNEGLQUERYDEVICEATTRIBEXTPROC>(eglGetProcAddress("eglQueryDeviceAttribEXT"));
  EGLDeviceEXT devices[16];
  EGLint count = 0;
  if (!query_devices || !query_devices(16, devices, &count) || count <= 0) return EGL_NO_DISPLAY;
  int pick = 0;
  for (EGLint i = 0; i < count && query_attrib; ++i) {
    EGLAttrib cuda = -1;
    if (query_attrib(devices[i], EGL_CUDA_DEVICE_NV, &cuda) && cuda == 0) {
      pick = int(i);
      break;
    }
  }
  for (EGLint k = 0; k < count; ++k) {
    const int i = (pick + int(k)) % int(count);
    EGLDisplay d = get_display(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
    if (d != EGL_NO_DISPLAY && eglInitialize(d, nullptr, nullptr)) {
      platform = "EGL device " + std::to_string(i);
      return d;
    }
  }
  return EGL_NO_DISPLAY;
}

}  // namespace

SharedContexts make_headless_contexts(bool debug) {
  auto pair = std::make_shared<EglPair>();
  std::string platform;
  pair->display = open_headless_display(platform);
  if (pair->display == EGL_NO_DISPLAY)
    egl_fail("eglGetPlatformDisplayEXT (neither EGL_MESA_platform_surfaceless nor an EGL_EXT_platform_device device)");
  if (!eglBindAPI(EGL_OPENGL_API)) egl_fail("eglBindAPI");
  const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 5,
                          EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                          EGL_CONTEXT_OPENGL_DEBUG, debug ? EGL_TRUE : EGL_FALSE, EGL_NONE};
  using handoff::detail::UniqueEglContext;
  const handoff::detail::EglContextDestroy destroy{pair->display};
  pair->render = UniqueEglContext(eglCreateContext(pair->display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs), destroy);
  if (!pair->render) egl_fail("eglCreateContext");
  pair->worker = UniqueEglContext(eglCreateContext(pair->display, EGL_NO_CONFIG_KHR, pair->render.get(), attrs), destroy);
  if (!pair->worker) egl_fail("eglCreateContext(shared)");

  auto wrap = [pair](EGLContext ctx, std::string what) {
    ExternalContext e;
    e.make_current = [pair, ctx] {
      if (!eglMakeCurrent(pair->display, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) egl_fail("eglMakeCurrent");
    };
    e.done_current = [pair] { eglMakeCurrent(pair->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT); };
    e.get_proc_address = [](const char* n) { return reinterpret_cast<void*>(eglGetProcAddress(n)); };
    e.destroy = [pair] {};  // the pair goes with its last wrapper
    e.description = std::move(what);
    return wrap_context(std::move(e));
  };
  SharedContexts s;
  s.render = wrap(pair->render.get(), platform + " (render)");
  auto worker = std::make_shared<std::unique_ptr<GlContext>>(wrap(pair->worker.get(), platform + " (worker, shared)"));
  s.worker_factory = [worker] { return std::move(*worker); };
  return s;
}

SharedContexts make_window_contexts(GLFWwindow* window) {
  glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  GLFWwindow* hidden = glfwCreateWindow(16, 16, "handoff-gl-worker", nullptr, window);
  glfwWindowHint(GLFW_VISIBLE, GLFW_TRUE);
  if (!hidden) {
    const char* why = nullptr;
    glfwGetError(&why);
    throw Error(Api::Gl, "glfwCreateWindow", 0, "", std::string("hidden worker window: ") + (why ? why : "?"),
                HANDOFF_WHERE);
  }
  SharedContexts s;
  s.render = wrap_context(ExternalContext{[window] { glfwMakeContextCurrent(window); },
                                          [] { glfwMakeContextCurrent(nullptr); },
                                          [](const char* n) { return reinterpret_cast<void*>(glfwGetProcAddress(n)); },
                                          {}, "GLFW window"});
  // The hidden window is destroyed by the main thread (GLFW rule) after the
  // worker let go of it: the wrapper's destroy only releases the context.
  auto ctx = std::make_shared<std::unique_ptr<GlContext>>(wrap_context(ExternalContext{
      [hidden] { glfwMakeContextCurrent(hidden); }, [] { glfwMakeContextCurrent(nullptr); },
      [](const char* n) { return reinterpret_cast<void*>(glfwGetProcAddress(n)); }, {},
      "GLFW hidden window (worker, shared)"}));
  s.worker_factory = [ctx] { return std::move(*ctx); };
  s.hidden = hidden;
  return s;
}

}  // namespace handoff::view
