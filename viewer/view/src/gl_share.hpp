#pragma once
// The GL worker whose context shares objects with a display's GL context (the
// frame buffers live there), and what that context needs when it goes (a
// hidden GLFW window is destroyed on the GLFW thread). Shared by the display,
// the push ring and every acquired ViewerFrame: the last owner shuts the
// worker down, so buffers a caller still writes into stay valid after the
// viewer closed.
//
// Thread safety: worker() from any thread; the destructor on any thread.
#include <functional>
#include <memory>

#include <handoff/gl_worker.hpp>

namespace handoff::view {

class GlShare {
 public:
  GlShare(std::unique_ptr<GlWorker> worker, std::function<void()> after_shutdown = {})
      : worker_(std::move(worker)), after_shutdown_(std::move(after_shutdown)) {}
  ~GlShare() {
    worker_->shutdown();  // releases what is still registered; never throws
    worker_.reset();
    if (after_shutdown_) after_shutdown_();
  }
  GlShare(const GlShare&) = delete;
  GlShare& operator=(const GlShare&) = delete;

  GlWorker& worker() const noexcept { return *worker_; }

 private:
  std::unique_ptr<GlWorker> worker_;
  std::function<void()> after_shutdown_;  // must not throw
};

}  // namespace handoff::view
