#include "feeds/push_feed.hpp"

namespace handoff::view {

FeedInfo PushFeed::info() const {
  FeedInfo i = current_;
  i.name = "application";
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
  out.token = reinterpret_cast<std::uintptr_t>(slot);
  current_.format = out.frame.format;
  current_.width = out.frame.width;
  current_.height = out.frame.height;
  current_.colorimetry = out.frame.colorimetry;
  return true;
}

void PushFeed::release(FeedFrame& frame) {
  if (!frame.token) return;
  ring_->give_back(*reinterpret_cast<PushSlot*>(static_cast<std::uintptr_t>(frame.token)));
  frame.token = 0;
}

}  // namespace handoff::view
