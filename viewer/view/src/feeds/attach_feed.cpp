#include "feeds/attach_feed.hpp"

#include <chrono>

#include <handoff/error.hpp>
#include <handoff/log.hpp>

namespace handoff::view {
namespace {

// Slots held while GL reads them (Vulkan): beyond this the display waits for
// the oldest upload rather than pinning more of the publisher's ring.
constexpr std::size_t kMaxReading = 2;

}  // namespace

AttachFeed::AttachFeed(std::shared_ptr<AttachLink> link, std::shared_ptr<GlShare> share, GlRingOptions ring)
    : link_(std::move(link)), share_(std::move(share)), ring_options_(std::move(ring)) {}

AttachFeed::~AttachFeed() { stop(); }

void AttachFeed::start(FeedContext& context) {
  refused_ = RefusedFrames(context.bad_frame);
  vulkan_ = std::make_unique<GlVulkanSlots>();
  check_failed();
}

// A permanent failure (refused, another protocol version, memory this process
// cannot import) ends the display with the reason.
void AttachFeed::check_failed() const {
  const SubscriberStatus s = link_->subscriber_status();
  if (s.state == LinkState::Failed) throw Error("attach '" + s.publisher + "': " + s.message);
}

FeedInfo AttachFeed::info() const {
  FeedInfo i = current_;
  const SubscriberStatus s = link_->subscriber_status();
  i.name = s.publisher + " (live)";
  i.topic = s.publisher;  // a grid's tile name
  i.source = s.message;
  switch (route_) {
    case Route::None: i.memory = "no frame yet"; break;
    case Route::Host: i.memory = "host memfd slots, uploaded from the read-only mapping"; break;
    case Route::Cuda:
      i.memory = "CUDA slots imported, copied into " + (ring_ ? ring_->memory_text() : std::string("the ring"));
      break;
    case Route::Vulkan:
      i.memory = "Vulkan slots imported into GL (GL_EXT_memory_object_fd), uploaded GPU-side";
      break;
  }
  i.ring = ring_ ? ring_->size() : 1;
  return i;
}

bool AttachFeed::next(FeedFrame& out, bool) {
  reclaim(false);
  check_failed();
  LiveFrame f = link_->take();
  if (!f) return false;
  // Before any import or copy (a CUDA frame's would refuse it, stopping the
  // display): left out, and its slot goes back to the publisher.
  if (auto refused = texture_size_refusal("the viewer", f.frame.width, f.frame.height, share_->max_texture_size())) {
    refused_.add("attach '" + link_->subscriber_status().publisher + "': frame " + std::to_string(f.frame.index) +
                 ": " + refused->what());
    return false;
  }
  out = FeedFrame{};
  // The publisher's CLOCK_MONOTONIC is steady_clock's: the latency figures
  // become publish -> displayed, and the panel's age counts from there.
  out.submitted = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(f.publish_time_ns));
  out.sequence = f.sequence;
  // The frame's own time, for a grid's tile lines (live tiles show their newest, never follow).
  const double ts = f.frame.timestamp;
  out.time_ns = ts > 0 && ts < 1.8e10 ? std::uint64_t(ts * 1e9) : 0;
  if (f.overlays) {
    overlays_ = *f.overlays;
    out.overlays = &overlays_;
  }
  switch (f.frame.memory) {
    case MemoryKind::Host:
      route_ = Route::Host;
      out.frame = f.frame;  // planes in the read-only mapping: the upload reads them there
      break;
    case MemoryKind::Cuda:
      route_ = Route::Cuda;
      if (!next_cuda(f, out)) return false;
      break;
    case MemoryKind::Vulkan:
      route_ = Route::Vulkan;
      out.frame = vulkan_->import(f);
      break;
    case MemoryKind::GlBuffer: throw Error("attach: a received frame in GL memory (a subscriber never makes one)");
  }
  current_.format = f.frame.format;
  current_.width = f.frame.width;
  current_.height = f.frame.height;
  current_.colorimetry = f.frame.colorimetry;
  if (route_ != Route::Cuda) taken_ = std::move(f);  // CUDA: copied already; the slot goes back now
  return true;
}

// One device-to-device copy into a buffer of the viewer's ring (PushRing::show
// waits for its own copy), then the ring's slot is what the display uploads.
bool AttachFeed::next_cuda(LiveFrame& f, FeedFrame& out) {
  if (!ring_) ring_ = std::make_shared<PushRing>(share_, ring_options_, PausedShow::KeepNewest, [] {});
  ring_->show(f.frame, media::OverlayFrame{});
  PushSlot* slot = ring_->take();
  if (!slot) return false;
  ring_slot_ = slot;
  const auto submitted = out.submitted;
  out.frame = ring_->frame_of(*slot);
  out.submitted = submitted;
  out.produce_ms = slot->produce_ms;
  out.map_ms = slot->map_ms;
  return true;
}

void AttachFeed::release(FeedFrame&) {
  if (ring_slot_) {
    ring_->give_back(*ring_slot_);
    ring_slot_ = nullptr;
  } else if (route_ == Route::Vulkan && taken_) {
    reading_.push_back(Reading{GlFence::insert(), std::move(taken_)});
    if (reading_.size() > kMaxReading) reclaim(true);
  }
  taken_ = LiveFrame{};  // host: the upload read the mapping when it returned
}

// Vulkan slots whose uploads finished go back to the publisher (`wait`: the
// oldest is waited for, bounded).
void AttachFeed::reclaim(bool wait) {
  if (wait && !reading_.empty()) reading_.front().done.wait("GL upload from a publisher's Vulkan slot");
  while (!reading_.empty() && reading_.front().done.client_wait(0)) reading_.pop_front();
}

void AttachFeed::stop() noexcept {
  try {
    if (route_ == Route::Vulkan) GlFence::insert().wait("GL reads of a publisher's slots before detaching");
  } catch (const std::exception& e) {
    log(LogLevel::Error, std::string("attach: ") + e.what());
  }
  reading_.clear();
  if (vulkan_) vulkan_->clear();
  vulkan_.reset();
  taken_ = LiveFrame{};
  if (ring_) {
    ring_slot_ = nullptr;
    ring_->detach_display();  // a taken slot becomes free
    try {
      ring_->close("the attached viewer stopped");
    } catch (...) {  // out of memory for the message: nothing produces into this ring any more
    }
    ring_.reset();
  }
}

}  // namespace handoff::view
