#pragma once
// Frames pushed by the application (Viewer::show, acquire / present): the
// display side of the PushRing. Not paced: the newest frame is displayed as
// soon as the display gets to it.
#include <memory>

#include <handoff/view/feed.hpp>

#include "push_ring.hpp"

namespace handoff::view {

class PushFeed final : public Feed {
 public:
  explicit PushFeed(std::shared_ptr<PushRing> ring) : ring_(std::move(ring)) {}
  void start(FeedContext&) override {}
  FeedInfo info() const override;
  bool paced() const override { return false; }
  bool next(FeedFrame& out, bool wait) override;
  void release(FeedFrame& frame) override;
  void set_paused(bool paused) override { ring_->set_paused(paused); }
  void step() override { ring_->step(); }
  // The display stops (closed by the user or close(), or a source is played
  // instead): producers still inside show() get ViewerClosed.
  void stop() noexcept override {
    ring_->detach_display();
    try {
      ring_->close(ring_->name() + " is closed (its display stopped)");
    } catch (...) {  // out of memory for the message: the viewer's own checks still refuse frames
    }
  }

 private:
  std::shared_ptr<PushRing> ring_;
  PushSlot* handed_out_ = nullptr;  // the slot of the frame next() returned, until release()
  FeedInfo current_{};  // of the last frame taken
};

}  // namespace handoff::view
