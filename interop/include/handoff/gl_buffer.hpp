#pragma once
// GlBuffer: a GL buffer object with immutable storage (glNamedBufferStorage),
// made on a GlWorker's context, usable as a pixel-unpack buffer by every
// context of its share group, and registrable with CUDA (cuda_gl_buffer.hpp).
//
//   handoff::GlBuffer pbo(worker, 1920 * 1080 * 3 / 2);   // an NV12 frame
//   glBindBuffer(GL_PIXEL_UNPACK_BUFFER, pbo.name());     // on a GL thread
#include <handoff/gl_worker.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace handoff {

namespace detail {
struct GlBufferState;
}

// Storage flags beyond the defaults (GL_MAP_READ_BIT | GL_MAP_WRITE_BIT |
// GL_DYNAMIC_STORAGE_BIT, what mapping and sub-data writes need).
enum class GlBufferStorage : std::uint8_t {
  Default,
  Persistent,  // adds GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT
};

// Ownership: a handle to a shared buffer; copies share it, the GL object is
// deleted (on the worker, queued from any thread) when the last copy, every
// CudaGlBuffer registered on it and every Frame made from it are gone. After
// the worker shut down, the object is already deleted and destruction does
// nothing. Thread safety: all methods may be called from any thread.
class GlBuffer {
 public:
  GlBuffer() = default;  // empty
  // Creates the buffer on the worker (one hop). Throws UsageError for size 0,
  // handoff::Error (Api::Gl) when GL refuses (GL_OUT_OF_MEMORY, ...),
  // WorkerStopped when the worker has stopped.
  GlBuffer(GlWorker& worker, std::size_t size, GlBufferStorage storage = GlBufferStorage::Default);

  unsigned name() const noexcept;  // GL name; 0 when empty
  std::size_t size() const noexcept;
  GlBufferStorage storage() const noexcept;
  explicit operator bool() const noexcept { return state_ != nullptr; }
  // Keeps the GL object alive (Frame::owner).
  std::shared_ptr<const void> keep_alive() const noexcept { return state_; }
  // Drops this handle (the object goes when the last holder does).
  void reset() noexcept { state_.reset(); }

  // Convenience copies through the worker (glNamedBufferSubData /
  // glGetNamedBufferSubData). Throw UsageError when the range is outside the buffer.
  void write(std::size_t offset, std::span<const std::byte> bytes) const;
  void read(std::size_t offset, std::span<std::byte> out) const;

  const std::shared_ptr<detail::GlBufferState>& state() const noexcept { return state_; }

 private:
  std::shared_ptr<detail::GlBufferState> state_;
};

}  // namespace handoff
