// SlotRing (slot_ring.hpp): the one slot ring's bookkeeping.
#include <handoff/slot_ring.hpp>
#include <handoff/wait.hpp>

#include <string>

namespace handoff {

std::string_view to_string(SlotRing::State state) noexcept {
  switch (state) {
    case SlotRing::State::Free: return "free";
    case SlotRing::State::Claimed: return "claimed";
    case SlotRing::State::Ready: return "ready";
    case SlotRing::State::Held: return "held";
  }
  return "unknown";
}

SlotRing::SlotRing(SlotRingOptions options) : options_(std::move(options)) {
  if (options_.slots < 1 || options_.slots > 65535)
    throw UsageError("slot ring '" + options_.name + "': " + std::to_string(options_.slots) +
                     " slots; a ring has 1 .. 65535");
  slots_.resize(options_.slots);
}

void SlotRing::misuse(const char* call, std::size_t slot, const char* wanted) const {
  throw UsageError("slot ring '" + options_.name + "': " + call + "(slot " + std::to_string(slot) + "): the slot is " +
                   std::string(to_string(slots_[slot].state)) + ", not " + wanted);
}

SlotRing::Slot& SlotRing::at(std::size_t slot, const char* call) {
  if (slot >= slots_.size())
    throw UsageError("slot ring '" + options_.name + "': " + call + "(slot " + std::to_string(slot) +
                     "): no such slot (the ring has " + std::to_string(slots_.size()) + ")");
  return slots_[slot];
}

const SlotRing::Slot& SlotRing::at(std::size_t slot, const char* call) const {
  return const_cast<SlotRing*>(this)->at(slot, call);
}

void SlotRing::throw_if_closed() const {
  if (closed_) throw RingClosed(closed_reason_);
}

// The least recently published Free slot (never-used ones first); else, when
// the newest wins and claims may drop, the oldest Ready one (dropped). Claimed.
std::optional<std::size_t> SlotRing::pick_locked() {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].state == State::Free && (!best || slots_[i].sequence < slots_[*best].sequence)) best = i;
  if (!best && options_.order == RingOrder::NewestWins && options_.claim_drops_ready) {
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i].state == State::Ready && (!best || slots_[i].sequence < slots_[*best].sequence)) best = i;
    if (best) ++counters_.dropped;
  }
  if (best) slots_[*best].state = State::Claimed;
  return best;
}

std::size_t SlotRing::gate(std::size_t slot) {
  bool used = false;
  {
    std::lock_guard lock(mutex_);
    used = slots_[slot].used;
    slots_[slot].used = true;
  }
  if (!used || !options_.reuse_gate) return slot;
  try {
    options_.reuse_gate(slot);
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      slots_[slot].state = State::Free;
    }
    cv_.notify_all();
    throw;
  }
  return slot;
}

std::optional<std::size_t> SlotRing::try_claim() {
  std::optional<std::size_t> s;
  {
    std::lock_guard lock(mutex_);
    throw_if_closed();
    s = pick_locked();
    if (!s) ++counters_.no_slot;
  }
  if (!s) return std::nullopt;
  return gate(*s);
}

std::optional<std::size_t> SlotRing::claim_for(std::chrono::nanoseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::optional<std::size_t> s;
  {
    std::unique_lock lock(mutex_);
    for (;;) {
      throw_if_closed();
      if ((s = pick_locked())) break;
      if (options_.before_wait) {
        lock.unlock();
        options_.before_wait();
        lock.lock();
        throw_if_closed();
        if ((s = pick_locked())) break;
      }
      // Woken by a release, an unclaim, a publish (a Ready slot a claim may
      // drop) or close; a spurious wake-up goes round again.
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
        if ((s = pick_locked())) break;
        throw_if_closed();
        return std::nullopt;
      }
    }
  }
  return gate(*s);
}

std::size_t SlotRing::claim() {
  const auto limit = wait_limit();
  if (auto s = claim_for(limit)) return *s;
  throw WaitTimeout("a free slot of slot ring '" + options_.name + "' (all " + std::to_string(slots_.size()) +
                        " claimed by producers or held by consumers)",
                    limit);
}

std::uint32_t SlotRing::reallocated(std::size_t slot) {
  std::lock_guard lock(mutex_);
  Slot& s = at(slot, "reallocated");
  if (s.state != State::Claimed) misuse("reallocated", slot, "claimed");
  return ++s.generation;
}

std::uint64_t SlotRing::publish_locked(std::size_t slot, const char* call, bool held) {
  Slot& s = at(slot, call);
  if (s.state != State::Claimed) misuse(call, slot, "claimed");
  if (closed_) {
    s.state = State::Free;
    cv_.notify_all();
    throw RingClosed(closed_reason_);
  }
  if (options_.order == RingOrder::NewestWins)
    for (Slot& o : slots_)
      if (o.state == State::Ready) {
        o.state = State::Free;
        ++counters_.dropped;
      }
  s.sequence = ++counters_.sequence;
  ++counters_.submitted;
  s.state = held ? State::Held : State::Ready;
  s.holds = held ? 1 : 0;
  return s.sequence;
}

std::uint64_t SlotRing::publish(std::size_t slot) { return publish_as(slot, "publish", false); }

std::uint64_t SlotRing::publish_held(std::size_t slot) { return publish_as(slot, "publish_held", true); }

std::uint64_t SlotRing::publish_as(std::size_t slot, const char* call, bool held) {
  std::uint64_t seq = 0;
  {
    std::lock_guard lock(mutex_);
    seq = publish_locked(slot, call, held);
  }
  cv_.notify_all();
  return seq;
}

void SlotRing::unclaim(std::size_t slot) {
  {
    std::lock_guard lock(mutex_);
    Slot& s = at(slot, "unclaim");
    if (s.state != State::Claimed) misuse("unclaim", slot, "claimed");
    s.state = State::Free;
  }
  cv_.notify_all();
}

std::uint64_t SlotRing::skip() {
  std::lock_guard lock(mutex_);
  ++counters_.submitted;
  return ++counters_.sequence;
}

std::optional<std::size_t> SlotRing::ready_locked() const {
  std::optional<std::size_t> best;
  const bool newest = options_.order == RingOrder::NewestWins;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].state != State::Ready) continue;
    if (!best || (newest ? slots_[i].sequence > slots_[*best].sequence : slots_[i].sequence < slots_[*best].sequence))
      best = i;
  }
  return best;
}

bool SlotRing::has_ready() const {
  std::lock_guard lock(mutex_);
  return ready_locked().has_value();
}

std::optional<std::size_t> SlotRing::take() {
  std::lock_guard lock(mutex_);
  const auto s = ready_locked();
  if (s) {
    slots_[*s].state = State::Held;
    slots_[*s].holds = 1;
  }
  return s;
}

std::optional<std::size_t> SlotRing::take_for(std::chrono::nanoseconds limit) {
  std::unique_lock lock(mutex_);
  std::optional<std::size_t> s;
  const bool woken = cv_.wait_for(lock, limit, [&] { return (s = ready_locked()) || closed_; });
  if (!woken) return std::nullopt;
  if (!s) throw RingClosed(closed_reason_);
  slots_[*s].state = State::Held;
  slots_[*s].holds = 1;
  return s;
}

void SlotRing::hold(std::size_t slot) {
  std::lock_guard lock(mutex_);
  Slot& s = at(slot, "hold");
  if (s.state != State::Held) misuse("hold", slot, "held (take() or publish_held() it first)");
  ++s.holds;
}

void SlotRing::release(std::size_t slot) {
  bool freed = false;
  {
    std::lock_guard lock(mutex_);
    Slot& s = at(slot, "release");
    if (s.state != State::Held) misuse("release", slot, "held");
    if (--s.holds == 0) {
      s.state = State::Free;
      freed = true;
    }
  }
  if (freed) cv_.notify_all();
}

std::size_t SlotRing::discard_ready() {
  std::size_t n = 0;
  {
    std::lock_guard lock(mutex_);
    for (Slot& s : slots_)
      if (s.state == State::Ready) {
        s.state = State::Free;
        ++n;
      }
  }
  if (n) cv_.notify_all();
  return n;
}

void SlotRing::close(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    closed_reason_ = reason;
  }
  cv_.notify_all();
}

bool SlotRing::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

SlotRing::SlotInfo SlotRing::info(std::size_t slot) const {
  std::lock_guard lock(mutex_);
  const Slot& s = at(slot, "info");
  return SlotInfo{s.state, s.holds, s.generation, s.sequence};
}

std::uint32_t SlotRing::generation(std::size_t slot) const {
  std::lock_guard lock(mutex_);
  return at(slot, "generation").generation;
}

SlotRing::Counters SlotRing::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

}  // namespace handoff
