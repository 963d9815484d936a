#include "subscriber_core.hpp"

#include <handoff/cuda.hpp>
#include <handoff/log.hpp>

#include "handshake.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

namespace handoff::live::detail {

// --- Connection -----------------------------------------------------------------------
bool Connection::send(const Message& m) noexcept {
  try {
    const std::vector<std::byte> bytes = encode_message(m);
    // Closed: the publisher is gone and took its slots back; nothing to do.
    return send_datagram(fd_.get(), bytes) != SendResult::WouldBlock;
  } catch (...) {
    return true;  // encoding a Release or a Leave cannot fail; never throw from a destructor path
  }
}

void Connection::hold(const Release& r) {
  std::lock_guard lock(mutex_);
  held_.push_back(r);
}

void Connection::release(const Release& r) noexcept {
  std::lock_guard lock(mutex_);
  if (const auto it = std::find(held_.begin(), held_.end(), r); it != held_.end()) held_.erase(it);
  if (pending_.empty() && send(r)) return;
  try {
    pending_.push_back(r);
  } catch (...) {
    return;  // out of memory: the publisher gets the slot back when the session ends
  }
  signal_event(wake_.get());
}

void Connection::flush() noexcept {
  std::lock_guard lock(mutex_);
  std::size_t sent = 0;
  while (sent < pending_.size() && send(pending_[sent])) ++sent;
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(sent));
}

void Connection::leave() noexcept {
  std::lock_guard lock(mutex_);
  if (left_) return;
  left_ = true;
  pending_.clear();  // the Leave releases these too: they are not in held_
  Leave m;
  try {
    m.kept = held_;
  } catch (...) {
    return;  // out of memory: the publisher gets the slots back when the socket closes
  }
  // The publisher reads all the time; a full socket drains within moments.
  // Bounded: past it the slots come back when the last held frame goes.
  for (int tries = 0; tries < 200 && !send(m); ++tries) {
    pollfd p{fd_.get(), POLLOUT, 0};
    (void)::poll(&p, 1, 10);
  }
}

// --- SubscriberCore -------------------------------------------------------------------
SubscriberCore::SubscriberCore(std::string_view name_or_path, SubscriberOptions options)
    : path_(socket_path(name_or_path, false)), name_(name_from_path(path_)), options_(std::move(options)) {
  wake_fd_ = make_event_fd();
  status_.publisher = name_;
  status_.message = "waiting for publisher '" + name_ + "' at " + path_.string();
  thread_ = std::thread([this] { run(); });
}

SubscriberCore::~SubscriberCore() {
  stopping_.store(true, std::memory_order_release);
  signal_event(wake_fd_.get());
  if (thread_.joinable()) thread_.join();
  LiveFrame last;
  {
    std::lock_guard lock(mutex_);
    last = std::move(latest_);  // released outside the lock
  }
}

void SubscriberCore::set_state(LinkState state, std::string message) {
  {
    std::lock_guard lock(mutex_);
    status_.state = state;
    status_.message = std::move(message);
  }
  changed_.notify_all();
  report_state();
}

void SubscriberCore::report_state() noexcept {
  if (!options_.on_state) return;
  try {
    options_.on_state(status());
  } catch (const std::exception& e) {
    log(LogLevel::Error, "live subscriber of '" + name_ + "': on_state: " + e.what());
  }
}

void SubscriberCore::report_frame() noexcept {
  if (!options_.on_frame) return;
  try {
    options_.on_frame();
  } catch (const std::exception& e) {
    log(LogLevel::Error, "live subscriber of '" + name_ + "': on_frame: " + e.what());
  }
}

// With on_state set the owner hears of the failure there, and says it once.
void SubscriberCore::fail(std::string message) {
  if (!options_.on_state) log(LogLevel::Warning, "live subscriber of '" + name_ + "': " + message);
  set_state(LinkState::Failed, "failed: " + message);
}

void SubscriberCore::pause(std::chrono::milliseconds d) {
  if (!stopping()) wait_readable(wake_fd_.get(), -1, static_cast<int>(d.count()));
  drain_event(wake_fd_.get());
}

LiveFrame SubscriberCore::take() {
  LiveFrame f;
  std::lock_guard lock(mutex_);
  if (latest_) {
    f = std::move(latest_);
    latest_ = LiveFrame{};
    ++stats_.taken;
  }
  return f;
}

LiveFrame SubscriberCore::next(std::chrono::nanoseconds timeout) {
  LiveFrame f;
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return bool(latest_) || status_.state == LinkState::Failed; });
  if (latest_) {
    f = std::move(latest_);
    latest_ = LiveFrame{};
    ++stats_.taken;
  }
  return f;
}

bool SubscriberCore::wait_for(LinkState state, std::chrono::nanoseconds timeout) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return status_.state == state; });
}

SubscriberStatus SubscriberCore::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

SubscriberStats SubscriberCore::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

// --- the receiving thread ----------------------------------------------------------------
void SubscriberCore::run() noexcept {
  while (!stopping()) {
    std::optional<Session> session;
    try {
      session = connect_once();
    } catch (const std::exception& e) {
      fail(e.what());
      return;
    }
    if (!session) {
      if (status().state == LinkState::Failed) return;
      pause(options_.retry_interval);
      continue;
    }
    serve(*session);
    if (stopping()) {
      // The newest frame nobody took goes first, so the Leave does not keep it.
      LiveFrame unread;
      std::lock_guard lock(mutex_);
      unread = std::move(latest_);
      latest_ = LiveFrame{};
    }
    session->connection->leave();
    session.reset();  // frames the application holds keep the connection and their slots
    if (stopping()) return;
    if (!options_.reconnect) {
      {
        std::lock_guard lock(mutex_);
        status_.state = LinkState::Stopped;
      }
      changed_.notify_all();
      report_state();
      return;
    }
    pause(options_.retry_interval);
  }
}

// One attempt. nullopt: nobody there (or a transient failure): try again.
// Throws for what retrying cannot fix.
std::optional<SubscriberCore::Session> SubscriberCore::connect_once() {
  int error = 0;
  UniqueFd fd = connect_to(path_, error);
  if (!fd) {
    // Something else at the path: no publisher can ever listen there (one
    // refuses to replace it), so waiting would be for ever.
    std::error_code ec;
    const auto type = std::filesystem::status(path_, ec).type();
    if (!ec && type != std::filesystem::file_type::socket && type != std::filesystem::file_type::not_found)
      throw Error(path_.string() + " is " +
                  (type == std::filesystem::file_type::directory ? "a directory" : "not a socket") +
                  ": no publisher listens there");
    if (!options_.wait) throw Error("no publisher at " + path_.string() + ": " + errno_text(error));
    return std::nullopt;
  }
  const PeerCredentials peer = peer_credentials(fd.get());
  if (!peer_trusted(peer.uid, peer.gid, options_.allow_group)) {
    log(LogLevel::Warning, "live subscriber: the publisher at " + path_.string() + " runs as uid " +
                               std::to_string(peer.uid) + ", which this subscriber does not trust");
    return std::nullopt;
  }
  Hello hello{static_cast<std::uint32_t>(::getpid()), options_.max_held, options_.accepts, options_.client};
  Session s;
  try {
    s.welcome = client_handshake(fd.get(), hello, static_cast<int>(options_.handshake_timeout.count()), wake_fd_.get());
  } catch (const PublisherRefused& e) {
    fail(e.what());  // the publisher said no (version, memory kind, capacity): permanent
    return std::nullopt;
  } catch (const ProtocolVersionMismatch& e) {
    fail(e.what());
    return std::nullopt;
  } catch (const Error& e) {
    if (!stopping()) log(LogLevel::Warning, "live subscriber of '" + name_ + "': handshake: " + e.what());
    return std::nullopt;
  }
  // Retrying cannot give this process a CUDA it does not have: say so once.
  if (s.welcome.memory == SlotMemory::Cuda && !cuda::driver().usable()) {
    fail("publisher '" + s.welcome.name + "' shares CUDA memory, which this process cannot import: " +
         cuda::driver().describe());
    return std::nullopt;
  }
  UniqueFd wake(::fcntl(wake_fd_.get(), F_DUPFD_CLOEXEC, 0));
  s.connection = std::make_shared<Connection>(std::move(fd), std::move(wake));
  s.slots.assign(s.welcome.slot_count, nullptr);
  {
    std::lock_guard lock(mutex_);
    ++stats_.connections;
    status_.state = LinkState::Connected;
    status_.message = "connected to '" + s.welcome.name + "' (pid " + std::to_string(s.welcome.pid) + ", " +
                      s.welcome.route + ")";
    status_.publisher = s.welcome.name;
    status_.pid = s.welcome.pid;
    status_.memory = s.welcome.memory;
    status_.cuda_sync = s.welcome.cuda_sync;
    status_.route = s.welcome.route;
    status_.max_held = s.welcome.max_held;
  }
  changed_.notify_all();
  report_state();
  return s;
}

}  // namespace handoff::live::detail
