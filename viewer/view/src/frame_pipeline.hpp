#pragma once
// The frame path. A producer thread writes frames from a FrameSource into a
// ring of interop buffers (handoff::CudaGlBuffer over a GlBuffer, made on the
// GL worker whose context shares objects with the renderer's): it maps a slot
// (a CUDA pointer where CUDA works, else the buffer mapped into host memory),
// writes the frame straight into it, unmaps it and places a GL fence on the
// worker. The render thread makes its own context wait for that fence, uploads
// the planes from the buffer to the textures (GPU-side), and fences the
// upload; the producer waits for that fence before it maps the slot again.
// With three or more slots, producing and drawing overlap.
//
// The slots' states are handoff's one slot ring (SlotRing, in order: every
// frame is drawn, oldest first; the producer waits for a free slot). Its
// reuse gate is the upload fence above; a seek discards the ready frames.
//
// Thread safety: construct, call next()/release()/seek()/finished() and
// destroy on the render thread with its context current. The worker must
// outlive the pipeline.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <handoff/cuda_gl_buffer.hpp>
#include <handoff/frame.hpp>
#include <handoff/gl_buffer.hpp>
#include <handoff/gl_worker.hpp>
#include <handoff/media/frame_source.hpp>
#include <handoff/media/overlay.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/media/scene.hpp>
#include <handoff/slot_ring.hpp>

#include "cuda_producer.hpp"
#include "gl_ring_options.hpp"

namespace handoff::view {

struct FrameSlot {
  FrameSlot(std::size_t n, GlBuffer b, CudaGlBuffer i) : number(n), buffer(std::move(b)), interop(std::move(i)) {}
  std::size_t number;         // its place in the ring
  GlBuffer buffer;            // luma then chroma, at the pipeline's layout()
  CudaGlBuffer interop;       // how the producer maps it
  std::int64_t index = -1;    // frame number in the source
  double produce_ms = 0.0;    // map + write + unmap, on the producer
  double map_ms = 0.0;        // of which mapping and unmapping (worker hops, driver calls)
  bool has_overlays = false;  // the source's own (ground-truth) overlays
  media::OverlayFrame overlays;
  GlFence written;            // worker: the producer's writes are done (unmapped)
  GlFence read_done;          // render context: the upload from this buffer is done
  std::uint64_t generation = 0;
};

class FramePipeline {
 public:
  // Takes the source (used only by the producer thread from now on). `ring`:
  // its slots and how their buffers map (name default "frame pipeline of
  // 'SOURCE'"); `loop`: a finite source starts over at its end; `scene`: the
  // scene's options when the source is the built-in scene (the CUDA producer
  // then renders it with the kernel, and it is seekable); `bad_frame`, when
  // set, is told (on the producer thread) each error of a frame the source
  // went on past (a malformed recording message: logged, playback goes on).
  FramePipeline(GlWorker& worker, std::unique_ptr<media::FrameSource> source, GlRingOptions ring = {},
                bool loop = true, std::optional<media::SceneOptions> scene = std::nullopt,
                std::function<void(const std::string&)> bad_frame = {},
                std::function<void(const std::string&)> input_warning = {});
  ~FramePipeline();
  FramePipeline(const FramePipeline&) = delete;
  FramePipeline& operator=(const FramePipeline&) = delete;

  const media::SourceInfo& info() const { return info_; }
  // Files, and the scene (a pure function of the frame index).
  bool seekable() const { return info_.frame_count > 0 || endless_seekable_; }
  std::size_t ring_size() const { return slots_.size(); }
  // "CUDA device 0" or "host (why CUDA is not used)".
  const std::string& memory_text() const { return memory_text_; }

  // The next frame in order, its writes ordered before this context's later
  // commands; nullptr when none is ready (wait = false) or the source ended
  // (finished() then true). Rethrows the producer's error (a ParseError naming
  // the file and frame) here, until a seek(). wait = true: WaitTimeout when
  // the producer has no frame within handoff::wait_limit().
  FrameSlot* next(bool wait);
  // After the upload from `slot` was issued: fences it and hands it back.
  void release(FrameSlot* slot);
  // The next frame next() returns is `index` (clamped to the source). Clears
  // a producer error: playback goes on from `index`.
  void seek(std::int64_t index);
  bool finished() const;

  // The frame description of a slot: MemoryKind::GlBuffer, planes at offsets.
  Frame frame_of(const FrameSlot& slot) const;

 private:
  void produce() noexcept;
  std::optional<std::size_t> claim_slot();  // nullopt: stopped
  bool skipped_bad_frame(std::int64_t before);
  void apply_seek(std::unique_lock<std::mutex>& lock);
  void fill_slot(FrameSlot& slot, std::uint64_t generation, std::unique_lock<std::mutex>& lock);
  void write_frame(FrameSlot& slot, bool& ok, std::int64_t& index);
  void wait_for_upload(FrameSlot& slot);  // the ring's reuse gate

  GlWorker& worker_;
  media::SourceInfo info_;
  FrameLayout layout_;  // every slot's: luma then chroma in one buffer
  std::unique_ptr<media::FrameSource> source_;
  bool loop_;
  std::function<void(const std::string&)> bad_frame_;
  std::set<std::int64_t> bad_told_;  // frames reported bad: read again (a seek, a loop), told once (producer thread)
  // A recording's warnings() told to input_warning_ (producer thread), each once.
  std::function<void(const std::string&)> input_warning_;
  const media::RecordingSource* recording_ = nullptr;
  std::size_t warnings_told_ = 0;
  void tell_warnings();
  bool endless_seekable_ = false;
  std::string memory_text_;
  std::unique_ptr<CudaProducer> cuda_;  // when the buffers map to CUDA
  std::vector<std::unique_ptr<FrameSlot>> slots_;
  std::unique_ptr<SlotRing> ring_;  // the slots' states (made once slots_ is)

  // Guards what follows; the ring's calls are made under it, never the reverse.
  mutable std::mutex mutex_;
  std::condition_variable cv_;  // the producer's work; a published frame, an error or the end for next()
  std::uint64_t generation_ = 0;
  std::int64_t seek_to_ = -1;
  bool stop_ = false;
  bool ended_ = false;
  std::exception_ptr error_;
  std::thread producer_;
};

}  // namespace handoff::view
