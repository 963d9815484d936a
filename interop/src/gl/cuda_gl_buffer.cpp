// CudaGlBuffer: CUDA registration of GL buffers, batched map / unmap through
// the GL worker, and the host-memory fallback through glMapNamedBufferRange.
#include "cuda/cuda_api.hpp"
#include "gl/gl_buffer_state.hpp"

#include <glad/gl.h>

#include <handoff/cuda.hpp>
#include <handoff/cuda_gl_buffer.hpp>
#include <handoff/gl_check.hpp>
#include <handoff/log.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <string>

namespace handoff {
namespace detail {

// Worker-side state of one registration, shared with its release function so
// the release can run after the CudaGlBuffer is gone (queued, or at shutdown).
struct RegistrationLive {
  cu::CUgraphicsResource resource = nullptr;  // CUDA backend
  std::atomic<bool> mapped{false};
  bool released = false;  // worker only: unregistered (at destruction or shutdown)
};

struct CudaGlRegistration {
  std::shared_ptr<WorkerCore> core;
  GlBuffer buffer;
  CudaGlAccess access = CudaGlAccess::ReadWrite;
  MemoryKind memory = MemoryKind::Host;
  std::string fallback_reason;
  const cuda::Driver* drv = nullptr;
  std::shared_ptr<cuda::PrimaryContext> ctx;  // Cuda: retained for the registration's life
  std::shared_ptr<RegistrationLive> live = std::make_shared<RegistrationLive>();
  std::uint64_t resource = 0;

  ~CudaGlRegistration() {
    if (resource) release(*core, resource);
  }
};

struct MappingState {
  std::shared_ptr<WorkerCore> core;
  std::vector<std::shared_ptr<CudaGlRegistration>> regs;
  std::vector<MappedRange> ranges;
  void* stream = nullptr;
  bool mapped = false;
};

}  // namespace detail

namespace {

using detail::CudaGlRegistration;
using detail::MappingState;
using detail::RegistrationLive;

unsigned register_flags(CudaGlAccess a) {
  switch (a) {
    case CudaGlAccess::ReadWrite: return cu::CU_GRAPHICS_REGISTER_FLAGS_NONE;
    case CudaGlAccess::ReadOnly: return cu::CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY;
    case CudaGlAccess::WriteDiscard: return cu::CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD;
  }
  return cu::CU_GRAPHICS_REGISTER_FLAGS_NONE;
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
// A refused unregister is tried once more when the worker shuts down.
struct ReleaseRegistration {
  detail::WorkerCore* core;  // the release runs on the worker, so the core is alive
  std::shared_ptr<RegistrationLive> live;
  const cuda::Driver* drv;
  std::shared_ptr<cuda::PrimaryContext> ctx;
  GlBuffer keep;  // the GL buffer outlives its registration
  unsigned gl_name;
  int attempts = 0;

  void operator()() noexcept {
    if (live->released) return;
    if (!drv) {  // host fallback
      live->released = true;
      if (live->mapped.exchange(false) && glUnmapNamedBuffer(gl_name) == GL_FALSE)
        log(LogLevel::Warning, "glUnmapNamedBuffer: " + gl_buffer_text(gl_name) + " contents became undefined");
      glGetError();
      return;
    }
    try {
      cuda::ScopedContext current(*drv, ctx->get());
      const cu::DriverApi& api = drv->api();
      if (live->mapped.load()) {
        cu::CUresult r = api.cuGraphicsUnmapResources(1, &live->resource, nullptr);
        if (r != cu::CUDA_SUCCESS)
          log(LogLevel::Error, "cuGraphicsUnmapResources failed with " + drv->error_name(r) + " releasing " +
                                   gl_buffer_text(gl_name) + " (unregistering unmaps it)");
        live->mapped.store(false);
      }
      cu::CUresult r = api.cuGraphicsUnregisterResource(live->resource);
      if (r == cu::CUDA_SUCCESS) {
        live->released = true;
        live->resource = nullptr;
        return;
      }
      ++attempts;
      log(LogLevel::Error, "cuGraphicsUnregisterResource failed with " + drv->error_name(r) + " for " +
                               gl_buffer_text(gl_name) +
                               (attempts < 2 ? "; retried at worker shutdown" : "; the registration leaks"));
      if (attempts < 2) {
        detail::track(*core, *this);
        return;
      }
      live->released = true;
    } catch (const std::exception& e) {
      live->released = true;
      log(LogLevel::Error, "releasing the CUDA registration of " + gl_buffer_text(gl_name) + " failed: " + e.what());
    }
  }
};

void check_same_gpu(const cuda::DeviceInfo& dev, const GlInfo& gl) {
  if (!gl.device_uuid) {
    log(LogLevel::Warning, "CudaGlBuffer: GL reports no device UUID (no GL_EXT_memory_object); cannot check that "
                           "CUDA device " + std::to_string(dev.ordinal) + " '" + dev.name + "' is the GL device '" +
                               gl.renderer + "'");
    return;
  }
  if (std::equal(dev.uuid.begin(), dev.uuid.end(), gl.device_uuid->begin())) return;
  throw Error(Api::Cuda, "CudaGlBuffer: same-GPU check", 0, "",
              "CUDA device " + std::to_string(dev.ordinal) + " '" + dev.name + "' (UUID " + dev.uuid_string +
                  ") is not the GL device '" + gl.renderer + "' (UUID " + format_uuid(*gl.device_uuid) +
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
    if (!worker.core()->skips_same_gpu_check()) check_same_gpu(dev, worker.info());  // testing.hpp may waive it
    reg->memory = MemoryKind::Cuda;
    reg->drv = drv;
    reg->ctx = std::make_shared<cuda::PrimaryContext>(*drv, o.cuda_device);
  } else {
    reg->memory = MemoryKind::Host;
  }

  worker.run([&] {
    detail::assert_on_worker(*reg->core, "CudaGlBuffer::CudaGlBuffer");
    const unsigned name = reg->buffer.name();
    if (reg->drv) {
      cuda::ScopedContext current(*reg->drv, reg->ctx->get());
      reg->drv->check(reg->drv->api().cuGraphicsGLRegisterBuffer(&reg->live->resource, name,
                                                                   register_flags(reg->access)),
                      "cuGraphicsGLRegisterBuffer", gl_buffer_text(name), HANDOFF_WHERE);
    }
    ReleaseRegistration release{reg->core.get(), reg->live, reg->drv, reg->ctx, reg->buffer, name};
    try {
      reg->resource = detail::track(*reg->core, release);
    } catch (...) {
      release();
      throw;
    }
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

Mapping CudaGlBuffer::map(void* stream) {
  CudaGlBuffer* self = this;
  return map_all(std::span<CudaGlBuffer* const>(&self, 1), stream);
}

Mapping CudaGlBuffer::map_all(std::span<CudaGlBuffer* const> buffers, void* stream) {
  if (buffers.empty()) throw UsageError("CudaGlBuffer::map_all: no buffers");
  auto st = std::make_unique<MappingState>();
  st->stream = stream;
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    CudaGlBuffer* b = buffers[i];
    if (!b || !b->reg_)
      throw UsageError("CudaGlBuffer::map_all: buffer " + std::to_string(i) + " is null or moved from");
    const auto& r = b->reg_;
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
  if (stream && st->regs.front()->memory != MemoryKind::Cuda)
    throw UsageError("CudaGlBuffer::map_all: a CUDA stream was given for host-mapped buffers");

  detail::run_on(*st->core, [&] {
    detail::assert_on_worker(*st->core, "CudaGlBuffer::map_all");
    for (const auto& r : st->regs) {
      if (r->live->released)
        throw WorkerStopped("CudaGlBuffer::map_all: " + gl_buffer_text(r->buffer.name()) + " was released");
      if (r->live->mapped.load())
        throw UsageError("CudaGlBuffer::map_all: " + gl_buffer_text(r->buffer.name()) +
                         " is already mapped (unmap the earlier Mapping first)");
    }
    const auto& first = st->regs.front();
    if (first->memory == MemoryKind::Cuda) {
      const cuda::Driver& drv = *first->drv;
      const cu::DriverApi& api = drv.api();
      cuda::ScopedContext current(drv, first->ctx->get());
      std::vector<cu::CUgraphicsResource> res;
      res.reserve(st->regs.size());
      for (const auto& r : st->regs) res.push_back(r->live->resource);
      auto cu_stream = static_cast<cu::CUstream>(stream);
      const auto n = static_cast<unsigned>(res.size());
      drv.check(api.cuGraphicsMapResources(n, res.data(), cu_stream), "cuGraphicsMapResources",
                std::to_string(n) + " buffer(s)", HANDOFF_WHERE);
      try {
        for (const auto& r : st->regs) {
          cu::CUdeviceptr p = 0;
          std::size_t size = 0;
          drv.check(api.cuGraphicsResourceGetMappedPointer(&p, &size, r->live->resource),
                    "cuGraphicsResourceGetMappedPointer", gl_buffer_text(r->buffer.name()), HANDOFF_WHERE);
          st->ranges.push_back(MappedRange{reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)), size,
                                           MemoryKind::Cuda, r->ctx->device(), r->ctx->handle(),
                                           r->buffer.name()});
        }
      } catch (...) {
        st->ranges.clear();
        cu::CUresult u = api.cuGraphicsUnmapResources(n, res.data(), cu_stream);
        if (u != cu::CUDA_SUCCESS)
          log(LogLevel::Error, "cuGraphicsUnmapResources failed with " + drv.error_name(u) +
                                   " while undoing a failed map");
        throw;
      }
    } else {
      for (const auto& r : st->regs) {
        const unsigned name = r->buffer.name();
        void* p = nullptr;
        try {
          p = HANDOFF_GL_CHECK(glMapNamedBufferRange(name, 0, static_cast<GLsizeiptr>(r->buffer.size()),
                                                     host_map_access(r->access)),
                               gl_buffer_text(name));
          if (!p)
            throw Error(Api::Gl, "glMapNamedBufferRange", 0, "", gl_buffer_text(name) + ": null pointer",
                        HANDOFF_WHERE);
        } catch (...) {
          for (const auto& done : st->ranges) glUnmapNamedBuffer(done.gl_buffer);
          st->ranges.clear();
          throw;
        }
        st->ranges.push_back(MappedRange{p, r->buffer.size(), MemoryKind::Host, -1, nullptr, name});
      }
    }
    for (const auto& r : st->regs) r->live->mapped.store(true);
    st->mapped = true;
  });
  Mapping m;
  m.state_ = std::move(st);
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
        const cuda::Driver& drv = *still.front()->drv;
        cuda::ScopedContext current(drv, still.front()->ctx->get());
        std::vector<cu::CUgraphicsResource> res;
        for (auto* r : still) res.push_back(r->live->resource);
        drv.check(drv.api().cuGraphicsUnmapResources(static_cast<unsigned>(res.size()), res.data(),
                                                      static_cast<cu::CUstream>(st.stream)),
                  "cuGraphicsUnmapResources", std::to_string(res.size()) + " buffer(s)", HANDOFF_WHERE);
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
FrameLayout FrameLayout::packed(PixelFormat f, std::uint32_t w, std::uint32_t h) {
  FrameLayout l;
  l.format = f;
  l.width = w;
  l.height = h;
  l.luma_pitch = l.luma_pitch_or_packed();
  l.chroma_pitch = l.chroma_pitch_or_packed();
  return l;
}

std::size_t FrameLayout::luma_pitch_or_packed() const {
  return luma_pitch ? luma_pitch : std::size_t(width) * bytes_per_sample(format);
}
std::size_t FrameLayout::chroma_pitch_or_packed() const {
  return chroma_pitch ? chroma_pitch : std::size_t(chroma_width(width)) * 2 * bytes_per_sample(format);
}
std::size_t FrameLayout::luma_bytes() const { return luma_pitch_or_packed() * height; }
std::size_t FrameLayout::chroma_bytes() const { return chroma_pitch_or_packed() * chroma_height(height); }

Frame make_frame(std::shared_ptr<Mapping> mapping, const FrameLayout& l) {
  if (!mapping || !*mapping) throw UsageError("make_frame: the mapping is empty or unmapped");
  constexpr std::uint32_t kMaxDim = 1u << 16;
  if (l.width == 0 || l.height == 0 || l.width > kMaxDim || l.height > kMaxDim)
    throw UsageError("make_frame: width x height " + std::to_string(l.width) + " x " + std::to_string(l.height) +
                     " is outside [1, 65536]");
  const std::size_t bps = bytes_per_sample(l.format);
  const std::size_t luma_row = std::size_t(l.width) * bps;
  const std::size_t chroma_row = std::size_t(chroma_width(l.width)) * 2 * bps;
  const std::size_t lp = l.luma_pitch_or_packed(), cp = l.chroma_pitch_or_packed();
  if (lp < luma_row)
    throw UsageError("make_frame: luma_pitch " + std::to_string(lp) + " is below the packed row of " +
                     std::to_string(luma_row) + " bytes");
  if (cp < chroma_row)
    throw UsageError("make_frame: chroma_pitch " + std::to_string(cp) + " is below the packed row of " +
                     std::to_string(chroma_row) + " bytes");
  auto plane_fits = [&](const char* which, std::size_t range, std::size_t offset, std::size_t pitch,
                        std::size_t rows, std::size_t row) -> const MappedRange& {
    if (range >= mapping->count())
      throw UsageError(std::string("make_frame: ") + which + "_range " + std::to_string(range) +
                       " is not in the mapping (" + std::to_string(mapping->count()) + " ranges)");
    const MappedRange& r = (*mapping)[range];
    const std::size_t need = pitch * (rows - 1) + row;
    if (offset > r.size || need > r.size - offset)
      throw UsageError(std::string("make_frame: the ") + which + " plane (offset " + std::to_string(offset) +
                       ", " + std::to_string(need) + " bytes) does not fit mapped range " + std::to_string(range) +
                       " of " + std::to_string(r.size) + " bytes");
    return r;
  };
  const MappedRange& lr = plane_fits("luma", l.luma_range, l.luma_offset, lp, l.height, luma_row);
  const MappedRange& cr = plane_fits("chroma", l.chroma_range, l.chroma_offset, cp, chroma_height(l.height),
                                     chroma_row);
  Frame f;
  f.format = l.format;
  f.width = l.width;
  f.height = l.height;
  f.colorimetry = l.colorimetry;
  f.memory = lr.memory;
  f.device = lr.device;
  f.cuda_context = lr.cuda_context;
  f.planes[0] = Plane{static_cast<std::byte*>(lr.data) + l.luma_offset, 0, lp, l.width, l.height, 1};
  f.planes[1] = Plane{static_cast<std::byte*>(cr.data) + l.chroma_offset, 0, cp, chroma_width(l.width),
                      chroma_height(l.height), 2};
  f.owner = std::move(mapping);
  return f;
}

}  // namespace handoff
