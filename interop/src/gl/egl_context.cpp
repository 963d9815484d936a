// Headless EGL contexts (surfaceless / device platform) and application-made
// contexts wrapped as GlContext.
#include <handoff/detail/egl_handles.hpp>
#include <handoff/error.hpp>
#include <handoff/gl_context.hpp>
#include <handoff/log.hpp>

#include "gl/egl_util.hpp"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <cstring>
#include <set>
#include <mutex>
#include <string>
#include <vector>

namespace handoff::detail {

std::string egl_error_name(int e) {
  switch (e) {
    case EGL_SUCCESS: return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
    case EGL_BAD_CURRENT_SURFACE: return "EGL_BAD_CURRENT_SURFACE";
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
    case EGL_BAD_NATIVE_PIXMAP: return "EGL_BAD_NATIVE_PIXMAP";
    case EGL_BAD_NATIVE_WINDOW: return "EGL_BAD_NATIVE_WINDOW";
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
    case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
    case EGL_CONTEXT_LOST: return "EGL_CONTEXT_LOST";
    default: return "EGL error";
  }
}

bool has_word(const char* list, std::string_view word) {
  if (!list) return false;
  std::string_view s(list);
  std::size_t pos = 0;
  while (pos < s.size()) {
    std::size_t end = s.find(' ', pos);
    if (end == std::string_view::npos) end = s.size();
    if (s.substr(pos, end - pos) == word) return true;
    pos = end + 1;
  }
  return false;
}

void EglContextDestroy::operator()(void* context) const noexcept {
  if (eglGetCurrentContext() == context) eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  if (!eglDestroyContext(display, context))
    log(LogLevel::Error, "eglDestroyContext failed with " + egl_error_name(eglGetError()));
}

}  // namespace handoff::detail

namespace handoff {
namespace {

using detail::egl_error_name;
using detail::has_word;


[[noreturn]] void throw_egl(const char* call, const std::string& detail, const char* where) {
  EGLint e = eglGetError();
  throw Error(Api::Egl, call, e, egl_error_name(e), detail, where);
}


// An EGLDisplay is process-wide: eglGetPlatformDisplayEXT hands every caller
// (our workers, the viewer's own EGL code) the same one, and eglTerminate would
// pull it from under all of them. So a display is initialized once and stays
// initialized for the life of the process; contexts are what we create and destroy.
std::mutex g_display_mutex;
std::set<EGLDisplay> g_initialized;

void initialize_display(EGLDisplay dpy) {
  std::lock_guard lock(g_display_mutex);
  if (g_initialized.count(dpy)) return;
  EGLint major = 0, minor = 0;
  if (!eglInitialize(dpy, &major, &minor)) throw_egl("eglInitialize", "", HANDOFF_WHERE);
  g_initialized.insert(dpy);
}

struct EglEntryPoints {
  PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display = nullptr;
  PFNEGLQUERYDEVICESEXTPROC query_devices = nullptr;
  PFNEGLQUERYDEVICEATTRIBEXTPROC query_device_attrib = nullptr;
  PFNEGLQUERYDEVICESTRINGEXTPROC query_device_string = nullptr;
  const char* client_extensions = nullptr;
};

EglEntryPoints load_egl_client() {
  EglEntryPoints p;
  p.client_extensions = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  if (!p.client_extensions) eglGetError();  // no client extensions: clear the error
  p.get_platform_display =
      reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
  if (has_word(p.client_extensions, "EGL_EXT_device_enumeration") ||
      has_word(p.client_extensions, "EGL_EXT_device_base")) {
    p.query_devices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    p.query_device_attrib =
        reinterpret_cast<PFNEGLQUERYDEVICEATTRIBEXTPROC>(eglGetProcAddress("eglQueryDeviceAttribEXT"));
    p.query_device_string =
        reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(eglGetProcAddress("eglQueryDeviceStringEXT"));
  }
  return p;
}

class EglContext final : public GlContext {
 public:
  EglContext(EGLDisplay dpy, std::string description, bool debug)
      : dpy_(dpy), description_(std::move(description)) {
    initialize_display(dpy_);
    ctx_ = create(debug);
  }
  void make_current() override {
    if (!eglMakeCurrent(dpy_, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx_.get()))
      throw_egl("eglMakeCurrent", "headless context (" + description_ + ")", HANDOFF_WHERE);
  }
  void done_current() noexcept override {
    eglMakeCurrent(dpy_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglReleaseThread();
  }
  void* get_proc_address(const char* name) const override {
    return reinterpret_cast<void*>(eglGetProcAddress(name));
  }
  std::string description() const override { return description_; }

 private:
  detail::UniqueEglContext create(bool debug) {
    const char* exts = eglQueryString(dpy_, EGL_EXTENSIONS);
    if (!has_word(exts, "EGL_KHR_surfaceless_context"))
      throw Error(Api::Egl, "eglQueryString(EGL_EXTENSIONS)", 0, "",
                  "the display (" + description_ + ") lacks EGL_KHR_surfaceless_context", HANDOFF_WHERE);
    if (!eglBindAPI(EGL_OPENGL_API)) throw_egl("eglBindAPI(EGL_OPENGL_API)", "", HANDOFF_WHERE);
    EGLConfig config = EGL_NO_CONFIG_KHR;
    if (!has_word(exts, "EGL_KHR_no_config_context")) {
      const EGLint attribs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
      EGLint n = 0;
      if (!eglChooseConfig(dpy_, attribs, &config, 1, &n) || n < 1)
        throw_egl("eglChooseConfig", "no config renders desktop OpenGL", HANDOFF_WHERE);
    }
    const EGLint attribs[] = {EGL_CONTEXT_MAJOR_VERSION,
                              4,
                              EGL_CONTEXT_MINOR_VERSION,
                              5,
                              EGL_CONTEXT_OPENGL_PROFILE_MASK,
                              EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                              EGL_CONTEXT_OPENGL_DEBUG,
                              debug ? EGL_TRUE : EGL_FALSE,
                              EGL_NONE};
    detail::UniqueEglContext ctx(eglCreateContext(dpy_, config, EGL_NO_CONTEXT, attribs), {dpy_});
    if (!ctx) throw_egl("eglCreateContext", "GL 4.5 core on " + description_, HANDOFF_WHERE);
    return ctx;
  }

  EGLDisplay dpy_;
  std::string description_;
  detail::UniqueEglContext ctx_;  // destroyed (made not current first if it is) with the object
};

struct DeviceChoice {
  EGLDeviceEXT device = nullptr;
  int index = -1;
  int cuda = -1;
};

std::vector<DeviceChoice> list_devices(const EglEntryPoints& p) {
  std::vector<DeviceChoice> out;
  if (!p.query_devices) return out;
  EGLint n = 0;
  if (!p.query_devices(0, nullptr, &n) || n <= 0) {
    eglGetError();
    return out;
  }
  std::vector<EGLDeviceEXT> devs(static_cast<std::size_t>(n));
  if (!p.query_devices(n, devs.data(), &n)) {
    eglGetError();
    return out;
  }
  for (EGLint i = 0; i < n; ++i) {
    DeviceChoice c{devs[i], i, -1};
    const char* dext = p.query_device_string ? p.query_device_string(devs[i], EGL_EXTENSIONS) : nullptr;
    if (has_word(dext, "EGL_NV_device_cuda") && p.query_device_attrib) {
      EGLAttrib v = -1;
      if (p.query_device_attrib(devs[i], EGL_CUDA_DEVICE_NV, &v)) c.cuda = static_cast<int>(v);
      else eglGetError();
    }
    out.push_back(c);
  }
  return out;
}

std::unique_ptr<GlContext> try_device(const EglEntryPoints& p, const DeviceChoice& d, bool debug) {
  EGLDisplay dpy = p.get_platform_display(EGL_PLATFORM_DEVICE_EXT, d.device, nullptr);
  if (dpy == EGL_NO_DISPLAY) throw_egl("eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT)", "", HANDOFF_WHERE);
  std::string desc = "EGL device " + std::to_string(d.index);
  if (d.cuda >= 0) desc += " (CUDA " + std::to_string(d.cuda) + ")";
  return std::make_unique<EglContext>(dpy, desc, debug);
}

std::unique_ptr<GlContext> try_surfaceless(const EglEntryPoints& p, bool debug) {
  EGLDisplay dpy = p.get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
  if (dpy == EGL_NO_DISPLAY)
    throw_egl("eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA)", "", HANDOFF_WHERE);
  return std::make_unique<EglContext>(dpy, "EGL surfaceless", debug);
}

class WrappedContext final : public GlContext {
 public:
  explicit WrappedContext(ExternalContext c) : c_(std::move(c)) {}
  ~WrappedContext() override {
    if (c_.destroy) {
      try {
        c_.destroy();
      } catch (const std::exception& e) {
        log(LogLevel::Error, std::string("GL context destroy callback threw: ") + e.what());
      } catch (...) {
        log(LogLevel::Error, "GL context destroy callback threw");
      }
    }
  }
  void make_current() override { c_.make_current(); }
  void done_current() noexcept override {
    if (!c_.done_current) return;
    try {
      c_.done_current();
    } catch (...) {
      log(LogLevel::Error, "GL context done_current callback threw");
    }
  }
  void* get_proc_address(const char* name) const override { return c_.get_proc_address(name); }
  std::string description() const override { return c_.description; }

 private:
  ExternalContext c_;
};

}  // namespace

std::unique_ptr<GlContext> create_headless_context(const HeadlessContextOptions& o) {
  EglEntryPoints p = load_egl_client();
  if (!p.get_platform_display || !has_word(p.client_extensions, "EGL_EXT_platform_base"))
    throw Error(Api::Egl, "eglGetProcAddress(eglGetPlatformDisplayEXT)", 0, "",
                "EGL_EXT_platform_base is missing: no headless EGL platform", HANDOFF_WHERE);
  const bool has_surfaceless = has_word(p.client_extensions, "EGL_MESA_platform_surfaceless");
  const bool has_device = has_word(p.client_extensions, "EGL_EXT_platform_device") && p.query_devices;
  std::vector<DeviceChoice> devices = has_device ? list_devices(p) : std::vector<DeviceChoice>{};
  std::string failures;
  auto note = [&](const std::exception& e) {
    if (!failures.empty()) failures += "; ";
    failures += e.what();
  };

  // NVIDIA: the device whose CUDA ordinal was asked for; with no request, the
  // device of CUDA ordinal 0 when there is one (CUDA interop needs the CUDA
  // GPU, and surfaceless may land on another vendor's, e.g. Mesa's llvmpipe).
  int wanted_cuda = o.cuda_device;
  if (wanted_cuda < 0 && o.platform == EglPlatform::Auto) {
    for (const auto& d : devices)
      if (d.cuda >= 0 && (wanted_cuda < 0 || d.cuda < wanted_cuda)) wanted_cuda = d.cuda;
  }
  if (o.platform != EglPlatform::Surfaceless && wanted_cuda >= 0) {
    for (const auto& d : devices) {
      if (d.cuda != wanted_cuda) continue;
      try {
        return try_device(p, d, o.debug);
      } catch (const std::exception& e) {
        note(e);
      }
    }
    if (o.platform == EglPlatform::Device && failures.empty() && !devices.empty())
      log(LogLevel::Info, "EGL: no device reports EGL_CUDA_DEVICE_NV " + std::to_string(wanted_cuda) +
                              "; using the first device that works");
  }
  if (o.platform != EglPlatform::Device && has_surfaceless) {
    try {
      return try_surfaceless(p, o.debug);
    } catch (const std::exception& e) {
      note(e);
    }
  }
  if (o.platform != EglPlatform::Surfaceless) {
    for (const auto& d : devices) {
      try {
        return try_device(p, d, o.debug);
      } catch (const std::exception& e) {
        note(e);
      }
    }
  }
  if (failures.empty()) {
    failures = std::string("no usable platform (surfaceless ") + (has_surfaceless ? "present" : "absent") +
               ", device platform " + (has_device ? "present" : "absent") + ", " +
               std::to_string(devices.size()) + " EGL devices)";
  }
  throw Error(Api::Egl, "create_headless_context", 0, "", failures, HANDOFF_WHERE);
}

std::unique_ptr<GlContext> wrap_context(ExternalContext c) {
  if (!c.make_current) throw UsageError("wrap_context: ExternalContext::make_current is required");
  if (!c.get_proc_address) throw UsageError("wrap_context: ExternalContext::get_proc_address is required");
  return std::make_unique<WrappedContext>(std::move(c));
}

}  // namespace handoff
