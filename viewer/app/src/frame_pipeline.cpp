#include "frame_pipeline.hpp"

#include <algorithm>
#include <chrono>

#include <handoff/error.hpp>
#include <handoff/log.hpp>

#include "gl_check.hpp"

namespace handoff::viewer {
namespace {

std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

}  // namespace

FramePipeline::FramePipeline(std::unique_ptr<FrameSource> source, std::size_t ring_size, bool loop)
    : info_(source ? source->info() : SourceInfo{}), source_(std::move(source)), loop_(loop) {
  if (!source_) throw UsageError("FramePipeline: no source");
  if (ring_size < 3) throw UsageError("FramePipeline: the ring needs at least 3 slots");
  const std::size_t bps = bytes_per_sample(info_.format);
  const std::size_t luma_pitch = align_up(std::size_t(info_.width) * bps, 64);
  const std::size_t chroma_pitch = align_up(std::size_t(chroma_width(info_.width)) * 2 * bps, 64);
  const std::size_t chroma_offset = align_up(luma_pitch * info_.height, 256);
  const std::size_t size = chroma_offset + chroma_pitch * chroma_height(info_.height);
  const GLbitfield flags = GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
  try {
    for (std::size_t i = 0; i < ring_size; ++i) {
      auto s = std::make_unique<FrameSlot>();
      glCreateBuffers(1, &s->buffer);
      slots_.push_back(std::move(s));
      FrameSlot& slot = *slots_.back();
      glNamedBufferStorage(slot.buffer, static_cast<GLsizeiptr>(size), nullptr, flags);
      slot.host = static_cast<std::uint8_t*>(
          glMapNamedBufferRange(slot.buffer, 0, static_cast<GLsizeiptr>(size), flags));
      HANDOFF_VIEW_GL(glMapNamedBufferRange);
      if (!slot.host)
        throw Error(Api::Gl, "glMapNamedBufferRange", 0, "", "persistent mapping failed", HANDOFF_WHERE);
      slot.size = size;
      slot.luma_pitch = luma_pitch;
      slot.chroma_offset = chroma_offset;
      slot.chroma_pitch = chroma_pitch;
      free_.push_back(&slot);
    }
  } catch (...) {
    for (auto& s : slots_) {
      if (s->host) glUnmapNamedBuffer(s->buffer);
      glDeleteBuffers(1, &s->buffer);
    }
    throw;
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
  for (auto& s : slots_) {
    if (s->fence) glDeleteSync(s->fence);
    glUnmapNamedBuffer(s->buffer);
    glDeleteBuffers(1, &s->buffer);
  }
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
      const FrameWriteTarget target{slot->host, slot->luma_pitch, slot->host + slot->chroma_offset,
                                    slot->chroma_pitch};
      std::int64_t index = source_->position();
      bool ok = source_->read_into(target);
      if (!ok && loop_ && info_.frame_count > 0) {
        source_->seek(0);
        index = source_->position();
        ok = source_->read_into(target);
      }
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
  recycle(false);
  std::unique_lock lock(mutex_);
  for (;;) {
    if (error_) std::rethrow_exception(error_);
    if (!ready_.empty()) {
      FrameSlot* s = ready_.front();
      ready_.pop_front();
      return s;
    }
    if (ended_ || !wait) return nullptr;
    if (free_.empty() && !fenced_.empty()) {
      // Every slot waits on the GPU: let them go, then wait for the producer.
      lock.unlock();
      recycle(true);
      lock.lock();
      continue;
    }
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

void FramePipeline::release(FrameSlot* slot) {
  if (!slot) return;
  if (slot->fence) glDeleteSync(slot->fence);
  slot->fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  glFlush();
  fenced_.push_back(slot);
}

void FramePipeline::recycle(bool block) {
  if (fenced_.empty()) return;
  std::size_t kept = 0;
  bool freed = false;
  for (std::size_t i = 0; i < fenced_.size(); ++i) {
    FrameSlot* s = fenced_[i];
    const GLuint64 timeout = (block && i == 0) ? GLuint64(1'000'000'000) : 0;
    const GLenum r = glClientWaitSync(s->fence, GL_SYNC_FLUSH_COMMANDS_BIT, timeout);
    if (r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED) {
      glDeleteSync(s->fence);
      s->fence = nullptr;
      std::lock_guard lock(mutex_);
      free_.push_back(s);
      freed = true;
    } else {
      if (r == GL_WAIT_FAILED) HANDOFF_VIEW_GL(glClientWaitSync);
      fenced_[kept++] = s;
    }
  }
  fenced_.resize(kept);
  if (freed) cv_.notify_all();
}

void FramePipeline::seek(std::int64_t index) {
  if (!seekable()) return;
  index = std::clamp<std::int64_t>(index, 0, info_.frame_count - 1);
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
  f.gl_buffer = s.buffer;
  f.planes[0] = {nullptr, 0, s.luma_pitch, info_.width, info_.height, 1};
  f.planes[1] = {nullptr, s.chroma_offset, s.chroma_pitch, chroma_width(info_.width),
                 chroma_height(info_.height), 2};
  f.index = s.index;
  f.timestamp = info_.rate.value() > 0 ? double(s.index) / info_.rate.value() : 0.0;
  return f;
}

}  // namespace handoff::viewer
