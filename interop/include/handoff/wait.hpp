#pragma once
// Every wait of the library that depends on another thread, a GPU queue or a
// fence (the GL worker's round trips, GL and Vulkan fences, a producer's ring
// slot) is bounded. A lost device or a deadlock then becomes an error that says
// what did not finish, instead of a process that hangs silently.
//
//   handoff::set_wait_limit(std::chrono::seconds(30));   // slow software renderers
//   try { pipeline.next(true); } catch (const handoff::WaitTimeout& e) { ... }
#include <handoff/error.hpp>

#include <chrono>
#include <string>

namespace handoff {

// The default limit: 5 s, or HANDOFF_WAIT_TIMEOUT_MS (a positive integer of
// milliseconds) read once at the first call.
inline constexpr std::chrono::milliseconds kDefaultWaitLimit{5000};

// The limit every bounded wait uses (read at the start of each wait).
// Thread safety: any thread.
std::chrono::nanoseconds wait_limit() noexcept;
// Sets the limit for waits that start afterwards; a limit <= 0 restores the
// default. Thread safety: any thread.
void set_wait_limit(std::chrono::nanoseconds limit) noexcept;

// A wait ran past its limit. what() reads "<what> did not finish within <limit>".
// A runtime condition (a lost or hung device, a stuck peer), not misuse.
class WaitTimeout : public Error {
 public:
  WaitTimeout(const std::string& what_did_not_finish, std::chrono::nanoseconds limit);
  const std::string& waited_for() const noexcept { return waited_for_; }

 private:
  std::string waited_for_;
};

// "1.5 s", "250 ms", "40 us": a duration as the library's messages print it.
std::string format_duration(std::chrono::nanoseconds d);

}  // namespace handoff
