#pragma once
// The library's log. By default messages at Warning and above go to stderr;
// an application (or a test) installs its own sink. Thread-safe.
#include <functional>
#include <string_view>

namespace handoff {

enum class LogLevel { Debug, Info, Warning, Error };

using LogSink = std::function<void(LogLevel, std::string_view message)>;

// Replaces the sink (nullptr restores the default) and returns the previous one.
// Thread-safe; the sink may be called from any thread, including the GL worker.
LogSink set_log_sink(LogSink sink);
// Minimum level passed to the sink (default Warning; HANDOFF_LOG=debug|info|warning|error).
void set_log_level(LogLevel level);
void log(LogLevel level, std::string_view message);

}  // namespace handoff
