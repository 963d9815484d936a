#pragma once
// Shared by the fuzz targets: silence the library log (bad lines are expected).
#include <handoff/log.hpp>

namespace handoff::media::fuzz {
inline void quiet_log() {
  static const bool done = [] {
    set_log_sink([](LogLevel, std::string_view) {});
    return true;
  }();
  (void)done;
}
}  // namespace handoff::media::fuzz
