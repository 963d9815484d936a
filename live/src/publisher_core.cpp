#include "publisher_core.hpp"

#include <handoff/log.hpp>

#include "memfd.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

namespace handoff::live::detail {

namespace {

std::int64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void check_options(const PublisherOptions& o) {
  if (o.slots < 2 || o.slots > kMaxSlots)
    throw UsageError("PublisherOptions::slots is " + std::to_string(o.slots) + "; it must be 2.." +
                     std::to_string(kMaxSlots));
  if (o.max_held_per_subscriber > o.slots)
    throw UsageError("PublisherOptions::max_held_per_subscriber exceeds the number of slots");
  if (o.max_subscribers == 0) throw UsageError("PublisherOptions::max_subscribers is 0");
  if (o.memory == SlotMemory::Vulkan && o.vulkan == nullptr)
    throw UsageError("PublisherOptions: Vulkan slots need PublisherOptions::vulkan");
}

std::unique_ptr<SlotRoute> make_route(const std::string& name, const PublisherOptions& o) {
  switch (o.memory) {
    case SlotMemory::Host: return make_host_route(name);
    case SlotMemory::Cuda: return make_cuda_route(name, o.cuda_device, static_cast<int>(o.cuda_export));
    case SlotMemory::Vulkan: return make_vulkan_route(name, *o.vulkan);
  }
  throw UsageError("PublisherOptions::memory: unknown value");
}

SlotRingOptions ring_options(const PublisherOptions& o) {
  check_options(o);
  SlotRingOptions r;
  r.slots = o.slots;
  // Frames go out as soon as they are written (publish_held): none waits Ready.
  r.order = RingOrder::NewestWins;
  r.name = "live publisher";
  return r;
}

}  // namespace

PublisherCore::PublisherCore(std::string_view name_or_path, PublisherOptions options)
    : options_(std::move(options)), ring_(ring_options(options_)) {
  path_ = socket_path(name_or_path, true);
  name_ = name_from_path(path_);
  max_held_ = options_.max_held_per_subscriber ? options_.max_held_per_subscriber : options_.slots - 1;
  route_ = make_route(name_, options_);
  slots_.resize(options_.slots);
  stats_.route = route_->description();
  wake_fd_ = make_event_fd();
  bind_socket();
  thread_ = std::thread([this] { run(); });
}

PublisherCore::~PublisherCore() { stop(); }

// A socket file already there is either a live publisher (refused) or one left
// by a publisher that died (replaced). Trying it tells which; removing it
// blindly would cut a live publisher off from new subscribers.
void PublisherCore::bind_socket() {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) throw Error(path_.string() + " exists and is not a socket; not replacing it");
    int error = 0;
    UniqueFd probe = connect_to(path_, error);
    if (probe)
      throw Error("a publisher named '" + name_ + "' is already running (pid " +
                  std::to_string(peer_credentials(probe.get()).pid) + ") at " + path_.string());
    if (error == EAGAIN)
      throw Error("a publisher named '" + name_ + "' is already running at " + path_.string() +
                  " (its connection queue is full)");
    if (error != ECONNREFUSED)
      throw Error("cannot tell whether " + path_.string() + " is in use: " + errno_text(error));
    log(LogLevel::Info, "live publisher '" + name_ + "': replacing the stale socket " + path_.string());
    if (::unlink(path_.c_str()) != 0 && errno != ENOENT)
      throw Error("cannot remove the stale socket " + path_.string() + ": " + errno_text(errno));
  }
  listen_fd_ = listen_at(path_);
  if (::stat(path_.c_str(), &st) == 0) {
    socket_dev_ = st.st_dev;
    socket_ino_ = st.st_ino;
  }
}

void PublisherCore::stop() noexcept {
  if (stopping_.exchange(true)) return;
  signal_event(wake_fd_.get());
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  std::vector<std::byte> bye;
  try {
    encode_message(Goodbye{"publisher '" + name_ + "' stopped"}, bye);
  } catch (...) {
    bye.clear();
  }
  for (auto& c : clients_)
    if (c->active && !c->dead && !bye.empty()) (void)send_datagram(c->fd.get(), bye);
  clients_.clear();
  active_.store(0, std::memory_order_release);
  // Remove the socket only if it is still ours (not one a successor bound).
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && st.st_dev == socket_dev_ && st.st_ino == socket_ino_)
    ::unlink(path_.c_str());
  listen_fd_.reset();
}

// --- the ring -------------------------------------------------------------------------
void PublisherCore::count_unsent() {
  std::lock_guard lock(mutex_);
  ring_.skip();
}

int PublisherCore::reserve(const FrameLayout& layout) {
  std::lock_guard lock(mutex_);
  // With every slot held, Releases the subscribers sent a moment ago may
  // be waiting in their sockets: read them (the common case costs nothing).
  bool any_free = false;
  for (std::size_t i = 0; i < ring_.size() && !any_free; ++i) any_free = ring_.info(i).state == SlotRing::State::Free;
  if (!any_free)
    for (auto& c : clients_) catch_up(*c);
  // The least recently published free slot (the ring's choice): subscribers
  // that still show a frame keep the newest ones.
  const std::optional<std::size_t> claimed = ring_.try_claim();  // none: counted in no_slot
  if (!claimed) return -1;
  const int best = static_cast<int>(*claimed);
  RingSlot& s = slots_[*claimed];
  try {
    if (!s.storage || !s.storage->fits(layout)) {
      s.storage.reset();
      s.storage = route_->allocate(layout, static_cast<unsigned>(best));
      ring_.reallocated(*claimed);
    }
  } catch (...) {
    ring_.unclaim(*claimed);
    throw;
  }
  s.layout = layout;
  return best;
}

SlotStorage& PublisherCore::storage(int slot) {
  std::lock_guard lock(mutex_);
  return *slots_.at(static_cast<std::size_t>(slot)).storage;
}

const FrameLayout& PublisherCore::layout(int slot) {
  std::lock_guard lock(mutex_);
  return slots_.at(static_cast<std::size_t>(slot)).layout;
}

void PublisherCore::give_back(int slot) noexcept {
  std::lock_guard lock(mutex_);
  try {
    ring_.unclaim(static_cast<std::size_t>(slot));
  } catch (const std::exception& e) {
    log(LogLevel::Error, "live publisher '" + name_ + "': giving back slot " + std::to_string(slot) + ": " + e.what());
  }
}

void PublisherCore::prepare_overlays(const media::OverlayFrame* overlays, FrameAnnounce& a, UniqueFd& block) {
  if (overlays == nullptr) return;
  std::vector<std::byte> bytes;
  encode_overlays(*overlays, bytes);
  if (bytes.size() <= kMaxInlineOverlayBytes) {
    a.overlays = OverlayCarrier::Inline;
    a.inline_overlays = std::move(bytes);
    return;
  }
  block = create_sealed_block("handoff-live:" + name_ + ":overlays", bytes);
  a.overlays = OverlayCarrier::Memfd;
  a.overlay_bytes = static_cast<std::uint32_t>(bytes.size());
}

void PublisherCore::announce(int slot, const FrameMeta& meta, const media::OverlayFrame* overlays,
                             const PresentSync& sync) {
  SlotStorage& st = storage(slot);
  try {
    st.finish(sync);
  } catch (...) {
    give_back(slot);
    throw;
  }
  FrameAnnounce a;
  UniqueFd block;
  try {
    prepare_overlays(overlays, a, block);
  } catch (...) {
    give_back(slot);
    throw;
  }
  a.index = meta.index;
  a.timestamp = meta.timestamp;
  std::lock_guard lock(mutex_);
  const auto at = static_cast<std::size_t>(slot);
  const RingSlot& s = slots_[at];
  // Held by this publish until every subscriber it goes to holds it too.
  a.sequence = ring_.publish_held(at);
  const SlotRing::Counters counters = ring_.counters();
  a.slot = static_cast<std::uint16_t>(slot);
  a.generation = ring_.generation(at);
  a.publish_time_ns = monotonic_ns();
  a.format = s.layout.format;
  a.colorimetry = meta.colorimetry;
  a.width = s.layout.width;
  a.height = s.layout.height;
  for (int p = 0; p < plane_count(s.layout.format); ++p) {
    a.offsets[p] = s.layout.planes[p].offset;
    a.pitches[p] = s.layout.pitch(p);
  }
  a.counters.published = counters.submitted;
  a.counters.dropped_no_slot = counters.no_slot;
  try {
    encode_message(a, scratch_);
    for (auto& c : clients_)
      if (c->active && !c->dead && !c->leaving) send_frame(*c, slot, a.sequence, scratch_, block ? block.get() : -1);
  } catch (...) {
    ring_.release(at);
    throw;
  }
  ring_.release(at);  // the subscribers' holds keep it now (none: it is free again)
}

// --- sending ----------------------------------------------------------------------------
bool PublisherCore::send_slot(PublisherClient& c, int slot) {
  const RingSlot& s = slots_[static_cast<std::size_t>(slot)];
  const std::uint32_t generation = ring_.generation(static_cast<std::size_t>(slot));
  if (c.sent_generation[slot] == generation) return true;
  SlotAnnounce m;
  m.slot = static_cast<std::uint16_t>(slot);
  m.generation = generation;
  s.storage->announce(m);
  std::vector<std::byte> bytes;
  encode_message(m, bytes);
  const int fd = s.storage->descriptor();
  const SendResult r = fd >= 0 ? send_datagram(c.fd.get(), bytes, std::span(&fd, 1)) : send_datagram(c.fd.get(), bytes);
  if (r == SendResult::Closed) {
    c.dead = true;
    signal_event(wake_fd_.get());
  }
  if (r != SendResult::Sent) return false;
  c.sent_generation[slot] = generation;
  return true;
}

void PublisherCore::send_frame(PublisherClient& c, int slot, std::uint64_t sequence, std::vector<std::byte>& message,
                               int overlay_fd) {
  // A subscriber that holds its limit (a paused one, say) misses frames; the
  // others, and the publisher, carry on. What it released already counts.
  if (c.holds.size() >= c.max_held) catch_up(c);
  if (c.dead || c.leaving) return;
  if (c.holds.size() >= c.max_held || !send_slot(c, slot)) {
    ++c.skipped;
    ++stats_.skipped_sends;
    return;
  }
  const std::size_t at = frame_skipped_offset();
  for (int i = 0; i < 8; ++i) message[at + i] = std::byte(c.skipped >> (8 * i));
  const SendResult r = overlay_fd >= 0 ? send_datagram(c.fd.get(), message, std::span(&overlay_fd, 1))
                                       : send_datagram(c.fd.get(), message);
  if (r == SendResult::Sent) {
    const auto at = static_cast<std::size_t>(slot);
    c.holds.push_back(Hold{static_cast<std::uint16_t>(slot), ring_.generation(at), sequence});
    ring_.hold(at);
    return;
  }
  if (r == SendResult::Closed) {
    c.dead = true;
    signal_event(wake_fd_.get());
  }
  ++c.skipped;
  ++stats_.skipped_sends;
}

PublisherStats PublisherCore::stats() const {
  std::lock_guard lock(mutex_);
  PublisherStats s = stats_;
  const SlotRing::Counters counters = ring_.counters();
  s.published = counters.submitted;
  s.dropped_no_slot = counters.no_slot;
  s.subscribers = active_.load(std::memory_order_acquire);
  // Under mutex_ no publish is between publish_held and its release: every hold is a subscriber's.
  for (std::size_t i = 0; i < ring_.size(); ++i) {
    const SlotRing::SlotInfo info = ring_.info(i);
    s.held_slots += info.holds > 0 ? 1 : 0;
    s.held_frames += info.holds;
  }
  return s;
}

}  // namespace handoff::live::detail
