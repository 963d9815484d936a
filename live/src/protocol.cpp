#include <handoff/frame_validate.hpp>
#include <handoff/live/protocol.hpp>

#include "wire.hpp"

#include <cmath>
#include <limits>
#include <type_traits>

namespace handoff::live {

using detail::WireReader;
using detail::WireWriter;

ProtocolError::ProtocolError(std::string field, const std::string& detail)
    : Error("live protocol: " + field + ": " + detail), field_(std::move(field)) {}

ProtocolVersionMismatch::ProtocolVersionMismatch(std::uint16_t theirs, std::uint16_t ours)
    : ProtocolError("header.version", "protocol version mismatch: the peer speaks version " +
                                          std::to_string(theirs) + ", this side version " + std::to_string(ours)),
      theirs_(theirs) {}

std::string_view to_string(SlotMemory m) {
  switch (m) {
    case SlotMemory::Host: return "host";
    case SlotMemory::Cuda: return "cuda";
    case SlotMemory::Vulkan: return "vulkan";
  }
  return "?";
}

std::string_view to_string(SlotKind k) {
  switch (k) {
    case SlotKind::HostMemfd: return "host memfd";
    case SlotKind::CudaVmmFd: return "CUDA VMM fd";
    case SlotKind::CudaIpcHandle: return "CUDA IPC handle";
    case SlotKind::VulkanOpaqueFd: return "Vulkan OPAQUE_FD";
  }
  return "?";
}

SlotMemory memory_of(SlotKind k) noexcept {
  switch (k) {
    case SlotKind::HostMemfd: return SlotMemory::Host;
    case SlotKind::CudaVmmFd:
    case SlotKind::CudaIpcHandle: return SlotMemory::Cuda;
    case SlotKind::VulkanOpaqueFd: return SlotMemory::Vulkan;
  }
  return SlotMemory::Host;
}

std::string_view to_string(CudaSync s) {
  switch (s) {
    case CudaSync::None: return "none";
    case CudaSync::IpcEvent: return "interprocess event";
    case CudaSync::StreamSynchronized: return "stream synchronised before announcing";
  }
  return "?";
}

std::string_view to_string(MessageType t) {
  switch (t) {
    case MessageType::Hello: return "Hello";
    case MessageType::Welcome: return "Welcome";
    case MessageType::Reject: return "Reject";
    case MessageType::Slot: return "Slot";
    case MessageType::Frame: return "Frame";
    case MessageType::Release: return "Release";
    case MessageType::Goodbye: return "Goodbye";
    case MessageType::Leave: return "Leave";
  }
  return "?";
}

MessageType type_of(const Message& m) noexcept { return static_cast<MessageType>(m.index() + 1); }

std::size_t descriptors_for(const Message& m) noexcept {
  if (const auto* s = std::get_if<SlotAnnounce>(&m)) return s->kind == SlotKind::CudaIpcHandle ? 0 : 1;
  if (const auto* f = std::get_if<FrameAnnounce>(&m)) return f->overlays == OverlayCarrier::Memfd ? 1 : 0;
  return 0;
}

// --- text rules -------------------------------------------------------------------
namespace {

// Printable ASCII and UTF-8 continuation / lead bytes; no control characters
// (the text ends up in logs and on screen).
bool is_clean_text(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

void check_text(std::string_view field, std::string_view s, std::size_t max) {
  if (s.size() > max) throw UsageError(std::string(field) + ": longer than " + std::to_string(max) + " bytes");
  if (!is_clean_text(s)) throw UsageError(std::string(field) + ": contains control characters");
}

}  // namespace

// --- encoding ------------------------------------------------------------------------
namespace {

void put_uuid(WireWriter& w, const Uuid& u) { w.bytes(u.bytes.data(), u.bytes.size()); }

void encode_payload(WireWriter& w, const Hello& m) {
  check_text("hello.client", m.client, kMaxNameBytes);
  w.u32(m.pid);
  w.u16(m.max_held);
  w.u8(m.accepts);
  w.u8(0);
  w.str8(m.client);
}

void encode_payload(WireWriter& w, const Welcome& m) {
  check_text("welcome.name", m.name, kMaxNameBytes);
  check_text("welcome.route", m.route, kMaxTextBytes);
  w.u32(m.pid);
  w.u16(m.slot_count);
  w.u16(m.max_held);
  w.u8(static_cast<std::uint8_t>(m.memory));
  w.u8(static_cast<std::uint8_t>(m.cuda_sync));
  w.str8(m.name);
  w.str16(m.route);
}

void encode_payload(WireWriter& w, const Reject& m) {
  check_text("reject.reason", m.reason, kMaxTextBytes);
  w.str16(m.reason);
}

void encode_payload(WireWriter& w, const Goodbye& m) {
  check_text("goodbye.reason", m.reason, kMaxTextBytes);
  w.str16(m.reason);
}

void encode_payload(WireWriter& w, const SlotAnnounce& m) {
  w.u16(m.slot);
  w.u32(m.generation);
  w.u8(static_cast<std::uint8_t>(m.kind));
  w.u8(static_cast<std::uint8_t>((m.dedicated ? 1 : 0) | (m.has_event ? 2 : 0)));
  w.u64(m.size);
  w.u64(m.allocation_size);
  w.u64(m.offset);
  put_uuid(w, m.device_uuid);
  put_uuid(w, m.driver_uuid);
  w.bytes(m.ipc_memory.data(), m.ipc_memory.size());
  w.bytes(m.ipc_event.data(), m.ipc_event.size());
}

void encode_payload(WireWriter& w, const FrameAnnounce& m) {
  w.u16(m.slot);
  w.u32(m.generation);
  w.u64(m.sequence);
  w.i64(m.index);
  w.f64(m.timestamp);
  w.i64(m.publish_time_ns);
  w.u8(static_cast<std::uint8_t>(m.format));
  w.u8(static_cast<std::uint8_t>(m.colorimetry.matrix));
  w.u8(static_cast<std::uint8_t>(m.colorimetry.range));
  w.u8(static_cast<std::uint8_t>(m.colorimetry.siting));
  w.u32(m.width);
  w.u32(m.height);
  for (std::size_t p = 0; p < kMaxPlanes; ++p) {
    w.u64(m.offsets[p]);
    w.u64(m.pitches[p]);
  }
  w.u64(m.counters.published);
  w.u64(m.counters.dropped_no_slot);
  w.u64(m.counters.skipped_for_you);
  w.u8(static_cast<std::uint8_t>(m.overlays));
  w.u8(0);
  w.u8(0);
  w.u8(0);
  const bool inline_block = m.overlays == OverlayCarrier::Inline;
  if (inline_block && m.inline_overlays.size() > kMaxInlineOverlayBytes)
    throw UsageError("frame.overlays: inline block larger than " + std::to_string(kMaxInlineOverlayBytes));
  w.u32(inline_block ? static_cast<std::uint32_t>(m.inline_overlays.size()) : m.overlay_bytes);
  if (inline_block) w.bytes(m.inline_overlays.data(), m.inline_overlays.size());
}

void encode_payload(WireWriter& w, const Release& m) {
  w.u16(m.slot);
  w.u32(m.generation);
  w.u64(m.sequence);
}

void encode_payload(WireWriter& w, const Leave& m) {
  if (m.kept.size() > kMaxSlots)
    throw UsageError("leave.kept: " + std::to_string(m.kept.size()) + " holds, more than " +
                     std::to_string(kMaxSlots) + " slots");
  w.u16(static_cast<std::uint16_t>(m.kept.size()));
  for (const Release& r : m.kept) encode_payload(w, r);
}

}  // namespace

void encode_message(const Message& m, std::vector<std::byte>& out) {
  out.clear();
  WireWriter w(out);
  w.u32(kMagic);
  w.u16(kProtocolVersion);
  w.u16(static_cast<std::uint16_t>(type_of(m)));
  w.u32(0);  // payload size, patched below
  w.u32(0);
  std::visit([&w](const auto& msg) { encode_payload(w, msg); }, m);
  const std::size_t payload = out.size() - kHeaderBytes;
  if (out.size() > kMaxMessageBytes)
    throw UsageError("live protocol: a " + std::string(to_string(type_of(m))) + " message of " +
                     std::to_string(out.size()) + " bytes exceeds " + std::to_string(kMaxMessageBytes));
  w.patch_u32(8, static_cast<std::uint32_t>(payload));
}

std::vector<std::byte> encode_message(const Message& m) {
  std::vector<std::byte> out;
  encode_message(m, out);
  return out;
}

// --- reader helpers --------------------------------------------------------------------
namespace detail {

void WireReader::need(std::string_view f, std::size_t n) const {
  if (n > in_.size() - pos_)
    fail(f, "truncated: needs " + std::to_string(n) + " bytes at offset " + std::to_string(pos_) + ", " +
                std::to_string(in_.size() - pos_) + " left");
}

void WireReader::fail(std::string_view field, const std::string& detail) const {
  throw ProtocolError(name(field), detail);
}

void WireReader::expect_end() const {
  if (pos_ != in_.size())
    throw ProtocolError(what_, std::to_string(in_.size() - pos_) + " unexpected trailing bytes");
}

std::string WireReader::str(std::string_view f, std::size_t n, std::size_t max) {
  if (n > max) fail(f, "length " + std::to_string(n) + " exceeds " + std::to_string(max));
  auto v = view(f, n);
  std::string s(reinterpret_cast<const char*>(v.data()), v.size());
  if (!is_clean_text(s)) fail(f, "contains control characters");
  return s;
}

}  // namespace detail

// --- decoding --------------------------------------------------------------------------
namespace {

template <typename E>
E read_enum(WireReader& r, std::string_view f, std::uint8_t first, std::uint8_t last) {
  const std::uint8_t v = r.u8(f);
  if (v < first || v > last)
    r.fail(f, "value " + std::to_string(v) + " outside " + std::to_string(first) + ".." + std::to_string(last));
  return static_cast<E>(v);
}

Hello decode_hello(WireReader& r) {
  Hello m;
  m.pid = r.u32("pid");
  m.max_held = r.u16("max_held");
  m.accepts = r.u8("accepts");
  if (m.accepts == 0 || (m.accepts & ~kAcceptsAll) != 0)
    r.fail("accepts", "memory bits " + std::to_string(m.accepts) + " (expected a non-empty subset of 0x7)");
  if (r.u8("reserved") != 0) r.fail("reserved", "not 0");
  m.client = r.str8("client", kMaxNameBytes);
  return m;
}

Welcome decode_welcome(WireReader& r) {
  Welcome m;
  m.pid = r.u32("pid");
  m.slot_count = r.u16("slot_count");
  if (m.slot_count == 0 || m.slot_count > kMaxSlots)
    r.fail("slot_count", std::to_string(m.slot_count) + " outside 1.." + std::to_string(kMaxSlots));
  m.max_held = r.u16("max_held");
  if (m.max_held == 0 || m.max_held > m.slot_count)
    r.fail("max_held", std::to_string(m.max_held) + " outside 1..slot_count (" + std::to_string(m.slot_count) + ")");
  m.memory = read_enum<SlotMemory>(r, "memory", 1, 3);
  m.cuda_sync = read_enum<CudaSync>(r, "cuda_sync", 0, 2);
  if ((m.memory == SlotMemory::Cuda) != (m.cuda_sync != CudaSync::None))
    r.fail("cuda_sync", "must be set exactly for CUDA memory");
  m.name = r.str8("name", kMaxNameBytes);
  m.route = r.str16("route", kMaxTextBytes);
  return m;
}

SlotAnnounce decode_slot(WireReader& r) {
  SlotAnnounce m;
  m.slot = r.u16("slot");
  if (m.slot >= kMaxSlots) r.fail("slot", std::to_string(m.slot) + " not below " + std::to_string(kMaxSlots));
  m.generation = r.u32("generation");
  m.kind = read_enum<SlotKind>(r, "kind", 1, 4);
  const std::uint8_t flags = r.u8("flags");
  if (flags & ~3u) r.fail("flags", "unknown bits " + std::to_string(flags));
  m.dedicated = flags & 1;
  m.has_event = flags & 2;
  m.size = r.u64("size");
  m.allocation_size = r.u64("allocation_size");
  m.offset = r.u64("offset");
  r.bytes("device_uuid", m.device_uuid.bytes.data(), 16);
  r.bytes("driver_uuid", m.driver_uuid.bytes.data(), 16);
  r.bytes("ipc_memory", m.ipc_memory.data(), kIpcHandleBytes);
  r.bytes("ipc_event", m.ipc_event.data(), kIpcHandleBytes);
  if (m.size == 0) r.fail("size", "0");
  if (m.allocation_size > kMaxSlotBytes)
    r.fail("allocation_size", std::to_string(m.allocation_size) + " exceeds " + std::to_string(kMaxSlotBytes));
  if (m.offset > m.allocation_size || m.size > m.allocation_size - m.offset)
    r.fail("size", "offset " + std::to_string(m.offset) + " + size " + std::to_string(m.size) +
                       " exceeds allocation_size " + std::to_string(m.allocation_size));
  if (m.has_event && memory_of(m.kind) != SlotMemory::Cuda) r.fail("flags", "an event on a non-CUDA slot");
  if (m.dedicated && m.kind != SlotKind::VulkanOpaqueFd) r.fail("flags", "dedicated on a non-Vulkan slot");
  return m;
}

void check_planes(WireReader& r, FrameAnnounce& m) {
  try {
    validate_dimensions(m.width, m.height);
  } catch (const InvalidFrame& e) {
    r.fail(e.field(), e.what());
  }
  std::uint64_t end = 0;
  // Planes the format does not have are zeros: anything else is a peer that
  // disagrees about the format.
  for (int p = plane_count(m.format); p < int(kMaxPlanes); ++p) {
    if (m.offsets[p] != 0 || m.pitches[p] != 0)
      r.fail("planes[" + std::to_string(p) + "]", "offset " + std::to_string(m.offsets[p]) + " / pitch " +
                                                      std::to_string(m.pitches[p]) + " on a " +
                                                      std::string(to_string(m.format)) + " frame, which has " +
                                                      std::to_string(plane_count(m.format)) + " plane(s)");
  }
  for (int p = 0; p < plane_count(m.format); ++p) {
    const PlaneLayout l = plane_layout(m.format, m.width, m.height, p);
    const std::string f = "planes[" + std::to_string(p) + "]";
    const std::uint64_t pitch = m.pitches[p], offset = m.offsets[p];
    if (pitch < l.row_bytes || pitch > kMaxSlotBytes)
      r.fail(f + ".pitch", std::to_string(pitch) + " below the packed row (" + std::to_string(l.row_bytes) +
                               " bytes) or above the slot limit");
    if (pitch % l.sample_bytes != 0 || offset % l.sample_bytes != 0)
      r.fail(f, "pitch " + std::to_string(pitch) + " / offset " + std::to_string(offset) +
                    " not a whole number of " + std::to_string(l.sample_bytes) + "-byte samples");
    if (offset > kMaxSlotBytes) r.fail(f + ".offset", std::to_string(offset) + " beyond the slot limit");
    // pitch <= 2^34 and rows <= 2^15: the span fits in 64 bits, as does offset + span.
    const std::uint64_t span = plane_span_bytes(pitch, l.height, l.row_bytes, f + ".pitch");
    end = std::max(end, offset + span);
  }
  if (end > kMaxSlotBytes) r.fail("planes", "end " + std::to_string(end) + " beyond the slot limit");
  m.end = end;
}

void decode_overlay_block(WireReader& r, FrameAnnounce& m) {
  m.overlays = read_enum<OverlayCarrier>(r, "overlays", 0, 2);
  for (int i = 0; i < 3; ++i)
    if (r.u8("reserved") != 0) r.fail("reserved", "not 0");
  m.overlay_bytes = r.u32("overlay_bytes");
  switch (m.overlays) {
    case OverlayCarrier::None:
      if (m.overlay_bytes != 0) r.fail("overlay_bytes", "non-zero without overlays");
      break;
    case OverlayCarrier::Inline: {
      if (m.overlay_bytes > kMaxInlineOverlayBytes || m.overlay_bytes != r.remaining())
        r.fail("overlay_bytes", std::to_string(m.overlay_bytes) + " but " + std::to_string(r.remaining()) +
                                    " bytes follow (inline limit " + std::to_string(kMaxInlineOverlayBytes) + ")");
      auto v = r.view("inline_overlays", m.overlay_bytes);
      m.inline_overlays.assign(v.begin(), v.end());
      break;
    }
    case OverlayCarrier::Memfd:
      if (m.overlay_bytes == 0 || m.overlay_bytes > kMaxOverlayBytes)
        r.fail("overlay_bytes", std::to_string(m.overlay_bytes) + " outside 1.." + std::to_string(kMaxOverlayBytes));
      break;
  }
}

FrameAnnounce decode_frame(WireReader& r) {
  FrameAnnounce m;
  m.slot = r.u16("slot");
  if (m.slot >= kMaxSlots) r.fail("slot", std::to_string(m.slot) + " not below " + std::to_string(kMaxSlots));
  m.generation = r.u32("generation");
  m.sequence = r.u64("sequence");
  m.index = r.i64("index");
  m.timestamp = r.f64("timestamp");
  m.publish_time_ns = r.i64("publish_time_ns");
  m.format = read_enum<PixelFormat>(r, "format", 0, static_cast<std::uint8_t>(std::size(kPixelFormats) - 1));
  m.colorimetry.matrix = read_enum<ColorMatrix>(r, "colorimetry.matrix", 0, 2);
  m.colorimetry.range = read_enum<ColorRange>(r, "colorimetry.range", 0, 1);
  m.colorimetry.siting = read_enum<ChromaSiting>(r, "colorimetry.siting", 0, 2);
  m.width = r.u32("width");
  m.height = r.u32("height");
  for (std::size_t p = 0; p < kMaxPlanes; ++p) {
    m.offsets[p] = r.u64("offsets");
    m.pitches[p] = r.u64("pitches");
  }
  m.counters.published = r.u64("counters.published");
  m.counters.dropped_no_slot = r.u64("counters.dropped_no_slot");
  m.counters.skipped_for_you = r.u64("counters.skipped_for_you");
  decode_overlay_block(r, m);
  check_planes(r, m);
  return m;
}

Release decode_release(WireReader& r) {
  Release m;
  m.slot = r.u16("slot");
  if (m.slot >= kMaxSlots) r.fail("slot", std::to_string(m.slot) + " not below " + std::to_string(kMaxSlots));
  m.generation = r.u32("generation");
  m.sequence = r.u64("sequence");
  return m;
}

Leave decode_leave(WireReader& r) {
  Leave m;
  const std::uint16_t n = r.u16("count");
  if (n > kMaxSlots) r.fail("count", std::to_string(n) + " holds, more than " + std::to_string(kMaxSlots) + " slots");
  m.kept.reserve(n);
  for (std::uint16_t i = 0; i < n; ++i) m.kept.push_back(decode_release(r));
  return m;
}

Message decode_payload(MessageType type, WireReader& r, std::uint16_t version) {
  switch (type) {
    case MessageType::Hello: return decode_hello(r);
    case MessageType::Welcome: return decode_welcome(r);
    case MessageType::Reject: return Reject{r.str16("reason", kMaxTextBytes), version};
    case MessageType::Slot: return decode_slot(r);
    case MessageType::Frame: return decode_frame(r);
    case MessageType::Release: return decode_release(r);
    case MessageType::Goodbye: return Goodbye{r.str16("reason", kMaxTextBytes)};
    case MessageType::Leave: return decode_leave(r);
  }
  r.fail("type", "unknown");
}

std::string lower_name(MessageType t) {
  std::string s(to_string(t));
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

}  // namespace

Message decode_message(std::span<const std::byte> datagram, std::size_t descriptors) {
  if (datagram.size() < kHeaderBytes || datagram.size() > kMaxMessageBytes)
    throw ProtocolError("header", "datagram of " + std::to_string(datagram.size()) + " bytes (expected " +
                                      std::to_string(kHeaderBytes) + ".." + std::to_string(kMaxMessageBytes) + ")");
  WireReader h(datagram.first(kHeaderBytes), "header");
  if (const std::uint32_t magic = h.u32("magic"); magic != kMagic)
    h.fail("magic", "not a handoff live message (magic " + std::to_string(magic) + ")");
  const std::uint16_t version = h.u16("version");
  const std::uint16_t type = h.u16("type");
  const std::uint32_t payload = h.u32("payload_bytes");
  const std::uint32_t reserved = h.u32("reserved");
  if (payload != datagram.size() - kHeaderBytes)
    h.fail("payload_bytes", std::to_string(payload) + " but the datagram carries " +
                                std::to_string(datagram.size() - kHeaderBytes));
  const auto t = static_cast<MessageType>(type);
  if (version != kProtocolVersion && t != MessageType::Reject) throw ProtocolVersionMismatch(version, kProtocolVersion);
  if (type < 1 || type > std::variant_size_v<Message>) h.fail("type", "unknown message type " + std::to_string(type));
  if (reserved != 0 && version == kProtocolVersion) h.fail("reserved", "not 0");
  WireReader r(datagram.subspan(kHeaderBytes), lower_name(t));
  Message m = decode_payload(t, r, version);
  r.expect_end();
  if (descriptors != descriptors_for(m))
    throw ProtocolError("descriptors", "a " + std::string(to_string(t)) + " message came with " +
                                           std::to_string(descriptors) + " descriptor(s), expected " +
                                           std::to_string(descriptors_for(m)));
  return m;
}

// --- describing a frame's planes ---------------------------------------------------------
void describe_planes(const Frame& frame, std::uintptr_t base, FrameAnnounce& out) {
  validate(frame);
  const bool addressed = frame.memory == MemoryKind::Host || frame.memory == MemoryKind::Cuda;
  std::uint64_t end = 0;
  out.offsets = {};
  out.pitches = {};
  for (int p = 0; p < plane_count(frame.format); ++p) {
    const Plane& pl = frame.planes[p];
    const auto addr = reinterpret_cast<std::uintptr_t>(pl.data);
    if (addressed && addr < base) throw UsageError("describe_planes: plane below the slot's base");
    out.offsets[p] = addressed ? addr - base : pl.offset;
    out.pitches[p] = pl.pitch;
    const PlaneLayout l = plane_layout(frame.format, frame.width, frame.height, p);
    end = std::max<std::uint64_t>(end, out.offsets[p] + plane_span_bytes(pl.pitch, l.height, l.row_bytes));
  }
  out.format = frame.format;
  out.width = frame.width;
  out.height = frame.height;
  out.colorimetry = frame.colorimetry;
  out.end = end;
}

}  // namespace handoff::live

namespace handoff::live::detail {

// Header, then slot u16, generation u32, sequence, index, timestamp and
// publish_time_ns (8 each), four enum bytes, width and height (u32 each), six
// plane u64s (offset and pitch of kMaxPlanes planes), published and
// dropped_no_slot (u64 each): see encode_payload.
std::size_t frame_skipped_offset() noexcept {
  return kHeaderBytes + 2 + 4 + 4 * 8 + 4 + 2 * 4 + 2 * kMaxPlanes * 8 + 2 * 8;
}

}  // namespace handoff::live::detail
