#pragma once
// The frame path: a producer thread writes frames from a FrameSource straight
// into a ring of GL pixel-buffer objects mapped into host memory (persistent,
// coherent), while the render thread uploads the previous ones to textures.
// A slot goes back to the producer only when the GL fence placed after its
// upload has signalled, so producing and drawing overlap without a slot being
// overwritten while the GPU still reads it. Nothing is allocated per frame
// once the ring is full (overlay vectors keep their capacity).
//
// Thread safety: construct, call next()/release()/seek()/recycle() and destroy
// on the render thread with its GL context current. The producer thread makes
// no GL call.
#include <glad/gl.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <handoff/frame.hpp>
#include <handoff/viewer/frame_source.hpp>
#include <handoff/viewer/overlay.hpp>

namespace handoff::viewer {

struct FrameSlot {
  GLuint buffer = 0;
  std::uint8_t* host = nullptr;  // the buffer's persistent mapping
  std::size_t size = 0;
  std::size_t luma_pitch = 0, chroma_offset = 0, chroma_pitch = 0;
  std::int64_t index = -1;       // frame number in the source
  double produce_ms = 0.0;       // producer's time writing this frame
  bool has_overlays = false;     // the source's own (ground-truth) overlays
  OverlayFrame overlays;
  GLsync fence = nullptr;        // the upload's reads are done when signalled
  std::uint64_t generation = 0;
};

class FramePipeline {
 public:
  // Takes the source (used only by the producer thread from now on).
  FramePipeline(std::unique_ptr<FrameSource> source, std::size_t ring_size = 3, bool loop = true);
  ~FramePipeline();
  FramePipeline(const FramePipeline&) = delete;
  FramePipeline& operator=(const FramePipeline&) = delete;

  const SourceInfo& info() const { return info_; }
  bool seekable() const { return info_.frame_count > 0; }
  std::size_t ring_size() const { return slots_.size(); }

  // The next frame in order; nullptr when none is ready (wait = false) or the
  // source ended (finished() then true). Rethrows the producer's error (a
  // ParseError naming the file and frame) on the render thread.
  FrameSlot* next(bool wait);
  // Hands a slot back after its upload was submitted: fenced, recycled later.
  void release(FrameSlot* slot);
  // Returns fenced slots whose GPU reads finished to the producer.
  void recycle(bool block = false);
  // The next frame next() returns is `index` (clamped to the source).
  void seek(std::int64_t index);
  bool finished() const;

  // The frame description of a slot: MemoryKind::GlBuffer, planes at offsets.
  Frame frame_of(const FrameSlot& slot) const;

 private:
  void produce() noexcept;

  SourceInfo info_;
  std::unique_ptr<FrameSource> source_;
  bool loop_;
  std::vector<std::unique_ptr<FrameSlot>> slots_;
  std::vector<FrameSlot*> fenced_;  // render thread only

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<FrameSlot*> free_, ready_;
  std::uint64_t generation_ = 0;
  std::int64_t seek_to_ = -1;
  bool stop_ = false;
  bool ended_ = false;
  std::exception_ptr error_;
  std::thread producer_;
};

}  // namespace handoff::viewer
