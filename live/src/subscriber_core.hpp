#pragma once
// The subscriber's machinery: a thread that connects (and reconnects), reads
// the publisher's messages, imports slots and keeps the newest frame; holds
// that send a Release when the last copy of a frame is gone.
#include <handoff/subscriber.hpp>

#include "slot_import.hpp"
#include "socket.hpp"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace handoff::live::detail {

// One session's socket. Shared by the receiving thread and every frame held
// from that session, so a late Release never reaches a reused descriptor.
class Connection {
 public:
  Connection(UniqueFd fd, UniqueFd wake) : fd_(std::move(fd)), wake_(std::move(wake)) {}
  int fd() const noexcept { return fd_.get(); }
  // A frame of this session is held from now until release() of the same
  // Release. Any thread.
  void hold(const Release& r);
  // Sends a Release now, or queues it (socket full) and wakes the receiving
  // thread, which sends queued ones with flush(). Any thread; never throws.
  void release(const Release& r) noexcept;
  void flush() noexcept;
  // The session's receiving ends while frames may still be held: tells the
  // publisher (Leave) to send nothing more and to take back every slot except
  // those of the frames held now, so that the frames it sent and nobody will
  // read, and the queued Releases, hold nothing. Once; any thread; never throws.
  void leave() noexcept;

 private:
  bool send(const Message& m) noexcept;  // false: would block
  UniqueFd fd_;
  UniqueFd wake_;  // the subscriber's wake-up eventfd (a copy of it)
  std::mutex mutex_;
  std::vector<Release> held_;     // frames held now
  std::vector<Release> pending_;  // Releases not sent yet (the socket was full)
  bool left_ = false;
};

// What frame.owner holds: the slot's import, and the Release to send.
struct FrameHold {
  FrameHold(std::shared_ptr<Connection> c, std::shared_ptr<SlotImport> i, const Release& r)
      : connection(std::move(c)), import(std::move(i)), release(r) {
    connection->hold(release);
  }
  FrameHold(const FrameHold&) = delete;
  FrameHold& operator=(const FrameHold&) = delete;
  ~FrameHold() { connection->release(release); }

  std::shared_ptr<Connection> connection;
  std::shared_ptr<SlotImport> import;
  Release release;
};

class SubscriberCore {
 public:
  SubscriberCore(std::string_view name_or_path, SubscriberOptions options);
  ~SubscriberCore();

  LiveFrame take();
  LiveFrame next(std::chrono::nanoseconds timeout);
  bool wait_for(LinkState state, std::chrono::nanoseconds timeout) const;
  SubscriberStatus status() const;
  SubscriberStats stats() const;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  struct Session {
    std::shared_ptr<Connection> connection;
    Welcome welcome;
    std::vector<std::shared_ptr<SlotImport>> slots;
  };

  void run() noexcept;
  bool stopping() const noexcept { return stopping_.load(std::memory_order_acquire); }
  void pause(std::chrono::milliseconds d);  // interruptible by stop
  std::optional<Session> connect_once();
  void serve(Session& s);
  // false: the session is over
  bool on_datagram(Session& s, std::span<const std::byte> bytes, std::vector<UniqueFd>& fds);
  void on_slot(Session& s, const SlotAnnounce& m, std::vector<UniqueFd>& fds);
  void on_frame(Session& s, FrameAnnounce& m, std::vector<UniqueFd>& fds);
  std::shared_ptr<const media::OverlayFrame> read_overlays(FrameAnnounce& m, std::vector<UniqueFd>& fds);
  void set_state(LinkState state, std::string message);
  // Runs options_.on_state / on_frame (outside the lock; what they throw is logged).
  void report_state() noexcept;
  void report_frame() noexcept;
  void fail(std::string message);

  std::filesystem::path path_;
  std::string name_;
  SubscriberOptions options_;
  UniqueFd wake_fd_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  LiveFrame latest_;  // newest frame not yet taken
  SubscriberStatus status_;
  SubscriberStats stats_;
};

}  // namespace handoff::live::detail
