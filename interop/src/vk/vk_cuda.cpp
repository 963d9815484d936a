#include <handoff/log.hpp>
#include <handoff/vk_cuda.hpp>

#include <string>

#include <handoff/cuda_abi.hpp>

namespace handoff {
namespace abi = cuda::abi;

namespace {

const cuda::Driver& driver_of(const cuda::PrimaryContext& ctx) {
  if (!ctx) throw UsageError("CudaVkMemory: the PrimaryContext holds no context");
  return *ctx.driver();
}

}  // namespace

void check_vk_cuda_device(const VkDeviceInfo& vk, const cuda::DeviceInfo& cuda) {
  if (cuda.uuid != vk.device_uuid)
    throw Error(Api::Cuda, "cuDeviceGetUuid", 0, {},
                "CUDA device " + std::to_string(cuda.ordinal) + " (" + cuda.name + ", " + to_string(cuda.uuid) +
                    ") is not the Vulkan device (" + vk.name + ", " + to_string(vk.device_uuid) +
                    "): interop across GPUs is refused",
                HANDOFF_WHERE);
}

// --- CudaVkMemory ------------------------------------------------------------------

CudaVkMemory::CudaVkMemory(const cuda::PrimaryContext& ctx, ExportedMemory& memory)
    : CudaVkMemory(ctx, memory, memory.offset, memory.size) {}

CudaVkMemory::CudaVkMemory(const cuda::PrimaryContext& ctx, ExportedMemory& memory, std::uint64_t offset,
                           std::uint64_t size)
    : drv_(&driver_of(ctx)), ctx_(ctx.get()), ordinal_(ctx.device()) {
  if (!memory.fd) throw UsageError("CudaVkMemory: the ExportedMemory holds no descriptor (already imported?)");
  if (size == 0 || offset > memory.allocation_size || size > memory.allocation_size - offset)
    throw UsageError("CudaVkMemory: range [" + std::to_string(offset) + ", +" + std::to_string(size) +
                     ") is outside the " + std::to_string(memory.allocation_size) + "-byte allocation");
  const abi::DriverApi& api = drv_->api();
  cuda::ScopedContext current(ctx);

  abi::CUDA_EXTERNAL_MEMORY_HANDLE_DESC desc{};
  desc.type = memory.type == VkHandleType::OpaqueFd ? abi::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD
                                                     : abi::CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD;
  desc.handle.fd = memory.fd.get();
  desc.size = memory.allocation_size;
  desc.flags = memory.dedicated ? abi::kCudaExternalMemoryDedicated : 0u;
  abi::CUexternalMemory ext = nullptr;
  abi::CUresult r = api.cuImportExternalMemory(&ext, &desc);
  if (r != abi::CUDA_SUCCESS) {
    // The descriptor is still ours (a failed import does not take it).
    std::string detail = std::string(to_string(memory.type)) + " descriptor of " +
                         std::to_string(memory.allocation_size) + " bytes";
    if (memory.type == VkHandleType::DmaBuf)
      detail += "; the driver refused DMA-BUF as external memory (image planes: import_dmabuf_plane() "
                "tries the EGLImage route, cuGraphicsEGLRegisterImage; buffers: export OPAQUE_FD instead)";
    drv_->check(r, "cuImportExternalMemory", detail, HANDOFF_WHERE);
  }
  (void)memory.fd.release();  // CUDA owns the descriptor now
  ext_ = ext;

  abi::CUDA_EXTERNAL_MEMORY_BUFFER_DESC bd{};
  bd.offset = offset;
  bd.size = size;
  abi::CUdeviceptr ptr = 0;
  r = api.cuExternalMemoryGetMappedBuffer(&ptr, ext, &bd);
  if (r != abi::CUDA_SUCCESS) {
    api.cuDestroyExternalMemory(ext);  // nothing mapped yet: destroying is all there is to undo
    ext_ = nullptr;
    drv_->check(r, "cuExternalMemoryGetMappedBuffer",
                std::to_string(size) + " bytes at offset " + std::to_string(offset), HANDOFF_WHERE);
  }
  ptr_ = ptr;
  size_ = size;
}

CudaVkMemory::~CudaVkMemory() {
  if (!ext_) return;
  try {
    cuda::ScopedContext current(*drv_, ctx_);
    const abi::DriverApi& api = drv_->api();
    // The docs: a pointer from cuExternalMemoryGetMappedBuffer is freed with
    // cuMemFree, then the external memory is destroyed.
    if (abi::CUresult r = api.cuMemFree(ptr_); r != abi::CUDA_SUCCESS)
      log(LogLevel::Error, "CudaVkMemory: cuMemFree failed with " + drv_->error_name(r));
    if (abi::CUresult r = api.cuDestroyExternalMemory(static_cast<abi::CUexternalMemory>(ext_)); r != abi::CUDA_SUCCESS)
      log(LogLevel::Error, "CudaVkMemory: cuDestroyExternalMemory failed with " + drv_->error_name(r));
  } catch (const std::exception& e) {
    log(LogLevel::Error, std::string("CudaVkMemory: release failed: ") + e.what());
  }
}

// --- frames ------------------------------------------------------------------------

Frame import_vk_frame(const cuda::PrimaryContext& ctx, const VkFrameBuffer& buffer) {
  check_vk_cuda_device(buffer.buffer().context().info(), driver_of(ctx).device(ctx.device()));
  ExportedMemory exported = buffer.buffer().export_memory();
  // One mapping covering both planes; the planes are offsets into it (the docs
  // recommend this over one mapping per plane).
  auto import = std::make_shared<CudaVkMemory>(ctx, exported, 0, buffer.layout().size);
  Frame f = buffer.layout().describe(MemoryKind::Cuda, reinterpret_cast<void*>(import->device_pointer()));
  f.device = import->device();
  f.cuda_context = import->context();
  f.owner = import;
  return f;
}

Frame import_vk_frame(const cuda::PrimaryContext& ctx, VkFrameProducer& producer) {
  if (!producer.buffer())
    throw UsageError("import_vk_frame: the producer writes plane images; CUDA maps buffers (Target::Buffer)");
  Frame f = import_vk_frame(ctx, *producer.buffer());
  f.colorimetry = producer.colorimetry();
  f.index = producer.last_index();
  return f;
}

// --- DMA-BUF planes: external memory, else the EGLImage route ---------------------

CudaDmaBufPlane import_dmabuf_plane(const cuda::PrimaryContext& ctx, ExportedMemory& memory, const DmaBufPlane& plane,
                                    void* egl_display) {
  if (memory.type != VkHandleType::DmaBuf) throw UsageError("import_dmabuf_plane: the descriptor is not a DMA-BUF");
  if (!memory.fd) throw UsageError("import_dmabuf_plane: the ExportedMemory holds no descriptor");
  const std::uint64_t plane_bytes = std::uint64_t(plane.pitch) * plane.height;
  if (plane.pitch == 0 || plane.height == 0 || plane.offset > memory.allocation_size ||
      plane_bytes > memory.allocation_size - plane.offset)
    throw UsageError("import_dmabuf_plane: the plane (offset " + std::to_string(plane.offset) + ", " +
                     std::to_string(plane.pitch) + " x " + std::to_string(plane.height) + " bytes) is outside the " +
                     std::to_string(memory.allocation_size) + "-byte allocation");
  CudaDmaBufPlane out;
  std::string external_failure;
  try {
    auto import = std::make_shared<CudaVkMemory>(ctx, memory, plane.offset, plane_bytes);
    out.device_pointer = import->device_pointer();
    out.pitch = plane.pitch;
    out.owner = std::move(import);
    return out;
  } catch (const Error& e) {
    external_failure = e.what();  // memory.fd is still ours: a failed import does not take it
  }
  if (!egl_display)
    throw Error(Api::Cuda, "import_dmabuf_plane", 0, {},
                "external memory refused the DMA-BUF (" + external_failure +
                    ") and no EGL display was given for the EGLImage route",
                HANDOFF_WHERE);
  try {
    DmaBufPlane p = plane;
    p.fd = memory.fd.get();
    struct Both {
      EglDmaBufImage image;
      CudaEglImage cuda;
      Both(void* display, const DmaBufPlane& pl, const cuda::PrimaryContext& c)
          : image(display, pl), cuda(c, image.image()) {}
    };
    auto both = std::make_shared<Both>(egl_display, p, ctx);
    const CudaEglPlane& cp = both->cuda.plane();
    out.device_pointer = cp.pitched ? cp.device_pointer : 0;
    out.array = cp.pitched ? nullptr : cp.array;
    out.pitch = cp.pitch;
    out.via_egl_image = true;
    out.owner = std::move(both);
    return out;
  } catch (const Error& e) {
    throw Error(Api::Cuda, "import_dmabuf_plane", 0, {},
                "neither route took the DMA-BUF plane: external memory: " + external_failure +
                    "; EGLImage route: " + e.what(),
                HANDOFF_WHERE);
  }
}

// --- CudaVkSemaphore ---------------------------------------------------------------

namespace {
UniqueFd semaphore_fd(const VkExportableSemaphore& s) { return s.export_fd(); }
}  // namespace

// The temporary descriptor lives to the end of the delegation: closed there
// unless CUDA took it.
CudaVkSemaphore::CudaVkSemaphore(const cuda::PrimaryContext& ctx, const VkExportableSemaphore& semaphore)
    : CudaVkSemaphore(ctx, *std::make_unique<UniqueFd>(semaphore_fd(semaphore))) {}

CudaVkSemaphore::CudaVkSemaphore(const cuda::PrimaryContext& ctx, UniqueFd& fd)
    : drv_(&driver_of(ctx)), ctx_(ctx.get()) {
  if (!fd) throw UsageError("CudaVkSemaphore: no descriptor (already imported?)");
  cuda::ScopedContext current(ctx);
  abi::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC desc{};
  desc.type = abi::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD;
  desc.handle.fd = fd.get();
  abi::CUexternalSemaphore sem = nullptr;
  drv_->check(drv_->api().cuImportExternalSemaphore(&sem, &desc), "cuImportExternalSemaphore",
              "OPAQUE_FD semaphore (fall back to CPU fences)", HANDOFF_WHERE);
  (void)fd.release();  // CUDA owns the descriptor now
  sem_ = sem;
}

CudaVkSemaphore::~CudaVkSemaphore() {
  if (!sem_) return;
  try {
    cuda::ScopedContext current(*drv_, ctx_);
    if (abi::CUresult r = drv_->api().cuDestroyExternalSemaphore(static_cast<abi::CUexternalSemaphore>(sem_));
        r != abi::CUDA_SUCCESS)
      log(LogLevel::Error, "CudaVkSemaphore: cuDestroyExternalSemaphore failed with " + drv_->error_name(r));
  } catch (const std::exception& e) {
    log(LogLevel::Error, std::string("CudaVkSemaphore: release failed: ") + e.what());
  }
}

void CudaVkSemaphore::wait(void* stream) {
  cuda::ScopedContext current(*drv_, ctx_);
  abi::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS p{};
  auto sem = static_cast<abi::CUexternalSemaphore>(sem_);
  drv_->check(drv_->api().cuWaitExternalSemaphoresAsync(&sem, &p, 1, static_cast<abi::CUstream>(stream)),
              "cuWaitExternalSemaphoresAsync", {}, HANDOFF_WHERE);
}

void CudaVkSemaphore::signal(void* stream) {
  cuda::ScopedContext current(*drv_, ctx_);
  abi::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS p{};
  auto sem = static_cast<abi::CUexternalSemaphore>(sem_);
  drv_->check(drv_->api().cuSignalExternalSemaphoresAsync(&sem, &p, 1, static_cast<abi::CUstream>(stream)),
              "cuSignalExternalSemaphoresAsync", {}, HANDOFF_WHERE);
}

}  // namespace handoff
