#include "feeds/push_feed.hpp"

#include <utility>

namespace handoff::view {

FeedInfo PushFeed::info() const {
  FeedInfo i = current_;
  i.name = "application";
  i.topic = i.stream = ring_->stream();
  i.memory = ring_->memory_text();
  i.ring = ring_->size();
  return i;
}

bool PushFeed::next(FeedFrame& out, bool) {
  PushSlot* slot = ring_->take();
  if (!slot) return false;
  out = FeedFrame{};
  out.frame = ring_->frame_of(*slot);
  out.overlays = &slot->overlays;
  out.submitted = slot->submitted;
  out.sequence = slot->sequence;
  out.produce_ms = slot->produce_ms;
  out.map_ms = slot->map_ms;
  // The frame's own time, for a grid's tile lines (never followed: pushed tiles show their newest).
  const double ts = out.frame.timestamp;
  out.time_ns = ts > 0 && ts < 1.8e10 ? std::uint64_t(ts * 1e9) : 0;
  handed_out_ = slot;
  current_.format = out.frame.format;
  current_.width = out.frame.width;
  current_.height = out.frame.height;
  current_.colorimetry = out.frame.colorimetry;
  return true;
}

void PushFeed::release(FeedFrame&) {
  if (!handed_out_) return;
  ring_->give_back(*std::exchange(handed_out_, nullptr));
}

}  // namespace handoff::view
