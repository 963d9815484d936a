#pragma once
// GL contexts for the GL worker: a headless EGL context (GL 4.5 core, no window,
// no X) or an application's own context (e.g. a hidden GLFW window sharing
// objects with the viewer's main window), plus what the driver says about itself.
//
// Core:     create_headless_context, GlContext, GlInfo
// Optional: wrap_context (an application-made context), GlDebugMessage
// Advanced: load_gl, query_gl_info, enable_gl_debug_output (what the worker does
//           on its own thread; exposed for applications driving GL themselves)
#include <handoff/uuid.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace handoff {

// Whether a GL_RENDERER string names a software rasteriser: Mesa's llvmpipe,
// softpipe and swrast, SwiftShader. Pure.
bool is_software_renderer(std::string_view gl_renderer);

// What a GL context reports. A value; thread-safe to copy and read.
struct GlInfo {
  std::string platform;  // how the context was made: "EGL surfaceless", "EGL device 0", or the app's text
  std::string vendor, renderer, version, shading_language;
  std::vector<std::string> extensions;
  bool debug_context = false;  // GL_CONTEXT_FLAG_DEBUG_BIT set
  bool memory_object = false, memory_object_fd = false;  // GL_EXT_memory_object(_fd)
  bool semaphore = false, semaphore_fd = false;          // GL_EXT_semaphore(_fd)
  bool khr_debug = false;
  std::optional<Uuid> device_uuid;  // GL_DEVICE_UUID_EXT (needs GL_EXT_memory_object)
  std::optional<Uuid> driver_uuid;  // GL_DRIVER_UUID_EXT

  bool has_extension(std::string_view name) const;
  bool software_rasteriser() const { return is_software_renderer(renderer); }
};

// One KHR_debug message, with the GL enums and their names.
struct GlDebugMessage {
  unsigned source = 0, type = 0, id = 0, severity = 0;
  std::string text;
  bool is_error() const;  // type == GL_DEBUG_TYPE_ERROR
  std::string_view source_name() const;    // "API", "SHADER_COMPILER", ...
  std::string_view type_name() const;      // "ERROR", "PERFORMANCE", ...
  std::string_view severity_name() const;  // "HIGH", "MEDIUM", "LOW", "NOTIFICATION"
  std::string describe() const;            // one line with all of the above
};

// A GL context that one thread at a time can make current.
// Thread safety: call each method from the thread that uses the context (the GL
// worker); the object may be destroyed on that thread after done_current().
class GlContext {
 public:
  virtual ~GlContext() = default;
  // Makes the context current on the calling thread; throws handoff::Error on failure.
  virtual void make_current() = 0;
  // Releases it from the calling thread. Never throws.
  virtual void done_current() noexcept = 0;
  // Looks up a GL entry point (eglGetProcAddress, glfwGetProcAddress, ...).
  virtual void* get_proc_address(const char* name) const = 0;
  // "EGL surfaceless", "EGL device 1 (CUDA 0)", or what the application said.
  virtual std::string description() const = 0;
};

enum class EglPlatform { Auto, Surfaceless, Device };

struct HeadlessContextOptions {
  bool debug = false;  // a debug context (KHR_debug messages are produced)
  // Prefer the EGL device whose EGL_CUDA_DEVICE_NV equals this CUDA ordinal
  // (EGL_NV_device_cuda, NVIDIA); -1: the lowest CUDA ordinal an EGL device
  // reports, if any (Auto only).
  int cuda_device = -1;
  // Auto: the device platform for that CUDA ordinal when a device has it,
  // else surfaceless (Mesa), else the first device that works.
  EglPlatform platform = EglPlatform::Auto;
};

// Creates a headless GL 4.5 core context through EGL. The context is not
// current anywhere. Throws handoff::Error (Api::Egl) naming the failing call and
// EGL error, or saying which extension is missing. Thread-safe. The EGL display
// is initialized once and never terminated: displays are process-wide, shared
// with every other EGL user of the process.
std::unique_ptr<GlContext> create_headless_context(const HeadlessContextOptions& options = {});

// An application-made context, e.g. a hidden GLFW window created sharing with
// the main window. Every callback runs on the thread that owns the context.
struct ExternalContext {
  std::function<void()> make_current;             // required; may throw
  std::function<void()> done_current;             // optional
  std::function<void*(const char*)> get_proc_address;  // required (glfwGetProcAddress)
  std::function<void()> destroy;                  // optional; runs when the wrapper dies
  std::string description = "application context";
};
// Throws handoff::UsageError when a required callback is missing.
std::unique_ptr<GlContext> wrap_context(ExternalContext context);

// --- advanced: on a thread with the context current -------------------------
// Makes the process-wide GL entry points (glad) usable with `context`, which
// must be current on the calling thread. The first successful call loads them;
// a failed one (no context current, say) throws handoff::Error and leaves them
// unloaded, so a later call tries again. A later context that reports an
// extension none of the contexts loaded before had loads them again, so that
// extension's entry points are there; the others are rewritten with the same
// addresses (EGL / GLX / GLFW entry points do not depend on the context), but
// make such a context current and load it before other threads call GL.
// What a context supports is per context: ask its GlInfo (query_gl_info), not
// glad's GLAD_GL_* flags, which describe the context loaded last. Every
// GL-using component of the process goes through this.
// Thread safety: any thread; calls are serialized.
void load_gl(const GlContext& context);
// Fills a GlInfo from the current context. `platform` is copied into it.
GlInfo query_gl_info(std::string platform);
// Turns on synchronous KHR_debug output for the current context; each message
// goes to handoff::log and then to `sink` (which may be empty). `sink` must
// outlive the context or a later call to disable_gl_debug_output().
// Returns false when the context has no KHR_debug.
bool enable_gl_debug_output(const std::function<void(const GlDebugMessage&)>* sink);
void disable_gl_debug_output() noexcept;

}  // namespace handoff
