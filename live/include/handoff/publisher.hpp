#pragma once
// handoff::Publisher: shares frames with viewers and other consumers in other
// processes, without copying them through a socket (docs/live.md).
//
//   handoff::Publisher pub("cam0");              // $XDG_RUNTIME_DIR/handoff/cam0.sock
//   pub.publish(frame, overlays);                // copies into a shared slot; never blocks
//   // or, with no copy at all:
//   if (auto slot = pub.acquire(PixelFormat::NV12, 1920, 1080)) {
//     write_into(slot.frame());                  // planes in shared memory
//     pub.present(std::move(slot), overlays);
//   }
//
// Publisher and Viewer (viewer.hpp) take frames alike: publish(frame,
// overlays, stream) as show(frame, overlays, stream), acquire() / present()
// with an acquired buffer whose frame() is written. They differ where their
// jobs do: a publisher never waits for anyone, so publish() returns false
// (and counts the frame as dropped) when every slot is held, where show()
// waits, bounded, for a ring buffer the display is done with.
//
// The publisher allocates a ring of shareable slots (host memfds, CUDA
// allocations exported as file descriptors, or exportable Vulkan memory),
// sends each subscriber a slot's descriptor once, then one small message per
// frame. The newest frame wins; publish() never waits for a subscriber; a slot
// a subscriber still reads is not reused until it is released; when every
// slot is held the frame is dropped and counted. With no subscriber
// connected, publish() only counts.
#include <handoff/cuda_stream.hpp>
#include <handoff/frame.hpp>
#include <handoff/live/endpoint.hpp>
#include <handoff/live/link.hpp>
#include <handoff/media/overlay.hpp>
#include <handoff/media/recording.hpp>

#if HANDOFF_HAVE_VULKAN
#include <vulkan/vulkan.h>
#endif

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace handoff {

class VkContext;
class VkFrameBuffer;

namespace live::detail {
class PublisherCore;
class PublishRecorder;
}

using live::SlotMemory;

// How CUDA slots are shared (SlotMemory::Cuda). Auto tries them in this order
// and reports the reason for each fallback in PublisherStats::route.
enum class CudaExport : std::uint8_t {
  Auto,
  VirtualMemory,  // cuMemCreate with a POSIX fd handle, cuMemExportToShareableHandle
  LegacyIpc,      // cuMemAlloc + cuIpcGetMemHandle (no descriptor; not on Jetson / Tegra)
  Host,           // host memfd slots; CUDA frames are copied device -> host
};

struct PublisherOptions {
  std::size_t slots = 4;                     // the ring (2 .. 64)
  SlotMemory memory = SlotMemory::Host;      // what the slots are
  std::optional<unsigned> allow_group;       // peers whose gid is this are accepted too (default: same user only)
  std::size_t max_subscribers = 16;
  std::size_t max_held_per_subscriber = 0;   // frames one subscriber may hold at once; 0: slots - 1
  int cuda_device = 0;                       // SlotMemory::Cuda: the device the slots live on
  CudaExport cuda_export = CudaExport::Auto;
  VkContext* vulkan = nullptr;               // SlotMemory::Vulkan: the context (must outlive the publisher)
  std::chrono::milliseconds hello_timeout{2000};  // a connection that says nothing this long is dropped
  // Records every frame published (with its overlays) into an MCAP file
  // (docs/recording.md), on record.topic (default "/<name>"), logged when it
  // is published, whether or not a subscriber is connected. publish() never
  // waits for the disk: a frame that finds the writer's queue full is left
  // out and counted (PublisherStats::record_dropped, as are frames published
  // after a write error stopped the recording). Host and CUDA frames
  // are recorded (a CUDA frame is copied to host memory on the stream its
  // producer passed, which publish() / present() then synchronise: the
  // recording's cost); frames only in Vulkan memory are counted in record_skipped.
  // The file is created by the constructor and finished by the destructor.
  media::RecordTarget record{};
};

struct PublisherStats {
  std::uint64_t published = 0;        // frames announced (or counted with no subscriber)
  std::uint64_t dropped_no_slot = 0;  // dropped: every slot was held
  std::uint64_t skipped_sends = 0;    // per-subscriber sends skipped (its socket full, or it held its limit)
  std::size_t subscribers = 0;        // connected now
  std::size_t held_slots = 0;         // slots some subscriber holds now
  std::size_t held_frames = 0;        // frames held now, over every subscriber
  std::uint64_t subscribers_seen = 0;
  std::uint64_t peers_refused = 0;    // credentials, version, memory kind, too many
  std::uint64_t peers_dropped = 0;    // disconnected for a malformed or hostile message
  std::string route;                  // how slots are shared, and why any fallback was taken
  // PublisherOptions::record: frames recorded, left out (writer queue full),
  // not recorded (Vulkan memory), and the error that stopped the recording.
  std::uint64_t recorded = 0, record_dropped = 0, record_skipped = 0;
  std::string record_error;
};

// What present() waits for before announcing a frame written into an acquired slot.
struct PresentSync {
  CudaStream cuda_stream;  // CUDA slots: the stream the writes were issued on
#if HANDOFF_HAVE_VULKAN
  VkFence vulkan_fence = VK_NULL_HANDLE;  // Vulkan slots: signalled when the writes are done
#endif
};

// A slot handed out by Publisher::acquire(). Write the frame into `frame`'s
// planes (host pointers, CUDA device pointers, or offsets into
// vulkan_buffer()), set its index / timestamp / colorimetry if you like, then
// Publisher::present() it. Dropped without present(): the slot goes back
// unannounced. Move-only. Thread safety: one thread at a time.
class PublishSlot {
 public:
  PublishSlot() = default;
  PublishSlot(PublishSlot&&) noexcept;
  PublishSlot& operator=(PublishSlot&&) noexcept;
  PublishSlot(const PublishSlot&) = delete;
  PublishSlot& operator=(const PublishSlot&) = delete;
  ~PublishSlot();

  explicit operator bool() const noexcept { return core_ != nullptr; }
  // The writable frame: format, size and planes are the slot's (present()
  // checks them); set index, timestamp and colorimetry as you like.
  Frame& frame() noexcept { return frame_; }
  const Frame& frame() const noexcept { return frame_; }
#if HANDOFF_HAVE_VULKAN
  // Vulkan slots: the buffer holding both planes (else nullptr).
  VkFrameBuffer* vulkan_buffer() const noexcept;
#endif

 private:
  friend class Publisher;
  void give_back() noexcept;
  Frame frame_;
  std::shared_ptr<live::detail::PublisherCore> core_;
  int slot_ = -1;
};

// Thread safety: every method may be called from any thread (one internal
// lock; publish() never waits on a subscriber). The publisher listens and
// serves subscribers on a thread of its own. Destruction says Goodbye to the
// subscribers, closes and removes its socket.
class Publisher {
 public:
  // Listens at socket_path(name_or_path), creating $XDG_RUNTIME_DIR/handoff
  // (0700). A socket left there by a dead publisher is replaced; a live
  // publisher of the same name is a handoff::Error naming it and its pid.
  explicit Publisher(std::string_view name_or_path, PublisherOptions options = {});
  ~Publisher();
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Copies `frame` (host or CUDA memory) into a free slot and announces it
  // with `overlays` (none when they hold no overlays and no layers; layers
  // are sent in the overlay block, CUDA ones copied to the host first, after
  // the work on `cuda_stream`, when a subscriber or a recording takes them:
  // docs/live.md). Into CUDA slots the copy is queued on
  // `cuda_stream` (default: the legacy default stream), after the
  // producer's work on that stream, and the frame is announced with the slot's
  // interprocess event recorded after it: publish() returns before the copy
  // ran, so keep the source unchanged until that stream has passed it (where
  // there are no interprocess events the stream is synchronised first).
  // Host-to-host and into host slots the copy is done when it returns.
  // Returns false when every slot was held (the frame is dropped and counted).
  // Throws UsageError for a frame it cannot take (GL / Vulkan memory, invalid
  // layout), InvalidFrame for bad layers (validate_layers; CUDA layers on
  // more than one device) and
  // handoff::Error when a copy fails.
  bool publish(const Frame& frame, const media::OverlayFrame& overlays = {}, CudaStream cuda_stream = {});

#if HANDOFF_HAVE_VULKAN
  // Vulkan slots: copies `source` (same format and size as the slot layout)
  // into a slot on the GPU, waits for the copy's fence, and announces it.
  bool publish(const VkFrameBuffer& source, std::int64_t index, double timestamp,
               const media::OverlayFrame& overlays = {});
#endif

  // A slot to write a format x width x height frame into, with no copy.
  // Empty (operator bool false) when every slot is held (counted as dropped).
  PublishSlot acquire(PixelFormat format, std::uint32_t width, std::uint32_t height, Colorimetry colorimetry = {});
  // Announces an acquired slot once the producer's work is complete: CUDA
  // slots record the slot's interprocess event on sync.cuda_stream (or
  // synchronise it where there are none); Vulkan slots wait for
  // sync.vulkan_fence (bounded by handoff::wait_limit()).
  void present(PublishSlot&& slot, const media::OverlayFrame& overlays = {}, const PresentSync& sync = {});

  PublisherStats stats() const;
  const std::filesystem::path& socket_path() const noexcept;
  const std::string& name() const noexcept;
  SlotMemory memory() const noexcept;

 private:
  std::shared_ptr<live::detail::PublisherCore> core_;
  std::unique_ptr<live::detail::PublishRecorder> recorder_;  // PublisherOptions::record
};

}  // namespace handoff
