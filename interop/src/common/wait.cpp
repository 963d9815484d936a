#include <handoff/wait.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace handoff {

namespace {
std::chrono::nanoseconds initial_limit() noexcept {
  if (const char* e = std::getenv("HANDOFF_WAIT_TIMEOUT_MS")) {
    char* end = nullptr;
    long long ms = std::strtoll(e, &end, 10);
    if (end != e && *end == '\0' && ms > 0) return std::chrono::milliseconds(ms);
  }
  return kDefaultWaitLimit;
}
std::atomic<std::int64_t>& limit_ns() noexcept {
  static std::atomic<std::int64_t> v{initial_limit().count()};
  return v;
}
}  // namespace

std::chrono::nanoseconds wait_limit() noexcept {
  return std::chrono::nanoseconds(limit_ns().load(std::memory_order_relaxed));
}

void set_wait_limit(std::chrono::nanoseconds limit) noexcept {
  limit_ns().store(limit.count() > 0 ? limit.count() : initial_limit().count(), std::memory_order_relaxed);
}

std::string format_duration(std::chrono::nanoseconds d) {
  const double ns = double(d.count());
  char buf[48];
  if (ns >= 1e9) std::snprintf(buf, sizeof buf, "%g s", ns / 1e9);
  else if (ns >= 1e6) std::snprintf(buf, sizeof buf, "%g ms", ns / 1e6);
  else if (ns >= 1e3) std::snprintf(buf, sizeof buf, "%g us", ns / 1e3);
  else std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(d.count()));
  return buf;
}

WaitTimeout::WaitTimeout(const std::string& what_did_not_finish, std::chrono::nanoseconds limit)
    : Error(what_did_not_finish + " did not finish within " + format_duration(limit) +
                " (handoff::set_wait_limit / HANDOFF_WAIT_TIMEOUT_MS)",
            what_did_not_finish, "timeout"),
      waited_for_(what_did_not_finish) {}

}  // namespace handoff
