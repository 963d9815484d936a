#pragma once
// The library's log. By default messages at Warning and above go to stderr;
// an application (or a test) installs its own sink. Thread-safe.
#include <functional>
#include <string_view>

namespace handoff {

enum class LogLevel { Debug, Info, Warning, Error };

using LogSink = std::function<void(LogLevel, std::string_view message)>;

// Replaces the sink (nullptr restores the default) and returns the previous one.
// Returns only once no other thread runs the previous sink any more, so the
// caller may then destroy what it wrote into; a sink may itself log (the call
// goes to the current sink) or call set_log_sink (its own running call is not
// waited for). Throws WaitTimeout when the previous sink is still running on
// another thread after wait_limit() (the new sink is installed all the same).
// Do not call it while holding a lock the previous sink takes.
// Thread safety: any thread; a sink may be called from any thread, including
// the GL worker, and concurrently.
LogSink set_log_sink(LogSink sink);
// Minimum level passed to the sink (default Warning; HANDOFF_LOG=debug|info|warning|error).
// Thread safety: any thread.
void set_log_level(LogLevel level);
// Passes `message` to the sink (or stderr) when `level` is at least the minimum;
// what the sink throws propagates. Thread safety: any thread.
void log(LogLevel level, std::string_view message);

}  // namespace handoff
