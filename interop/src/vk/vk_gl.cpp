#include <glad/gl.h>

#include <handoff/gl_check.hpp>
#include <handoff/log.hpp>
#include <handoff/vk_gl.hpp>

#include "gl/worker_resource.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace handoff {

std::string_view to_string(GlVkSync s) {
  return s == GlVkSync::ExternalSemaphore ? "external semaphores (GL_EXT_semaphore_fd)"
                                          : "CPU-side fences (no external semaphores on both sides)";
}

GlVkSync gl_vk_sync(const GlInfo& gl, const VkDeviceInfo& vk) noexcept {
  return vk.opaque_fd_semaphore && gl.semaphore_fd ? GlVkSync::ExternalSemaphore : GlVkSync::CpuFence;
}

void check_gl_vk_device(const GlInfo& gl, const VkDeviceInfo& vk) {
  if (!gl.memory_object_fd)
    throw Error(Api::Gl, "GL_EXT_memory_object_fd", 0, {},
                "the GL context (" + gl.renderer + ") cannot import Vulkan memory", HANDOFF_WHERE);
  if (gl.device_uuid && *gl.device_uuid != vk.device_uuid)
    throw Error(Api::Gl, "GL_DEVICE_UUID_EXT", 0, {},
                "GL runs on device " + to_string(*gl.device_uuid) + " (" + gl.renderer +
                    ") but Vulkan on " + to_string(vk.device_uuid) + " (" + vk.name +
                    "): interop across GPUs is refused",
                HANDOFF_WHERE);
}

namespace {

void require(bool present, const char* entry_point) {
  if (!present)
    throw Error(Api::Gl, entry_point, 0, {},
                "entry point not loaded: the current GL context lacks the extension (or no context is current)",
                HANDOFF_WHERE);
}

GLenum gl_internal_format(VkFormat f) {
  switch (f) {
    case VK_FORMAT_R8_UNORM: return GL_R8;
    case VK_FORMAT_R8G8_UNORM: return GL_RG8;
    case VK_FORMAT_R8G8B8A8_UNORM: return GL_RGBA8;
    case VK_FORMAT_R16_UNORM: return GL_R16;
    case VK_FORMAT_R16G16_UNORM: return GL_RG16;
    default:
      throw UsageError("GlVkTexture: Vulkan format " + std::to_string(int(f)) + " has no GL equivalent here");
  }
}

// The checks a buffer import makes before it takes the descriptor.
ExportedMemory& checked_for_buffer(ExportedMemory& exported, std::size_t size) {
  if (size == 0 || exported.offset > exported.allocation_size || size > exported.allocation_size - exported.offset)
    throw UsageError("GlVkBuffer: " + std::to_string(size) + " bytes at offset " + std::to_string(exported.offset) +
                     " do not fit the " + std::to_string(exported.allocation_size) + "-byte allocation");
  return exported;
}

// ... and a texture import.
ExportedMemory& checked_for_texture(ExportedMemory& exported, std::uint32_t width, std::uint32_t height,
                                    VkFormat format) {
  (void)gl_internal_format(format);
  if (width == 0 || height == 0) throw UsageError("GlVkTexture: size 0");
  return exported;
}

}  // namespace

// --- GlVkMemory ----------------------------------------------------------------

GlVkMemory::GlVkMemory(ExportedMemory& memory) {
  if (memory.type != VkHandleType::OpaqueFd)
    throw Error(Api::Gl, "glImportMemoryFdEXT", 0, {},
                "GL_EXT_memory_object_fd imports OPAQUE_FD descriptors only, not " +
                    std::string(to_string(memory.type)),
                HANDOFF_WHERE);
  if (!memory.fd) throw UsageError("GlVkMemory: the ExportedMemory holds no descriptor (already imported?)");
  require(glCreateMemoryObjectsEXT && glImportMemoryFdEXT && glDeleteMemoryObjectsEXT,
          "glImportMemoryFdEXT");
  GLuint m = 0;
  HANDOFF_GL_CHECK(glCreateMemoryObjectsEXT(1, &m));
  memory_.reset(m);
  if (memory.dedicated) {
    GLint yes = GL_TRUE;
    HANDOFF_GL_CHECK(glMemoryObjectParameterivEXT(m, GL_DEDICATED_MEMORY_OBJECT_EXT, &yes),
                     "GL_DEDICATED_MEMORY_OBJECT_EXT");
  }
  // On failure the descriptor is still the caller's: GL did not take it.
  HANDOFF_GL_CHECK(glImportMemoryFdEXT(m, GLuint64(memory.allocation_size), GL_HANDLE_TYPE_OPAQUE_FD_EXT,
                                       memory.fd.get()),
                   std::to_string(memory.allocation_size) + " bytes");
  (void)memory.fd.release();  // GL owns the descriptor now
}

// --- GlVkBuffer ----------------------------------------------------------------

namespace {
ExportedMemory export_of(const VkExportableBuffer& b) { return b.export_memory(); }
ExportedMemory export_of(const VkExportableImage& i) { return i.export_memory(); }
}  // namespace

// The temporary export lives to the end of the delegation: if GL did not take
// its descriptor, it is closed there.
GlVkBuffer::GlVkBuffer(const VkExportableBuffer& buffer)
    : GlVkBuffer(*std::make_unique<ExportedMemory>(export_of(buffer)), buffer.size()) {}

GlVkBuffer::GlVkBuffer(ExportedMemory& exported, std::size_t size)
    : memory_(checked_for_buffer(exported, size)), size_(size) {
  require(glNamedBufferStorageMemEXT != nullptr, "glNamedBufferStorageMemEXT");
  GLuint b = 0;
  HANDOFF_GL_CHECK(glCreateBuffers(1, &b));
  buffer_.reset(b);
  HANDOFF_GL_CHECK(glNamedBufferStorageMemEXT(b, GLsizeiptr(size), memory_.name(), GLuint64(exported.offset)),
                   std::to_string(size) + " bytes of a " + std::to_string(exported.allocation_size) +
                       "-byte allocation");
}

// --- GlVkTexture -----------------------------------------------------------------

GlVkTexture::GlVkTexture(const VkExportableImage& image)
    : GlVkTexture(*std::make_unique<ExportedMemory>(export_of(image)), image.width(), image.height(),
                  image.format()) {}

GlVkTexture::GlVkTexture(ExportedMemory& exported, std::uint32_t width, std::uint32_t height, VkFormat format)
    : memory_(checked_for_texture(exported, width, height, format)), width_(width), height_(height) {
  require(glTextureStorageMem2DEXT != nullptr, "glTextureStorageMem2DEXT");
  GLuint t = 0;
  HANDOFF_GL_CHECK(glCreateTextures(GL_TEXTURE_2D, 1, &t));
  texture_.reset(t);
  // Vulkan made the image with optimal tiling; GL must agree (and does by default).
  HANDOFF_GL_CHECK(glTextureParameteri(t, GL_TEXTURE_TILING_EXT, GL_OPTIMAL_TILING_EXT), "GL_TEXTURE_TILING_EXT");
  HANDOFF_GL_CHECK(glTextureStorageMem2DEXT(t, 1, gl_internal_format(format), GLsizei(width_), GLsizei(height_),
                                            memory_.name(), GLuint64(exported.offset)),
                   std::to_string(width_) + "x" + std::to_string(height_) + " in a " +
                       std::to_string(exported.allocation_size) + "-byte allocation");
  // One level: the default mipmapping minification filter would leave it incomplete.
  HANDOFF_GL_CHECK(glTextureParameteri(t, GL_TEXTURE_MIN_FILTER, GL_LINEAR));
  HANDOFF_GL_CHECK(glTextureParameteri(t, GL_TEXTURE_MAG_FILTER, GL_LINEAR));
  HANDOFF_GL_CHECK(glTextureParameteri(t, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE));
  HANDOFF_GL_CHECK(glTextureParameteri(t, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE));
}

// --- GlVkSemaphore ---------------------------------------------------------------

GlVkSemaphore::GlVkSemaphore(const VkExportableSemaphore& semaphore) {
  require(glGenSemaphoresEXT && glImportSemaphoreFdEXT && glDeleteSemaphoresEXT && glWaitSemaphoreEXT &&
              glSignalSemaphoreEXT,
          "glImportSemaphoreFdEXT");
  UniqueFd fd = semaphore.export_fd();
  GLuint s = 0;
  HANDOFF_GL_CHECK(glGenSemaphoresEXT(1, &s));
  semaphore_.reset(s);
  HANDOFF_GL_CHECK(glImportSemaphoreFdEXT(s, GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd.get()));  // failed: fd closes here
  (void)fd.release();  // GL owns the descriptor now
}

namespace {
// The object lists of glWaitSemaphoreEXT / glSignalSemaphoreEXT; every texture in
// VK_IMAGE_LAYOUT_GENERAL (as VkExportableImage keeps them).
struct SemaphoreObjects {
  SemaphoreObjects(std::initializer_list<unsigned> textures, std::initializer_list<unsigned> buffers)
      : tex(textures.begin(), textures.end()), buf(buffers.begin(), buffers.end()),
        layouts(tex.size(), GL_LAYOUT_GENERAL_EXT) {}
  std::vector<GLuint> tex, buf;
  std::vector<GLenum> layouts;
};
}  // namespace

void GlVkSemaphore::wait(std::initializer_list<unsigned> textures, std::initializer_list<unsigned> buffers) {
  SemaphoreObjects o(textures, buffers);
  HANDOFF_GL_CHECK(glWaitSemaphoreEXT(semaphore_.get(), GLuint(o.buf.size()), o.buf.data(), GLuint(o.tex.size()),
                                      o.tex.data(), o.layouts.data()));
}

void GlVkSemaphore::signal(std::initializer_list<unsigned> textures, std::initializer_list<unsigned> buffers) {
  SemaphoreObjects o(textures, buffers);
  HANDOFF_GL_CHECK(glSignalSemaphoreEXT(semaphore_.get(), GLuint(o.buf.size()), o.buf.data(), GLuint(o.tex.size()),
                                        o.tex.data(), o.layouts.data()));
}

void gl_finish_for_vulkan() { GlFence::insert().wait("GL commands issued before gl_finish_for_vulkan()"); }

// --- GlVkSource ------------------------------------------------------------------

GlVkSource::GlVkSource(PixelFormat format, std::uint32_t width, std::uint32_t height, Colorimetry colorimetry,
                       VkContextOptions vk_options) {
  GlInfo gl = query_gl_info("current context");
  if (!vk_options.device_uuid && gl.device_uuid) vk_options.device_uuid = *gl.device_uuid;
  vk_ = std::make_unique<VkContext>(std::move(vk_options));
  check_gl_vk_device(gl, vk_->info());
  sync_ = gl_vk_sync(gl, vk_->info());
  producer_ = std::make_unique<VkFrameProducer>(*vk_, format, width, height, VkFrameProducer::Target::Images,
                                                colorimetry);
  luma_ = std::make_unique<GlVkTexture>(producer_->images()->luma());
  chroma_ = std::make_unique<GlVkTexture>(producer_->images()->chroma());
  if (sync_ == GlVkSync::ExternalSemaphore) {
    try {
      semaphore_ = std::make_unique<VkExportableSemaphore>(*vk_);
      gl_semaphore_ = std::make_unique<GlVkSemaphore>(*semaphore_);
    } catch (const Error& e) {
      log(LogLevel::Warning, std::string("GlVkSource: external semaphores refused, using CPU fences: ") + e.what());
      gl_semaphore_.reset();
      semaphore_.reset();
      sync_ = GlVkSync::CpuFence;
    }
  }
}

// The members go in reverse order; the producer waits (bounded) for its last frame.
GlVkSource::~GlVkSource() = default;

void GlVkSource::produce(std::int64_t index) {
  if (sync_ == GlVkSync::ExternalSemaphore) {
    producer_->submit(index, semaphore_->semaphore());
    gl_semaphore_->wait({luma_->name(), chroma_->name()}, {});
  } else {
    producer_->produce(index);
  }
}

unsigned GlVkSource::luma_texture() const noexcept { return luma_->name(); }
unsigned GlVkSource::chroma_texture() const noexcept { return chroma_->name(); }
Frame GlVkSource::frame() const { return producer_->frame(); }

// --- GlVkFrame ---------------------------------------------------------------------

namespace detail {

struct GlVkImports {
  std::unique_ptr<GlVkTexture> luma, chroma;
  std::unique_ptr<GlVkBuffer> buffer;
};

struct GlVkFrameState {
  std::shared_ptr<WorkerCore> core;
  unsigned luma = 0, chroma = 0, buffer = 0;  // deleted by `resource`'s release, on the worker
  std::optional<FrameLayout> layout;
  UniqueWorkerResource resource;
};

}  // namespace detail

namespace {
template <typename Make>
std::shared_ptr<detail::GlVkFrameState> import_on(GlWorker& worker, Make make) {
  auto state = std::make_shared<detail::GlVkFrameState>();
  state->core = worker.core();
  worker.run([&] {
    detail::assert_on_worker(*state->core, "GlVkFrame");
    auto imports = std::make_shared<detail::GlVkImports>();
    make(*imports);
    state->luma = imports->luma ? imports->luma->name() : 0;
    state->chroma = imports->chroma ? imports->chroma->name() : 0;
    state->buffer = imports->buffer ? imports->buffer->name() : 0;
    // The worker's resource registry holds the imports now; shutdown releases them if nothing did before.
    const std::uint64_t id = detail::track(*state->core, [imports] {
      imports->luma.reset();
      imports->chroma.reset();
      imports->buffer.reset();
    });
    state->resource = detail::UniqueWorkerResource(id, {state->core});
  });
  return state;
}
}  // namespace

GlVkFrame::GlVkFrame(GlWorker& worker, const VkFrameImages& images) {
  state_ = import_on(worker, [&](detail::GlVkImports& i) {
    i.luma = std::make_unique<GlVkTexture>(images.luma());
    i.chroma = std::make_unique<GlVkTexture>(images.chroma());
  });
}

GlVkFrame::GlVkFrame(GlWorker& worker, const VkFrameBuffer& buffer) {
  state_ = import_on(worker, [&](detail::GlVkImports& i) { i.buffer = std::make_unique<GlVkBuffer>(buffer.buffer()); });
  state_->layout = buffer.layout();
}

unsigned GlVkFrame::luma_texture() const noexcept { return state_ ? state_->luma : 0; }
unsigned GlVkFrame::chroma_texture() const noexcept { return state_ ? state_->chroma : 0; }
unsigned GlVkFrame::buffer() const noexcept { return state_ ? state_->buffer : 0; }
std::shared_ptr<const void> GlVkFrame::keep_alive() const noexcept { return state_; }

Frame GlVkFrame::frame() const {
  if (!state_ || !state_->layout) throw UsageError("GlVkFrame::frame: not a buffer import");
  Frame f = state_->layout->describe(MemoryKind::GlBuffer);
  f.gl_buffer = state_->buffer;
  f.owner = state_;
  return f;
}

}  // namespace handoff
