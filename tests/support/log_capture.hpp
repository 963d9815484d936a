#pragma once
// LogCapture: the library's log (handoff/log.hpp) collected for one test.
// Installs its sink on construction and puts the previous sink back on
// destruction (set_log_sink waits for a sink another thread is still running,
// so nothing writes into a capture that is gone).
// Thread safety: the sink may run on any thread; the accessors lock.
#include <handoff/log.hpp>

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::test {

class LogCapture {
 public:
  struct Line {
    LogLevel level;
    std::string text;
  };
  // `level`: the minimum level passed on while the capture lives (set_log_level);
  // the library's default, Warning, comes back afterwards.
  explicit LogCapture(std::optional<LogLevel> level = std::nullopt);
  ~LogCapture();
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::vector<Line> lines() const;
  std::vector<std::string> texts(std::optional<LogLevel> only = std::nullopt) const;  // in order
  std::string text() const;                       // every line, each ending in '\n'
  bool contains(std::string_view part) const;     // some line contains `part`
  std::size_t count(LogLevel level) const;        // lines at exactly `level`
  void clear();

 private:
  mutable std::mutex mutex_;
  std::vector<Line> lines_;
  bool level_set_ = false;
  LogSink previous_;
};

}  // namespace handoff::test
