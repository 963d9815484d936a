#include "push_ring.hpp"

#include <glad/gl.h>

#include <algorithm>
#include <utility>

#include <handoff/error.hpp>
#include <handoff/frame_copy.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/gl_check.hpp>
#include <handoff/log.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>
#include <handoff/cuda_copy_2d.hpp>

#include "bounded_wait.hpp"
#include "cuda_copy.hpp"
#include "frame_renderer.hpp"

namespace handoff::view {
namespace {

using clock = std::chrono::steady_clock;
using view::wait_for_fence;

std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

double ms_since(clock::time_point t) { return std::chrono::duration<double, std::milli>(clock::now() - t).count(); }

// Where a frame's planes sit in a slot's buffer: one to three planes (every
// format), each after the last, rows and plane offsets 256-byte aligned.
FrameLayout slot_layout(PixelFormat format, std::uint32_t width, std::uint32_t height) {
  return FrameLayout::contiguous(format, width, height, 256);
}

// Buffers grow in 1 MiB steps, so a slightly larger frame reuses them.
constexpr std::size_t kBufferGranule = std::size_t(1) << 20;

GlRingOptions named(GlRingOptions o) {
  if (o.name.empty()) o.name = "viewer";
  return o;
}

SlotRingOptions ring_options(const GlRingOptions& o, const std::function<void()>& wake) {
  SlotRingOptions r = slot_ring_options(o, RingOrder::NewestWins, o.name, o.name + " (ViewerOptions::ring)");
  r.claim_drops_ready = true;
  // Every slot being written or shown: the display frees its shown slot when woken.
  r.before_wait = wake;
  return r;
}

}  // namespace

AcquiredSlot::~AcquiredSlot() {
  if (slot && ring) ring->cancel(*this);
}

PushRing::PushRing(std::shared_ptr<GlShare> share, GlRingOptions options, PausedShow paused_show,
                   std::function<void()> wake)
    : share_(std::move(share)), options_(named(std::move(options))), paused_show_(paused_show),
      wake_(std::move(wake)), ring_(ring_options(options_, wake_)) {
  for (std::size_t i = 0; i < options_.slots; ++i) {
    slots_.push_back(std::make_unique<PushSlot>());
    slots_.back()->number = i;
  }
}

// Fences live in the worker's share group: delete them there, with every
// mapping undone, before the buffers (and maybe the worker) go.
PushRing::~PushRing() {
  try {
    share_->worker().run([&] {
      for (auto& s : slots_) {
        s->mapping = Mapping{};
        s->layer_mapping = Mapping{};
        s->written = GlFence{};
        s->read_done = GlFence{};
      }
    });
  } catch (const std::exception& e) {
    log(LogLevel::Error, options_.name + ": releasing the frame buffers: " + e.what());
  }
}

// --- producers -------------------------------------------------------------------

void PushRing::check_frame(const Frame& frame) const {
  validate(frame);  // InvalidFrame naming the field (a plane that does not fit the format too)
  check_size(frame.width, frame.height);
  if (frame.memory == MemoryKind::Vulkan)
    throw InvalidFrame("memory", "Vulkan memory: " + options_.name +
                                     " copies host, CUDA and GL-buffer frames; import it first (import_vk_frame: "
                                     "a GL buffer of Viewer::gl_worker(), or CUDA memory) or write into "
                                     "acquire()'s buffer");
  if (frame.memory != MemoryKind::Cuda) return;
  if (frame.device != options_.interop.cuda_device)
    throw InvalidFrame("device", "a CUDA frame on device " + std::to_string(frame.device) + "; " + options_.name +
                                     " is on CUDA device " + std::to_string(options_.interop.cuda_device) +
                                     " (ViewerOptions::cuda_device)");
}

// Here, on the producer's thread: the display would fail on such a frame.
void PushRing::check_size(std::uint32_t width, std::uint32_t height) const {
  if (auto refused = texture_size_refusal(options_.name, width, height, share_->max_texture_size())) throw *refused;
}

void PushRing::wait_while_paused(std::unique_lock<std::mutex>& lock) {
  if (paused_show_ != PausedShow::Block) return;
  // A wait for a person (resume, step) or close(): not bounded by wait_limit().
  cv_.wait(lock, [&] { return closed_ || !paused_ || step_credits_ > 0; });
  if (!closed_ && paused_) --step_credits_;
}

bool PushRing::wait_unblocked_for(std::chrono::milliseconds timeout) {
  if (paused_show_ != PausedShow::Block) return true;
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, timeout, [&] { return closed_ || !paused_ || step_credits_ > 0; });
}

// A Free slot, else the Ready one (older than the frame being handed in: it
// loses, counted dropped); else waits, bounded: every slot is being written
// or was just shown (the ring wakes the display, which frees its shown slot;
// other producers free theirs when their copy is done).
PushSlot& PushRing::claim() {
  const auto limit = wait_limit();
  try {
    if (const auto s = ring_.claim_for(limit)) return *slots_[*s];
  } catch (const RingClosed& e) {
    throw ViewerClosed(e.what());
  }
  throw WaitTimeout("a free frame buffer of " + options_.name + " (all " + std::to_string(slots_.size()) +
                        " in use by other show() calls or the display's upload)",
                    limit);
}

CudaCopier& PushRing::copier() {
  std::lock_guard lock(copier_mutex_);
  if (!copier_) copier_ = std::make_unique<CudaCopier>(options_.interop.cuda_device);
  return *copier_;
}

// The first buffer decides CUDA or host for the whole ring: a trial
// registration (Auto falls back to host memory, saying why, where CUDA is
// unusable or cannot share this GL's buffers). Called with alloc_mutex_ held.
void PushRing::decide_memory(std::size_t bytes) {
  if (memory_) return;
  if (options_.interop.backend == MapBackend::Host) {
    memory_ = MemoryKind::Host;
    fallback_reason_ = "host memory asked for (ViewerMemory::Host)";
    return;
  }
  GlWorker& worker = share_->worker();
  CudaGlOptions co = write_discard(options_.interop);
  try {
    CudaGlBuffer trial(worker, GlBuffer(worker, align_up(bytes, kBufferGranule)), co);
    memory_ = trial.memory();
    if (!trial.uses_cuda()) fallback_reason_ = trial.fallback_reason();
  } catch (const Error& e) {
    if (co.backend != MapBackend::Auto) throw;
    memory_ = MemoryKind::Host;
    fallback_reason_ = e.what();
    log(LogLevel::Warning, options_.name + ": using host-mapped buffers: " + e.what());
  }
}

// A buffer with persistent, coherent storage, mapped once for writing.
void PushRing::make_host_buffer(PushSlot& slot, std::size_t size) {
  GlBuffer buffer(share_->worker(), size, GlBufferStorage::Persistent);
  slot.host = share_->worker().run([&] {
    void* p = HANDOFF_GL_CHECK(glMapNamedBufferRange(buffer.name(), 0, static_cast<GLsizeiptr>(size),
                                                     GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT),
                               "persistent frame buffer");
    if (!p) throw Error(Api::Gl, "glMapNamedBufferRange", 0, "", "persistent frame buffer: null pointer", HANDOFF_WHERE);
    return p;
  });
  slot.buffer = std::move(buffer);  // deleting the buffer unmaps it
}

// (Re)allocates the slot's buffer when the frame does not fit.
void PushRing::ensure_buffer(PushSlot& slot, std::size_t bytes) {
  if (slot.buffer && slot.buffer.size() >= bytes) return;
  std::lock_guard lock(alloc_mutex_);
  decide_memory(bytes);
  slot.interop.reset();  // releases are queued on the worker
  slot.host = nullptr;
  slot.buffer.reset();
  const std::size_t size = align_up(bytes, kBufferGranule);
  if (*memory_ != MemoryKind::Cuda) {
    make_host_buffer(slot, size);
    return;
  }
  GlWorker& worker = share_->worker();
  CudaGlOptions co = write_discard(options_.interop);
  co.backend = MapBackend::Cuda;
  GlBuffer buffer(worker, size);
  slot.interop.emplace(worker, buffer, co);
  slot.buffer = std::move(buffer);
}

// On the worker: the slot's fences from its last use go (waiting, bounded,
// for the display's upload from it to finish).
void PushRing::forget_fences(PushSlot& slot) {
  slot.written = GlFence{};
  wait_for_fence(slot.read_done, [&] { return "GL upload fence of frame buffer " + std::to_string(slot.number); });
  slot.read_done = GlFence{};
}

// Host rings: nothing to map, unless the slot kept fences from before (its
// upload is only outstanding after the display went). CUDA rings: map (one
// worker hop, which also deletes those fences). `gl_copy` (a GL-buffer frame):
// no mapping, GL writes the slot; copy_from_gl forgets the fences in its hop.
void PushRing::prepare(PushSlot& slot, const FrameLayout& layout, bool gl_copy) {
  ensure_buffer(slot, layout.buffer_bytes());
  slot.layout = layout;
  if (gl_copy) return;
  if (slot.host) {
    if (slot.written || slot.read_done) share_->worker().run([&] { forget_fences(slot); });
    return;
  }
  const CudaStream stream = copier().stream();
  slot.mapping = share_->worker().run([&] {
    forget_fences(slot);
    return slot.interop->map(stream);
  });
}

// A GL buffer of the viewer's share group (made on Viewer::gl_worker()),
// copied GPU-side into the slot's buffer on the worker (glCopyNamedBufferSubData,
// no host round trip), then waited for, so the caller's buffer is its own
// again when show() returns.
void PushRing::copy_from_gl(PushSlot& slot, const Frame& frame) {
  const Frame to = slot.layout.describe(MemoryKind::GlBuffer);
  share_->worker().run([&] {
    forget_fences(slot);
    const GLuint src = frame.gl_buffer;
    if (!glIsBuffer(src))
      throw InvalidFrame("gl_buffer", "buffer " + std::to_string(src) + " is not a buffer of " + options_.name +
                                          "'s GL share group (make it on Viewer::gl_worker())");
    GLint64 size = 0, mapped = 0, access = 0;
    glGetNamedBufferParameteri64v(src, GL_BUFFER_SIZE, &size);
    glGetNamedBufferParameteri64v(src, GL_BUFFER_MAPPED, &mapped);
    glGetNamedBufferParameteri64v(src, GL_BUFFER_ACCESS_FLAGS, &access);
    if (mapped && !(access & GL_MAP_PERSISTENT_BIT))
      throw InvalidFrame("gl_buffer", "buffer " + std::to_string(src) + " is mapped (unmap it before show())");
    const int planes = plane_count(frame.format);
    std::size_t row[kMaxPlanes], span[kMaxPlanes];  // each plane's packed row, and its bytes from first to last sample
    for (int p = 0; p < planes; ++p) {
      const Plane& pl = frame.planes[std::size_t(p)];
      const std::string name = "planes[" + std::to_string(p) + "] (" + std::string(plane_name(frame.format, p)) + ")";
      row[p] = plane_layout(frame.format, frame.width, frame.height, p).row_bytes;
      span[p] = plane_span_bytes(pl.pitch, pl.height, row[p], name + ".pitch");
      if (pl.offset > std::size_t(size) || span[p] > std::size_t(size) - pl.offset)
        throw InvalidFrame(std::string(name) + ".offset",
                           "the plane's bytes " + std::to_string(pl.offset) + " .. " + std::to_string(pl.offset + span[p]) +
                               " run past buffer " + std::to_string(src) + "'s " + std::to_string(size) + " bytes");
    }
    const GLuint dst = slot.buffer.name();
    for (int p = 0; p < planes; ++p) {
      const Plane& pl = frame.planes[std::size_t(p)];
      const Plane& dp = to.planes[std::size_t(p)];
      if (pl.pitch == dp.pitch) {
        HANDOFF_GL_CHECK(glCopyNamedBufferSubData(src, dst, GLintptr(pl.offset), GLintptr(dp.offset),
                                                  GLsizeiptr(span[p])),
                         "GL-buffer frame copy");
      } else {
        for (std::uint32_t r = 0; r < pl.height; ++r)
          HANDOFF_GL_CHECK(glCopyNamedBufferSubData(src, dst, GLintptr(pl.offset + r * pl.pitch),
                                                    GLintptr(dp.offset + r * dp.pitch), GLsizeiptr(row[p])),
                           "GL-buffer frame copy");
      }
    }
    GlFence::insert().wait("the copy of a GL-buffer frame into a frame buffer");
  });
}

namespace {

// The array of a layer when it is in CUDA memory, else nullptr.
media::LayerArray* cuda_array(media::Layer& l) {
  media::LayerArray* a = std::visit(
      [](auto& x) -> media::LayerArray* {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, media::ClassMap>) return &x.ids;
        else if constexpr (std::is_same_v<T, media::ScalarMap>) return &x.values;
        else return &x.masks;
      },
      l);
  return a->memory == MemoryKind::Cuda ? a : nullptr;
}

constexpr auto is_cuda = [](const auto& x) {
  using T = std::decay_t<decltype(x)>;
  if constexpr (std::is_same_v<T, media::ClassMap>) return x.ids.memory == MemoryKind::Cuda;
  else if constexpr (std::is_same_v<T, media::ScalarMap>) return x.values.memory == MemoryKind::Cuda;
  else return x.masks.memory == MemoryKind::Cuda;
};

std::size_t packed_bytes(const media::LayerArray& a) {
  return a.row_bytes() * a.height * std::max<std::uint32_t>(a.count, 1);
}

}  // namespace

// A layer buffer that holds `bytes`: kept, or made afresh (registered with
// CUDA for writing; GL only reads it).
void PushRing::ensure_layer_buffer(LayerBuffer& b, std::size_t bytes) {
  if (b.buffer && b.buffer.size() >= bytes) return;
  b.interop.reset();  // releases are queued on the worker
  b.buffer.reset();
  GlWorker& worker = share_->worker();
  CudaGlOptions co = write_discard(options_.interop);
  co.backend = MapBackend::Cuda;
  GlBuffer buffer(worker, align_up(bytes, kBufferGranule));
  b.interop.emplace(worker, buffer, co);
  b.buffer = std::move(buffer);
}

// CUDA layers: each copied device to device (cuMemcpy2DAsync on the viewer's
// stream, after the producer's stream; waited for, so the caller's arrays are
// free on return) into a GL buffer of the slot registered with CUDA, packed.
// The copy of `overlays` handed to the display names that buffer (memory
// GlBuffer); the display converts it into its textures GPU-side. Nothing goes
// through host memory, so a ring in host memory refuses CUDA layers.
std::optional<media::OverlayFrame> PushRing::copy_cuda_layers(PushSlot& slot, const media::OverlayFrame& overlays,
                                                              CudaStream stream) {
  if (std::none_of(overlays.layers.begin(), overlays.layers.end(),
                   [](const media::Layer& l) { return std::visit(is_cuda, l); }))
    return std::nullopt;  // the common case: no copy of the overlays here
  media::OverlayFrame out = overlays;
  std::vector<media::LayerArray*> arrays;
  std::size_t first = 0;
  for (std::size_t i = 0; i < out.layers.size(); ++i)
    if (media::LayerArray* a = cuda_array(out.layers[i])) {
      if (arrays.empty()) first = i;
      arrays.push_back(a);
    }
  {
    std::lock_guard lock(alloc_mutex_);
    if (!memory_ || *memory_ != MemoryKind::Cuda)
      throw InvalidFrame("layers[" + std::to_string(first) + "].memory",
                         "a CUDA layer, but " + options_.name + " has no CUDA (its buffers are in host memory: " +
                             fallback_reason_ + "); pass host arrays, or use a viewer whose frames go through CUDA");
  }
  if (slot.layer_buffers.size() < arrays.size()) slot.layer_buffers.resize(arrays.size());
  std::vector<CudaGlBuffer*> interops;
  for (std::size_t k = 0; k < arrays.size(); ++k) {
    ensure_layer_buffer(slot.layer_buffers[k], packed_bytes(*arrays[k]));
    interops.push_back(&*slot.layer_buffers[k].interop);
  }
  std::lock_guard lock(copy_mutex_);  // one producer at a time on the stream
  CudaCopier& c = copier();
  const CudaStream ours = c.stream();
  slot.layer_mapping = share_->worker().run([&] { return CudaGlBuffer::map_all(interops, ours); });
  c.after(stream);  // the producer's writes first
  {
    const cuda::Driver& drv = cuda::driver();
    cuda::ScopedContext current(drv, static_cast<cuda::abi::CUctx_st*>(c.context()));
    for (std::size_t k = 0; k < arrays.size(); ++k) {
      const media::LayerArray& a = *arrays[k];
      const auto* from = static_cast<const std::byte*>(a.data);
      const auto* to = static_cast<const std::byte*>(slot.layer_mapping[k].data);
      for (std::uint32_t n = 0; n < a.count; ++n) {  // 0 masks: nothing of the caller's is read
        // Mask n of the caller's (pitched) array to mask n of the packed buffer.
        cuda::copy_2d_async(drv, {true, from + n * a.image_pitch(), a.row_pitch()},
                            {true, to + std::size_t(n) * a.height * a.row_bytes(), a.row_bytes()}, a.row_bytes(),
                            a.height, ours.handle(),
                            "show(): the copy of a CUDA layer into " + options_.name + "'s buffer");
      }
    }
  }
  c.finish("the copy of CUDA layers into " + options_.name + "'s buffers (its CUDA stream)");
  for (std::size_t k = 0; k < arrays.size(); ++k) {
    media::LayerArray& a = *arrays[k];
    a.memory = MemoryKind::GlBuffer;
    a.gl_buffer = slot.layer_buffers[k].buffer.name();
    a.data = nullptr;
    a.device = -1;
    a.cuda_context = nullptr;
    a.pitch = 0;
    a.image_stride = 0;
    a.owner.reset();  // the caller's memory is not held
  }
  return out;
}

void PushRing::copy_in(PushSlot& slot, const Frame& frame, CudaStream stream) {
  const MemoryKind dst_memory = slot.host ? MemoryKind::Host : slot.mapping.memory();
  Frame to = slot.layout.describe(dst_memory, {slot.host ? slot.host : slot.mapping.data()});
  if (frame.memory == MemoryKind::Host && dst_memory == MemoryKind::Host) {
    copy_frame(frame, to);
    return;
  }
  // One stream, one producer at a time: finish() then waits for this copy only.
  std::lock_guard lock(copy_mutex_);
  CudaCopier& c = copier();
  if (dst_memory == MemoryKind::Cuda) {
    to.device = c.device();
    to.cuda_context = c.context();
  }
  if (frame.memory == MemoryKind::Cuda) c.after(stream);  // the producer's writes first
  copy_frame(frame, to, c.stream(), CopyCompletion::Queued);
  c.finish("the copy of a frame into " + options_.name + "'s buffer (its CUDA stream)");
}

void PushRing::release_unpublished(PushSlot& slot) noexcept {
  try {
    if (slot.mapping) slot.mapping.unmap();
    if (slot.layer_mapping) slot.layer_mapping.unmap();
  } catch (const std::exception& e) {
    log(LogLevel::Error, options_.name + ": unmapping a frame buffer: " + e.what());
  }
  slot.mapping = Mapping{};
  slot.layer_mapping = Mapping{};
  try {
    ring_.unclaim(slot.number);
  } catch (const std::exception& e) {
    log(LogLevel::Error, options_.name + ": giving back frame buffer " + std::to_string(slot.number) + ": " + e.what());
  }
}

// Unmaps and fences (one worker hop), then makes the slot the newest pending
// frame; the one it replaces counts as dropped. On failure the slot goes back.
void PushRing::publish(PushSlot& slot, const media::OverlayFrame& overlays, std::int64_t index, double timestamp,
                       clock::time_point started, double map_ms) {
  try {
    slot.overlays = overlays;  // reuses the slot's capacity
    slot.index = index;
    slot.timestamp = timestamp;
    slot.submitted = started;
    const auto u0 = clock::now();
    if (slot.mapping || slot.layer_mapping) {  // mapped to CUDA: unmap, and fence it for the display
      slot.written = share_->worker().run([&] {
        if (slot.mapping) slot.mapping.unmap();
        if (slot.layer_mapping) slot.layer_mapping.unmap();
        return GlFence::insert();
      });
      slot.mapping = Mapping{};
      slot.layer_mapping = Mapping{};
    }
    slot.map_ms = map_ms + ms_since(u0);
    slot.produce_ms = ms_since(started);
  } catch (...) {
    release_unpublished(slot);
    throw;
  }
  try {
    // Ready; the one it replaces counts as dropped. A closed ring frees it.
    ring_.publish(slot.number);
  } catch (const RingClosed& e) {
    throw ViewerClosed(e.what());
  }
  if (wake_) wake_();
}

void PushRing::show(const Frame& frame, const media::OverlayFrame& overlays, CudaStream stream) {
  const auto started = clock::now();
  check_frame(frame);
  {
    std::unique_lock lock(mutex_);
    wait_while_paused(lock);
  }
  PushSlot* slot = &claim();
  double map_ms = 0;
  std::optional<media::OverlayFrame> shown;
  try {
    const auto m0 = clock::now();
    const bool gl = frame.memory == MemoryKind::GlBuffer;
    prepare(*slot, slot_layout(frame.format, frame.width, frame.height), gl);
    map_ms = ms_since(m0);
    slot->colorimetry = frame.colorimetry;
    if (gl) copy_from_gl(*slot, frame);
    else copy_in(*slot, frame, stream);
    shown = copy_cuda_layers(*slot, overlays, stream);
  } catch (...) {
    release_unpublished(*slot);
    throw;
  }
  publish(*slot, shown ? *shown : overlays, frame.index, frame.timestamp, started, map_ms);
}

std::unique_ptr<AcquiredSlot> PushRing::acquire(PixelFormat format, std::uint32_t width, std::uint32_t height,
                                                Colorimetry colorimetry) {
  const auto started = clock::now();
  validate_dimensions(width, height);
  check_size(width, height);
  {
    std::unique_lock lock(mutex_);
    wait_while_paused(lock);
  }
  PushSlot* slot = &claim();
  auto a = std::make_unique<AcquiredSlot>();
  try {
    FrameLayout l = slot_layout(format, width, height);
    l.colorimetry = colorimetry;
    prepare(*slot, l);
    slot->colorimetry = colorimetry;
    Frame& f = a->frame;
    if (slot->host) {
      f = l.describe(MemoryKind::Host, {slot->host});
    } else {
      const MappedRange& m = slot->mapping[0];
      f = l.describe(m.memory, {m.data});
      f.device = m.device;
      f.cuda_context = m.cuda_context;
    }
  } catch (...) {
    release_unpublished(*slot);
    throw;
  }
  a->ring = shared_from_this();
  a->slot = slot;
  a->started = started;
  return a;
}

namespace {
// The fields of an acquired frame the caller must leave as they are.
void check_unchanged(const Frame& now, const FrameLayout& l, void* base) {
  auto fail = [](const char* field) {
    throw UsageError(std::string("Viewer::present: frame.") + field +
                     " was changed after acquire() (only index, timestamp and colorimetry may be)");
  };
  if (now.format != l.format) fail("format");
  if (now.width != l.width) fail("width");
  if (now.height != l.height) fail("height");
  const Frame was = l.describe(now.memory, {base});
  static const char* const names[kMaxPlanes] = {"planes[0]", "planes[1]", "planes[2]"};
  for (std::size_t p = 0; p < std::size_t(plane_count(l.format)); ++p) {
    const Plane &a = now.planes[p], &b = was.planes[p];
    if (a.data != b.data || a.pitch != b.pitch || a.width != b.width || a.height != b.height) fail(names[p]);
  }
}
}  // namespace

void PushRing::present(AcquiredSlot& acquired, const media::OverlayFrame& overlays) {
  if (!acquired.slot || acquired.ring.get() != this)
    throw UsageError("Viewer::present: the frame was not acquired from this viewer (or was presented already)");
  PushSlot& slot = *acquired.slot;
  acquired.slot = nullptr;  // whatever happens now, the slot is not the caller's any more
  std::optional<media::OverlayFrame> shown;
  try {
    check_unchanged(acquired.frame, slot.layout, slot.host ? slot.host : slot.mapping.data());
    shown = copy_cuda_layers(slot, overlays, {});
  } catch (...) {
    release_unpublished(slot);
    throw;
  }
  slot.colorimetry = acquired.frame.colorimetry;
  publish(slot, shown ? *shown : overlays, acquired.frame.index, acquired.frame.timestamp, acquired.started, 0.0);
}

void PushRing::cancel(AcquiredSlot& acquired) noexcept {
  if (!acquired.slot) return;
  release_unpublished(*acquired.slot);
  acquired.slot = nullptr;
}

void PushRing::close(const std::string& reason) {
  ring_.close(reason);  // claims and publishes from now on, and waiting claims
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    closed_reason_ = reason;
  }
  cv_.notify_all();  // producers waiting while paused
}

void PushRing::set_paused(bool paused) {
  {
    std::lock_guard lock(mutex_);
    paused_ = paused;
    if (!paused) step_credits_ = 0;
  }
  cv_.notify_all();
}

void PushRing::step() {
  {
    std::lock_guard lock(mutex_);
    if (paused_show_ == PausedShow::Block && paused_) ++step_credits_;
  }
  cv_.notify_all();
}

PushRing::Counters PushRing::counters() const {
  const SlotRing::Counters c = ring_.counters();
  return Counters{c.submitted, c.dropped, c.sequence};
}

std::string PushRing::memory_text() const {
  std::lock_guard lock(alloc_mutex_);
  if (!memory_) return "GL buffers (allocated with the first frame)";
  if (*memory_ == MemoryKind::Cuda)
    return "CUDA-mapped GL buffers (CUDA device " + std::to_string(options_.interop.cuda_device) + ")";
  return "host-mapped GL buffers (" + fallback_reason_ + ")";
}

// --- display thread ------------------------------------------------------------------

bool PushRing::free_shown_if_done(bool wait) {
  PushSlot* s = nullptr;
  {
    std::lock_guard lock(mutex_);
    s = shown_;
  }
  if (!s) return true;
  // Only the display thread changes shown_ and a shown slot's fences.
  if (wait) {
    wait_for_fence(s->read_done, [&] { return "GL upload fence of frame buffer " + std::to_string(s->number); });
  } else if (s->read_done && !s->read_done.client_wait(0)) {
    return false;
  }
  s->read_done = GlFence{};
  {
    std::lock_guard lock(mutex_);
    shown_ = nullptr;
  }
  ring_.release(s->number);
  return true;
}

void PushRing::reclaim() { free_shown_if_done(false); }

PushSlot* PushRing::take() {
  if (!ring_.has_ready()) {
    reclaim();
    return nullptr;
  }
  free_shown_if_done(true);  // one shown slot at a time
  const std::optional<std::size_t> taken = ring_.take();
  if (!taken) return nullptr;  // a producer took it meanwhile
  PushSlot* s = slots_[*taken].get();
  s->sequence = ring_.info(*taken).sequence;  // the ring numbers the frames
  {
    std::lock_guard lock(mutex_);
    shown_ = s;
  }
  if (s->written) {  // CUDA rings: this context's commands run after the producer's unmap
    s->written.gpu_wait();
    s->written = GlFence{};
  }
  return s;
}

void PushRing::give_back(PushSlot& slot) { slot.read_done = GlFence::insert(); }

Frame PushRing::frame_of(const PushSlot& s) const {
  Frame f = s.layout.describe(MemoryKind::GlBuffer);
  f.colorimetry = s.colorimetry;
  f.gl_buffer = s.buffer.name();
  f.index = s.index;
  f.timestamp = s.timestamp;
  return f;
}

void PushRing::detach_display() noexcept {
  PushSlot* s = nullptr;
  {
    std::lock_guard lock(mutex_);
    s = std::exchange(shown_, nullptr);
  }
  if (!s) return;
  try {
    ring_.release(s->number);
  } catch (const std::exception& e) {
    log(LogLevel::Error, options_.name + ": releasing the shown frame buffer: " + e.what());
  }
}

void PushRing::set_stream(std::string stream) {
  std::lock_guard lock(stream_mutex_);
  stream_ = std::move(stream);
}

std::string PushRing::stream() const {
  std::lock_guard lock(stream_mutex_);
  return stream_;
}

}  // namespace handoff::view
