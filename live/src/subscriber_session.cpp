// One session with a publisher: Slot messages become imports, Frame messages
// become LiveFrames (the newest replaces any not yet taken), Goodbye or a
// hang-up ends it. A malformed message ends it too, with the reason logged.
#include "subscriber_core.hpp"

#include <handoff/frame_validate.hpp>
#include <handoff/log.hpp>

#include "memfd.hpp"

#include <ctime>

namespace handoff::live::detail {

namespace {

std::int64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

LiveSlot slot_of(const SlotAnnounce& a) {
  return LiveSlot{a.kind, a.slot, a.generation, a.size, a.allocation_size, a.offset, a.dedicated, a.device_uuid,
                  a.driver_uuid};
}

// The frame's planes in the import: addresses for host / CUDA memory, offsets for Vulkan.
Frame frame_in(const SlotImport& imp, const FrameAnnounce& m) {
  Frame f;
  f.format = m.format;
  f.width = m.width;
  f.height = m.height;
  f.colorimetry = m.colorimetry;
  f.memory = imp.memory();
  f.device = imp.device();
  f.cuda_context = imp.cuda_context();
  f.index = m.index;
  f.timestamp = m.timestamp;
  for (int p = 0; p < plane_count(m.format); ++p) {
    const PlaneLayout l = plane_layout(m.format, m.width, m.height, p);
    std::byte* base = imp.base();
    f.planes[p] = Plane{base ? base + m.offsets[p] : nullptr, base ? 0 : static_cast<std::size_t>(m.offsets[p]),
                        static_cast<std::size_t>(m.pitches[p]), l.width, l.height, l.components};
  }
  return f;
}

}  // namespace

void SubscriberCore::serve(Session& s) {
  std::vector<std::byte> buffer(kMaxMessageBytes);
  const int fd = s.connection->fd();
  while (!stopping()) {
    s.connection->flush();
    if (!wait_readable(fd, wake_fd_.get(), 1000)) {
      drain_event(wake_fd_.get());
      continue;
    }
    drain_event(wake_fd_.get());
    for (;;) {
      Received r = receive_datagram(fd, buffer);
      if (r.status == Received::WouldBlock) break;
      if (r.status == Received::Closed) {
        set_state(LinkState::PublisherGone, "publisher gone");
        return;
      }
      try {
        if (r.status == Received::Truncated) throw ProtocolError("header", "a datagram larger than 64 KiB");
        if (r.control_truncated) throw ProtocolError("descriptors", "more descriptors than a message may carry");
        if (!on_datagram(s, std::span(buffer).first(r.bytes), r.fds)) return;
      } catch (const Error& e) {
        // A broken or hostile publisher (or a slot this process cannot import): leave it.
        log(LogLevel::Warning, "live subscriber of '" + name_ + "': disconnected: " + e.what());
        set_state(LinkState::PublisherGone, std::string("disconnected: ") + e.what());
        return;
      }
    }
  }
}

bool SubscriberCore::on_datagram(Session& s, std::span<const std::byte> bytes, std::vector<UniqueFd>& fds) {
  Message m = decode_message(bytes, fds.size());
  if (auto* slot = std::get_if<SlotAnnounce>(&m)) {
    on_slot(s, *slot, fds);
    return true;
  }
  if (auto* frame = std::get_if<FrameAnnounce>(&m)) {
    on_frame(s, *frame, fds);
    return true;
  }
  if (auto* bye = std::get_if<Goodbye>(&m)) {
    set_state(LinkState::PublisherGone, "publisher stopped: " + bye->reason);
    return false;
  }
  if (auto* no = std::get_if<Reject>(&m)) {
    set_state(LinkState::PublisherGone, "publisher disconnected this subscriber: " + no->reason);
    return false;
  }
  throw ProtocolError("type", "a " + std::string(to_string(type_of(m))) + " message, which only a subscriber sends");
}

void SubscriberCore::on_slot(Session& s, const SlotAnnounce& m, std::vector<UniqueFd>& fds) {
  if (m.slot >= s.slots.size())
    throw ProtocolError("slot.slot", std::to_string(m.slot) + " but the publisher has " +
                                         std::to_string(s.slots.size()) + " slots");
  if (memory_of(m.kind) != s.welcome.memory)
    throw ProtocolError("slot.kind", std::string(to_string(m.kind)) + " from a publisher of " +
                                         std::string(to_string(s.welcome.memory)) + " memory");
  UniqueFd fd = fds.empty() ? UniqueFd() : std::move(fds.front());
  s.slots[m.slot] = import_slot(m, std::move(fd));  // frames still held keep the previous import
}

std::shared_ptr<const media::OverlayFrame> SubscriberCore::read_overlays(FrameAnnounce& m,
                                                                         std::vector<UniqueFd>& fds) {
  if (m.overlays == OverlayCarrier::None) return nullptr;
  auto out = std::make_shared<media::OverlayFrame>();
  if (m.overlays == OverlayCarrier::Inline) {
    decode_overlays(m.inline_overlays, *out);
    return out;
  }
  const int fd = fds.front().get();
  check_sealed_memfd(fd, m.overlay_bytes, block_seals(), "frame.overlays");
  const MemoryMap map(fd, m.overlay_bytes, false, "live overlay block");
  decode_overlays(std::span(map.data(), m.overlay_bytes), *out);
  return out;
}

void SubscriberCore::on_frame(Session& s, FrameAnnounce& m, std::vector<UniqueFd>& fds) {
  const std::shared_ptr<SlotImport> imp = m.slot < s.slots.size() ? s.slots[m.slot] : nullptr;
  if (!imp || imp->info().generation != m.generation)
    throw ProtocolError("frame.slot", "slot " + std::to_string(m.slot) + " generation " +
                                          std::to_string(m.generation) + " was never announced");
  if (m.end > imp->info().size)
    throw ProtocolError("frame.planes", "the planes end at byte " + std::to_string(m.end) + " of a " +
                                            std::to_string(imp->info().size) + "-byte slot");
  LiveFrame f;
  f.overlays = read_overlays(m, fds);
  // The hold exists from here: any failure below still releases the slot.
  auto hold = std::make_shared<FrameHold>(s.connection, imp, Release{m.slot, m.generation, m.sequence});
  if (options_.cuda_synchronize) imp->wait_event();
  f.frame = frame_in(*imp, m);
  f.frame.owner = std::move(hold);  // the frame is its only owner: letting it go releases the slot at once
  f.import_ = imp;
  f.sequence = m.sequence;
  f.publish_time_ns = m.publish_time_ns;
  f.receive_time_ns = monotonic_ns();
  f.counters = m.counters;
  f.slot = slot_of(imp->info());
  f.cuda_event = imp->cuda_event();
  LiveFrame replaced;
  {
    std::lock_guard lock(mutex_);
    replaced = std::move(latest_);
    latest_ = std::move(f);
    ++stats_.received;
    if (replaced) ++stats_.replaced;
    stats_.publisher = m.counters;
  }
  changed_.notify_all();
  report_frame();
}  // `replaced` goes here: its slot is released

}  // namespace handoff::live::detail
