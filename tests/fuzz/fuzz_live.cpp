// Fuzz target: the live protocol's parsers (live: decode_message,
// decode_overlays), the code that reads what another process sends. The first
// input byte picks how many descriptors the datagram "arrived with" (0-2); the
// rest is the datagram. A handoff::Error (ProtocolError) is an accepted
// outcome; a crash, a sanitizer report, another exception type, or a message
// that decodes but does not encode back to the same bytes is a bug.
#include <handoff/live/protocol.hpp>
#include <handoff/media/overlay.hpp>

#include "fuzz_common.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace {

void round_trip(const handoff::live::Message& m, std::span<const std::byte> datagram) {
  using namespace handoff::live;
  if (const auto* r = std::get_if<Reject>(&m); r && r->sender_version != kProtocolVersion) return;  // re-encoded in ours
  const std::vector<std::byte> again = encode_message(m);
  if (again.size() != datagram.size() || !std::equal(again.begin(), again.end(), datagram.begin())) __builtin_trap();
}

void overlays(std::span<const std::byte> bytes) {
  handoff::media::OverlayFrame o;
  handoff::live::decode_overlays(bytes, o);
  std::vector<std::byte> again;
  handoff::live::encode_overlays(o, again);
  if (again.size() != bytes.size() || !std::equal(again.begin(), again.end(), bytes.begin())) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace handoff::live;
  handoff::media::fuzz::quiet_log();
  if (size == 0) return 0;
  const std::span<const std::byte> datagram(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  try {
    const Message m = decode_message(datagram, data[0] % 3);
    round_trip(m, datagram);
    if (const auto* f = std::get_if<FrameAnnounce>(&m); f && f->overlays == OverlayCarrier::Inline)
      overlays(f->inline_overlays);
  } catch (const handoff::Error&) {
  }
  try {
    overlays(datagram);
  } catch (const handoff::Error&) {
  }
  return 0;
}
