#include <handoff/error.hpp>
#include <handoff/log.hpp>
#include <handoff/unique_handle.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace handoff {

std::string_view api_name(Api api) noexcept {
  switch (api) {
    case Api::None: return "handoff";
    case Api::Cuda: return "CUDA";
    case Api::Gl: return "OpenGL";
    case Api::Egl: return "EGL";
    case Api::Vulkan: return "Vulkan";
    case Api::System: return "system";
    case Api::DLPack: return "DLPack";
  }
  return "?";
}

namespace {
std::string format(Api api, const std::string& call, long long code, const std::string& name,
                   const std::string& detail, const std::string& where) {
  std::string m = std::string(api_name(api)) + ": " + call + " failed";
  if (!name.empty() || code != 0) {
    m += " with " + (name.empty() ? std::string("error") : name) + " (" + std::to_string(code) + ")";
  }
  if (!detail.empty()) m += ": " + detail;
  if (!where.empty()) m += " [" + where + "]";
  return m;
}
}  // namespace

Error::Error(Api api, std::string call, long long code, std::string code_name, std::string detail,
             std::string where)
    : std::runtime_error(format(api, call, code, code_name, detail, where)),
      api_(api), call_(std::move(call)), code_(code), code_name_(std::move(code_name)) {}

Error::Error(std::string message) : std::runtime_error(std::move(message)) {}

Error::Error(std::string message, std::string call, std::string code_name)
    : std::runtime_error(std::move(message)), call_(std::move(call)), code_name_(std::move(code_name)) {}

void FdCloser::operator()(int fd) const noexcept { ::close(fd); }

// --- log ---------------------------------------------------------------------
namespace {
std::mutex g_log_mutex;
LogSink g_sink;
LogLevel initial_level() {
  const char* e = std::getenv("HANDOFF_LOG");
  if (!e) return LogLevel::Warning;
  if (!std::strcmp(e, "debug")) return LogLevel::Debug;
  if (!std::strcmp(e, "info")) return LogLevel::Info;
  if (!std::strcmp(e, "error")) return LogLevel::Error;
  return LogLevel::Warning;
}
std::atomic<LogLevel> g_level{initial_level()};
const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warning: return "warning";
    case LogLevel::Error: return "error";
  }
  return "?";
}
}  // namespace

LogSink set_log_sink(LogSink sink) {
  std::lock_guard lock(g_log_mutex);
  return std::exchange(g_sink, std::move(sink));
}

void set_log_level(LogLevel level) { g_level = level; }

void log(LogLevel level, std::string_view message) {
  if (level < g_level.load()) return;
  LogSink sink;
  {
    std::lock_guard lock(g_log_mutex);
    sink = g_sink;  // called outside the lock, so a sink may itself log
  }
  if (sink) {
    sink(level, message);
  } else {
    std::fprintf(stderr, "handoff %s: %.*s\n", level_name(level), int(message.size()), message.data());
  }
}

}  // namespace handoff
