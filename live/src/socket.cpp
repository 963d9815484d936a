#include "socket.hpp"

#include <handoff/error.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace handoff::live::detail {

namespace {

// At most this many descriptors are accepted with one message (the protocol
// sends 0 or 1); room for more lets the receiver see and close surplus ones
// instead of the kernel reporting only MSG_CTRUNC.
constexpr int kMaxDescriptors = 8;

[[noreturn]] void fail(const char* call, const std::string& detail, int error = errno) {
  throw Error(Api::System, call, error, errno_text(error), detail);
}

sockaddr_un address_of(const std::filesystem::path& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const std::string& s = path.native();
  if (s.empty() || s.size() >= sizeof(a.sun_path))
    throw UsageError("live socket path '" + s + "' is " + std::to_string(s.size()) + " bytes; the limit is " +
                     std::to_string(sizeof(a.sun_path) - 1));
  std::memcpy(a.sun_path, s.c_str(), s.size() + 1);
  return a;
}

}  // namespace

std::string errno_text(int error) {
  char buf[128];
  // GNU strerror_r returns the text (maybe not in buf).
  return std::string(::strerror_r(error, buf, sizeof buf));
}

UniqueFd listen_at(const std::filesystem::path& path) {
  const sockaddr_un a = address_of(path);
  UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) fail("socket", "AF_UNIX SOCK_SEQPACKET");
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) fail("bind", path.string());
  if (::listen(fd.get(), 64) != 0) fail("listen", path.string());
  return fd;
}

UniqueFd connect_to(const std::filesystem::path& path, int& error) {
  const sockaddr_un a = address_of(path);
  // Non-blocking: a publisher whose queue of pending connections is full
  // answers EAGAIN at once instead of holding the caller in connect().
  UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) fail("socket", "AF_UNIX SOCK_SEQPACKET");
  int r;
  do {
    r = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a);
  } while (r != 0 && errno == EINTR);
  if (r != 0) {
    error = errno;
    return UniqueFd();
  }
  error = 0;
  return fd;
}

void socket_pair(UniqueFd& a, UniqueFd& b) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) fail("socketpair", "SOCK_SEQPACKET");
  a.reset(fds[0]);
  b.reset(fds[1]);
}

PeerCredentials peer_credentials(int fd) {
  ucred c{};
  socklen_t n = sizeof c;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &n) != 0) fail("getsockopt", "SO_PEERCRED");
  return PeerCredentials{c.pid, c.uid, c.gid};
}

SendResult send_datagram(int fd, std::span<const std::byte> bytes, std::span<const int> fds) {
  iovec iov{const_cast<std::byte*>(bytes.data()), bytes.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxDescriptors)];
  if (!fds.empty()) {
    if (fds.size() > kMaxDescriptors) throw UsageError("send_datagram: too many descriptors");
    const std::size_t n = sizeof(int) * fds.size();
    m.msg_control = control;
    m.msg_controllen = CMSG_SPACE(n);
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(n);
    std::memcpy(CMSG_DATA(c), fds.data(), n);
  }
  for (;;) {
    const ssize_t r = ::sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r >= 0) return SendResult::Sent;  // SOCK_SEQPACKET: all of it or nothing
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return SendResult::WouldBlock;
    if (errno == ENOBUFS) return SendResult::WouldBlock;
    return SendResult::Closed;
  }
}

namespace {
void take_descriptors(msghdr& m, Received& out) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < n; ++i) {
      int f;
      std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
      out.fds.emplace_back(f);
    }
  }
}
}  // namespace

Received receive_datagram(int fd, std::span<std::byte> buffer) {
  Received out;
  iovec iov{buffer.data(), buffer.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxDescriptors)];
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  const int flags = MSG_CMSG_CLOEXEC | MSG_DONTWAIT;
  ssize_t r;
  do {
    r = ::recvmsg(fd, &m, flags);
  } while (r < 0 && errno == EINTR);
  if (r < 0) {
    out.status = (errno == EAGAIN || errno == EWOULDBLOCK) ? Received::WouldBlock : Received::Closed;
    out.error = errno;
    return out;
  }
  take_descriptors(m, out);  // before anything else: whatever arrived is owned (and closed) from here
  out.control_truncated = (m.msg_flags & MSG_CTRUNC) != 0;
  if (r == 0 && out.fds.empty() && !out.control_truncated) {
    out.status = Received::Closed;  // end of stream (the protocol never sends an empty datagram)
    return out;
  }
  out.bytes = static_cast<std::size_t>(r);
  out.status = (m.msg_flags & MSG_TRUNC) ? Received::Truncated : Received::Datagram;
  return out;
}

bool wait_readable(int fd, int wake_fd, int timeout_ms) {
  pollfd p[2] = {{fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
  const nfds_t n = wake_fd >= 0 ? 2 : 1;
  int r;
  do {
    r = ::poll(p, n, timeout_ms);
  } while (r < 0 && errno == EINTR);
  if (r < 0) fail("poll", "waiting for a live socket");
  return (p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

UniqueFd make_event_fd() {
  UniqueFd fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!fd) fail("eventfd", "wake-up descriptor");
  return fd;
}

void signal_event(int fd) noexcept {
  const std::uint64_t one = 1;
  (void)!::write(fd, &one, sizeof one);
}

void drain_event(int fd) noexcept {
  std::uint64_t v;
  (void)!::read(fd, &v, sizeof v);
}

}  // namespace handoff::live::detail
