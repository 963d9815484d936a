#pragma once
// The subscriber's half of the handshake (also used by list_publishers).
#include <handoff/live/protocol.hpp>

namespace handoff::live::detail {

// The publisher answered Hello with Reject; what() is its reason.
class PublisherRefused : public Error {
 public:
  explicit PublisherRefused(const std::string& reason, bool version_mismatch)
      : Error("publisher refused: " + reason), version_mismatch_(version_mismatch) {}
  bool version_mismatch() const noexcept { return version_mismatch_; }

 private:
  bool version_mismatch_;
};

// Sends `hello` on connected socket `fd` and waits up to `timeout_ms` for the
// answer (waking early when `wake_fd` >= 0 is signalled: Error "stopped").
// Returns the Welcome. Throws PublisherRefused (a Reject),
// ProtocolVersionMismatch, ProtocolError (anything else malformed),
// WaitTimeout (no answer) or Error (the publisher hung up).
Welcome client_handshake(int fd, const Hello& hello, int timeout_ms, int wake_fd);

}  // namespace handoff::live::detail
