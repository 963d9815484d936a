#pragma once
// CudaGlBuffer: a GlBuffer registered with CUDA (cuGraphicsGLRegisterBuffer),
// mapped per frame to a CUDA device pointer. Where CUDA is unusable the same
// API maps the buffer into host memory through GL (glMapNamedBufferRange), and
// says so, so a CPU producer takes exactly the same path.
//
//   handoff::CudaGlBuffer luma(worker, luma_pbo, {.access = CudaGlAccess::WriteDiscard});
//   handoff::CudaGlBuffer chroma(worker, chroma_pbo, {.access = CudaGlAccess::WriteDiscard});
//   {
//     auto m = handoff::CudaGlBuffer::map_all({&luma, &chroma});  // one driver call, one worker hop
//     produce(m[0].data, m[1].data);  // CUDA pointers, or host pointers (m.memory())
//   }                                 // unmapped here (one driver call, one hop)
//
// Every context-bound call (register, map, unmap, unregister) runs on the
// worker, whatever the calling thread.
#include <handoff/cuda_stream.hpp>
#include <handoff/frame.hpp>
#include <handoff/gl_buffer.hpp>
#include <handoff/gl_worker.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace handoff {

namespace detail {
struct CudaGlRegistration;
struct MappingState;
}  // namespace detail

// How CUDA will use the buffer (cuGraphicsGLRegisterBuffer flags). In the host
// fallback it picks the glMapNamedBufferRange access bits.
enum class CudaGlAccess : std::uint8_t {
  ReadWrite,     // CU_GRAPHICS_REGISTER_FLAGS_NONE
  ReadOnly,      // CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY: CUDA only reads
  WriteDiscard,  // CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD: CUDA overwrites all of it
};

enum class MapBackend : std::uint8_t {
  Auto,  // CUDA when handoff::cuda::driver() is usable and has the device, else Host
  Cuda,  // CUDA or an error saying why not
  Host,  // always glMapNamedBufferRange
};

struct CudaGlOptions {
  CudaGlAccess access = CudaGlAccess::ReadWrite;
  MapBackend backend = MapBackend::Auto;
  int cuda_device = 0;  // ordinal; its primary context is used
};

// One mapped buffer: a CUDA device pointer (memory == Cuda) or a host pointer
// (memory == Host).
struct MappedRange {
  void* data = nullptr;
  std::size_t size = 0;
  MemoryKind memory = MemoryKind::Host;
  int device = -1;                // CUDA ordinal (Cuda), -1 for Host
  void* cuda_context = nullptr;   // the primary context the pointer belongs to (Cuda)
  unsigned gl_buffer = 0;         // the GL name, for diagnostics
};

class CudaGlBuffer;

// A scoped mapping of one or more buffers (made by map / map_all); unmaps them
// all, in one driver call and one worker hop, when it ends. Move-only.
// Thread safety: may be read and destroyed on any thread; the pointers are
// valid until unmap() or destruction.
class Mapping {
 public:
  Mapping() noexcept;
  Mapping(Mapping&&) noexcept;
  Mapping& operator=(Mapping&& o) noexcept;
  ~Mapping();  // unmap(); errors are logged, never thrown

  std::size_t count() const noexcept;
  const MappedRange& operator[](std::size_t i) const;  // UsageError outside [0, count())
  // The first range's fields (the single-buffer case).
  void* data() const { return (*this)[0].data; }
  std::size_t size() const { return (*this)[0].size; }
  MemoryKind memory() const { return (*this)[0].memory; }
  explicit operator bool() const noexcept;  // mapped now

  // Unmaps now. Throws handoff::Error when the driver refuses (the mapping is
  // then still held, so a retry or the destructor tries again). Does nothing
  // when already unmapped or when the worker has shut down (which unmapped).
  void unmap();

 private:
  friend class CudaGlBuffer;
  std::unique_ptr<detail::MappingState> state_;
};

// Thread safety: every method may be called from any thread. Ownership: holds
// the GlBuffer (it lives at least as long as the registration).
class CudaGlBuffer {
 public:
  // Registers `buffer` (one worker hop) or prepares the host fallback.
  // Throws handoff::Error: CUDA unusable with MapBackend::Cuda (saying why),
  // the CUDA device is not the GL device (naming both: names + UUIDs), a
  // driver call failed (naming it and the CUDA error). UsageError for an empty
  // buffer or one made on another worker.
  CudaGlBuffer(GlWorker& worker, GlBuffer buffer, CudaGlOptions options = {});
  ~CudaGlBuffer();  // unregisters (queued on the worker); never throws
  CudaGlBuffer(CudaGlBuffer&&) noexcept;
  CudaGlBuffer& operator=(CudaGlBuffer&&) noexcept;
  CudaGlBuffer(const CudaGlBuffer&) = delete;
  CudaGlBuffer& operator=(const CudaGlBuffer&) = delete;

  // Maps this buffer (one worker hop). `stream`: the CUDA stream the mapping
  // (and the unmapping) is ordered with (default: the legacy default stream). Throws UsageError when already mapped,
  // handoff::Error when the driver or GL refuses.
  Mapping map(CudaStream stream = {});
  // Maps several buffers in ONE cuGraphicsMapResources call (one hop). All
  // must be on the same worker, backend and CUDA device, none mapped already,
  // no duplicates. On failure nothing stays mapped.
  static Mapping map_all(std::span<CudaGlBuffer* const> buffers, CudaStream stream = {});
  static Mapping map_all(std::initializer_list<CudaGlBuffer*> buffers, CudaStream stream = {}) {
    return map_all(std::span<CudaGlBuffer* const>(buffers.begin(), buffers.size()), stream);
  }

  MemoryKind memory() const noexcept;  // Cuda or Host: what map() hands out
  bool uses_cuda() const noexcept { return memory() == MemoryKind::Cuda; }
  // Why the host fallback was chosen (empty when CUDA is used).
  const std::string& fallback_reason() const noexcept;
  const GlBuffer& buffer() const noexcept;
  bool mapped() const noexcept;

 private:
  std::shared_ptr<detail::CudaGlRegistration> reg_;
};

// A Frame describing the mapped planes of `layout` (frame.hpp): each plane in
// mapped range `layout.planes[i].buffer` at its offset (two buffers: 0 and 1,
// FrameLayout::packed; one buffer holding both: 0 and 0, FrameLayout::contiguous).
// Its `owner` holds the mapping (the buffers are unmapped when the last copy of
// the frame goes). Throws UsageError for an empty or unmapped mapping, a range
// that is not in it or a plane that does not fit its range; InvalidFrame (a
// UsageError) naming the field for anything validate() refuses (dimensions
// above kMaxFrameDimension, pitches below the packed row, ...).
Frame make_frame(std::shared_ptr<Mapping> mapping, const FrameLayout& layout);

}  // namespace handoff
