// Hand-written hostile peers. A client that sends truncated, oversized and
// garbage messages, descriptors it should not, and messages out of turn, to a
// Publisher; a fake publisher that sends unsealed memfds, wrong descriptor
// kinds and counts, and frames outside their slots, to a Subscriber. Each is
// disconnected with a reason that names the problem; the other side serves on,
// and no descriptor is left open.
#include "live_fixture.hpp"
#include "live_support.hpp"

#include <handoff/live/protocol.hpp>  // private: the wire protocol a hostile peer speaks

#include <gmock/gmock.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <optional>

namespace handoff::live::test {
namespace {

using ::testing::HasSubstr;

// --- raw sockets ---------------------------------------------------------------------------
sockaddr_un address(const std::filesystem::path& p) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, p.c_str(), sizeof a.sun_path - 1);
  return a;
}

void send_raw(int fd, std::span<const std::byte> bytes, std::vector<int> fds = {}) {
  iovec iov{const_cast<std::byte*>(bytes.data()), bytes.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * std::max<std::size_t>(fds.size(), 1)));
  if (!fds.empty()) {
    m.msg_control = control.data();
    m.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ASSERT_GE(::sendmsg(fd, &m, MSG_NOSIGNAL), 0) << std::strerror(errno);
}

// One datagram (its descriptors closed), or nullopt at end of stream / timeout.
std::optional<std::vector<std::byte>> receive_raw(int fd, int timeout_ms = 5000) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
  std::vector<std::byte> buf(kMaxMessageBytes);
  iovec iov{buf.data(), buf.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  const ssize_t r = ::recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
    for (std::size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); ++i) {
      int f;
      std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
      ::close(f);
    }
  }
  if (r <= 0) return std::nullopt;
  buf.resize(static_cast<std::size_t>(r));
  return buf;
}

int connect_raw(const std::filesystem::path& p) {
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  const sockaddr_un a = address(p);
  const int r = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  EXPECT_EQ(r, 0) << std::strerror(errno);
  return fd;
}

std::vector<std::byte> hello_bytes(std::uint8_t accepts = kAcceptsAll) {
  return encode_message(Hello{1, 0, accepts, "hostile"});
}

void set_u16(std::vector<std::byte>& d, std::size_t at, std::uint16_t v) {
  d[at] = std::byte(v & 0xff);
  d[at + 1] = std::byte(v >> 8);
}

UniqueFd memfd(std::size_t size, unsigned seals) {
  UniqueFd fd(::memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  EXPECT_EQ(::ftruncate(fd.get(), static_cast<off_t>(size)), 0);
  if (seals) {
    EXPECT_EQ(::fcntl(fd.get(), F_ADD_SEALS, seals), 0);
  }
  return fd;
}

// --- a hostile client against a Publisher -----------------------------------------------------

struct ClientCase {
  std::string what;
  std::function<void(int fd)> act;
  std::string reason;  // expected in the Reject; empty: only the hang-up is expected
};

// Each: what the client does on a fresh connection, and what the Reject must say.
std::vector<ClientCase> client_cases(const std::string& publisher, int memfd_fd, int pipe_fd) {
  return {
      {"truncated",
       [](int fd) {
         const auto h = hello_bytes();
         send_raw(fd, std::span(h).first(10));
       },
       "header"},
      {"oversized", [](int fd) { send_raw(fd, std::vector<std::byte>(70000)); }, "larger than 64 KiB"},
      {"garbage",
       [](int fd) {
         std::vector<std::byte> g(64);
         for (std::size_t i = 0; i < g.size(); ++i) g[i] = std::byte(i * 37 + 11);
         send_raw(fd, g);
       },
       "header.magic"},
      {"descriptors with Hello", [=](int fd) { send_raw(fd, hello_bytes(), {memfd_fd, pipe_fd}); }, "descriptors"},
      {"more descriptors than fit",
       [=](int fd) { send_raw(fd, hello_bytes(), std::vector<int>(12, memfd_fd)); },
       "more descriptors than a message may carry"},
      {"a publisher's message",
       [](int fd) {
         FrameAnnounce f;
         f.width = f.height = 2;
         f.pitches = {256, 256};
         f.offsets = {0, 512};
         send_raw(fd, encode_message(f));
       },
       "which only a publisher sends"},
      {"Release before Hello", [](int fd) { send_raw(fd, encode_message(Release{0, 1, 1})); }, "Release before Hello"},
      {"Release of a frame not held",
       [](int fd) {
         send_raw(fd, hello_bytes());
         ASSERT_TRUE(receive_raw(fd));  // Welcome
         send_raw(fd, encode_message(Release{0, 1, 5}));
       },
       "which it does not hold"},
      {"Leave before Hello", [](int fd) { send_raw(fd, encode_message(Leave{})); }, "Leave before Hello"},
      {"Leave keeping a frame not held",
       [](int fd) {
         send_raw(fd, hello_bytes());
         ASSERT_TRUE(receive_raw(fd));  // Welcome
         send_raw(fd, encode_message(Leave{{Release{0, 1, 5}}}));
       },
       "which it does not hold"},
      {"Leave holding nothing (the publisher just hangs up)",
       [](int fd) {
         send_raw(fd, hello_bytes());
         ASSERT_TRUE(receive_raw(fd));
         send_raw(fd, encode_message(Leave{}));
       },
       ""},
      {"Hello twice",
       [](int fd) {
         send_raw(fd, hello_bytes());
         ASSERT_TRUE(receive_raw(fd));
         send_raw(fd, hello_bytes());
       },
       "Hello twice"},
      {"bad accepts",
       [](int fd) {
         auto h = hello_bytes();
         h[kHeaderBytes + 6] = std::byte{0x40};
         send_raw(fd, h);
       },
       "hello.accepts"},
      {"another protocol version",
       [](int fd) {
         auto h = hello_bytes();
         set_u16(h, 4, kProtocolVersion + 1);
         send_raw(fd, h);
       },
       "protocol version mismatch: publisher '" + publisher + "' speaks version " + std::to_string(kProtocolVersion) +
           ", the subscriber version " + std::to_string(kProtocolVersion + 1)},
      {"a memory kind it does not accept", [](int fd) { send_raw(fd, hello_bytes(memory_bit(SlotMemory::Cuda))); },
       "shares host memory (host memfd), which the subscriber does not accept"},
      {"silence", [](int) {}, ""},
      {"an empty datagram", [](int fd) { send_raw(fd, {}); }, ""},
  };
}

class HostileClient : public LiveTest {};

TEST_F(HostileClient, EveryMalformedMessageIsRefusedAndThePublisherServesOn) {
  PublisherOptions o;
  o.hello_timeout = 200ms;
  Publisher pub(name(), o);
  Subscriber good(name());
  ASSERT_TRUE(good.wait_for(LinkState::Connected, 10s));
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  const UniqueFd pr(pipe_fds[0]), pw(pipe_fds[1]);
  const UniqueFd mem = memfd(4096, 0);
  std::int64_t index = 0;
  for (; index < 8; ++index) {  // every slot allocated, and imported by the good subscriber
    settle(pub);
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, 32, 16, index)));
    ASSERT_TRUE(good.next(10s));
  }
  const int baseline = open_descriptors();

  const std::vector<ClientCase> cases = client_cases(name(), mem.get(), pr.get());
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const int fd = connect_raw(pub.socket_path());
    c.act(fd);
    std::optional<std::vector<std::byte>> answer;
    while ((answer = receive_raw(fd))) {
      const Message m = decode_message(*answer, 0);
      if (const auto* r = std::get_if<Reject>(&m)) {
        EXPECT_THAT(r->reason, HasSubstr(c.reason));
        EXPECT_FALSE(c.reason.empty()) << "unexpected Reject: " << r->reason;
        continue;
      }
      ADD_FAILURE() << "unexpected " << to_string(type_of(m));
    }
    ::close(fd);
    // The good subscriber still gets frames.
    settle(pub);
    ASSERT_TRUE(pub.publish(pattern_frame(PixelFormat::NV12, 32, 16, index)));
    const LiveFrame f = good.next(10s);
    ASSERT_TRUE(f);
    EXPECT_EQ(f.frame.index, index++);
  }
  const PublisherStats s = pub.stats();
  EXPECT_EQ(s.peers_dropped, 12u);  // malformed or out of turn
  EXPECT_EQ(s.peers_refused, 2u);   // version, memory kind
  EXPECT_TRUE(eventually([&] { return pub.stats().subscribers == 1; }));
  EXPECT_TRUE(eventually([&] { return open_descriptors() == baseline; }))
      << "descriptors left open: " << open_descriptors() - baseline;
}

// --- a hostile publisher against a Subscriber ---------------------------------------------------

class FakePublisher {
 public:
  explicit FakePublisher(const std::filesystem::path& path) {
    listen_ = UniqueFd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    const sockaddr_un a = address(path);
    EXPECT_EQ(::bind(listen_.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(listen_.get(), 4), 0);
  }
  // Accepts the subscriber and reads its Hello.
  int accept_hello() {
    pollfd p{listen_.get(), POLLIN, 0};
    EXPECT_GT(::poll(&p, 1, 10000), 0);
    peer_ = UniqueFd(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    auto h = receive_raw(peer_.get());
    EXPECT_TRUE(h && std::holds_alternative<Hello>(decode_message(*h, 0)));
    return peer_.get();
  }
  void welcome(SlotMemory memory = SlotMemory::Host) {
    send_raw(peer_.get(), encode_message(Welcome{4242, 2, 1, memory, CudaSync::None, "fake", "test"}));
  }
  int peer() const { return peer_.get(); }
  void hang_up() { peer_.reset(); }

 private:
  UniqueFd listen_, peer_;
};

SlotAnnounce host_slot(std::uint64_t size) {
  SlotAnnounce s;
  s.slot = 0;
  s.generation = 1;
  s.kind = SlotKind::HostMemfd;
  s.size = s.allocation_size = size;
  return s;
}

FrameAnnounce frame_in_slot(std::uint32_t w, std::uint32_t h) {
  FrameAnnounce f;
  f.generation = 1;
  f.sequence = 1;
  f.width = w;
  f.height = h;
  f.pitches = {256, 256};
  f.offsets = {0, 256ull * h};
  return f;
}

struct PublisherCase {
  std::string what;
  std::function<void(FakePublisher&)> act;
  std::string message;  // expected in the subscriber's status
  LinkState state = LinkState::PublisherGone;
};

// Each: what the fake publisher sends after its Welcome, and what the subscriber's status must say.
std::vector<PublisherCase> publisher_cases(int pipe_fd) {
  return {
      {"a memfd without seals",
       [](FakePublisher& f) { send_raw(f.peer(), encode_message(host_slot(8192)), {memfd(8192, 0).get()}); },
       "memfd lacks the seals F_SEAL_SHRINK F_SEAL_GROW"},
      {"a pipe for a slot", [=](FakePublisher& f) { send_raw(f.peer(), encode_message(host_slot(8192)), {pipe_fd}); },
       "not a memfd"},
      {"two descriptors for a slot",
       [](FakePublisher& f) {
         const UniqueFd a = memfd(8192, F_SEAL_SHRINK | F_SEAL_GROW), b = memfd(8192, F_SEAL_SHRINK | F_SEAL_GROW);
         send_raw(f.peer(), encode_message(host_slot(8192)), {a.get(), b.get()});
       },
       "descriptors"},
      {"a memfd smaller than announced",
       [](FakePublisher& f) {
         send_raw(f.peer(), encode_message(host_slot(8192)), {memfd(4096, F_SEAL_SHRINK | F_SEAL_GROW).get()});
       },
       "memfd holds 4096 bytes, the message says 8192"},
      {"a frame in a slot never announced",
       [](FakePublisher& f) { send_raw(f.peer(), encode_message(frame_in_slot(32, 16))); }, "was never announced"},
      {"a frame beyond its slot",
       [](FakePublisher& f) {
         send_raw(f.peer(), encode_message(host_slot(8192)), {memfd(8192, F_SEAL_SHRINK | F_SEAL_GROW).get()});
         send_raw(f.peer(), encode_message(frame_in_slot(64, 64)));
       },
       "the planes end at byte"},
      {"garbage overlays",
       [](FakePublisher& f) {
         send_raw(f.peer(), encode_message(host_slot(8192)), {memfd(8192, F_SEAL_SHRINK | F_SEAL_GROW).get()});
         FrameAnnounce a = frame_in_slot(32, 16);
         a.overlays = OverlayCarrier::Inline;
         a.inline_overlays.assign(50, std::byte{0x5a});
         send_raw(f.peer(), encode_message(a));
       },
       "overlays"},
      {"an overlay block that could still change",
       [](FakePublisher& f) {
         send_raw(f.peer(), encode_message(host_slot(8192)), {memfd(8192, F_SEAL_SHRINK | F_SEAL_GROW).get()});
         FrameAnnounce a = frame_in_slot(32, 16);
         a.overlays = OverlayCarrier::Memfd;
         a.overlay_bytes = 100;
         send_raw(f.peer(), encode_message(a), {memfd(4096, F_SEAL_SHRINK | F_SEAL_GROW).get()});
       },
       "F_SEAL_WRITE"},
      {"a slot past the ring",
       [](FakePublisher& f) {
         SlotAnnounce s = host_slot(8192);
         s.slot = 5;
         send_raw(f.peer(), encode_message(s), {memfd(8192, F_SEAL_SHRINK | F_SEAL_GROW).get()});
       },
       "the publisher has 2 slots"},
      {"a slot of another memory kind",
       [](FakePublisher& f) {
         SlotAnnounce s = host_slot(8192);
         s.kind = SlotKind::VulkanOpaqueFd;
         send_raw(f.peer(), encode_message(s), {memfd(8192, F_SEAL_SHRINK | F_SEAL_GROW).get()});
       },
       "Vulkan OPAQUE_FD from a publisher of host memory"},
      {"garbage", [](FakePublisher& f) { send_raw(f.peer(), std::vector<std::byte>(40, std::byte{1})); }, "header.magic"},
      {"a subscriber's message", [](FakePublisher& f) { send_raw(f.peer(), hello_bytes()); },
       "which only a subscriber sends"},
  };
}

class HostilePublisher : public LiveTest {};

TEST_F(HostilePublisher, AWellFormedFakeIsUnderstood) {
  const int baseline = open_descriptors();
  {
    FakePublisher fake(socket_path(name(), true));
    Subscriber sub(name());
    fake.accept_hello();
    fake.welcome();
    const UniqueFd m = memfd(8192, F_SEAL_SHRINK | F_SEAL_GROW);
    const Frame want = pattern_frame(PixelFormat::NV12, 32, 16, 0);
    void* p = ::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, m.get(), 0);
    ASSERT_NE(p, MAP_FAILED);
    for (std::uint32_t y = 0; y < 16; ++y) std::memcpy(static_cast<char*>(p) + y * 256, static_cast<const char*>(want.planes[0].data) + y * want.planes[0].pitch, 32);
    for (std::uint32_t y = 0; y < 8; ++y)
      std::memcpy(static_cast<char*>(p) + 256 * 16 + y * 256,
                  static_cast<const char*>(want.planes[1].data) + y * want.planes[1].pitch, 32);
    ::munmap(p, 8192);
    send_raw(fake.peer(), encode_message(host_slot(8192)), {m.get()});
    send_raw(fake.peer(), encode_message(frame_in_slot(32, 16)));
    const LiveFrame f = sub.next(10s);
    ASSERT_TRUE(f) << sub.status().message;
    EXPECT_EQ(check_pattern(f.frame), "");
    EXPECT_EQ(sub.status().pid, 4242u);
  }
  EXPECT_EQ(open_descriptors(), baseline);
}

TEST_F(HostilePublisher, EveryBrokenMessageEndsTheSessionWithItsReason) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  const UniqueFd pr(pipe_fds[0]), pw(pipe_fds[1]);
  const std::vector<PublisherCase> cases = publisher_cases(pr.get());
  const int baseline = open_descriptors();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    {
      FakePublisher fake(socket_path(name(), true));
      Subscriber sub(name());
      fake.accept_hello();
      fake.welcome();
      ASSERT_TRUE(sub.wait_for(LinkState::Connected, 10s));
      c.act(fake);
      ASSERT_TRUE(sub.wait_for(c.state, 10s)) << sub.status().message;
      EXPECT_THAT(sub.status().message, HasSubstr(c.message));
      EXPECT_FALSE(sub.take());
    }
    std::filesystem::remove(socket_path(name()));
    EXPECT_EQ(open_descriptors(), baseline) << "descriptors left open";
  }
}

TEST_F(HostilePublisher, HandshakeRefusalsAreFailures) {
  {
    FakePublisher fake(socket_path(name(), true));
    Subscriber sub(name());
    fake.accept_hello();
    auto w = encode_message(Welcome{1, 2, 1, SlotMemory::Host, CudaSync::None, "fake", ""});
    set_u16(w, 4, kProtocolVersion + 1);
    send_raw(fake.peer(), w);
    ASSERT_TRUE(sub.wait_for(LinkState::Failed, 10s)) << sub.status().message;
    EXPECT_THAT(sub.status().message, HasSubstr("protocol version mismatch: the peer speaks version " +
                                                  std::to_string(kProtocolVersion + 1) + ", this side version " +
                                                  std::to_string(kProtocolVersion)));
  }
  std::filesystem::remove(socket_path(name()));
  {
    FakePublisher fake(socket_path(name(), true));
    Subscriber sub(name());
    fake.accept_hello();
    auto r = encode_message(Reject{"protocol version mismatch: publisher 'x' speaks version 2"});
    set_u16(r, 4, kProtocolVersion + 1);
    send_raw(fake.peer(), r);
    ASSERT_TRUE(sub.wait_for(LinkState::Failed, 10s)) << sub.status().message;
    EXPECT_THAT(sub.status().message, HasSubstr("publisher refused: protocol version mismatch"));
  }
  std::filesystem::remove(socket_path(name()));
  {
    // A publisher that never answers: the subscriber gives up on it and tries again.
    FakePublisher fake(socket_path(name(), true));
    SubscriberOptions o;
    o.handshake_timeout = 100ms;
    Subscriber sub(name(), o);
    fake.accept_hello();
    fake.accept_hello();  // it came back for another try
    EXPECT_NE(sub.status().state, LinkState::Connected);
  }
}

}  // namespace
}  // namespace handoff::live::test
