#pragma once
// The live-attach wire protocol (docs/live.md): what a Publisher and a
// Subscriber say to each other over a Unix SOCK_SEQPACKET socket. One datagram
// is one message: a fixed 16-byte header, then the payload, every integer
// little-endian. File descriptors travel as SCM_RIGHTS with the one message
// they belong to (a slot's memory once, a large overlay block per frame).
//
//   header: u32 magic "HOFL" | u16 version | u16 type | u32 payload bytes | u32 0
//
// The header and the Reject message are frozen across versions, so a peer of
// any version can say, and understand, "version mismatch" (decode_message
// turns any other message of another version into ProtocolVersionMismatch).
//
// A private header of handoff::live (include_internal/, target
// handoff::live_private; not installed): applications use Publisher and
// Subscriber, and the link's public vocabulary is handoff/live/link.hpp.
//
// Thread safety: every function here is pure and may be called from any thread.
#include <handoff/error.hpp>
#include <handoff/frame.hpp>
#include <handoff/live/link.hpp>
#include <handoff/media/overlay.hpp>
#include <handoff/uuid.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace handoff::media {
struct OverlayFrame;
}

namespace handoff::live {

inline constexpr std::uint32_t kMagic = 0x4C464F48;  // bytes 'H' 'O' 'F' 'L'
inline constexpr std::uint16_t kProtocolVersion = 4;  // 2: Leave; 3: every PixelFormat, three planes; 4: layers
inline constexpr std::size_t kHeaderBytes = 16;
// The largest datagram either side sends or accepts (a receive buffer this
// size detects a larger one as truncated).
inline constexpr std::size_t kMaxMessageBytes = 65536;
// Overlays larger than this travel in a sealed memfd instead of inline.
inline constexpr std::size_t kMaxInlineOverlayBytes = 32768;
// Overlay blocks (inline or memfd) above this are refused.
inline constexpr std::size_t kMaxOverlayBytes = std::size_t{64} << 20;
// A slot's allocation above this is refused (a 32768 x 32768 P010 frame is ~3 GiB).
inline constexpr std::uint64_t kMaxSlotBytes = std::uint64_t{1} << 34;
inline constexpr std::size_t kMaxTextBytes = 1024;
// Dense layers per frame at most (the overlay block's layer count): a frame's.
inline constexpr std::size_t kMaxLayers = media::kMaxLayers;
inline constexpr std::size_t kIpcHandleBytes = 64;  // CU_IPC_HANDLE_SIZE

// Malformed input from a peer: `field()` names what is wrong ("header.magic",
// "frame.planes[1].pitch", "descriptors"), what() says the values. A runtime
// condition (the peer is broken or hostile), not misuse.
class ProtocolError : public Error {
 public:
  ProtocolError(std::string field, const std::string& detail);
  const std::string& field() const noexcept { return field_; }

 private:
  std::string field_;
};

// The peer speaks another protocol version.
class ProtocolVersionMismatch : public ProtocolError {
 public:
  ProtocolVersionMismatch(std::uint16_t theirs, std::uint16_t ours);
  std::uint16_t theirs() const noexcept { return theirs_; }

 private:
  std::uint16_t theirs_;
};

enum class MessageType : std::uint16_t {
  Hello = 1,    // subscriber -> publisher, first message
  Welcome = 2,  // publisher -> subscriber, answer to Hello
  Reject = 3,   // either way, then the sender closes (frozen layout)
  Slot = 4,     // publisher -> subscriber: a slot's memory (descriptor), once per slot generation
  Frame = 5,    // publisher -> subscriber: a frame is ready in a slot
  Release = 6,  // subscriber -> publisher: done with a frame's slot
  Goodbye = 7,  // publisher -> subscriber: orderly shutdown
  Leave = 8,    // subscriber -> publisher: no more frames; every hold but the listed ones released
};

enum class OverlayCarrier : std::uint8_t { None = 0, Inline = 1, Memfd = 2 };

using IpcHandle = std::array<std::uint8_t, kIpcHandleBytes>;


struct Hello {
  std::uint32_t pid = 0;
  std::uint16_t max_held = 0;          // frames this subscriber may hold at once; 0: the publisher's default
  std::uint8_t accepts = kAcceptsAll;  // memory_bit() of each SlotMemory it can import
  std::string client;                  // a label for logs (<= kMaxNameBytes)
};

struct Welcome {
  std::uint32_t pid = 0;
  std::uint16_t slot_count = 0;
  std::uint16_t max_held = 0;  // what the publisher grants (1..slot_count)
  SlotMemory memory = SlotMemory::Host;
  CudaSync cuda_sync = CudaSync::None;
  std::string name;   // the publisher's name
  std::string route;  // how it shares, with the reason for any fallback (<= kMaxTextBytes)
};

struct Reject {
  std::string reason;  // <= kMaxTextBytes
  // The sender's protocol version (from the header; not part of the payload).
  std::uint16_t sender_version = kProtocolVersion;
};

struct Goodbye {
  std::string reason;
};

struct SlotAnnounce {
  std::uint16_t slot = 0;
  std::uint32_t generation = 0;
  SlotKind kind = SlotKind::HostMemfd;
  bool dedicated = false;              // Vulkan: a dedicated allocation
  bool has_event = false;              // CUDA: ipc_event is an interprocess event handle
  std::uint64_t size = 0;              // bytes frames may use, from `offset`
  std::uint64_t allocation_size = 0;   // what the importer imports / maps
  std::uint64_t offset = 0;            // Vulkan: the buffer's offset in its allocation
  Uuid device_uuid{};              // CUDA / Vulkan: the device the memory is on
  Uuid driver_uuid{};              // Vulkan
  IpcHandle ipc_memory{};              // CudaIpcHandle
  IpcHandle ipc_event{};               // has_event
};

struct FrameAnnounce {
  std::uint16_t slot = 0;
  std::uint32_t generation = 0;
  std::uint64_t sequence = 0;          // 1, 2, ... per publisher
  std::int64_t index = 0;              // the source's frame number (Frame::index)
  double timestamp = 0.0;              // the source's timestamp (Frame::timestamp)
  std::int64_t publish_time_ns = 0;    // CLOCK_MONOTONIC at the announcement
  PixelFormat format = PixelFormat::NV12;
  Colorimetry colorimetry{};
  std::uint32_t width = 0, height = 0;
  // Plane byte offsets in the slot and pitches; plane_count(format) used, the
  // others 0 on the wire.
  std::array<std::uint64_t, kMaxPlanes> offsets{};
  std::array<std::uint64_t, kMaxPlanes> pitches{};
  PublisherCounters counters{};
  OverlayCarrier overlays = OverlayCarrier::None;
  std::uint32_t overlay_bytes = 0;
  std::vector<std::byte> inline_overlays;  // Inline: the encoded overlays

  // One past the last byte the planes use (checked: no overflow). Set by
  // decode_message and by make_frame_announce.
  std::uint64_t end = 0;
};

struct Release {
  std::uint16_t slot = 0;
  std::uint32_t generation = 0;
  std::uint64_t sequence = 0;
  bool operator==(const Release&) const = default;  // the same frame of the same slot generation
};

// A subscriber that stops receiving (its Subscriber destroyed, or its session
// ended) while the application still holds frames of the session: the
// publisher sends it nothing more and takes back every slot it holds except
// `kept` (released later, one Release each, or when the socket closes).
struct Leave {
  std::vector<Release> kept;  // at most kMaxSlots
};

using Message = std::variant<Hello, Welcome, Reject, SlotAnnounce, FrameAnnounce, Release, Goodbye, Leave>;

MessageType type_of(const Message& m) noexcept;
std::string_view to_string(MessageType t);

// Descriptors that must travel with `m` (0 or 1).
std::size_t descriptors_for(const Message& m) noexcept;

// Appends one datagram for `m` to `out` (cleared first). Throws UsageError for
// a message this side would refuse to decode (strings too long, bad values).
void encode_message(const Message& m, std::vector<std::byte>& out);
std::vector<std::byte> encode_message(const Message& m);

// Parses one datagram that arrived with `descriptors` file descriptors.
// Checks the header, the size of every field, every value (enums, names,
// dimensions, pitches, spans without overflow, slot numbers, caps) and the
// descriptor count. Throws ProtocolVersionMismatch for another version (except
// a Reject, returned as it is), ProtocolError for anything else malformed.
Message decode_message(std::span<const std::byte> datagram, std::size_t descriptors);

// Fills plane offsets / pitches / end from a frame's planes relative to `base`
// (a host / CUDA pointer; 0 for offset-addressed memory). Validates the frame.
void describe_planes(const Frame& frame, std::uintptr_t base, FrameAnnounce& out);

// --- overlays -----------------------------------------------------------------
// Binary form of a media::OverlayFrame (its flat arrays, counts first, then
// its dense layers: settings and packed samples, docs/live.md "Layers").
// Throws InvalidFrame for layers it cannot send (validate_layers on the host;
// names too long or with control characters).
void encode_overlays(const media::OverlayFrame& overlays, std::vector<std::byte>& out);
// Parses and validates (counts against the size, every index and text range,
// coordinates finite, layers: sizes against the block, kinds, sample types,
// then validate_layers) into `out` (cleared first; layers own copies of their
// samples). Throws ProtocolError.
void decode_overlays(std::span<const std::byte> bytes, media::OverlayFrame& out);

}  // namespace handoff::live
