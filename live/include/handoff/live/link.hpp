#pragma once
// What a live link between a handoff::Publisher and a handoff::Subscriber is
// made of, as their options and statistics name it: the memory a publisher's
// slots are, how a slot is shared, how a CUDA publisher orders its writes, and
// the publisher's counts a subscriber receives. (The wire protocol itself is
// private to handoff::live.)
//
// Thread safety: every function here is pure and may be called from any thread.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace handoff::live {

// The most slots a publisher's ring may have (PublisherOptions::slots).
inline constexpr std::size_t kMaxSlots = 64;
// The longest name either side gives (a publisher's name, SubscriberOptions::client), in bytes.
inline constexpr std::size_t kMaxNameBytes = 64;

// What kind of memory a publisher's slots are.
enum class SlotMemory : std::uint8_t { Host = 1, Cuda = 2, Vulkan = 3 };
std::string_view to_string(SlotMemory m);
// A subscriber's accepts bits (SubscriberOptions::accepts).
constexpr std::uint8_t memory_bit(SlotMemory m) { return std::uint8_t(1u << (std::uint8_t(m) - 1)); }
inline constexpr std::uint8_t kAcceptsAll = 0x7;

// How a slot's memory is shared.
enum class SlotKind : std::uint8_t {
  HostMemfd = 1,       // memfd sealed against shrink and grow: 1 descriptor
  CudaVmmFd = 2,       // cuMemCreate + cuMemExportToShareableHandle (POSIX fd): 1 descriptor
  CudaIpcHandle = 3,   // legacy cuIpcGetMemHandle: the handle in the message, no descriptor
  VulkanOpaqueFd = 4,  // exportable Vulkan memory (OPAQUE_FD): 1 descriptor
};
std::string_view to_string(SlotKind k);
SlotMemory memory_of(SlotKind k) noexcept;

// How a CUDA publisher orders a frame's writes before its announcement.
enum class CudaSync : std::uint8_t {
  None = 0,                // not CUDA memory: the announcement itself is the sync
  IpcEvent = 1,            // each slot has an interprocess event recorded after the writes
  StreamSynchronized = 2,  // the publisher synchronised its stream before announcing
};
std::string_view to_string(CudaSync s);

// The publisher's counts, as it sends them with each frame.
struct PublisherCounters {
  std::uint64_t published = 0;        // frames announced so far
  std::uint64_t dropped_no_slot = 0;  // frames dropped because every slot was held
  std::uint64_t skipped_for_you = 0;  // frames not sent to this subscriber (socket full, or it held too many)
};

}  // namespace handoff::live
