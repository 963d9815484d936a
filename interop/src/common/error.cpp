#include <handoff/error.hpp>
#include <handoff/log.hpp>
#include <handoff/unique_handle.hpp>
#include <handoff/wait.hpp>

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
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
// A sink in use, with the number of its calls in flight. log() holds a
// shared_ptr to it while calling it, so the function object outlives every
// call; set_log_sink waits until `calls` falls to the calling thread's own
// (a sink may log or replace itself) before it returns, so the caller may
// then destroy whatever the old sink writes into.
struct InstalledSink {
  explicit InstalledSink(LogSink f) : fn(std::move(f)) {}
  const LogSink fn;
  std::size_t calls = 0;  // guarded by g_log_mutex
};

std::mutex g_log_mutex;
std::condition_variable g_sink_idle;  // a sink's calls fell (with g_log_mutex)
std::shared_ptr<InstalledSink> g_sink;

// The sink calls running on this thread, innermost first (a sink may log).
struct SinkFrame {
  const InstalledSink* sink;
  const SinkFrame* outer;
};
thread_local const SinkFrame* tl_sink_frames = nullptr;

std::size_t calls_on_this_thread(const InstalledSink* sink) noexcept {
  std::size_t n = 0;
  for (const SinkFrame* f = tl_sink_frames; f; f = f->outer) n += f->sink == sink;
  return n;
}

// One call of a sink: counted in, pushed on this thread's frames, counted out
// even when the sink throws.
class SinkCall {
 public:
  explicit SinkCall(std::shared_ptr<InstalledSink> s) : sink_(std::move(s)), frame_{sink_.get(), tl_sink_frames} {
    tl_sink_frames = &frame_;
  }
  ~SinkCall() {
    tl_sink_frames = frame_.outer;
    std::lock_guard lock(g_log_mutex);
    --sink_->calls;
    if (sink_ != g_sink) g_sink_idle.notify_all();  // a replacer may wait for this sink's calls
  }
  SinkCall(const SinkCall&) = delete;
  SinkCall& operator=(const SinkCall&) = delete;
  void operator()(LogLevel level, std::string_view message) const { sink_->fn(level, message); }

 private:
  std::shared_ptr<InstalledSink> sink_;
  SinkFrame frame_;
};

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
  auto fresh = sink ? std::make_shared<InstalledSink>(std::move(sink)) : nullptr;
  std::unique_lock lock(g_log_mutex);
  std::shared_ptr<InstalledSink> old = std::exchange(g_sink, std::move(fresh));
  if (!old) return {};
  const std::size_t mine = calls_on_this_thread(old.get());
  const auto limit = wait_limit();
  if (!g_sink_idle.wait_for(lock, limit, [&] { return old->calls == mine; }))
    throw WaitTimeout("set_log_sink: the replaced log sink's calls on other threads (" +
                          std::to_string(old->calls - mine) + " still running)",
                      limit);
  return old->fn;  // a copy: this thread may still be inside it
}

void set_log_level(LogLevel level) { g_level = level; }

void log(LogLevel level, std::string_view message) {
  if (level < g_level.load()) return;
  std::shared_ptr<InstalledSink> sink;
  {
    std::lock_guard lock(g_log_mutex);
    sink = g_sink;
    if (sink) ++sink->calls;  // counted under the lock that replacing takes
  }
  if (!sink) {
    std::fprintf(stderr, "handoff %s: %.*s\n", level_name(level), int(message.size()), message.data());
    return;
  }
  const SinkCall call(std::move(sink));  // called outside the lock, so a sink may itself log
  call(level, message);
}

}  // namespace handoff
