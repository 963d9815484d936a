#include "handshake.hpp"

#include <handoff/wait.hpp>

#include "socket.hpp"

#include <chrono>
#include <vector>

namespace handoff::live::detail {

namespace {

// The publisher answers at once; its Reject may come in any protocol version.
Message await_answer(int fd, int timeout_ms, int wake_fd) {
  std::vector<std::byte> buffer(kMaxMessageBytes);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      throw WaitTimeout("the publisher's answer to Hello", std::chrono::milliseconds(timeout_ms));
    if (!wait_readable(fd, wake_fd, static_cast<int>(left.count()))) {
      if (wake_fd >= 0 && wait_readable(wake_fd, -1, 0)) throw Error("live subscriber stopped during the handshake");
      continue;
    }
    Received r = receive_datagram(fd, buffer);
    if (r.status == Received::WouldBlock) continue;
    if (r.status == Received::Closed) throw Error("the publisher closed the connection during the handshake");
    if (r.status == Received::Truncated) throw ProtocolError("header", "a datagram larger than 64 KiB");
    if (r.control_truncated) throw ProtocolError("descriptors", "more descriptors than a message may carry");
    return decode_message(std::span(buffer).first(r.bytes), r.fds.size());
  }
}

}  // namespace

Welcome client_handshake(int fd, const Hello& hello, int timeout_ms, int wake_fd) {
  const std::vector<std::byte> bytes = encode_message(hello);
  // A fresh connection's buffer is empty: a Hello always fits.
  if (send_datagram(fd, bytes) != SendResult::Sent) throw Error("could not send Hello: the publisher hung up");
  Message m = await_answer(fd, timeout_ms, wake_fd);
  if (auto* w = std::get_if<Welcome>(&m)) return std::move(*w);
  if (auto* r = std::get_if<Reject>(&m))
    throw PublisherRefused(r->reason, r->sender_version != kProtocolVersion);
  throw ProtocolError("handshake", "expected Welcome or Reject, got " + std::string(to_string(type_of(m))));
}

}  // namespace handoff::live::detail
