#include <glad/gl.h>

#include <handoff/gl_check.hpp>
#include <handoff/log.hpp>
#include <handoff/vk_gl.hpp>

#include <string>

namespace handoff {

std::string_view to_string(VkGlSync s) {
  return s == VkGlSync::ExternalSemaphore ? "external semaphores (GL_EXT_semaphore_fd)"
                                          : "CPU-side fences (no external semaphores on both sides)";
}

VkGlSync vk_gl_sync(const VkDeviceInfo& vk, const GlInfo& gl) noexcept {
  return vk.opaque_fd_semaphore && gl.semaphore_fd ? VkGlSync::ExternalSemaphore : VkGlSync::CpuFence;
}

void check_vk_gl_device(const VkDeviceInfo& vk, const GlInfo& gl) {
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
  glCreateMemoryObjectsEXT(1, &m);
  HANDOFF_GL_CHECK("glCreateMemoryObjectsEXT");
  try {
    if (memory.dedicated) {
      GLint yes = GL_TRUE;
      glMemoryObjectParameterivEXT(m, GL_DEDICATED_MEMORY_OBJECT_EXT, &yes);
      HANDOFF_GL_CHECK("glMemoryObjectParameterivEXT", "GL_DEDICATED_MEMORY_OBJECT_EXT");
    }
    glImportMemoryFdEXT(m, GLuint64(memory.allocation_size), GL_HANDLE_TYPE_OPAQUE_FD_EXT, memory.fd.get());
    HANDOFF_GL_CHECK("glImportMemoryFdEXT", std::to_string(memory.allocation_size) + " bytes");
  } catch (...) {
    glDeleteMemoryObjectsEXT(1, &m);
    throw;  // the descriptor is still the caller's: GL did not take it
  }
  (void)memory.fd.release();  // GL owns the descriptor now
  name_ = m;
}

GlVkMemory::~GlVkMemory() {
  if (name_) glDeleteMemoryObjectsEXT(1, &name_);
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

GlVkBuffer::GlVkBuffer(ExportedMemory& exported, std::size_t size) : size_(size) {
  if (size == 0 || exported.offset > exported.allocation_size || size > exported.allocation_size - exported.offset)
    throw UsageError("GlVkBuffer: " + std::to_string(size) + " bytes at offset " + std::to_string(exported.offset) +
                     " do not fit the " + std::to_string(exported.allocation_size) + "-byte allocation");
  memory_.emplace(exported);
  require(glNamedBufferStorageMemEXT != nullptr, "glNamedBufferStorageMemEXT");
  GLuint b = 0;
  glCreateBuffers(1, &b);
  HANDOFF_GL_CHECK("glCreateBuffers");
  glNamedBufferStorageMemEXT(b, GLsizeiptr(size), memory_->name(), GLuint64(exported.offset));
  try {
    HANDOFF_GL_CHECK("glNamedBufferStorageMemEXT",
                     std::to_string(size) + " bytes of a " + std::to_string(exported.allocation_size) +
                         "-byte allocation");
  } catch (...) {
    glDeleteBuffers(1, &b);
    throw;
  }
  name_ = b;
}

GlVkBuffer::~GlVkBuffer() {
  if (name_) glDeleteBuffers(1, &name_);
  memory_.reset();
}

// --- GlVkTexture -----------------------------------------------------------------

GlVkTexture::GlVkTexture(const VkExportableImage& image)
    : GlVkTexture(*std::make_unique<ExportedMemory>(export_of(image)), image.width(), image.height(),
                  image.format()) {}

GlVkTexture::GlVkTexture(ExportedMemory& exported, std::uint32_t width, std::uint32_t height, VkFormat format)
    : width_(width), height_(height) {
  GLenum internal = gl_internal_format(format);
  if (width == 0 || height == 0) throw UsageError("GlVkTexture: size 0");
  memory_.emplace(exported);
  require(glTextureStorageMem2DEXT != nullptr, "glTextureStorageMem2DEXT");
  GLuint t = 0;
  glCreateTextures(GL_TEXTURE_2D, 1, &t);
  HANDOFF_GL_CHECK("glCreateTextures");
  try {
    // Vulkan made the image with optimal tiling; GL must agree (and does by default).
    glTextureParameteri(t, GL_TEXTURE_TILING_EXT, GL_OPTIMAL_TILING_EXT);
    HANDOFF_GL_CHECK("glTextureParameteri", "GL_TEXTURE_TILING_EXT");
    glTextureStorageMem2DEXT(t, 1, internal, GLsizei(width_), GLsizei(height_), memory_->name(),
                             GLuint64(exported.offset));
    HANDOFF_GL_CHECK("glTextureStorageMem2DEXT",
                     std::to_string(width_) + "x" + std::to_string(height_) + " in a " +
                         std::to_string(exported.allocation_size) + "-byte allocation");
    // One level: the default mipmapping minification filter would leave it incomplete.
    glTextureParameteri(t, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTextureParameteri(t, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTextureParameteri(t, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTextureParameteri(t, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    HANDOFF_GL_CHECK("glTextureParameteri");
  } catch (...) {
    glDeleteTextures(1, &t);
    throw;
  }
  name_ = t;
}

GlVkTexture::~GlVkTexture() {
  if (name_) glDeleteTextures(1, &name_);
  memory_.reset();
}

// --- GlVkSemaphore ---------------------------------------------------------------

GlVkSemaphore::GlVkSemaphore(const VkExportableSemaphore& semaphore) {
  require(glGenSemaphoresEXT && glImportSemaphoreFdEXT && glDeleteSemaphoresEXT && glWaitSemaphoreEXT &&
              glSignalSemaphoreEXT,
          "glImportSemaphoreFdEXT");
  UniqueFd fd = semaphore.export_fd();
  GLuint s = 0;
  glGenSemaphoresEXT(1, &s);
  HANDOFF_GL_CHECK("glGenSemaphoresEXT");
  glImportSemaphoreFdEXT(s, GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd.get());
  try {
    HANDOFF_GL_CHECK("glImportSemaphoreFdEXT");
  } catch (...) {
    glDeleteSemaphoresEXT(1, &s);
    throw;  // fd closes here: GL did not take it
  }
  (void)fd.release();  // GL owns the descriptor now
  name_ = s;
}

GlVkSemaphore::~GlVkSemaphore() {
  if (name_) glDeleteSemaphoresEXT(1, &name_);
}

namespace {
template <typename Fn>
void semaphore_op(Fn fn, GLuint s, std::initializer_list<unsigned> textures,
                  std::initializer_list<unsigned> buffers) {
  std::vector<GLuint> tex(textures.begin(), textures.end()), buf(buffers.begin(), buffers.end());
  std::vector<GLenum> layouts(tex.size(), GL_LAYOUT_GENERAL_EXT);
  fn(s, GLuint(buf.size()), buf.data(), GLuint(tex.size()), tex.data(), layouts.data());
}
}  // namespace

void GlVkSemaphore::wait(std::initializer_list<unsigned> textures, std::initializer_list<unsigned> buffers) {
  semaphore_op(glWaitSemaphoreEXT, name_, textures, buffers);
  HANDOFF_GL_CHECK("glWaitSemaphoreEXT");
}

void GlVkSemaphore::signal(std::initializer_list<unsigned> textures, std::initializer_list<unsigned> buffers) {
  semaphore_op(glSignalSemaphoreEXT, name_, textures, buffers);
  HANDOFF_GL_CHECK("glSignalSemaphoreEXT");
}

void gl_finish_for_vulkan() {
  GLsync sync = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  HANDOFF_GL_CHECK("glFenceSync");
  GLenum r;
  do {
    r = glClientWaitSync(sync, GL_SYNC_FLUSH_COMMANDS_BIT, 1'000'000'000);
  } while (r == GL_TIMEOUT_EXPIRED);
  glDeleteSync(sync);
  if (r == GL_WAIT_FAILED) HANDOFF_GL_CHECK("glClientWaitSync");
}

// --- VkGlSource ------------------------------------------------------------------

VkGlSource::VkGlSource(PixelFormat format, std::uint32_t width, std::uint32_t height, Colorimetry colorimetry,
                       VkContextOptions vk_options) {
  GlInfo gl = query_gl_info("current context");
  if (!vk_options.device_uuid && gl.device_uuid) vk_options.device_uuid = *gl.device_uuid;
  vk_ = std::make_unique<VkContext>(std::move(vk_options));
  check_vk_gl_device(vk_->info(), gl);
  sync_ = vk_gl_sync(vk_->info(), gl);
  producer_ = std::make_unique<VkFrameProducer>(*vk_, format, width, height, VkFrameProducer::Target::Images,
                                                colorimetry);
  luma_ = std::make_unique<GlVkTexture>(producer_->images()->luma());
  chroma_ = std::make_unique<GlVkTexture>(producer_->images()->chroma());
  if (sync_ == VkGlSync::ExternalSemaphore) {
    try {
      semaphore_ = std::make_unique<VkExportableSemaphore>(*vk_);
      gl_semaphore_ = std::make_unique<GlVkSemaphore>(*semaphore_);
    } catch (const Error& e) {
      log(LogLevel::Warning, std::string("VkGlSource: external semaphores refused, using CPU fences: ") + e.what());
      gl_semaphore_.reset();
      semaphore_.reset();
      sync_ = VkGlSync::CpuFence;
    }
  }
}

VkGlSource::~VkGlSource() {
  try {
    if (producer_) producer_->wait();
  } catch (const std::exception& e) {
    log(LogLevel::Error, std::string("VkGlSource: ") + e.what());
  }
  // GL objects first (they reference the Vulkan allocations), then Vulkan.
  gl_semaphore_.reset();
  chroma_.reset();
  luma_.reset();
  semaphore_.reset();
  producer_.reset();
  vk_.reset();
}

void VkGlSource::produce(std::int64_t index) {
  if (sync_ == VkGlSync::ExternalSemaphore) {
    producer_->submit(index, semaphore_->semaphore());
    gl_semaphore_->wait({luma_->name(), chroma_->name()}, {});
  } else {
    producer_->produce(index);
  }
}

unsigned VkGlSource::luma_texture() const noexcept { return luma_->name(); }
unsigned VkGlSource::chroma_texture() const noexcept { return chroma_->name(); }
Frame VkGlSource::frame() const { return producer_->frame(); }

// --- VkGlFrame ---------------------------------------------------------------------

namespace detail {

struct VkGlImports {
  std::unique_ptr<GlVkTexture> luma, chroma;
  std::unique_ptr<GlVkBuffer> buffer;
};

struct VkGlFrameState {
  std::shared_ptr<WorkerCore> core;
  std::uint64_t resource = 0;
  unsigned luma = 0, chroma = 0, buffer = 0;
  std::optional<VkFrameLayout> layout;
  ~VkGlFrameState() {
    if (resource) release(*core, resource);  // queued to the worker; no-op after shutdown
  }
};

}  // namespace detail

namespace {
template <typename Make>
std::shared_ptr<detail::VkGlFrameState> import_on(GlWorker& worker, Make make) {
  auto state = std::make_shared<detail::VkGlFrameState>();
  state->core = worker.core();
  worker.run([&] {
    detail::assert_on_worker(*state->core, "VkGlFrame");
    auto imports = std::make_shared<detail::VkGlImports>();
    make(*imports);
    state->luma = imports->luma ? imports->luma->name() : 0;
    state->chroma = imports->chroma ? imports->chroma->name() : 0;
    state->buffer = imports->buffer ? imports->buffer->name() : 0;
    state->resource = detail::track(*state->core, [imports] {
      imports->luma.reset();
      imports->chroma.reset();
      imports->buffer.reset();
    });
  });
  return state;
}
}  // namespace

VkGlFrame::VkGlFrame(GlWorker& worker, const VkFrameImages& images) {
  state_ = import_on(worker, [&](detail::VkGlImports& i) {
    i.luma = std::make_unique<GlVkTexture>(images.luma());
    i.chroma = std::make_unique<GlVkTexture>(images.chroma());
  });
}

VkGlFrame::VkGlFrame(GlWorker& worker, const VkFrameBuffer& buffer) {
  state_ = import_on(worker, [&](detail::VkGlImports& i) { i.buffer = std::make_unique<GlVkBuffer>(buffer.buffer()); });
  state_->layout = buffer.layout();
}

unsigned VkGlFrame::luma_texture() const noexcept { return state_ ? state_->luma : 0; }
unsigned VkGlFrame::chroma_texture() const noexcept { return state_ ? state_->chroma : 0; }
unsigned VkGlFrame::buffer() const noexcept { return state_ ? state_->buffer : 0; }
std::shared_ptr<const void> VkGlFrame::keep_alive() const noexcept { return state_; }

Frame VkGlFrame::frame() const {
  if (!state_ || !state_->layout) throw UsageError("VkGlFrame::frame: not a buffer import");
  Frame f = state_->layout->describe(MemoryKind::GlBuffer);
  f.gl_buffer = state_->buffer;
  f.owner = state_;
  return f;
}

}  // namespace handoff
