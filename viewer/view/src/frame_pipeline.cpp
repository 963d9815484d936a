#include "frame_pipeline.hpp"

#include <algorithm>
#include <chrono>

#include <handoff/error.hpp>
#include <handoff/log.hpp>
#include <handoff/media/error.hpp>

#include "bounded_wait.hpp"

namespace handoff::view {
FramePipeline::FramePipeline(GlWorker& worker, std::unique_ptr<media::FrameSource> source, GlRingOptions ring,
                             bool loop, std::optional<media::SceneOptions> scene,
                             std::function<void(const std::string&)> bad_frame,
                             std::function<void(const std::string&)> input_warning)
    : worker_(worker),
      info_(source ? source->info() : media::SourceInfo{}),
      source_(std::move(source)),
      loop_(loop),
      bad_frame_(std::move(bad_frame)),
      input_warning_(std::move(input_warning)),
      recording_(dynamic_cast<const media::RecordingSource*>(source_.get())) {
  if (!source_) throw UsageError("FramePipeline: no source");
  SlotRingOptions ro =
      slot_ring_options(ring, RingOrder::Fifo, "frame pipeline of '" + info_.name + "'", "FramePipeline");
  endless_seekable_ = scene.has_value();
  const std::size_t ring_size = ring.slots;
  layout_ = FrameLayout::contiguous(info_.format, info_.width, info_.height, 256);
  layout_.colorimetry = info_.colorimetry;
  const std::size_t size = layout_.buffer_bytes();
  CudaGlOptions co = write_discard(ring.interop);
  std::string cuda_refused;
  for (std::size_t i = 0; i < ring_size; ++i) {
    GlBuffer buffer(worker_, size);
    auto make = [&] {
      try {
        return CudaGlBuffer(worker_, buffer, co);
      } catch (const Error& e) {
        if (co.backend != MapBackend::Auto) throw;
        // CUDA is there but cannot share this GL's buffers (another GPU, a
        // refused registration): the host path still works. Say so once.
        cuda_refused = e.what();
        log(LogLevel::Warning, std::string("frame path: using host-mapped buffers: ") + e.what());
        co.backend = MapBackend::Host;
        return CudaGlBuffer(worker_, buffer, co);
      }
    };
    CudaGlBuffer interop = make();
    slots_.push_back(std::make_unique<FrameSlot>(i, std::move(buffer), std::move(interop)));
  }
  ro.reuse_gate = [this](std::size_t i) { wait_for_upload(*slots_[i]); };
  ring_ = std::make_unique<SlotRing>(std::move(ro));
  const CudaGlBuffer& first = slots_.front()->interop;
  if (first.uses_cuda()) {
    cuda_ = std::make_unique<CudaProducer>(info_, std::move(scene), co.cuda_device);
    memory_text_ = "CUDA-mapped GL buffers (" + cuda_->description() + ")";
  } else {
    memory_text_ = "host-mapped GL buffers (" + (cuda_refused.empty() ? first.fallback_reason() : cuda_refused) + ")";
  }
  producer_ = std::thread([this] { produce(); });
}

FramePipeline::~FramePipeline() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  ring_->close("the frame pipeline stopped");  // wakes a producer waiting for a slot
  cv_.notify_all();
  if (producer_.joinable()) producer_.join();
  // Fences made on the worker may be deleted on this context (same share group).
  slots_.clear();
}

// The last upload from this buffer must be finished before it is rewritten.
void FramePipeline::wait_for_upload(FrameSlot& slot) {
  worker_.run([&] {
    slot.written = GlFence{};  // left over when a seek dropped the slot unread
    wait_for_fence(slot.read_done, [&] { return "GL upload fence of frame slot " + std::to_string(slot.number); });
    slot.read_done = GlFence{};
  });
}

void FramePipeline::write_frame(FrameSlot& slot, bool& ok, std::int64_t& index) {
  using clock = std::chrono::steady_clock;
  const auto m0 = clock::now();
  Mapping m = slot.interop.map();
  const auto m1 = clock::now();
  const Frame planes = layout_.describe(m.memory(), {m.data()});
  auto* luma = static_cast<std::uint8_t*>(planes.luma().data);
  auto* chroma = static_cast<std::uint8_t*>(planes.chroma().data);
  auto write_once = [&] {
    if (m.memory() == MemoryKind::Cuda) {
      if (!cuda_) throw Error("FramePipeline: the buffers mapped to CUDA after the ring chose host memory");
      return cuda_->write(*source_, planes, index);
    }
    const media::FrameWriteTarget target{luma, planes.luma().pitch, chroma, planes.chroma().pitch,
                                         static_cast<std::uint8_t*>(planes.planes[2].data), planes.planes[2].pitch};
    index = source_->position();
    return source_->read_into(target);
  };
  ok = write_once();
  if (!ok && loop_ && info_.frame_count > 0) {
    source_->seek(0);
    ok = write_once();
  }
  // Unmap and fence in one hop: the fence follows the unmap on the worker.
  const auto u0 = clock::now();
  slot.written = worker_.run([&] {
    m.unmap();
    return GlFence::insert();
  });
  slot.map_ms = std::chrono::duration<double, std::milli>((m1 - m0) + (clock::now() - u0)).count();
}

// A free slot, its upload fence passed (the ring's reuse gate); waits in
// slices of wait_limit() for as long as the display keeps every slot (a paused
// display). nullopt once the destructor closed the ring.
std::optional<std::size_t> FramePipeline::claim_slot() {
  try {
    for (;;)
      if (auto s = ring_->claim_for(wait_limit())) return s;
  } catch (const RingClosed&) {
    return std::nullopt;
  }
}

// The producer thread. Its wait for work (a free slot, a seek, stop) is not
// bounded: it idles while the display is paused, and nobody waits on it.
void FramePipeline::produce() noexcept {
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || seek_to_ >= 0 || (!ended_ && !error_); });
    if (stop_) return;
    const std::uint64_t gen = generation_;
    std::optional<std::size_t> slot;
    std::int64_t before = -1;  // the source's position before this frame
    try {
      if (seek_to_ >= 0) {
        apply_seek(lock);
        continue;
      }
      lock.unlock();
      slot = claim_slot();
      lock.lock();
      if (!slot) return;  // stopped
      if (stop_ || seek_to_ >= 0 || gen != generation_) {  // came while waiting: the slot goes back
        ring_->unclaim(*slot);
        continue;
      }
      lock.unlock();
      before = source_->position();
      fill_slot(*slots_[*slot], gen, lock);
    } catch (...) {
      if (!lock.owns_lock()) lock.lock();
      // The slot goes back to the ring, whatever failed (a refused reuse gate gave it back already).
      if (slot && ring_->info(*slot).state == SlotRing::State::Claimed) ring_->unclaim(*slot);
      // An error from before a seek() belongs to frames nobody will see. A
      // bad frame the source skipped past (a compressed video going on at its
      // next keyframe) is logged, and playback goes on.
      if (gen == generation_ && !skipped_bad_frame(before)) error_ = std::current_exception();
    }
    tell_warnings();
    cv_.notify_all();
  }
}

// The recording's new warnings (those from its open too, at the first frame).
void FramePipeline::tell_warnings() {
  if (!recording_ || !input_warning_) return;
  try {
    const std::vector<std::string>& w = recording_->warnings();
    for (; warnings_told_ < w.size(); ++warnings_told_) input_warning_(w[warnings_told_]);
  } catch (...) {  // only diagnostics: never stops playback
  }
}

// True when the exception in flight is a ParseError after which the source
// moved past the frame it failed on; logs it then, the first time that frame
// is read.
bool FramePipeline::skipped_bad_frame(std::int64_t before) {
  if (before < 0 || source_->position() <= before) return false;
  try {
    throw;
  } catch (const media::ParseError& e) {
    if (!bad_told_.insert(before).second) return true;
    log(LogLevel::Error, e.what());
    if (bad_frame_) bad_frame_(e.what());
    return true;
  } catch (...) {
    return false;
  }
}

// Seeks the source (unlocked: a file seek can take a while).
void FramePipeline::apply_seek(std::unique_lock<std::mutex>& lock) {
  const std::int64_t to = seek_to_;
  seek_to_ = -1;
  ended_ = false;
  lock.unlock();
  source_->seek(to);
  lock.lock();
}

// Writes the next frame into `slot` (called unlocked; returns locked) and
// queues it, or marks the end of the source.
void FramePipeline::fill_slot(FrameSlot& slot, std::uint64_t gen, std::unique_lock<std::mutex>& lock) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  bool ok = false;
  std::int64_t index = -1;
  write_frame(slot, ok, index);
  if (ok) {
    slot.index = index;
    slot.has_overlays = source_->overlays_for(index, slot.overlays);
    slot.produce_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    slot.generation = gen;
  }
  lock.lock();
  if (!ok) {
    ring_->unclaim(slot.number);
    ended_ = true;
  } else if (gen != generation_) {
    ring_->unclaim(slot.number);  // a seek happened while writing: drop it
  } else {
    ring_->publish(slot.number);
  }
}

FrameSlot* FramePipeline::next(bool wait) {
  std::unique_lock lock(mutex_);
  for (;;) {
    // Frames the producer finished before it failed are shown first, in
    // order; the error surfaces once they are used up.
    if (const std::optional<std::size_t> taken = ring_->take()) {
      FrameSlot* s = slots_[*taken].get();
      lock.unlock();
      s->written.gpu_wait();   // this context's commands run after the producer's unmap
      s->written = GlFence{};
      return s;
    }
    if (error_) std::rethrow_exception(error_);
    if (ended_ || !wait) return nullptr;
    wait_bounded(cv_, lock, [&] { return ring_->has_ready() || error_ || ended_; },
                 [&] { return "the frame producer of '" + info_.name + "' (next frame)"; });
  }
}

void FramePipeline::release(FrameSlot* slot) {
  if (!slot) return;
  slot->read_done = GlFence::insert();
  ring_->release(slot->number);  // the producer's claim waits for the fence (the reuse gate)
}

void FramePipeline::seek(std::int64_t index) {
  if (!seekable()) return;
  index = info_.frame_count > 0 ? std::clamp<std::int64_t>(index, 0, info_.frame_count - 1)
                                 : std::max<std::int64_t>(index, 0);
  std::lock_guard lock(mutex_);
  ++generation_;
  ring_->discard_ready();
  seek_to_ = index;
  ended_ = false;
  error_ = nullptr;  // playback goes on from `index`
  cv_.notify_all();
}

bool FramePipeline::finished() const {
  std::lock_guard lock(mutex_);
  return ended_ && !ring_->has_ready();
}

Frame FramePipeline::frame_of(const FrameSlot& s) const {
  Frame f = layout_.describe(MemoryKind::GlBuffer);
  f.gl_buffer = s.buffer.name();
  f.index = s.index;
  f.timestamp = info_.rate.value() > 0 ? double(s.index) / info_.rate.value() : 0.0;
  return f;
}

}  // namespace handoff::view
