#pragma once
// SlotRing: the one slot ring. Every route that moves frames through a fixed
// set of slots (frames the application pushes to the viewer, the viewer's
// played sources, the live publisher's shared slots) keeps its bookkeeping
// here: which slot a producer writes, which are ready, which consumers hold,
// the order frames go out in, what was dropped, and when a slot's memory was
// (re)allocated. The ring owns no memory and knows no API: each user keeps its
// backing per slot number (GL buffers in the viewer; memfd, CUDA VMM or
// Vulkan memory in live), described by a FrameLayout.
//
// A slot is
//   Free     nobody uses it; a claim may take it,
//   Claimed  a producer writes it (claim .. publish / unclaim),
//   Ready    published, waiting for a consumer's take(),
//   Held     one or more consumers read it (take / hold .. release); it is
//            Free again when the last hold is released.
// Holds are counted per slot: a consumer that keeps a frame keeps that slot
// only, and never stops a producer from claiming any other.
//
// Two orders (RingOrder):
//   NewestWins  publish() makes older Ready slots Free and counts each one
//               dropped; take() gives the newest Ready slot. A claim that
//               finds no Free slot takes the oldest Ready one (dropped) when
//               SlotRingOptions::claim_drops_ready, before it would wait.
//   Fifo        every published frame is taken, oldest first; a claim waits
//               (bounded) for a Free slot.
// A claim picks the least recently published Free slot, so the newest frames'
// memory is rewritten last.
//
// Reuse gates: a slot's memory may still be read after its release (a GL
// upload fenced, a CUDA copy queued). SlotRingOptions::reuse_gate runs on the
// claiming thread, unlocked, before a slot that was used before is handed out
// again; it waits (bounded) for whatever the user's API needs.
//
// Misuse (publishing a slot that is not claimed, releasing one not held, a
// slot number out of range) throws UsageError naming the ring, the slot and
// its state; a closed ring throws RingClosed with the reason given to close().
//
// Thread safety: every member may be called from any thread; one mutex guards
// the state, and the user's callbacks run without it. Ownership: none of the
// slots' memory; the user's backings live as long as the user keeps them.
#include <handoff/error.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace handoff {

enum class RingOrder : std::uint8_t { NewestWins, Fifo };

// The one options type of a ring.
struct SlotRingOptions {
  std::size_t slots = 3;  // 1 .. 65535
  RingOrder order = RingOrder::NewestWins;
  // NewestWins only: a claim that finds no Free slot takes the oldest Ready
  // one (counted dropped) instead of waiting.
  bool claim_drops_ready = true;
  // Names the ring in messages ("slot ring 'viewer': ...").
  std::string name = "slot ring";
  // Runs before a claim hands out a slot that was claimed before (not at its
  // first use), unlocked, on the claiming thread: waits until the slot's last
  // readers are done (GL fence passed, CUDA event done). If it throws, the
  // slot goes back Free and the claim rethrows.
  std::function<void(std::size_t slot)> reuse_gate;
  // Runs, unlocked, each time a claim is about to wait for a Free slot: e.g.
  // wakes the consumer that frees them.
  std::function<void()> before_wait;
};

// The ring was closed (SlotRing::close): what() is the reason given. A
// runtime condition (the viewer went, the publisher stopped), not misuse.
class RingClosed : public Error {
 public:
  explicit RingClosed(const std::string& reason) : Error(reason) {}
};

class SlotRing {
 public:
  enum class State : std::uint8_t { Free, Claimed, Ready, Held };
  struct SlotInfo {
    State state = State::Free;
    std::uint32_t holds = 0;
    std::uint32_t generation = 0;  // 0: never (re)allocated
    std::uint64_t sequence = 0;    // of the frame last published in it (0: none yet)
  };
  struct Counters {
    std::uint64_t submitted = 0;  // frames published (and skip()ped)
    std::uint64_t dropped = 0;    // Ready frames replaced before anyone took them
    std::uint64_t no_slot = 0;    // try_claim() calls that found no slot
    std::uint64_t sequence = 0;   // of the newest frame published
  };

  // Throws UsageError for a slot count outside 1 .. 65535.
  explicit SlotRing(SlotRingOptions options);
  SlotRing(const SlotRing&) = delete;
  SlotRing& operator=(const SlotRing&) = delete;

  // --- producers ---------------------------------------------------------------
  // A slot to write, now Claimed; nullopt when none is Free (and, NewestWins
  // with claim_drops_ready, none Ready): counted in Counters::no_slot. Never
  // waits, except in the reuse gate.
  std::optional<std::size_t> try_claim();
  // As try_claim, waiting up to `limit` for a slot (nullopt then).
  std::optional<std::size_t> claim_for(std::chrono::nanoseconds limit);
  // As claim_for(handoff::wait_limit()), throwing WaitTimeout naming the ring.
  std::size_t claim();
  // The claimed slot's memory was (re)allocated: bumps and returns its
  // generation (readers that knew the old memory must learn the new one).
  std::uint32_t reallocated(std::size_t slot);
  // A claimed slot's frame is written: Ready, with the next sequence number
  // (returned). NewestWins: older Ready slots are Free again, each dropped.
  // A closed ring frees the slot and throws RingClosed.
  std::uint64_t publish(std::size_t slot);
  // As publish, but the frame goes straight to the producer as one hold
  // (Held, holds 1), to hand to consumers with hold() before release()ing its
  // own: a broadcast to consumers that are not waiting in take().
  std::uint64_t publish_held(std::size_t slot);
  // A claimed slot goes back Free, unpublished.
  void unclaim(std::size_t slot);
  // A frame that went to no slot (nobody to receive it): takes a sequence
  // number and counts as submitted.
  std::uint64_t skip();

  // --- consumers ---------------------------------------------------------------
  bool has_ready() const;
  // A Ready slot (NewestWins: the newest; Fifo: the oldest), now Held once by
  // the caller; nullopt when none is Ready (a closed ring still hands out
  // what is Ready).
  std::optional<std::size_t> take();
  // As take, waiting up to `limit` (nullopt then); throws RingClosed when the
  // ring is closed and nothing is Ready.
  std::optional<std::size_t> take_for(std::chrono::nanoseconds limit);
  // One more hold on a Held slot (another consumer reads it too).
  void hold(std::size_t slot);
  // One hold less; the slot is Free when none is left.
  void release(std::size_t slot);
  // Every Ready slot goes back Free (a seek: those frames are no longer
  // wanted); not counted as dropped. Returns how many.
  std::size_t discard_ready();

  // --- any thread --------------------------------------------------------------
  // From now on claims and publishes throw RingClosed(reason); waiting claims
  // and takes wake. Idempotent (the first reason stays).
  void close(const std::string& reason);
  bool closed() const;
  SlotInfo info(std::size_t slot) const;
  std::uint32_t generation(std::size_t slot) const;
  Counters counters() const;
  std::size_t size() const noexcept { return slots_.size(); }
  const std::string& name() const noexcept { return options_.name; }

 private:
  struct Slot {
    State state = State::Free;
    std::uint32_t holds = 0;
    std::uint32_t generation = 0;
    std::uint64_t sequence = 0;
    bool used = false;  // claimed before: the reuse gate applies
  };

  Slot& at(std::size_t slot, const char* call);  // UsageError when out of range
  const Slot& at(std::size_t slot, const char* call) const;
  [[noreturn]] void misuse(const char* call, std::size_t slot, const char* wanted) const;
  std::optional<std::size_t> pick_locked();
  std::optional<std::size_t> ready_locked() const;
  std::size_t gate(std::size_t slot);  // runs the reuse gate (unlocked)
  std::uint64_t publish_locked(std::size_t slot, const char* call, bool held);
  std::uint64_t publish_as(std::size_t slot, const char* call, bool held);  // locks, publishes, wakes waiters
  void throw_if_closed() const;

  SlotRingOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Slot> slots_;
  Counters counters_;
  bool closed_ = false;
  std::string closed_reason_;
};

std::string_view to_string(SlotRing::State state) noexcept;

}  // namespace handoff
