#pragma once
// Frames a handoff::Publisher in another process shares (Viewer::attach,
// handoff-view --attach), through a handoff::Subscriber (attach_link.hpp).
// Not paced: the newest frame is displayed as soon as it arrives. Each slot
// kind takes the shortest route GL allows:
//  - host memfd slots: uploaded straight from the read-only mapping (the
//    renderer's texture upload reads it; nothing else copies);
//  - CUDA slots (imported by the subscriber): one device-to-device copy into a
//    buffer of the viewer's ring (registered with CUDA), then the GPU-side
//    upload; where the viewer's ring is host-mapped (no CUDA-GL interop) the
//    copy goes device to host instead, and the memory line says so;
//  - Vulkan slots: imported into GL (attach_vulkan.hpp), uploaded GPU-side.
// A slot goes back to the publisher once GL is done reading it: host at once
// (a client-memory upload has read it when it returns), CUDA once copied,
// Vulkan when the upload's fence passes.
//
// Thread safety: the Feed methods on the display thread. Ownership: shares
// the link with the Viewer (which reports its status).
#include <deque>
#include <memory>
#include <string>

#include <handoff/gl_worker.hpp>
#include <handoff/view/feed.hpp>

#include "feeds/attach_link.hpp"
#include "feeds/attach_vulkan.hpp"
#include "frame_renderer.hpp"
#include "gl_share.hpp"
#include "push_ring.hpp"

namespace handoff::view {

class AttachFeed final : public Feed {
 public:
  // `ring`: how the ring for CUDA frames is made (the viewer's memory options).
  AttachFeed(std::shared_ptr<AttachLink> link, std::shared_ptr<GlShare> share, GlRingOptions ring);
  ~AttachFeed() override;

  void start(FeedContext& context) override;
  FeedInfo info() const override;
  bool paced() const override { return false; }
  bool next(FeedFrame& out, bool wait) override;
  void release(FeedFrame& frame) override;
  void stop() noexcept override;

 private:
  enum class Route : std::uint8_t { None, Host, Cuda, Vulkan };
  struct Reading {  // a Vulkan slot GL may still read
    GlFence done;
    LiveFrame frame;
  };
  void check_failed() const;
  bool next_cuda(LiveFrame& f, FeedFrame& out);
  void reclaim(bool wait);

  std::shared_ptr<AttachLink> link_;
  std::shared_ptr<GlShare> share_;
  GlRingOptions ring_options_;
  std::shared_ptr<PushRing> ring_;  // CUDA frames (made at the first one)
  std::unique_ptr<GlVulkanSlots> vulkan_;
  Route route_ = Route::None;
  LiveFrame taken_;       // between next() and release()
  PushSlot* ring_slot_ = nullptr;  // CUDA: the ring slot handed out
  std::deque<Reading> reading_;
  media::OverlayFrame overlays_;
  FeedInfo current_{};  // of the last frame taken
  RefusedFrames refused_;  // frames larger than the display's GL_MAX_TEXTURE_SIZE
};

}  // namespace handoff::view
