// SlotRing (handoff/slot_ring.hpp): the state machine on one thread, then
// the waits and a multi-thread stress run (meant for ThreadSanitizer) that
// checks invariants, never timings.
#include <handoff/slot_ring.hpp>
#include <handoff/wait.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace handoff {
namespace {

using State = SlotRing::State;
using namespace std::chrono_literals;

SlotRingOptions newest(std::size_t slots) {
  SlotRingOptions o;
  o.slots = slots;
  o.name = "test";
  return o;
}

SlotRingOptions fifo(std::size_t slots) {
  SlotRingOptions o = newest(slots);
  o.order = RingOrder::Fifo;
  return o;
}

// A far bound for waits that are expected to end by another thread's action.
constexpr auto kLong = std::chrono::minutes(5);

TEST(SlotRing, RefusesASizeOutsideTheRange) {
  EXPECT_THROW(SlotRing(newest(0)), UsageError);
  EXPECT_THROW(SlotRing(newest(65536)), UsageError);
  EXPECT_EQ(SlotRing(newest(1)).size(), 1u);
}

TEST(SlotRing, ClaimPublishTakeReleaseCycle) {
  SlotRing ring(newest(3));
  const auto s = ring.try_claim();
  ASSERT_TRUE(s);
  EXPECT_EQ(ring.info(*s).state, State::Claimed);
  EXPECT_FALSE(ring.has_ready());
  EXPECT_EQ(ring.publish(*s), 1u);
  EXPECT_EQ(ring.info(*s).state, State::Ready);
  EXPECT_EQ(ring.info(*s).sequence, 1u);
  EXPECT_TRUE(ring.has_ready());
  EXPECT_EQ(ring.take(), s);
  EXPECT_EQ(ring.info(*s).state, State::Held);
  EXPECT_EQ(ring.info(*s).holds, 1u);
  EXPECT_FALSE(ring.take());
  ring.release(*s);
  EXPECT_EQ(ring.info(*s).state, State::Free);
  const auto c = ring.counters();
  EXPECT_EQ(c.submitted, 1u);
  EXPECT_EQ(c.dropped, 0u);
  EXPECT_EQ(c.sequence, 1u);
}

TEST(SlotRing, ClaimPicksTheLeastRecentlyPublishedFreeSlot) {
  SlotRing ring(newest(3));
  // Publish and consume slots 0, 1, 2 in turn: each claim picks a never-used slot first.
  std::vector<std::size_t> order;
  for (int i = 0; i < 3; ++i) {
    const auto s = ring.try_claim();
    ASSERT_TRUE(s);
    order.push_back(*s);
    ring.publish(*s);
    ring.release(*ring.take());
  }
  std::vector<std::size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::size_t>{0, 1, 2}));
  // Now the least recently published is the first one used.
  EXPECT_EQ(ring.try_claim(), order[0]);
}

TEST(SlotRing, NewestWinsANewerPublishDropsTheOlderReadyFrame) {
  SlotRing ring(newest(3));
  const auto a = *ring.try_claim();
  const auto b = *ring.try_claim();
  ring.publish(a);
  ring.publish(b);
  EXPECT_EQ(ring.info(a).state, State::Free);
  EXPECT_EQ(ring.info(b).state, State::Ready);
  EXPECT_EQ(ring.counters().dropped, 1u);
  EXPECT_EQ(ring.take(), b);
}

TEST(SlotRing, NewestWinsAClaimWithNoFreeSlotTakesTheReadyOneDroppingIt) {
  SlotRing ring(newest(2));
  const auto held = *ring.try_claim();
  ring.publish(held);
  ASSERT_EQ(ring.take(), held);          // the consumer holds it
  const auto ready = *ring.try_claim();  // the only other slot
  ring.publish(ready);
  const auto again = ring.try_claim();  // none Free: the Ready frame loses
  EXPECT_EQ(again, ready);
  EXPECT_EQ(ring.counters().dropped, 1u);
  EXPECT_EQ(ring.info(held).state, State::Held);  // the consumer's slot is never taken from it
  EXPECT_FALSE(ring.try_claim());
  EXPECT_EQ(ring.counters().no_slot, 1u);
}

TEST(SlotRing, NewestWinsWithoutClaimDropsAClaimFindsNothingWhileAFrameIsReady) {
  SlotRingOptions o = newest(2);
  o.claim_drops_ready = false;
  SlotRing ring(o);
  ring.publish(*ring.try_claim());
  ring.publish(*ring.try_claim());  // drops the first: 1 Ready, 1 Free
  const auto s = ring.try_claim();
  ASSERT_TRUE(s);
  EXPECT_FALSE(ring.try_claim());
  EXPECT_EQ(ring.counters().dropped, 1u);
  EXPECT_TRUE(ring.has_ready());
}

TEST(SlotRing, FifoKeepsEveryFrameInOrder) {
  SlotRing ring(fifo(3));
  const auto a = *ring.try_claim();
  const auto b = *ring.try_claim();
  const auto c = *ring.try_claim();
  ring.publish(b);
  ring.publish(a);
  ring.publish(c);
  EXPECT_FALSE(ring.try_claim());  // a full FIFO ring drops nothing to make room
  EXPECT_EQ(ring.take(), b);
  EXPECT_EQ(ring.take(), a);
  EXPECT_EQ(ring.take(), c);
  EXPECT_EQ(ring.counters().dropped, 0u);
  EXPECT_EQ(ring.counters().submitted, 3u);
}

TEST(SlotRing, DiscardReadyFreesEveryReadySlotWithoutCountingDrops) {
  SlotRing ring(fifo(3));
  ring.publish(*ring.try_claim());
  ring.publish(*ring.try_claim());
  const auto held = *ring.try_claim();
  ring.publish(held);
  const auto first = *ring.take();
  EXPECT_EQ(ring.discard_ready(), 2u);
  EXPECT_FALSE(ring.has_ready());
  EXPECT_EQ(ring.info(first).state, State::Held);
  EXPECT_EQ(ring.counters().dropped, 0u);
}

TEST(SlotRing, HoldsBySeveralConsumersKeepOnlyTheirSlot) {
  SlotRing ring(newest(3));
  const auto s = *ring.try_claim();
  ring.publish_held(s);  // the producer's own hold
  ring.hold(s);          // consumer 1
  ring.hold(s);          // consumer 2
  ring.release(s);       // the producer lets go
  EXPECT_EQ(ring.info(s).holds, 2u);
  EXPECT_FALSE(ring.has_ready());
  // The other slots cycle freely while two consumers hold `s`.
  for (int i = 0; i < 10; ++i) {
    const auto t = ring.try_claim();
    ASSERT_TRUE(t);
    EXPECT_NE(*t, s);
    ring.publish_held(*t);
    ring.release(*t);
  }
  ring.release(s);
  EXPECT_EQ(ring.info(s).state, State::Held);
  ring.release(s);
  EXPECT_EQ(ring.info(s).state, State::Free);
}

TEST(SlotRing, PublishHeldWithNoConsumerFreesTheSlotAtTheProducersRelease) {
  SlotRing ring(newest(2));
  const auto s = *ring.try_claim();
  EXPECT_EQ(ring.publish_held(s), 1u);
  EXPECT_EQ(ring.info(s).state, State::Held);
  ring.release(s);
  EXPECT_EQ(ring.info(s).state, State::Free);
  EXPECT_EQ(ring.skip(), 2u);  // a frame with no slot still takes a sequence number
  EXPECT_EQ(ring.counters().submitted, 2u);
}

TEST(SlotRing, ReallocationBumpsTheGeneration) {
  SlotRing ring(newest(2));
  const auto s = *ring.try_claim();
  EXPECT_EQ(ring.generation(s), 0u);
  EXPECT_EQ(ring.reallocated(s), 1u);
  EXPECT_EQ(ring.reallocated(s), 2u);
  ring.unclaim(s);
  EXPECT_EQ(ring.info(s).generation, 2u);
  EXPECT_EQ(ring.info(s).state, State::Free);
}

TEST(SlotRing, BadCallsAreRefusedNamingTheRingSlotAndState) {
  SlotRing ring(newest(2));
  auto expect_usage = [](auto&& call, const std::string& needle) {
    try {
      call();
      ADD_FAILURE() << "no UsageError (wanted one mentioning '" << needle << "')";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("slot ring 'test'"), std::string::npos) << e.what();
    }
  };
  expect_usage([&] { ring.publish(0); }, "publish(slot 0): the slot is free, not claimed");
  expect_usage([&] { ring.release(1); }, "release(slot 1): the slot is free, not held");
  expect_usage([&] { ring.hold(0); }, "hold(slot 0)");
  expect_usage([&] { ring.unclaim(0); }, "unclaim(slot 0)");
  expect_usage([&] { ring.reallocated(0); }, "reallocated(slot 0)");
  expect_usage([&] { ring.info(2); }, "no such slot (the ring has 2)");
  expect_usage([&] { ring.publish(7); }, "no such slot");
  const auto s = *ring.try_claim();
  ring.publish(s);
  expect_usage([&] { ring.publish(s); }, "the slot is ready, not claimed");
  expect_usage([&] { ring.release(s); }, "the slot is ready, not held");
  // Nothing changed by the refused calls.
  EXPECT_EQ(ring.info(s).state, State::Ready);
  EXPECT_EQ(ring.counters().submitted, 1u);
}

TEST(SlotRing, ClosedRingRefusesClaimsAndPublishesButStillHandsOutReadyFrames) {
  SlotRing ring(newest(3));
  const auto ready = *ring.try_claim();
  ring.publish(ready);
  const auto writing = *ring.try_claim();
  ring.close("the viewer closed");
  ring.close("a second reason is ignored");
  EXPECT_TRUE(ring.closed());
  try {
    ring.try_claim();
    ADD_FAILURE() << "claimed from a closed ring";
  } catch (const RingClosed& e) {
    EXPECT_STREQ(e.what(), "the viewer closed");
  }
  EXPECT_THROW(ring.publish(writing), RingClosed);
  EXPECT_EQ(ring.info(writing).state, State::Free);  // the refused publish gave the slot back
  EXPECT_EQ(ring.take_for(kLong), ready);
  ring.release(ready);
  EXPECT_THROW(ring.take_for(kLong), RingClosed);
}

TEST(SlotRing, ReuseGateRunsBeforeASlotIsHandedOutAgainAndCanRefuseIt) {
  std::vector<std::size_t> gated;
  bool refuse = false;
  SlotRingOptions o = newest(1);
  o.reuse_gate = [&](std::size_t s) {
    gated.push_back(s);
    if (refuse) throw Error("the upload fence did not pass");
  };
  SlotRing ring(o);
  const auto s = *ring.try_claim();
  EXPECT_TRUE(gated.empty());  // first use: nothing to wait for
  ring.publish(s);
  ring.release(*ring.take());
  EXPECT_EQ(ring.try_claim(), s);
  EXPECT_EQ(gated, std::vector<std::size_t>{s});
  ring.unclaim(s);
  refuse = true;
  EXPECT_THROW(ring.try_claim(), Error);
  EXPECT_EQ(ring.info(s).state, State::Free);  // a refused gate gives the slot back
}

// --- waits -----------------------------------------------------------------------

TEST(SlotRing, FifoClaimWaitsForARelease) {
  SlotRing ring(fifo(1));
  const auto s = *ring.try_claim();
  ring.publish(s);
  auto claimer = std::async(std::launch::async, [&] { return ring.claim_for(kLong); });
  // The claim cannot succeed before the consumer releases: the ring has one slot, Ready.
  ASSERT_EQ(ring.take(), s);
  ring.release(s);
  EXPECT_EQ(claimer.get(), s);
}

TEST(SlotRing, FifoClaimTimesOutBoundedWhenNothingIsReleased) {
  SlotRing ring(fifo(1));
  ring.publish(*ring.try_claim());
  EXPECT_EQ(ring.claim_for(1ms), std::nullopt);
  set_wait_limit(1ms);
  try {
    ring.claim();
    ADD_FAILURE() << "claim() returned with every slot in use";
  } catch (const WaitTimeout& e) {
    EXPECT_NE(std::string(e.what()).find("a free slot of slot ring 'test'"), std::string::npos) << e.what();
  }
  set_wait_limit(0ms);
}

TEST(SlotRing, CloseWakesWaitingClaimsAndTakes) {
  SlotRing ring(fifo(1));
  ring.publish(*ring.try_claim());
  const auto s = *ring.take();  // held: a claim must wait
  SlotRing empty(fifo(1));
  auto claimer = std::async(std::launch::async, [&] { return ring.claim_for(kLong); });
  auto taker = std::async(std::launch::async, [&] { return empty.take_for(kLong); });
  ring.close("stopped");
  empty.close("stopped");
  EXPECT_THROW(claimer.get(), RingClosed);
  EXPECT_THROW(taker.get(), RingClosed);
  ring.release(s);
}

TEST(SlotRing, BeforeWaitRunsWhenAClaimHasToWait) {
  std::atomic<int> calls{0};
  SlotRingOptions o = fifo(1);
  SlotRing* self = nullptr;
  std::size_t held = 0;
  o.before_wait = [&] {
    // The consumer this wakes frees the slot.
    if (calls++ == 0) self->release(held);
  };
  SlotRing ring(o);
  self = &ring;
  ring.publish(*ring.try_claim());
  held = *ring.take();
  EXPECT_EQ(ring.claim_for(kLong), held);
  EXPECT_EQ(calls.load(), 1);
}

// --- threads (run under the tsan preset too) ---------------------------------------

// Every slot records who is in it: writers (claimed) and readers (held). The
// ring must never let a writer in beside anybody else.
struct Occupancy {
  std::vector<std::atomic<int>> writers, readers;
  explicit Occupancy(std::size_t n) : writers(n), readers(n) {}
  void enter_write(std::size_t s) {
    EXPECT_EQ(writers[s].fetch_add(1), 0) << "two writers in slot " << s;
    EXPECT_EQ(readers[s].load(), 0) << "a writer in slot " << s << " while it is read";
  }
  void leave_write(std::size_t s) { writers[s].fetch_sub(1); }
  void enter_read(std::size_t s) {
    readers[s].fetch_add(1);
    EXPECT_EQ(writers[s].load(), 0) << "a reader in slot " << s << " while it is written";
  }
  void leave_read(std::size_t s) { readers[s].fetch_sub(1); }
};

void produce(SlotRing& ring, Occupancy& occ, int frames) {
  for (int i = 0; i < frames; ++i) {
    const auto claimed = ring.claim_for(kLong);
    ASSERT_TRUE(claimed);
    const std::size_t s = *claimed;
    occ.enter_write(s);
    std::this_thread::yield();
    occ.leave_write(s);
    if (i % 17 == 16) {
      ring.unclaim(s);  // a producer that gives up now and then
      continue;
    }
    ring.publish(s);
  }
}

TEST(SlotRingThreads, NewestWinsProducersAndOneConsumerKeepTheInvariants) {
  constexpr std::size_t kSlots = 4;
  constexpr int kProducers = 3, kFrames = 2000;
  SlotRing ring(newest(kSlots));
  Occupancy occ(kSlots);
  std::uint64_t taken = 0, last = 0;
  std::thread consumer([&] {
    try {
      for (;;) {
        const auto s = ring.take_for(kLong);
        if (!s) continue;
        occ.enter_read(*s);
        const auto seq = ring.info(*s).sequence;
        EXPECT_GT(seq, last) << "the newest wins: sequences only grow";
        last = seq;
        ++taken;
        std::this_thread::yield();
        occ.leave_read(*s);
        ring.release(*s);
      }
    } catch (const RingClosed&) {
    }
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) producers.emplace_back([&] { produce(ring, occ, kFrames); });
  for (auto& t : producers) t.join();
  ring.close("done");
  consumer.join();
  const auto c = ring.counters();
  const std::uint64_t published = kProducers * (kFrames - kFrames / 17);
  EXPECT_EQ(c.submitted, published);
  EXPECT_EQ(c.sequence, published);
  // Each published frame was taken, dropped or is still Ready (none: the consumer drained).
  EXPECT_EQ(taken + c.dropped, published);
  for (std::size_t s = 0; s < kSlots; ++s) EXPECT_EQ(ring.info(s).state, State::Free) << "slot " << s;
}

TEST(SlotRingThreads, FifoProducersAndConsumersLoseNothingAndKeepOrder) {
  constexpr std::size_t kSlots = 3;
  constexpr int kProducers = 2, kConsumers = 2, kFrames = 1500;
  SlotRing ring(fifo(kSlots));
  Occupancy occ(kSlots);
  std::mutex seen_mutex;
  std::vector<std::uint64_t> seen;  // sequences in the order takes returned them
  std::vector<std::thread> consumers;
  for (int c = 0; c < kConsumers; ++c)
    consumers.emplace_back([&] {
      {
        for (;;) {
          // take and note its sequence under one lock, so `seen` is in take order.
          std::unique_lock lock(seen_mutex);
          const auto s = ring.take();
          if (!s) {
            lock.unlock();
            // Closed first, then nothing Ready: no publish can come any more.
            if (ring.closed() && !ring.has_ready()) return;
            std::this_thread::yield();
            continue;
          }
          seen.push_back(ring.info(*s).sequence);
          lock.unlock();
          occ.enter_read(*s);
          std::this_thread::yield();
          occ.leave_read(*s);
          ring.release(*s);
        }
      }
    });
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) producers.emplace_back([&] { produce(ring, occ, kFrames); });
  for (auto& t : producers) t.join();
  // The consumers drain what is Ready after this: a closed ring still hands it out.
  ring.close("done");
  for (auto& t : consumers) t.join();
  const std::uint64_t published = kProducers * (kFrames - kFrames / 17);
  EXPECT_EQ(ring.counters().dropped, 0u);
  ASSERT_EQ(seen.size(), published);
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], i + 1) << "FIFO: frame " << i;
}

TEST(SlotRingThreads, BroadcastHoldsReleasedOnOtherThreadsFreeEverySlot) {
  // The publisher's use: publish_held, one hold per consumer, releases from
  // the consumers' threads in any order; a consumer that keeps one frame
  // never stops the producer.
  constexpr std::size_t kSlots = 4;
  constexpr int kConsumers = 3, kFrames = 3000;
  SlotRing ring(newest(kSlots));
  Occupancy occ(kSlots);
  struct Inbox {
    std::mutex m;
    std::deque<std::size_t> q;
    bool done = false;
  };
  std::vector<Inbox> inbox(kConsumers);
  // Consumer 0 keeps its first frame until the end.
  std::optional<std::size_t> kept;
  std::vector<std::thread> consumers;
  for (int c = 0; c < kConsumers; ++c)
    consumers.emplace_back([&, c] {
      for (;;) {
        std::optional<std::size_t> s;
        {
          std::lock_guard lock(inbox[c].m);
          if (!inbox[c].q.empty()) {
            s = inbox[c].q.front();
            inbox[c].q.pop_front();
          } else if (inbox[c].done) {
            return;
          }
        }
        if (!s) {
          std::this_thread::yield();
          continue;
        }
        occ.enter_read(*s);
        occ.leave_read(*s);
        if (c == 0 && !kept) {
          kept = s;
          continue;
        }
        ring.release(*s);
      }
    });
  std::uint64_t no_slot = 0;
  for (int i = 0; i < kFrames; ++i) {
    const auto s = ring.try_claim();
    if (!s) {
      ++no_slot;
      std::this_thread::yield();
      continue;
    }
    occ.enter_write(*s);
    occ.leave_write(*s);
    ring.publish_held(*s);
    for (int c = 0; c < kConsumers; ++c) {
      ring.hold(*s);
      std::lock_guard lock(inbox[c].m);
      inbox[c].q.push_back(*s);
    }
    ring.release(*s);
  }
  for (auto& b : inbox) {
    std::lock_guard lock(b.m);
    b.done = true;
  }
  for (auto& t : consumers) t.join();
  EXPECT_EQ(ring.counters().no_slot, no_slot);
  EXPECT_EQ(ring.counters().submitted + no_slot, std::uint64_t(kFrames));
  ASSERT_TRUE(kept);
  for (std::size_t s = 0; s < kSlots; ++s) {
    const auto info = ring.info(s);
    if (s == *kept) {
      EXPECT_EQ(info.state, State::Held);
      EXPECT_EQ(info.holds, 1u) << "the kept frame holds its slot once";
    } else {
      EXPECT_EQ(info.state, State::Free) << "slot " << s;
    }
  }
  ring.release(*kept);
}

}  // namespace
}  // namespace handoff
