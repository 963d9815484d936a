#pragma once
// The ring that frames pushed by the application go through (Viewer::show,
// acquire / present): a few GL buffers registered with CUDA (or mapped into
// host memory), made on the GL worker that shares objects with the display.
//
// Host rings map each buffer once, persistently and coherently: show() is one
// memcpy plus bookkeeping (GL sees a coherent mapping's writes in every command
// issued after them). CUDA rings map per frame (cuGraphicsMapResources) and
// fence the unmap. CUDA rings also carry a frame's CUDA layers: each slot
// keeps a CUDA-registered GL buffer per CUDA layer, written device to device
// by show() / present(), unmapped and fenced with the frame's buffer
// (copy_cuda_layers); a host ring refuses CUDA layers.
//
// The slots' states are handoff's one slot ring (SlotRing, newest wins):
// Free, Claimed (a producer maps it and copies the frame in, or an acquire()
// holds it), Ready (the newest frame, waiting for the display) or Held (the
// display took it: uploaded into its textures, then its upload fence must
// pass before the display releases it). A producer that finishes while
// another frame is Ready makes that one Free and counts it dropped; a
// producer that finds no Free slot takes the Ready one (dropping it). Only
// with every slot Claimed or Held does a producer wait, bounded: for another
// producer's copy, or for the display's upload. This class adds the slots'
// GL buffers and fences, the copies, and pause / step credits.
//
// Thread safety: the producer side (show, acquire, present, cancel, close,
// counters) from any thread; take / give_back / reclaim on the display thread
// with its context current. Ownership: shared by the viewer, its display and
// every AcquiredSlot; holds the GlShare (the worker) for as long as it lives.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <handoff/cuda_gl_buffer.hpp>
#include <handoff/frame.hpp>
#include <handoff/gl_buffer.hpp>
#include <handoff/gl_worker.hpp>
#include <handoff/slot_ring.hpp>
#include <handoff/viewer.hpp>
#include <handoff/media/overlay.hpp>

#include "gl_ring_options.hpp"
#include "gl_share.hpp"

namespace handoff::view {

class CudaCopier;

// A GL buffer registered with CUDA that holds one CUDA layer's samples
// (packed), kept from frame to frame while the layer fits.
struct LayerBuffer {
  GlBuffer buffer;
  std::optional<CudaGlBuffer> interop;
};

// A slot's buffer and the frame in it; its state is the ring's (slot `number`).
struct PushSlot {
  std::size_t number = 0;
  GlBuffer buffer;                        // empty until first used
  std::optional<CudaGlBuffer> interop;    // CUDA rings: mapped per frame
  void* host = nullptr;                   // host rings: mapped once, persistent and coherent
  FrameLayout layout;  // FrameLayout::contiguous at 256 bytes: luma, then chroma
  Colorimetry colorimetry{};
  std::int64_t index = 0;
  double timestamp = 0;
  std::chrono::steady_clock::time_point submitted{};
  std::uint64_t sequence = 0;  // the ring's, set by take()
  double produce_ms = 0, map_ms = 0;
  media::OverlayFrame overlays;
  Mapping mapping;    // while Claimed
  std::vector<LayerBuffer> layer_buffers;  // CUDA rings: one per CUDA layer of the frame
  Mapping layer_mapping;                   // the layer buffers, while their copies run
  GlFence written;    // worker, after the unmap; waited on by the display
  GlFence read_done;  // display, after its upload; waited on before the slot is written again
};

class PushRing;

// What a ViewerFrame holds: the slot, mapped, and the ring (so the worker and
// the buffer outlive a viewer that closes meanwhile).
struct AcquiredSlot {
  std::shared_ptr<PushRing> ring;
  PushSlot* slot = nullptr;
  Frame frame;  // the writable description handed to the caller
  std::chrono::steady_clock::time_point started{};
  ~AcquiredSlot();  // gives an unpresented slot back; never throws
};

class PushRing : public std::enable_shared_from_this<PushRing> {
 public:
  // `wake` tells the display a frame may be pending (any thread).
  // `options.name` names it in messages (default "viewer"); `paused_show`:
  // what show() does while the display is paused.
  PushRing(std::shared_ptr<GlShare> share, GlRingOptions options, PausedShow paused_show, std::function<void()> wake);
  ~PushRing();  // deletes the slots' fences on the worker; never throws
  PushRing(const PushRing&) = delete;
  PushRing& operator=(const PushRing&) = delete;

  // --- producers: any thread -------------------------------------------------
  void show(const Frame& frame, const media::OverlayFrame& overlays, CudaStream stream = {});
  std::unique_ptr<AcquiredSlot> acquire(PixelFormat format, std::uint32_t width, std::uint32_t height,
                                        Colorimetry colorimetry);
  void present(AcquiredSlot& acquired, const media::OverlayFrame& overlays);
  void cancel(AcquiredSlot& acquired) noexcept;

  // From now on producers get ViewerClosed(reason); waiting ones wake.
  void close(const std::string& reason);
  void set_paused(bool paused);
  // PausedShow::Block: waits up to `timeout` until a show() would not wait for
  // the pause (resumed, a step, closed); true then, and at once for the other policies.
  bool wait_unblocked_for(std::chrono::milliseconds timeout);
  void step();

  struct Counters {
    std::uint64_t submitted = 0, dropped = 0;
    std::uint64_t last_sequence = 0;  // of the newest frame handed in
  };
  Counters counters() const;
  std::string memory_text() const;
  std::size_t size() const noexcept { return slots_.size(); }
  const std::string& name() const noexcept { return options_.name; }
  // The tile it feeds (Viewer::show's `stream`; empty: unnamed), for the
  // panel. Any thread.
  void set_stream(std::string stream);
  std::string stream() const;

  // --- display thread, its context current -------------------------------------
  // The newest pending frame, made visible to the display's later GL commands
  // (glWaitSync on its fence); nullptr when none. Frees the previously shown
  // slot first (waiting, bounded, for its upload fence).
  PushSlot* take();
  // After the upload from `slot` was issued: fences it.
  void give_back(PushSlot& slot);
  // Frees the shown slot if its upload is done (does not wait).
  void reclaim();
  // The display's description of a slot's frame: MemoryKind::GlBuffer, planes at offsets.
  Frame frame_of(const PushSlot& slot) const;
  // The display is going: a shown or taken slot becomes Free (its fences stay
  // for the destructor, which deletes them on the worker).
  void detach_display() noexcept;

 private:
  PushSlot& claim();
  void wait_while_paused(std::unique_lock<std::mutex>& lock);
  void prepare(PushSlot& slot, const FrameLayout& layout, bool gl_copy = false);
  void forget_fences(PushSlot& slot);
  void ensure_buffer(PushSlot& slot, std::size_t bytes);
  void decide_memory(std::size_t bytes);
  void make_host_buffer(PushSlot& slot, std::size_t size);
  void copy_in(PushSlot& slot, const Frame& frame, CudaStream stream);
  void copy_from_gl(PushSlot& slot, const Frame& frame);
  std::optional<media::OverlayFrame> copy_cuda_layers(PushSlot& slot, const media::OverlayFrame& overlays, CudaStream stream);
  void ensure_layer_buffer(LayerBuffer& b, std::size_t bytes);
  void publish(PushSlot& slot, const media::OverlayFrame& overlays, std::int64_t index, double timestamp,
               std::chrono::steady_clock::time_point started, double map_ms);
  void release_unpublished(PushSlot& slot) noexcept;
  void check_frame(const Frame& frame) const;
  // InvalidFrame past the display's GL_MAX_TEXTURE_SIZE (texture_size_refusal).
  void check_size(std::uint32_t width, std::uint32_t height) const;
  CudaCopier& copier();
  bool free_shown_if_done(bool wait);

  std::shared_ptr<GlShare> share_;  // first: destroyed last (the worker outlives the slots)
  GlRingOptions options_;
  PausedShow paused_show_;
  std::function<void()> wake_;
  std::mutex copier_mutex_;
  std::unique_ptr<CudaCopier> copier_;  // made at the first CUDA copy or CUDA mapping
  std::mutex copy_mutex_;               // one producer at a time on the stream
  mutable std::mutex alloc_mutex_;      // buffer (re)allocation; memory_, fallback_reason_

  std::vector<std::unique_ptr<PushSlot>> slots_;
  SlotRing ring_;  // the slots' states, drops and counters

  mutable std::mutex mutex_;  // pause / step credits, shown_
  std::condition_variable cv_;
  PushSlot* shown_ = nullptr;  // the slot the display holds
  bool closed_ = false;        // (the ring's own close refuses claims and publishes)
  std::string closed_reason_;
  bool paused_ = false;
  std::uint64_t step_credits_ = 0;
  std::optional<MemoryKind> memory_;  // decided by the first buffer (Auto: CUDA or host); alloc_mutex_
  std::string fallback_reason_;       // alloc_mutex_
  mutable std::mutex stream_mutex_;
  std::string stream_;  // stream_mutex_
};

}  // namespace handoff::view
