// CudaGlBuffer: CUDA registration of GL buffers, batched map / unmap through
// the GL worker, and the host-memory fallback through glMapNamedBufferRange.
#include "gl/gl_buffer_state.hpp"
#include "gl/worker_resource.hpp"

#include <glad/gl.h>

#include <handoff/detail/gl_worker_detail.hpp>
#include <handoff/cuda.hpp>
#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_gl_buffer.hpp>
#include <handoff/detail/cuda_handles.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/gl_check.hpp>
#include <handoff/log.hpp>
#include <handoff/cuda_check.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <string>

namespace handoff {
namespace abi = cuda::abi;
namespace detail {

// Worker-side state of one registration, shared with its release function so
// the release can run after the CudaGlBuffer is gone (queued, or at shutdown).
struct RegistrationLive {
  // The CUDA registration (CUDA backend; null until registered). Owned by the
  // release registered with the worker (ReleaseRegistration below), not by a
  // UniqueHandle: it must be undone on the worker thread, with the GL context
  // current, and retried at worker shutdown when the driver refuses.
  abi::CUgraphicsResource resource = nullptr;
  std::atomic<bool> mapped{false};
  bool released = false;  // worker only: unregistered (at destruction or shutdown)
  // Worker only: the driver refused to unmap it (a poisoned context answers
  // every call with its sticky error): the next map_all tries again first.
  bool unmap_failed = false;
};

struct CudaGlRegistration {
  std::shared_ptr<WorkerCore> core;
  GlBuffer buffer;
  CudaGlAccess access = CudaGlAccess::ReadWrite;
  MemoryKind memory = MemoryKind::Host;
  std::string fallback_reason;
  cuda::detail::RetainedContext ctx;  // Cuda backend: retained for the registration's life
  std::shared_ptr<RegistrationLive> live = std::make_shared<RegistrationLive>();
  UniqueWorkerResource tracked;  // unregisters (on the worker) when the registration goes
};

struct MappingState {
  std::shared_ptr<WorkerCore> core;
  std::vector<std::shared_ptr<CudaGlRegistration>> regs;
  std::vector<MappedRange> ranges;
  CudaStream stream;
  bool mapped = false;
};

}  // namespace detail

namespace {

using detail::CudaGlRegistration;
using detail::MappingState;
using detail::RegistrationLive;

unsigned register_flags(CudaGlAccess a) {
  switch (a) {
    case CudaGlAccess::ReadWrite: return abi::CU_GRAPHICS_REGISTER_FLAGS_NONE;
    case CudaGlAccess::ReadOnly: return abi::CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY;
    case CudaGlAccess::WriteDiscard: return abi::CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD;
  }
  return abi::CU_GRAPHICS_REGISTER_FLAGS_NONE;
}

GLbitfield host_map_access(CudaGlAccess a) {
  switch (a) {
    case CudaGlAccess::ReadWrite: return GL_MAP_READ_BIT | GL_MAP_WRITE_BIT;
    case CudaGlAccess::ReadOnly: return GL_MAP_READ_BIT;
    case CudaGlAccess::WriteDiscard: return GL_MAP_WRITE_BIT | GL_MAP_INVALIDATE_BUFFER_BIT;
  }
  return GL_MAP_READ_BIT | GL_MAP_WRITE_BIT;
}

std::string gl_buffer_text(unsigned name) { return "GL buffer " + std::to_string(name); }

// Unmaps and unregisters on the worker; errors are logged (a destructor path).
// A refused unregister is tried once more when the worker shuts down. Holds
// the context retained and the GL buffer alive until it has run.
struct ReleaseRegistration {
  detail::WorkerCore* core;  // the release runs on the worker, so the core is alive
  std::shared_ptr<RegistrationLive> live;
  cuda::detail::RetainedContext ctx;  // null: the host fallback
  GlBuffer keep;  // the GL buffer outlives its registration
  unsigned gl_name;
  int attempts = 0;

  void operator()() noexcept {
    if (live->released) return;
    if (!ctx) {
      release_host();
    } else if (!live->resource) {
      live->released = true;  // the registration itself failed: nothing to undo
    } else {
      try {
        release_cuda();
      } catch (const std::exception& e) {
        live->released = true;
        log(LogLevel::Error, "releasing the CUDA registration of " + gl_buffer_text(gl_name) + " failed: " + e.what());
      }
    }
  }

  void release_host() noexcept {
    live->released = true;
    if (live->mapped.exchange(false) && glUnmapNamedBuffer(gl_name) == GL_FALSE)
      log(LogLevel::Warning, "glUnmapNamedBuffer: " + gl_buffer_text(gl_name) + " contents became undefined");
    glGetError();
  }

  void release_cuda() {
    cuda::ScopedContext current(*ctx);
    const cuda::Driver& drv = *ctx->driver();
    if (live->mapped.load()) {
      abi::CUresult r = drv.api().cuGraphicsUnmapResources(1, &live->resource, nullptr);
      if (r != abi::CUDA_SUCCESS)
        log(LogLevel::Error, "cuGraphicsUnmapResources failed with " + drv.error_name(r) + " releasing " +
                                 gl_buffer_text(gl_name) + " (unregistering unmaps it)");
      live->mapped.store(false);
    }
    abi::CUresult r = drv.api().cuGraphicsUnregisterResource(live->resource);
    if (r == abi::CUDA_SUCCESS) {
      live->released = true;
      live->resource = nullptr;
      return;
    }
    ++attempts;
    log(LogLevel::Error, "cuGraphicsUnregisterResource failed with " + drv.error_name(r) + " for " +
                             gl_buffer_text(gl_name) +
                             (attempts < 2 ? "; retried at worker shutdown" : "; the registration leaks"));
    if (attempts < 2) detail::track(*core, *this);
    else live->released = true;
  }
};

void check_same_gpu(const cuda::DeviceInfo& dev, const GlInfo& gl) {
  if (!gl.device_uuid) {
    log(LogLevel::Warning, "CudaGlBuffer: GL reports no device UUID (no GL_EXT_memory_object); cannot check that "
                           "CUDA device " + std::to_string(dev.ordinal) + " '" + dev.name + "' is the GL device '" +
                               gl.renderer + "'");
    return;
  }
  if (dev.uuid == *gl.device_uuid) return;
  throw Error(Api::Cuda, "CudaGlBuffer: same-GPU check", 0, "",
              "CUDA device " + std::to_string(dev.ordinal) + " '" + dev.name + "' (UUID " + to_string(dev.uuid) +
                  ") is not the GL device '" + gl.renderer + "' (UUID " + to_string(*gl.device_uuid) +
                  "); CUDA-GL interop needs both on one GPU (PRIME laptops and VirtualGL put GL elsewhere)",
              HANDOFF_WHERE);
}

}  // namespace

// --- CudaGlBuffer -------------------------------------------------------------
CudaGlBuffer::CudaGlBuffer(GlWorker& worker, GlBuffer buffer, CudaGlOptions o) {
  if (!buffer) throw UsageError("CudaGlBuffer: the GlBuffer is empty");
  if (buffer.state()->core != worker.core())
    throw UsageError("CudaGlBuffer: " + gl_buffer_text(buffer.name()) + " was made on another GlWorker");
  auto reg = std::make_shared<CudaGlRegistration>();
  reg->core = worker.core();
  reg->access = o.access;
  reg->buffer = std::move(buffer);

  bool use_cuda = false;
  const cuda::Driver* drv = nullptr;
  if (o.backend == MapBackend::Host) {
    reg->fallback_reason = "host mapping requested (MapBackend::Host)";
  } else {
    drv = &cuda::driver();
    if (!drv->usable()) {
      if (o.backend == MapBackend::Cuda)
        throw Error(Api::Cuda, "CudaGlBuffer", 0, "", drv->describe(), HANDOFF_WHERE);
      reg->fallback_reason = drv->describe();
    } else if (o.cuda_device < 0 || o.cuda_device >= drv->device_count()) {
      std::string why = "CUDA device " + std::to_string(o.cuda_device) + " does not exist (" +
                        std::to_string(drv->device_count()) + " device(s))";
      if (o.backend == MapBackend::Cuda) throw UsageError("CudaGlBuffer: " + why);
      reg->fallback_reason = why;
    } else {
      use_cuda = true;
    }
  }

  if (use_cuda) {
    cuda::DeviceInfo dev = drv->device(o.cuda_device);
    check_same_gpu(dev, worker.info());
    reg->memory = MemoryKind::Cuda;
    reg->ctx = std::make_shared<const cuda::PrimaryContext>(*drv, o.cuda_device);
  } else {
    reg->memory = MemoryKind::Host;
  }

  worker.run([&] {
    detail::assert_on_worker(*reg->core, "CudaGlBuffer::CudaGlBuffer");
    const unsigned name = reg->buffer.name();
    // Tracked before registering: when registering throws, the tracked release
    // (queued as `reg` goes) finds nothing registered and only marks it released.
    reg->tracked = detail::UniqueWorkerResource(
        detail::track(*reg->core, ReleaseRegistration{reg->core.get(), reg->live, reg->ctx, reg->buffer, name}),
        {reg->core});
    if (!reg->ctx) return;
    cuda::ScopedContext current(*reg->ctx);
    abi::CUgraphicsResource res = nullptr;
    HANDOFF_CU_CHECK(reg->ctx->driver()->api().cuGraphicsGLRegisterBuffer(&res, name, register_flags(reg->access)),
                     gl_buffer_text(name));
    reg->live->resource = res;
  });
  reg_ = std::move(reg);
}

CudaGlBuffer::~CudaGlBuffer() = default;
CudaGlBuffer::CudaGlBuffer(CudaGlBuffer&&) noexcept = default;
CudaGlBuffer& CudaGlBuffer::operator=(CudaGlBuffer&&) noexcept = default;

MemoryKind CudaGlBuffer::memory() const noexcept { return reg_ ? reg_->memory : MemoryKind::Host; }

const std::string& CudaGlBuffer::fallback_reason() const noexcept {
  static const std::string empty;
  return reg_ ? reg_->fallback_reason : empty;
}

const GlBuffer& CudaGlBuffer::buffer() const noexcept {
  static const GlBuffer empty;
  return reg_ ? reg_->buffer : empty;
}

bool CudaGlBuffer::mapped() const noexcept { return reg_ && reg_->live->mapped.load(); }

Mapping CudaGlBuffer::map(CudaStream stream) {
  CudaGlBuffer* self = this;
  return map_all(std::span<CudaGlBuffer* const>(&self, 1), stream);
}

namespace {

// The buffers' registrations (null for a null or moved-from buffer), checked
// to be mappable in one call.
std::unique_ptr<MappingState> mapping_state(const std::vector<std::shared_ptr<CudaGlRegistration>>& regs,
                                            CudaStream stream) {
  if (regs.empty()) throw UsageError("CudaGlBuffer::map_all: no buffers");
  auto st = std::make_unique<MappingState>();
  st->stream = stream;
  for (std::size_t i = 0; i < regs.size(); ++i) {
    const auto& r = regs[i];
    if (!r) throw UsageError("CudaGlBuffer::map_all: buffer " + std::to_string(i) + " is null or moved from");
    if (i > 0) {
      const auto& first = st->regs.front();
      if (r->core != first->core)
        throw UsageError("CudaGlBuffer::map_all: buffer " + std::to_string(i) + " is on another GlWorker");
      if (r->memory != first->memory)
        throw UsageError("CudaGlBuffer::map_all: buffer " + std::to_string(i) +
                         " mixes CUDA and host mapping with buffer 0");
      if (r->ctx != first->ctx && r->ctx && first->ctx && r->ctx->device() != first->ctx->device())
        throw UsageError("CudaGlBuffer::map_all: buffer " + std::to_string(i) + " is on another CUDA device");
      for (const auto& seen : st->regs)
        if (seen == r)
          throw UsageError("CudaGlBuffer::map_all: buffer " + std::to_string(i) + " (" +
                           gl_buffer_text(r->buffer.name()) + ") appears twice");
    }
    st->regs.push_back(r);
  }
  st->core = st->regs.front()->core;
  if (!stream.is_default() && st->regs.front()->memory != MemoryKind::Cuda)
    throw UsageError("CudaGlBuffer::map_all: a CUDA stream was given for host-mapped buffers");
  return st;
}

// On the worker: a buffer whose unmap the driver refused is unmapped again
// before it is mapped, and that retry's error is the one reported (after a
// sticky error such as CUDA_ERROR_ILLEGAL_ADDRESS the caller learns that, not
// that the buffer is "already mapped").
void retry_unmap(CudaGlRegistration& r) {
  const cuda::detail::RetainedContext& ctx = r.ctx;
  cuda::ScopedContext current(*ctx);
  abi::CUgraphicsResource res = r.live->resource;
  HANDOFF_CU_CHECK(ctx->driver()->api().cuGraphicsUnmapResources(1, &res, nullptr),
                   gl_buffer_text(r.buffer.name()) + ", whose earlier unmap failed");
  r.live->mapped.store(false);
  r.live->unmap_failed = false;
}

// On the worker. Marks what it mapped as it goes: when a later step throws, the
// Mapping that holds `st` unmaps exactly that as it goes.
void map_with_cuda(MappingState& st) {
  const cuda::detail::RetainedContext& ctx = st.regs.front()->ctx;
  const abi::DriverApi& api = ctx->driver()->api();
  cuda::ScopedContext current(*ctx);
  std::vector<abi::CUgraphicsResource> res;
  res.reserve(st.regs.size());
  for (const auto& r : st.regs) res.push_back(r->live->resource);
  const auto n = static_cast<unsigned>(res.size());
  HANDOFF_CU_CHECK(api.cuGraphicsMapResources(n, res.data(), static_cast<abi::CUstream>(st.stream.handle())),
                   std::to_string(n) + " buffer(s)");
  for (const auto& r : st.regs) r->live->mapped.store(true);
  st.mapped = true;
  for (const auto& r : st.regs) {
    abi::CUdeviceptr p = 0;
    std::size_t size = 0;
    HANDOFF_CU_CHECK(api.cuGraphicsResourceGetMappedPointer(&p, &size, r->live->resource),
                     gl_buffer_text(r->buffer.name()));
    st.ranges.push_back(MappedRange{reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)), size, MemoryKind::Cuda,
                                    r->ctx->device(), r->ctx->handle(), r->buffer.name()});
  }
}

// On the worker; as map_with_cuda, one glMapNamedBufferRange per buffer.
void map_with_gl(MappingState& st) {
  for (const auto& r : st.regs) {
    const unsigned name = r->buffer.name();
    void* p = HANDOFF_GL_CHECK(
        glMapNamedBufferRange(name, 0, static_cast<GLsizeiptr>(r->buffer.size()), host_map_access(r->access)),
        gl_buffer_text(name));
    if (!p)
      throw Error(Api::Gl, "glMapNamedBufferRange", 0, "", gl_buffer_text(name) + ": null pointer", HANDOFF_WHERE);
    r->live->mapped.store(true);
    st.mapped = true;
    st.ranges.push_back(MappedRange{p, r->buffer.size(), MemoryKind::Host, -1, nullptr, name});
  }
}

}  // namespace

Mapping CudaGlBuffer::map_all(std::span<CudaGlBuffer* const> buffers, CudaStream stream) {
  std::vector<std::shared_ptr<CudaGlRegistration>> regs;
  regs.reserve(buffers.size());
  for (CudaGlBuffer* b : buffers) regs.push_back(b ? b->reg_ : nullptr);
  Mapping m;  // owns what gets mapped from here on: a failure half way is unmapped as m goes
  m.state_ = mapping_state(regs, stream);
  MappingState& st = *m.state_;
  detail::run_on(*st.core, [&] {
    detail::assert_on_worker(*st.core, "CudaGlBuffer::map_all");
    for (const auto& r : st.regs) {
      if (r->live->released)
        throw WorkerStopped("CudaGlBuffer::map_all: " + gl_buffer_text(r->buffer.name()) + " was released");
      if (r->live->mapped.load() && r->live->unmap_failed) retry_unmap(*r);
      if (r->live->mapped.load())
        throw UsageError("CudaGlBuffer::map_all: " + gl_buffer_text(r->buffer.name()) +
                         " is already mapped (unmap the earlier Mapping first)");
    }
    if (st.regs.front()->memory == MemoryKind::Cuda) map_with_cuda(st);
    else map_with_gl(st);
  });
  return m;
}

// --- Mapping ------------------------------------------------------------------
Mapping::Mapping() noexcept = default;
Mapping::Mapping(Mapping&&) noexcept = default;

Mapping& Mapping::operator=(Mapping&& o) noexcept {
  if (this != &o) {
    try {
      unmap();
    } catch (const std::exception& e) {
      log(LogLevel::Error, std::string("Mapping: unmap failed: ") + e.what());
    }
    state_ = std::move(o.state_);
  }
  return *this;
}

Mapping::~Mapping() {
  try {
    unmap();
  } catch (const std::exception& e) {
    log(LogLevel::Error, std::string("Mapping: unmap failed: ") + e.what());
  } catch (...) {
    log(LogLevel::Error, "Mapping: unmap failed");
  }
}

std::size_t Mapping::count() const noexcept { return state_ ? state_->ranges.size() : 0; }

const MappedRange& Mapping::operator[](std::size_t i) const {
  if (!state_ || i >= state_->ranges.size())
    throw UsageError("Mapping: range " + std::to_string(i) + " of " + std::to_string(count()));
  return state_->ranges[i];
}

Mapping::operator bool() const noexcept { return state_ && state_->mapped; }

void Mapping::unmap() {
  if (!state_ || !state_->mapped) return;
  MappingState& st = *state_;
  try {
    detail::run_on(*st.core, [&] {
      detail::assert_on_worker(*st.core, "Mapping::unmap");
      std::vector<CudaGlRegistration*> still;
      for (const auto& r : st.regs)
        if (!r->live->released && r->live->mapped.load()) still.push_back(r.get());
      if (still.empty()) return;
      if (still.front()->memory == MemoryKind::Cuda) {
        const cuda::detail::RetainedContext& ctx = still.front()->ctx;
        cuda::ScopedContext current(*ctx);
        std::vector<abi::CUgraphicsResource> res;
        for (auto* r : still) res.push_back(r->live->resource);
        const auto n = static_cast<unsigned>(res.size());
        const auto stream = static_cast<abi::CUstream>(st.stream.handle());
        try {
          HANDOFF_CU_CHECK(ctx->driver()->api().cuGraphicsUnmapResources(n, res.data(), stream),
                           std::to_string(n) + " buffer(s)");
        } catch (const Error&) {
          for (auto* r : still) r->live->unmap_failed = true;
          throw;
        }
        for (auto* r : still) r->live->mapped.store(false);
      } else {
        std::exception_ptr failed;  // every buffer is unmapped; the first failure is reported
        for (auto* r : still) {
          r->live->mapped.store(false);
          try {
            if (HANDOFF_GL_CHECK(glUnmapNamedBuffer(r->buffer.name()), gl_buffer_text(r->buffer.name())) == GL_FALSE)
              log(LogLevel::Warning, "glUnmapNamedBuffer: " + gl_buffer_text(r->buffer.name()) +
                                         " contents became undefined");
          } catch (const Error&) {
            if (!failed) failed = std::current_exception();
          }
        }
        if (failed) std::rethrow_exception(failed);
      }
    });
  } catch (const WorkerStopped&) {
    // The worker stopped: its shutdown unmapped and released every registration.
  }
  st.mapped = false;
  st.ranges.clear();
}

// --- frames -----------------------------------------------------------------------
Frame make_frame(std::shared_ptr<Mapping> mapping, const FrameLayout& l) {
  if (!mapping || !*mapping) throw UsageError("make_frame: the mapping is empty or unmapped");
  const MappedRange* ranges[kMaxPlanes] = {};
  const int planes = plane_count(l.format);
  for (int i = 0; i < planes; ++i) {
    const std::size_t r = l.planes[std::size_t(i)].buffer;
    if (r >= mapping->count())
      throw UsageError(std::string("make_frame: the ") + std::string(plane_name(l.format, i)) + " plane's buffer " +
                       std::to_string(r) + " is not in the mapping (" + std::to_string(mapping->count()) +
                       " ranges)");
    ranges[i] = &(*mapping)[r];
  }
  std::array<void*, kMaxPlanes> bases{};
  for (std::size_t r = 0; r < kMaxPlanes && r < mapping->count(); ++r) bases[r] = (*mapping)[r].data;
  Frame f = l.describe(ranges[0]->memory, bases);
  f.device = ranges[0]->device;
  f.cuda_context = ranges[0]->cuda_context;
  validate(f);  // dimensions, pitches, overflow: InvalidFrame naming the field
  for (int i = 0; i < planes; ++i) {
    const std::size_t offset = l.planes[std::size_t(i)].offset, need = l.span(i), size = ranges[i]->size;
    if (offset > size || need > size - offset)
      throw UsageError(std::string("make_frame: the ") + std::string(plane_name(l.format, i)) + " plane (offset " +
                       std::to_string(offset) + ", " + std::to_string(need) + " bytes) does not fit mapped range " +
                       std::to_string(l.planes[std::size_t(i)].buffer) + " of " + std::to_string(size) + " bytes");
  }
  f.owner = std::move(mapping);
  return f;
}

}  // namespace handoff
