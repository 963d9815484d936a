#pragma once
// The publisher's machinery: the slot ring, the subscribers and the thread
// that accepts and serves them. Publisher and PublishSlot share one core.
//
// The ring is handoff's one SlotRing (slot_ring.hpp): a publish claims a
// slot, publish_held()s it, adds one hold per subscriber it was sent to and
// lets go of its own; each subscriber's Release (or its going away) releases
// its hold. A subscriber holds only the slots of the frames it keeps, so one
// that keeps a frame, or leaves keeping one, never stops a publish into the
// other slots. The ring's slot memory (SlotStorage) and layout stay here, by
// slot number.
//
// Locking: one mutex guards the slots' storage, the subscriber list and the
// counters; the ring has its own (taken under this one, never the other way).
// The serving thread alone accepts, reads from and closes subscriber sockets;
// publishing threads send to them (non-blocking) under the mutex and mark a
// subscriber dead for the serving thread to remove.
#include <handoff/publisher.hpp>
#include <handoff/slot_ring.hpp>

#include "slot_storage.hpp"
#include "socket.hpp"

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace handoff::live::detail {

struct Hold {
  std::uint16_t slot = 0;
  std::uint32_t generation = 0;
  std::uint64_t sequence = 0;
};

struct PublisherClient {
  UniqueFd fd;
  PeerCredentials peer;
  bool active = false;  // Welcome sent
  bool dead = false;
  bool leaving = false;  // sent Leave: gets no more frames; gone once its last hold is released
  std::chrono::steady_clock::time_point hello_deadline;
  std::string label;
  std::size_t max_held = 1;
  std::vector<std::uint32_t> sent_generation;  // per slot: the generation it was told about (0: none)
  std::vector<Hold> holds;                     // frames sent and not yet released
  std::uint64_t skipped = 0;                   // frames not sent to it
};

// A slot's memory and the layout of the frame last written to it; its state,
// holds and generation are the ring's.
struct RingSlot {
  std::unique_ptr<SlotStorage> storage;
  FrameLayout layout;
};

struct FrameMeta {
  std::int64_t index = 0;
  double timestamp = 0.0;
  Colorimetry colorimetry{};
};

class PublisherCore {
 public:
  PublisherCore(std::string_view name_or_path, PublisherOptions options);
  ~PublisherCore();

  void stop() noexcept;  // says Goodbye, joins the thread, removes the socket; idempotent

  bool has_subscribers() const noexcept { return active_.load(std::memory_order_acquire) > 0; }
  // Counts a frame that nobody was connected to receive.
  void count_unsent();
  // A free slot with room for `layout` (allocated or re-allocated as needed:
  // a new generation), claimed; -1 when every slot is held (counted as dropped).
  int reserve(const FrameLayout& layout);
  SlotStorage& storage(int slot);
  const FrameLayout& layout(int slot);
  // Announces a reserved slot to every subscriber (after finishing its writes).
  void announce(int slot, const FrameMeta& meta, const media::OverlayFrame* overlays, const PresentSync& sync);
  // Returns a reserved slot unannounced.
  void give_back(int slot) noexcept;

  PublisherStats stats() const;
  const std::filesystem::path& path() const noexcept { return path_; }
  const std::string& name() const noexcept { return name_; }
  SlotMemory memory() const noexcept { return route_->memory(); }
  const PublisherOptions& options() const noexcept { return options_; }

 private:
  void bind_socket();
  void run() noexcept;
  std::vector<PublisherClient*> poll_once();
  void accept_peers();
  void serve(PublisherClient& c);
  // Reads and handles one datagram of `c` (under mutex_); false when none was
  // waiting or `c` is finished with.
  bool read_one(PublisherClient& c);
  // Handles what `c` sent and the serving thread has not read yet (under
  // mutex_), so Releases already sent count before a frame is skipped or
  // dropped for want of a slot.
  void catch_up(PublisherClient& c);
  void on_datagram(PublisherClient& c, std::span<const std::byte> bytes, std::vector<UniqueFd>& fds);
  void on_hello(PublisherClient& c, const Hello& h);
  void on_release(PublisherClient& c, const Release& r);
  void on_leave(PublisherClient& c, const Leave& l);
  void refuse(PublisherClient& c, const std::string& reason);
  void drop(PublisherClient& c, const std::string& reason, bool hostile);
  void reap();
  bool send_slot(PublisherClient& c, int slot);
  void send_frame(PublisherClient& c, int slot, std::uint64_t sequence, std::vector<std::byte>& message,
                  int overlay_fd);
  void prepare_overlays(const media::OverlayFrame* overlays, FrameAnnounce& a, UniqueFd& block);

  std::string name_;
  std::filesystem::path path_;
  PublisherOptions options_;
  std::size_t max_held_ = 1;
  std::unique_ptr<SlotRoute> route_;
  UniqueFd listen_fd_;
  UniqueFd wake_fd_;
  dev_t socket_dev_ = 0;
  ino_t socket_ino_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> active_{0};

  mutable std::mutex mutex_;
  SlotRing ring_;
  std::vector<RingSlot> slots_;
  std::vector<std::unique_ptr<PublisherClient>> clients_;
  PublisherStats stats_;  // published and dropped_no_slot come from ring_'s counters
  std::vector<std::byte> scratch_;  // encoded messages (under mutex_)
  std::vector<std::byte> received_ = std::vector<std::byte>(kMaxMessageBytes);  // a datagram read (under mutex_)
};

// The byte offset of FrameAnnounce::counters.skipped_for_you in an encoded
// Frame message, so one encoding serves every subscriber.
std::size_t frame_skipped_offset() noexcept;

}  // namespace handoff::live::detail
