// The publisher's serving thread: accepts subscribers (peer credentials
// checked), answers Hello, takes Releases, and disconnects any peer that
// sends something malformed, with the reason logged and sent back as a Reject.
#include "publisher_core.hpp"

#include <handoff/log.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace handoff::live::detail {

namespace {

std::string peer_text(const PublisherClient& c) {
  std::string s = "subscriber pid " + std::to_string(c.peer.pid);
  if (!c.label.empty()) s += " (" + c.label + ")";
  return s;
}

std::string clip(std::string s) {
  if (s.size() > kMaxTextBytes) s.resize(kMaxTextBytes);
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
  return s;
}

// Best effort: the peer may already be gone.
void send_reject(int fd, const std::string& reason) {
  std::vector<std::byte> bytes;
  encode_message(Reject{clip(reason)}, bytes);
  (void)send_datagram(fd, bytes);
}

bool same_hold(const Hold& h, const Release& r) {
  return h.slot == r.slot && h.generation == r.generation && h.sequence == r.sequence;
}

int ms_until(std::chrono::steady_clock::time_point t) {
  const auto d = std::chrono::duration_cast<std::chrono::milliseconds>(t - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(d.count() + 1, 0, 1000));
}

}  // namespace

void PublisherCore::run() noexcept {
  while (!stopping_.load(std::memory_order_acquire)) {
    try {
      for (PublisherClient* c : poll_once()) serve(*c);
      reap();
    } catch (const std::exception& e) {
      log(LogLevel::Error, "live publisher '" + name_ + "': " + e.what());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // no hot loop on a persistent failure
    }
  }
}

// Waits for activity; accepts new peers; returns the subscribers with
// something to read. Only this thread removes subscribers, so the pointers
// stay valid until the next reap().
std::vector<PublisherClient*> PublisherCore::poll_once() {
  std::vector<pollfd> fds{{listen_fd_.get(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
  std::vector<PublisherClient*> who;
  int timeout = 1000;
  {
    std::lock_guard lock(mutex_);
    for (auto& c : clients_) {
      if (c->dead) continue;
      fds.push_back({c->fd.get(), POLLIN, 0});
      who.push_back(c.get());
      if (!c->active) timeout = std::min(timeout, ms_until(c->hello_deadline));
    }
  }
  int r;
  do {
    r = ::poll(fds.data(), fds.size(), timeout);
  } while (r < 0 && errno == EINTR);
  if (r < 0) throw Error(Api::System, "poll", errno, errno_text(errno), "live publisher sockets");
  if (fds[1].revents) drain_event(wake_fd_.get());
  if (fds[0].revents & POLLIN) accept_peers();
  std::vector<PublisherClient*> ready;
  for (std::size_t i = 2; i < fds.size(); ++i)
    if (fds[i].revents) ready.push_back(who[i - 2]);
  return ready;
}

void PublisherCore::accept_peers() {
  for (;;) {
    UniqueFd fd(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!fd) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      log(LogLevel::Warning, "live publisher '" + name_ + "': accept: " + errno_text(errno));
      return;  // EMFILE and the like: try again at the next wake-up
    }
    auto c = std::make_unique<PublisherClient>();
    c->peer = peer_credentials(fd.get());
    c->fd = std::move(fd);
    c->hello_deadline = std::chrono::steady_clock::now() + options_.hello_timeout;
    c->sent_generation.assign(slots_.size(), 0);
    std::lock_guard lock(mutex_);
    if (!peer_trusted(c->peer.uid, c->peer.gid, options_.allow_group)) {
      refuse(*c, "uid " + std::to_string(c->peer.uid) + " may not subscribe to publisher '" + name_ +
                     "' (same user only" +
                     (options_.allow_group ? ", or group " + std::to_string(*options_.allow_group) : "") + ")");
      continue;
    }
    // Subscribers that left and still hold a frame do not count.
    const auto subscribers = static_cast<std::size_t>(
        std::count_if(clients_.begin(), clients_.end(), [](const auto& other) { return !other->leaving; }));
    if (subscribers >= options_.max_subscribers) {
      refuse(*c, "publisher '" + name_ + "' has " + std::to_string(subscribers) +
                     " subscribers already (max_subscribers)");
      continue;
    }
    clients_.push_back(std::move(c));
  }
}

// One datagram per lock: a subscriber that floods its socket cannot hold a
// publish() up for longer than one message takes.
void PublisherCore::serve(PublisherClient& c) {
  for (;;) {
    std::lock_guard lock(mutex_);
    if (!read_one(c)) return;
  }
}

bool PublisherCore::read_one(PublisherClient& c) {
  if (c.dead) return false;
  Received r = receive_datagram(c.fd.get(), received_);
  switch (r.status) {
    case Received::WouldBlock: return false;
    case Received::Closed:
      c.dead = true;
      signal_event(wake_fd_.get());
      log(LogLevel::Debug, "live publisher '" + name_ + "': " + peer_text(c) + " disconnected");
      return false;
    case Received::Truncated: drop(c, "sent a datagram larger than 64 KiB", true); return false;
    case Received::Datagram: break;
  }
  if (r.control_truncated) {
    drop(c, "sent more descriptors than a message may carry", true);
    return false;
  }
  on_datagram(c, std::span(received_).first(r.bytes), r.fds);  // r.fds close when r goes
  return !c.dead;
}

void PublisherCore::catch_up(PublisherClient& c) {
  // Bounded: what a subscriber sends while this runs waits for the serving thread.
  constexpr int kMostMessages = 256;
  for (int i = 0; i < kMostMessages && read_one(c); ++i) {
  }
}

void PublisherCore::on_datagram(PublisherClient& c, std::span<const std::byte> bytes, std::vector<UniqueFd>& fds) {
  Message m;
  try {
    m = decode_message(bytes, fds.size());
  } catch (const ProtocolVersionMismatch& e) {
    refuse(c, "protocol version mismatch: publisher '" + name_ + "' speaks version " +
                  std::to_string(kProtocolVersion) + ", the subscriber version " + std::to_string(e.theirs()));
    return;
  } catch (const ProtocolError& e) {
    drop(c, e.what(), true);
    return;
  }
  if (const auto* h = std::get_if<Hello>(&m)) {
    if (c.active) return drop(c, "sent Hello twice", true);
    return on_hello(c, *h);
  }
  if (const auto* rel = std::get_if<Release>(&m)) {
    if (!c.active) return drop(c, "sent Release before Hello", true);
    return on_release(c, *rel);
  }
  if (const auto* leave = std::get_if<Leave>(&m)) {
    if (!c.active) return drop(c, "sent Leave before Hello", true);
    if (c.leaving) return drop(c, "sent Leave twice", true);
    return on_leave(c, *leave);
  }
  drop(c, "sent a " + std::string(to_string(type_of(m))) + " message, which only a publisher sends", true);
}

void PublisherCore::on_hello(PublisherClient& c, const Hello& h) {
  c.label = h.client;
  const SlotMemory memory = route_->memory();
  if ((h.accepts & memory_bit(memory)) == 0)
    return refuse(c, "publisher '" + name_ + "' shares " + std::string(to_string(memory)) + " memory (" +
                         route_->description() + "), which the subscriber does not accept");
  c.max_held = h.max_held ? std::min<std::size_t>(h.max_held, max_held_) : max_held_;
  Welcome w{static_cast<std::uint32_t>(::getpid()), static_cast<std::uint16_t>(slots_.size()),
            static_cast<std::uint16_t>(c.max_held), memory, route_->cuda_sync(), name_, clip(route_->description())};
  std::vector<std::byte> bytes;
  encode_message(w, bytes);
  // Active before the Welcome leaves: a subscriber that has its Welcome is
  // one that publish() sends to.
  c.active = true;
  active_.fetch_add(1, std::memory_order_acq_rel);
  ++stats_.subscribers_seen;
  if (send_datagram(c.fd.get(), bytes) != SendResult::Sent) {
    c.dead = true;
    return;
  }
  log(LogLevel::Info, "live publisher '" + name_ + "': " + peer_text(c) + " connected");
}

void PublisherCore::on_release(PublisherClient& c, const Release& r) {
  auto it = std::find_if(c.holds.begin(), c.holds.end(), [&](const Hold& h) { return same_hold(h, r); });
  if (it == c.holds.end())
    return drop(c, "released slot " + std::to_string(r.slot) + " generation " + std::to_string(r.generation) +
                       " sequence " + std::to_string(r.sequence) + ", which it does not hold",
                true);
  ring_.release(it->slot);
  c.holds.erase(it);
  if (c.leaving && c.holds.empty()) c.dead = true;  // its last frame is back: nothing left to wait for
}

// The subscriber stopped receiving: frames sent to it and not yet read, and
// the newest it kept, would otherwise hold their slots for as long as its
// application holds any frame (the socket stays open for those).
void PublisherCore::on_leave(PublisherClient& c, const Leave& l) {
  for (const Release& k : l.kept)
    if (std::none_of(c.holds.begin(), c.holds.end(), [&](const Hold& h) { return same_hold(h, k); }))
      return drop(c, "left keeping slot " + std::to_string(k.slot) + " generation " + std::to_string(k.generation) +
                         " sequence " + std::to_string(k.sequence) + ", which it does not hold",
                  true);
  std::vector<Hold> kept;
  for (const Hold& h : c.holds) {
    if (std::any_of(l.kept.begin(), l.kept.end(), [&](const Release& k) { return same_hold(h, k); }))
      kept.push_back(h);
    else
      ring_.release(h.slot);
  }
  log(LogLevel::Debug, "live publisher '" + name_ + "': " + peer_text(c) + " left, keeping " +
                           std::to_string(kept.size()) + " of " + std::to_string(c.holds.size()) + " frames");
  c.holds = std::move(kept);
  c.leaving = true;
  active_.fetch_sub(1, std::memory_order_acq_rel);
  if (c.holds.empty()) c.dead = true;
}

void PublisherCore::refuse(PublisherClient& c, const std::string& reason) {
  ++stats_.peers_refused;
  log(LogLevel::Warning, "live publisher '" + name_ + "': refused " + peer_text(c) + ": " + reason);
  send_reject(c.fd.get(), reason);
  c.dead = true;
}

void PublisherCore::drop(PublisherClient& c, const std::string& reason, bool hostile) {
  if (hostile) ++stats_.peers_dropped;
  log(LogLevel::Warning, "live publisher '" + name_ + "': disconnected " + peer_text(c) + ": " + reason);
  send_reject(c.fd.get(), reason);
  c.dead = true;
}

// Removes dead subscribers and those that never said Hello; their slots come back.
void PublisherCore::reap() {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  for (auto& c : clients_)
    if (!c->active && !c->dead && now > c->hello_deadline) {
      log(LogLevel::Info, "live publisher '" + name_ + "': " + peer_text(*c) + " said nothing within " +
                              std::to_string(options_.hello_timeout.count()) + " ms; dropped");
      c->dead = true;
    }
  auto gone = std::stable_partition(clients_.begin(), clients_.end(), [](const auto& c) { return !c->dead; });
  for (auto it = gone; it != clients_.end(); ++it) {
    for (const Hold& h : (*it)->holds) ring_.release(h.slot);
    if ((*it)->active && !(*it)->leaving) active_.fetch_sub(1, std::memory_order_acq_rel);
  }
  clients_.erase(gone, clients_.end());
}

}  // namespace handoff::live::detail
