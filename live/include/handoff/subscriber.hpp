#pragma once
// handoff::Subscriber: receives the frames a handoff::Publisher in another
// process shares, without copying them (docs/live.md).
//
//   handoff::Subscriber sub("cam0");            // waits for the publisher if it is not there yet
//   while (running) {
//     handoff::LiveFrame f = sub.next(std::chrono::milliseconds(100));
//     if (!f) continue;                         // nothing new (or status() says why)
//     use(f.frame, f.overlays.get());           // host memory mapped read-only, CUDA memory
//   }                                           // imported, or a Vulkan descriptor to import
//
// A LiveFrame holds its slot: the publisher does not reuse the slot until
// every copy of the frame (and of frame.owner) is gone. Hold at most
// max_held - 1 frames at once, or the publisher skips frames for this
// subscriber until one is released. When the publisher goes away the last
// frame stays valid, status() says "publisher gone", and the subscriber
// reconnects when a publisher of that name comes back.
#include <handoff/frame.hpp>
#include <handoff/live/endpoint.hpp>
#include <handoff/live/link.hpp>
#include <handoff/unique_handle.hpp>
#include <handoff/media/overlay.hpp>

#if HANDOFF_HAVE_VULKAN
#include <handoff/vk_memory.hpp>
#endif

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace handoff {

namespace live::detail {
class SubscriberCore;
class SlotImport;
}  // namespace live::detail

enum class LinkState : std::uint8_t {
  Waiting,        // no publisher yet (started before it): retrying
  Connected,
  PublisherGone,  // it went away (or broke the protocol); retrying when reconnect is on
  Failed,         // a permanent error (version mismatch, refused): status().message says why
  Stopped,        // the publisher went and reconnect is off
};
std::string_view to_string(LinkState s);

struct SubscriberStatus;

struct SubscriberOptions {
  bool wait = true;       // no publisher there: keep trying (false: Failed at once)
  bool reconnect = true;  // after the publisher goes, wait for one of the same name
  std::chrono::milliseconds retry_interval{100};
  std::chrono::milliseconds handshake_timeout{2000};
  std::uint16_t max_held = 0;                 // frames held at once; 0: the publisher's default
  std::uint8_t accepts = live::kAcceptsAll;   // live::memory_bit() of each slot memory this side imports
  std::optional<unsigned> allow_group;        // publishers of this gid are trusted too (default: same user)
  bool cuda_synchronize = true;  // CUDA interprocess events: wait for the event before handing a frame out
  std::string client = "subscriber";  // the label the publisher logs
  // Called on the subscriber's thread, outside its lock: after each frame that
  // arrives, and after each change of status() (with the new status). Keep them
  // short (a wake-up); they may call this Subscriber's methods; what they throw
  // is logged. Empty: none. With on_state set, a failure (LinkState::Failed)
  // is reported through it alone, not also logged.
  std::function<void()> on_frame;
  std::function<void(const SubscriberStatus&)> on_state;
};

// The shared memory a received frame lives in.
struct LiveSlot {
  live::SlotKind kind = live::SlotKind::HostMemfd;
  std::uint16_t index = 0;
  std::uint32_t generation = 0;  // changes when the publisher re-allocates the slot
  std::uint64_t size = 0;             // bytes usable from `offset`
  std::uint64_t allocation_size = 0;  // what an importer imports
  std::uint64_t offset = 0;           // Vulkan: the buffer's offset in the allocation
  bool dedicated = false;
  Uuid device_uuid{};  // CUDA / Vulkan: the publisher's device
  Uuid driver_uuid{};  // Vulkan
};

// One received frame. Copies share the hold on the slot.
// Thread safety: a LiveFrame may be copied, read and destroyed on any thread.
struct LiveFrame {
  // Host: planes point into a read-only mapping. CUDA: device pointers in the
  // importing context (frame.cuda_context, frame.device). Vulkan: plane
  // offsets in the slot's buffer (import it with vulkan_memory()).
  // frame.owner holds the slot until released.
  Frame frame;
  std::shared_ptr<const media::OverlayFrame> overlays;  // null when none were sent
  std::uint64_t sequence = 0;         // the publisher's frame counter (1, 2, ...)
  std::int64_t publish_time_ns = 0;   // CLOCK_MONOTONIC when the publisher announced it
  std::int64_t receive_time_ns = 0;   // CLOCK_MONOTONIC when it arrived here
  live::PublisherCounters counters{};  // the publisher's counts when it sent this frame
  LiveSlot slot;
  // CUDA slots with interprocess events: the slot's CUevent (cuStreamWaitEvent
  // on it before reading on a stream; already waited for with
  // SubscriberOptions::cuda_synchronize). Null otherwise.
  void* cuda_event = nullptr;

  explicit operator bool() const noexcept { return frame.owner != nullptr; }
  // A new descriptor of the slot's memory, the caller's to own (host, CUDA VMM
  // and Vulkan slots); empty for CUDA IPC handles or an empty frame.
  UniqueFd duplicate_descriptor() const;
#if HANDOFF_HAVE_VULKAN
  // Vulkan slots: the slot's memory as an importer wants it (a new descriptor
  // each call), e.g. GlVkBuffer(memory, slot.size). Throws UsageError otherwise.
  ExportedMemory vulkan_memory() const;
#endif

  std::shared_ptr<const live::detail::SlotImport> import_;  // internal: the slot's mapping / import
};

struct SubscriberStats {
  std::uint64_t received = 0;     // frames that arrived
  std::uint64_t replaced = 0;     // arrived, then replaced by a newer one before anyone took them
  std::uint64_t taken = 0;        // handed out by take() / next()
  std::uint64_t connections = 0;  // sessions with a publisher
  live::PublisherCounters publisher{};  // the latest counts the publisher sent
};

struct SubscriberStatus {
  LinkState state = LinkState::Waiting;
  // "waiting for publisher 'cam0' at ...", "connected to 'cam0' (pid 12, host memfd)",
  // "publisher gone", "publisher stopped: ...", "failed: ..."
  std::string message;
  std::string publisher;  // the connected (or last) publisher's name
  std::uint32_t pid = 0;
  live::SlotMemory memory = live::SlotMemory::Host;
  live::CudaSync cuda_sync = live::CudaSync::None;
  std::string route;
  // Frames this subscriber may hold at once (the publisher's answer to
  // SubscriberOptions::max_held; 0 before the first connection). Holding
  // this many makes the publisher skip frames for it until one is released.
  std::uint16_t max_held = 0;
};

// Thread safety: every method may be called from any thread. The subscriber
// connects and receives on a thread of its own.
class Subscriber {
 public:
  // Connects to socket_path(name_or_path), now or (with options.wait) when a
  // publisher appears. Throws UsageError for a bad name, and handoff::Error
  // when the socket folder cannot be used (XDG_RUNTIME_DIR unset for a name,
  // a folder others can enter); everything later is reported by status().
  explicit Subscriber(std::string_view name_or_path, SubscriberOptions options = {});
  ~Subscriber();
  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;

  // The newest frame not yet taken, or an empty LiveFrame. Never blocks.
  LiveFrame take();
  // Waits up to `timeout` for a frame not yet taken; empty on timeout or
  // when the subscriber failed.
  LiveFrame next(std::chrono::nanoseconds timeout);
  // Waits up to `timeout` until status().state is `state`; false otherwise.
  bool wait_for(LinkState state, std::chrono::nanoseconds timeout) const;

  SubscriberStatus status() const;
  SubscriberStats stats() const;
  const std::filesystem::path& socket_path() const noexcept;

 private:
  std::unique_ptr<live::detail::SubscriberCore> core_;
};

}  // namespace handoff
