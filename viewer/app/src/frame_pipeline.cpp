#include "frame_pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <handoff/error.hpp>
#include <handoff/log.hpp>
#include <handoff/testing.hpp>

namespace handoff::viewer {
namespace {

std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

}  // namespace

FramePipeline::FramePipeline(GlWorker& worker, std::unique_ptr<FrameSource> source, std::size_t ring_size,
                             bool loop, MapBackend backend, std::optional<SceneOptions> scene)
    : worker_(worker), info_(source ? source->info() : SourceInfo{}), source_(std::move(source)), loop_(loop) {
  if (!source_) throw UsageError("FramePipeline: no source");
  if (ring_size < 3) throw UsageError("FramePipeline: the ring needs at least 3 slots");
  endless_seekable_ = scene.has_value();
  const std::size_t bps = bytes_per_sample(info_.format);
  const std::size_t luma_pitch = align_up(std::size_t(info_.width) * bps, 64);
  const std::size_t chroma_pitch = align_up(std::size_t(chroma_width(info_.width)) * 2 * bps, 64);
  const std::size_t chroma_offset = align_up(luma_pitch * info_.height, 256);
  const std::size_t size = chroma_offset + chroma_pitch * chroma_height(info_.height);
  CudaGlOptions co;
  co.access = CudaGlAccess::WriteDiscard;
  co.backend = backend;
  // Test drivers report a GPU identity GL cannot match (tests only).
  if (const char* e = std::getenv("HANDOFF_VIEW_NO_GPU_CHECK"); e && std::string(e) == "1")
    handoff::testing::skip_same_gpu_check(worker_);
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
    auto s = std::make_unique<FrameSlot>(std::move(buffer), std::move(interop));
    s->luma_pitch = luma_pitch;
    s->chroma_offset = chroma_offset;
    s->chroma_pitch = chroma_pitch;
    free_.push_back(s.get());
    slots_.push_back(std::move(s));
  }
  const CudaGlBuffer& first = slots_.front()->interop;
  if (first.uses_cuda()) {
    cuda_ = std::make_unique<CudaProducer>(info_, std::move(scene), 0);
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
  cv_.notify_all();
  if (producer_.joinable()) producer_.join();
  // Fences made on the worker may be deleted on this context (same share group).
  slots_.clear();
}

void FramePipeline::write_frame(FrameSlot& slot, bool& ok, std::int64_t& index) {
  // The last upload from this buffer must be finished before it is rewritten.
  worker_.run([&] {
    slot.written = GlFence{};  // left over when a seek dropped the slot unread
    if (slot.read_done) {
      while (!slot.read_done.client_wait(1'000'000'000ull)) {
      }
      slot.read_done = GlFence{};
    }
  });
  using clock = std::chrono::steady_clock;
  const auto m0 = clock::now();
  Mapping m = slot.interop.map();
  const auto m1 = clock::now();
  auto* base = static_cast<std::uint8_t*>(m.data());
  auto write_once = [&] {
    if (m.memory() == MemoryKind::Cuda) {
      if (!cuda_) throw Error("FramePipeline: the buffers mapped to CUDA after the ring chose host memory");
      return cuda_->write(*source_, base, slot.luma_pitch, base + slot.chroma_offset, slot.chroma_pitch, index);
    }
    const FrameWriteTarget target{base, slot.luma_pitch, base + slot.chroma_offset, slot.chroma_pitch};
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

void FramePipeline::produce() noexcept {
  using clock = std::chrono::steady_clock;
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || seek_to_ >= 0 || (!ended_ && !error_ && !free_.empty()); });
    if (stop_) return;
    try {
      if (seek_to_ >= 0) {
        const std::int64_t to = seek_to_;
        seek_to_ = -1;
        ended_ = false;
        lock.unlock();
        source_->seek(to);
        lock.lock();
        continue;
      }
      FrameSlot* slot = free_.front();
      free_.pop_front();
      const std::uint64_t gen = generation_;
      lock.unlock();
      const auto t0 = clock::now();
      bool ok = false;
      std::int64_t index = -1;
      write_frame(*slot, ok, index);
      if (ok) {
        slot->index = index;
        slot->has_overlays = source_->overlays_for(index, slot->overlays);
        slot->produce_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
        slot->generation = gen;
      }
      lock.lock();
      if (!ok) {
        free_.push_front(slot);
        ended_ = true;
      } else if (gen != generation_) {
        free_.push_back(slot);  // a seek happened while writing: drop it
      } else {
        ready_.push_back(slot);
      }
      cv_.notify_all();
    } catch (...) {
      if (!lock.owns_lock()) lock.lock();
      error_ = std::current_exception();
      cv_.notify_all();
    }
  }
}

FrameSlot* FramePipeline::next(bool wait) {
  std::unique_lock lock(mutex_);
  for (;;) {
    // Frames the producer finished before it failed are shown first, in
    // order; the error surfaces once they are used up.
    if (!ready_.empty()) {
      FrameSlot* s = ready_.front();
      ready_.pop_front();
      lock.unlock();
      s->written.gpu_wait();   // this context's commands run after the producer's unmap
      s->written = GlFence{};
      return s;
    }
    if (error_) std::rethrow_exception(error_);
    if (ended_ || !wait) return nullptr;
    cv_.wait(lock);
  }
}

void FramePipeline::release(FrameSlot* slot) {
  if (!slot) return;
  slot->read_done = GlFence::insert();
  {
    std::lock_guard lock(mutex_);
    free_.push_back(slot);
  }
  cv_.notify_all();
}

void FramePipeline::seek(std::int64_t index) {
  if (!seekable()) return;
  index = info_.frame_count > 0 ? std::clamp<std::int64_t>(index, 0, info_.frame_count - 1)
                                 : std::max<std::int64_t>(index, 0);
  std::lock_guard lock(mutex_);
  ++generation_;
  while (!ready_.empty()) {
    free_.push_back(ready_.front());
    ready_.pop_front();
  }
  seek_to_ = index;
  ended_ = false;
  cv_.notify_all();
}

bool FramePipeline::finished() const {
  std::lock_guard lock(mutex_);
  return ended_ && ready_.empty();
}

Frame FramePipeline::frame_of(const FrameSlot& s) const {
  Frame f;
  f.format = info_.format;
  f.width = info_.width;
  f.height = info_.height;
  f.colorimetry = info_.colorimetry;
  f.memory = MemoryKind::GlBuffer;
  f.gl_buffer = s.buffer.name();
  f.planes[0] = {nullptr, 0, s.luma_pitch, info_.width, info_.height, 1};
  f.planes[1] = {nullptr, s.chroma_offset, s.chroma_pitch, chroma_width(info_.width),
                 chroma_height(info_.height), 2};
  f.index = s.index;
  f.timestamp = info_.rate.value() > 0 ? double(s.index) / info_.rate.value() : 0.0;
  return f;
}

}  // namespace handoff::viewer
