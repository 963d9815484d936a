// GL loading (glad's process-wide entry points, loaded again for a context
// with extensions no earlier one had), context information, KHR_debug output
// and the GL check helper.
#include <glad/gl.h>

#include <handoff/error.hpp>
#include <handoff/gl_check.hpp>
#include <handoff/gl_context.hpp>
#include <handoff/log.hpp>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace handoff {

bool GlInfo::has_extension(std::string_view name) const {
  return std::find(extensions.begin(), extensions.end(), name) != extensions.end();
}

bool is_software_renderer(std::string_view r) {
  for (std::string_view name : {"llvmpipe", "softpipe", "swrast", "SwiftShader", "Software Rasterizer"})
    if (r.find(name) != std::string_view::npos) return true;
  return false;
}

bool GlDebugMessage::is_error() const { return type == GL_DEBUG_TYPE_ERROR; }

std::string_view GlDebugMessage::source_name() const {
  switch (source) {
    case GL_DEBUG_SOURCE_API: return "API";
    case GL_DEBUG_SOURCE_WINDOW_SYSTEM: return "WINDOW_SYSTEM";
    case GL_DEBUG_SOURCE_SHADER_COMPILER: return "SHADER_COMPILER";
    case GL_DEBUG_SOURCE_THIRD_PARTY: return "THIRD_PARTY";
    case GL_DEBUG_SOURCE_APPLICATION: return "APPLICATION";
    case GL_DEBUG_SOURCE_OTHER: return "OTHER";
  }
  return "?";
}

std::string_view GlDebugMessage::type_name() const {
  switch (type) {
    case GL_DEBUG_TYPE_ERROR: return "ERROR";
    case GL_DEBUG_TYPE_DEPRECATED_BEHAVIOR: return "DEPRECATED_BEHAVIOR";
    case GL_DEBUG_TYPE_UNDEFINED_BEHAVIOR: return "UNDEFINED_BEHAVIOR";
    case GL_DEBUG_TYPE_PORTABILITY: return "PORTABILITY";
    case GL_DEBUG_TYPE_PERFORMANCE: return "PERFORMANCE";
    case GL_DEBUG_TYPE_MARKER: return "MARKER";
    case GL_DEBUG_TYPE_PUSH_GROUP: return "PUSH_GROUP";
    case GL_DEBUG_TYPE_POP_GROUP: return "POP_GROUP";
    case GL_DEBUG_TYPE_OTHER: return "OTHER";
  }
  return "?";
}

std::string_view GlDebugMessage::severity_name() const {
  switch (severity) {
    case GL_DEBUG_SEVERITY_HIGH: return "HIGH";
    case GL_DEBUG_SEVERITY_MEDIUM: return "MEDIUM";
    case GL_DEBUG_SEVERITY_LOW: return "LOW";
    case GL_DEBUG_SEVERITY_NOTIFICATION: return "NOTIFICATION";
  }
  return "?";
}

std::string GlDebugMessage::describe() const {
  return "GL debug [source " + std::string(source_name()) + ", type " + std::string(type_name()) + ", severity " +
         std::string(severity_name()) + ", id " + std::to_string(id) + "]: " + text;
}

namespace {
// glad keeps one table of entry points and extension flags for the process.
// It is loaded by the first successful load_gl (a failed one leaves it
// unloaded, so the next call tries again), and loaded again when a context
// reports an extension that none of the contexts loaded before had: glad
// loads an extension's entry points only when the context it loads from has
// it. Contexts of one driver report one set, so that is rare.
std::mutex g_load_mutex;
bool g_loaded = false;                      // guarded by g_load_mutex
std::set<std::string> g_loaded_extensions;  // the union over the contexts loaded; same lock
thread_local const GlContext* tl_load_context = nullptr;

GLADapiproc load_proc(const char* name) {
  return reinterpret_cast<GLADapiproc>(tl_load_context->get_proc_address(name));
}

// The extensions of `context` (current on this thread), read through its own
// entry points: the process-wide ones may not be loaded yet. Empty when no GL
// 3.0+ context is current, or it lacks the calls glad loads with.
std::optional<std::vector<std::string>> context_extensions(const GlContext& context) {
  auto get_string = reinterpret_cast<PFNGLGETSTRINGPROC>(context.get_proc_address("glGetString"));
  auto get_integerv = reinterpret_cast<PFNGLGETINTEGERVPROC>(context.get_proc_address("glGetIntegerv"));
  auto get_stringi = reinterpret_cast<PFNGLGETSTRINGIPROC>(context.get_proc_address("glGetStringi"));
  if (!get_string || !get_integerv || !get_stringi || !get_string(GL_VERSION)) return std::nullopt;
  GLint n = 0;
  get_integerv(GL_NUM_EXTENSIONS, &n);
  std::vector<std::string> out;
  for (GLint i = 0; i < n; ++i) {
    if (const GLubyte* s = get_stringi(GL_EXTENSIONS, static_cast<GLuint>(i)))
      out.emplace_back(reinterpret_cast<const char*>(s));
  }
  return out;
}
}  // namespace

void load_gl(const GlContext& context) {
  std::lock_guard lock(g_load_mutex);
  const auto extensions = context_extensions(context);
  if (!extensions)
    throw Error(Api::Gl, "gladLoadGL", 0, "",
                "could not load the GL entry points: no GL 3.0+ context is current (glGetString(GL_VERSION) "
                "failed or glGetStringi is missing) on " + context.description(),
                HANDOFF_WHERE);
  const auto new_extension = std::find_if(extensions->begin(), extensions->end(),
                                          [](const std::string& e) { return !g_loaded_extensions.count(e); });
  if (g_loaded) {
    if (new_extension == extensions->end()) return;
    log(LogLevel::Info, "load_gl: loading the GL entry points again for " + context.description() + ", which has " +
                            *new_extension + " (no context loaded before had it)");
  }
  tl_load_context = &context;
  const int version = gladLoadGL(load_proc);
  tl_load_context = nullptr;
  g_loaded = version != 0;
  if (!g_loaded)
    throw Error(Api::Gl, "gladLoadGL", 0, "", "could not load the GL entry points from " + context.description(),
                HANDOFF_WHERE);
  g_loaded_extensions.insert(extensions->begin(), extensions->end());
}

GlInfo query_gl_info(std::string platform) {
  GlInfo info;
  info.platform = std::move(platform);
  auto str = [](GLenum e) {
    const GLubyte* s = glGetString(e);
    return s ? std::string(reinterpret_cast<const char*>(s)) : std::string();
  };
  info.vendor = str(GL_VENDOR);
  info.renderer = str(GL_RENDERER);
  info.version = str(GL_VERSION);
  info.shading_language = str(GL_SHADING_LANGUAGE_VERSION);
  GLint n = 0;
  HANDOFF_GL_CHECK(glGetIntegerv(GL_NUM_EXTENSIONS, &n), "query_gl_info");
  for (GLint i = 0; i < n; ++i) {
    const GLubyte* s = glGetStringi(GL_EXTENSIONS, static_cast<GLuint>(i));
    if (s) info.extensions.emplace_back(reinterpret_cast<const char*>(s));
  }
  GLint flags = 0;
  HANDOFF_GL_CHECK(glGetIntegerv(GL_CONTEXT_FLAGS, &flags), "query_gl_info");
  info.debug_context = (flags & GL_CONTEXT_FLAG_DEBUG_BIT) != 0;
  info.memory_object = info.has_extension("GL_EXT_memory_object");
  info.memory_object_fd = info.has_extension("GL_EXT_memory_object_fd");
  info.semaphore = info.has_extension("GL_EXT_semaphore");
  info.semaphore_fd = info.has_extension("GL_EXT_semaphore_fd");
  info.khr_debug = info.has_extension("GL_KHR_debug");
  if (info.memory_object && glad_glGetUnsignedBytevEXT && glad_glGetUnsignedBytei_vEXT) {
    // GL_EXT_memory_object: device UUIDs are indexed (GL_NUM_DEVICE_UUIDS_EXT), the driver's is not.
    Uuid u{};
    glGetUnsignedBytei_vEXT(GL_DEVICE_UUID_EXT, 0, u.bytes.data());
    if (glGetError() == GL_NO_ERROR) info.device_uuid = u;
    glGetUnsignedBytevEXT(GL_DRIVER_UUID_EXT, u.bytes.data());
    if (glGetError() == GL_NO_ERROR) info.driver_uuid = u;
  }
  return info;
}

namespace {
void GLAD_API_PTR debug_callback(GLenum source, GLenum type, GLuint id, GLenum severity, GLsizei length,
                                 const GLchar* message, const void* user) {
  GlDebugMessage m;
  m.source = source;
  m.type = type;
  m.id = id;
  m.severity = severity;
  m.text = length >= 0 ? std::string(message, static_cast<std::size_t>(length)) : std::string(message);
  LogLevel level = LogLevel::Debug;
  if (type == GL_DEBUG_TYPE_ERROR) level = LogLevel::Error;
  else if (severity == GL_DEBUG_SEVERITY_HIGH || severity == GL_DEBUG_SEVERITY_MEDIUM) level = LogLevel::Warning;
  else if (severity == GL_DEBUG_SEVERITY_LOW) level = LogLevel::Info;
  log(level, m.describe());
  auto* sink = static_cast<const std::function<void(const GlDebugMessage&)>*>(user);
  if (sink && *sink) {
    try {
      (*sink)(m);
    } catch (...) {
      log(LogLevel::Error, "GL debug message sink threw; message: " + m.text);
    }
  }
}
}  // namespace

bool enable_gl_debug_output(const std::function<void(const GlDebugMessage&)>* sink) {
  if (!glad_glDebugMessageCallback) return false;
  GLint flags = 0;
  glGetIntegerv(GL_CONTEXT_FLAGS, &flags);
  glEnable(GL_DEBUG_OUTPUT);
  glEnable(GL_DEBUG_OUTPUT_SYNCHRONOUS);
  HANDOFF_GL_CHECK(glDebugMessageCallback(debug_callback, sink));
  HANDOFF_GL_CHECK(glDebugMessageControl(GL_DONT_CARE, GL_DONT_CARE, GL_DONT_CARE, 0, nullptr, GL_TRUE));
  return true;
}

void disable_gl_debug_output() noexcept {
  if (!glad_glDebugMessageCallback) return;
  glDebugMessageCallback(nullptr, nullptr);
  glDisable(GL_DEBUG_OUTPUT_SYNCHRONOUS);
  glGetError();
}

}  // namespace handoff
