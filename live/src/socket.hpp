#pragma once
// Unix SOCK_SEQPACKET sockets for the live protocol: one datagram per message,
// descriptors as SCM_RIGHTS. Sends never block and never raise SIGPIPE
// (MSG_DONTWAIT | MSG_NOSIGNAL); receives take descriptors close-on-exec
// (MSG_CMSG_CLOEXEC) straight into UniqueFds, so none can leak, and report a
// truncated datagram or control block (MSG_TRUNC / MSG_CTRUNC) instead of
// passing on a partial message.
#include <handoff/unique_handle.hpp>

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace handoff::live::detail {

// Binds and listens at `path` (non-blocking, close-on-exec). The caller made
// sure nothing lives there. Throws handoff::Error naming the path.
UniqueFd listen_at(const std::filesystem::path& path);

// Connects to `path`. Returns an empty fd and sets `error` (an errno value:
// ENOENT nothing there, ECONNREFUSED nobody listening, EAGAIN its queue of
// pending connections is full) when it cannot. The socket is close-on-exec
// and non-blocking (use poll and the non-blocking calls below).
UniqueFd connect_to(const std::filesystem::path& path, int& error);

// A connected socket pair (tests, benchmarks).
void socket_pair(UniqueFd& a, UniqueFd& b);

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};
// SO_PEERCRED of a connected socket. Throws handoff::Error.
PeerCredentials peer_credentials(int fd);

enum class SendResult { Sent, WouldBlock, Closed };
// Sends one datagram with `fds` attached; never blocks, never raises SIGPIPE.
// Closed: the peer is gone (EPIPE, ECONNRESET) or the socket failed.
SendResult send_datagram(int fd, std::span<const std::byte> bytes, std::span<const int> fds = {});

struct Received {
  enum Status { Datagram, WouldBlock, Closed, Truncated } status = Closed;
  std::size_t bytes = 0;
  std::vector<UniqueFd> fds;  // every descriptor that arrived, owned
  bool control_truncated = false;  // MSG_CTRUNC: the peer sent more descriptors than fit
  int error = 0;                   // errno when Closed by an error
};
// Receives one datagram into `buffer` without waiting (WouldBlock: none
// there). Truncated: it was larger than the buffer (the rest is discarded).
Received receive_datagram(int fd, std::span<std::byte> buffer);

// Waits until `fd` is readable or `wake_fd` is, or `timeout_ms` passed (-1: no
// limit). Returns true when `fd` is readable (or hung up).
bool wait_readable(int fd, int wake_fd, int timeout_ms);

// An eventfd used to wake a thread blocked in poll().
UniqueFd make_event_fd();
void signal_event(int fd) noexcept;
void drain_event(int fd) noexcept;

// Text of an errno value ("Connection refused").
std::string errno_text(int error);

}  // namespace handoff::live::detail
