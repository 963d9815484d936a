#pragma once
// The GL worker whose context shares objects with a display's GL context (the
// frame buffers live there), and what that context needs when it goes (a
// hidden GLFW window is destroyed on the GLFW thread). Shared by the display,
// the push ring and every acquired ViewerFrame: the last owner shuts the
// worker down, so buffers a caller still writes into stay valid after the
// viewer closed. It also keeps the display's GL_MAX_TEXTURE_SIZE, queried once
// as the display starts, so that producers refuse frames its textures cannot
// hold on their own thread (PushRing) rather than the display failing on them.
//
// Thread safety: worker() and max_texture_size() from any thread; the
// destructor on any thread.
#include <cstdint>
#include <functional>
#include <memory>

#include <handoff/gl_worker.hpp>

namespace handoff::view {

class GlShare {
 public:
  // `max_texture_size`: the display context's GL_MAX_TEXTURE_SIZE (0: unknown, nothing refused).
  GlShare(std::unique_ptr<GlWorker> worker, std::function<void()> after_shutdown = {},
          std::uint32_t max_texture_size = 0)
      : worker_(std::move(worker)), after_shutdown_(std::move(after_shutdown)), max_texture_size_(max_texture_size) {}
  ~GlShare() {
    worker_->shutdown();  // releases what is still registered; never throws
    worker_.reset();
    if (after_shutdown_) after_shutdown_();
  }
  GlShare(const GlShare&) = delete;
  GlShare& operator=(const GlShare&) = delete;

  GlWorker& worker() const noexcept { return *worker_; }
  std::uint32_t max_texture_size() const noexcept { return max_texture_size_; }

 private:
  std::unique_ptr<GlWorker> worker_;
  std::function<void()> after_shutdown_;  // must not throw
  std::uint32_t max_texture_size_ = 0;
};

}  // namespace handoff::view
