#include "gl/gl_buffer_state.hpp"

#include <glad/gl.h>

#include <handoff/detail/gl_worker_detail.hpp>
#include <handoff/gl_handles.hpp>
#include <handoff/gl_check.hpp>

#include <string>

namespace handoff {

using detail::GlBufferState;

GlBuffer::GlBuffer(GlWorker& worker, std::size_t size, GlBufferStorage storage) {
  if (size == 0) throw UsageError("GlBuffer: size must be above 0");
  if (size > static_cast<std::size_t>(PTRDIFF_MAX))
    throw UsageError("GlBuffer: size " + std::to_string(size) + " does not fit GLsizeiptr");
  auto state = std::make_shared<GlBufferState>();
  state->core = worker.core();
  state->size = size;
  state->storage = storage;
  worker.run([&] {
    detail::assert_on_worker(*state->core, "GlBuffer::GlBuffer");
    GLuint name = 0;
    HANDOFF_GL_CHECK(glCreateBuffers(1, &name));
    UniqueGlBuffer buffer(name);
    GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_WRITE_BIT | GL_DYNAMIC_STORAGE_BIT;
    if (storage == GlBufferStorage::Persistent) flags |= GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    HANDOFF_GL_CHECK(glNamedBufferStorage(name, static_cast<GLsizeiptr>(size), nullptr, flags),
                     std::to_string(size) + " bytes");
    const std::uint64_t id = detail::track(*state->core, [name] { GlBufferDeleter{}(name); });
    state->resource = detail::UniqueWorkerResource(id, {state->core});
    state->name = buffer.release();  // the worker's resource registry deletes it now
  });
  state_ = std::move(state);
}

unsigned GlBuffer::name() const noexcept { return state_ ? state_->name : 0; }
std::size_t GlBuffer::size() const noexcept { return state_ ? state_->size : 0; }
GlBufferStorage GlBuffer::storage() const noexcept { return state_ ? state_->storage : GlBufferStorage::Default; }

namespace {
void check_range(const char* what, const detail::GlBufferState* s, std::size_t offset, std::size_t n) {
  if (!s) throw UsageError(std::string(what) + ": empty GlBuffer");
  if (offset > s->size || n > s->size - offset)
    throw UsageError(std::string(what) + ": range [" + std::to_string(offset) + ", +" + std::to_string(n) +
                     ") is outside the buffer of " + std::to_string(s->size) + " bytes");
}
}  // namespace

void GlBuffer::write(std::size_t offset, std::span<const std::byte> bytes) const {
  check_range("GlBuffer::write", state_.get(), offset, bytes.size());
  if (bytes.empty()) return;
  detail::run_on(*state_->core, [&] {
    HANDOFF_GL_CHECK(glNamedBufferSubData(state_->name, static_cast<GLintptr>(offset),
                                          static_cast<GLsizeiptr>(bytes.size()), bytes.data()));
  });
}

void GlBuffer::read(std::size_t offset, std::span<std::byte> out) const {
  check_range("GlBuffer::read", state_.get(), offset, out.size());
  if (out.empty()) return;
  detail::run_on(*state_->core, [&] {
    HANDOFF_GL_CHECK(glGetNamedBufferSubData(state_->name, static_cast<GLintptr>(offset),
                                             static_cast<GLsizeiptr>(out.size()), out.data()));
  });
}

}  // namespace handoff
