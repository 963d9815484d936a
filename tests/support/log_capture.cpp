#include "log_capture.hpp"

#include <gtest/gtest.h>

#include <exception>

namespace handoff::test {

LogCapture::LogCapture(std::optional<LogLevel> level) : level_set_(level.has_value()) {
  if (level) set_log_level(*level);
  previous_ = set_log_sink([this](LogLevel l, std::string_view m) {
    std::lock_guard lock(mutex_);
    lines_.push_back(Line{l, std::string(m)});
  });
}

LogCapture::~LogCapture() {
  try {
    set_log_sink(std::move(previous_));
  } catch (const std::exception& e) {  // WaitTimeout: a worker still logs into this capture
    ADD_FAILURE() << "LogCapture: restoring the previous log sink: " << e.what();
  }
  if (level_set_) set_log_level(LogLevel::Warning);
}

std::vector<LogCapture::Line> LogCapture::lines() const {
  std::lock_guard lock(mutex_);
  return lines_;
}

std::vector<std::string> LogCapture::texts(std::optional<LogLevel> only) const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& l : lines_)
    if (!only || l.level == *only) out.push_back(l.text);
  return out;
}

std::string LogCapture::text() const {
  std::lock_guard lock(mutex_);
  std::string s;
  for (const auto& l : lines_) s += l.text + "\n";
  return s;
}

bool LogCapture::contains(std::string_view part) const {
  std::lock_guard lock(mutex_);
  for (const auto& l : lines_)
    if (l.text.find(part) != std::string::npos) return true;
  return false;
}

std::size_t LogCapture::count(LogLevel level) const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& l : lines_) n += l.level == level;
  return n;
}

void LogCapture::clear() {
  std::lock_guard lock(mutex_);
  lines_.clear();
}

}  // namespace handoff::test
