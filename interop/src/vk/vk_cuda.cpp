#include <handoff/vk_cuda.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/detail/cuda_handles.hpp>
#include <handoff/cuda_check.hpp>

#include <memory>
#include <string>

namespace handoff {
namespace abi = cuda::abi;

void check_vk_cuda_device(const VkDeviceInfo& vk, const cuda::DeviceInfo& cuda) {
  if (cuda.uuid != vk.device_uuid)
    throw Error(Api::Cuda, "cuDeviceGetUuid", 0, {},
                "CUDA device " + std::to_string(cuda.ordinal) + " (" + cuda.name + ", " + to_string(cuda.uuid) +
                    ") is not the Vulkan device (" + vk.name + ", " + to_string(vk.device_uuid) +
                    "): interop across GPUs is refused",
                HANDOFF_WHERE);
}

// --- CudaVkMemory ------------------------------------------------------------------

namespace {

// The alignment every CUDA device pointer has. cuExternalMemoryGetMappedBuffer
// wants its offset "suitably aligned" (the docs say no more): a range that
// starts elsewhere is mapped from the aligned offset below it and the pointer
// moved on, as the docs advise for parts of one object (map the combined
// range, derive the part by offset).
constexpr std::uint64_t kMappedBufferAlignment = 256;

std::string import_detail(const ExportedMemory& memory) {
  std::string detail =
      std::string(to_string(memory.type)) + " descriptor of " + std::to_string(memory.allocation_size) + " bytes";
  if (memory.type == VkHandleType::DmaBuf)
    detail += "; the driver refused DMA-BUF as external memory (image planes: import_dmabuf_plane() "
              "tries the EGLImage route, cuGraphicsEGLRegisterImage; buffers: export OPAQUE_FD instead)";
  return detail;
}

}  // namespace

struct CudaVkMemory::Handles {
  // Member order is release order, last to first: the mapping is freed
  // (cuMemFree) before the external memory is destroyed, then the context goes.
  cuda::detail::RetainedContext ctx;
  cuda::detail::UniqueExternalMemory memory;
  cuda::detail::UniqueDevicePointer mapping;  // from `offset` rounded down to the mapping alignment
};

CudaVkMemory::~CudaVkMemory() = default;
std::uint64_t CudaVkMemory::device_pointer() const noexcept { return handles_->mapping.get() + lead_; }
void* CudaVkMemory::context() const noexcept { return handles_->ctx->handle(); }
int CudaVkMemory::device() const noexcept { return handles_->ctx->device(); }

CudaVkMemory::CudaVkMemory(const cuda::PrimaryContext& ctx, ExportedMemory& memory)
    : CudaVkMemory(ctx, memory, memory.offset, memory.size) {}

CudaVkMemory::CudaVkMemory(const cuda::PrimaryContext& ctx, ExportedMemory& memory, std::uint64_t offset,
                           std::uint64_t size)
    : handles_(std::make_unique<Handles>(Handles{cuda::detail::retain(ctx, "CudaVkMemory"), {}, {}})) {
  const cuda::detail::RetainedContext& retained = handles_->ctx;
  if (!memory.fd) throw UsageError("CudaVkMemory: the ExportedMemory holds no descriptor (already imported?)");
  if (size == 0 || offset > memory.allocation_size || size > memory.allocation_size - offset)
    throw UsageError("CudaVkMemory: range [" + std::to_string(offset) + ", +" + std::to_string(size) +
                     ") is outside the " + std::to_string(memory.allocation_size) + "-byte allocation");
  const abi::DriverApi& api = retained->driver()->api();
  cuda::ScopedContext current(*retained);

  abi::CUDA_EXTERNAL_MEMORY_HANDLE_DESC desc{};
  desc.type = memory.type == VkHandleType::OpaqueFd ? abi::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD
                                                     : abi::CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD;
  desc.handle.fd = memory.fd.get();
  desc.size = memory.allocation_size;
  desc.flags = memory.dedicated ? abi::kCudaExternalMemoryDedicated : 0u;
  abi::CUexternalMemory imported = nullptr;
  // A failed import leaves the descriptor with the caller.
  HANDOFF_CU_CHECK(api.cuImportExternalMemory(&imported, &desc), import_detail(memory));
  (void)memory.fd.release();  // CUDA owns the descriptor now
  handles_->memory = cuda::detail::UniqueExternalMemory(imported, {retained});

  const std::uint64_t lead = offset % kMappedBufferAlignment;
  abi::CUDA_EXTERNAL_MEMORY_BUFFER_DESC bd{};
  bd.offset = offset - lead;
  bd.size = size + lead;
  abi::CUdeviceptr ptr = 0;
  HANDOFF_CU_CHECK(api.cuExternalMemoryGetMappedBuffer(&ptr, imported, &bd),
                   std::to_string(bd.size) + " bytes at offset " + std::to_string(bd.offset) + " (for " +
                       std::to_string(size) + " at " + std::to_string(offset) + ")");
  handles_->mapping = cuda::detail::UniqueDevicePointer(ptr, {retained});
  lead_ = lead;
  size_ = size;
}

// --- frames ------------------------------------------------------------------------

Frame import_vk_frame(const cuda::PrimaryContext& ctx, const VkFrameBuffer& buffer) {
  if (!ctx) throw UsageError("import_vk_frame: the PrimaryContext holds no context (moved from or reset)");
  check_vk_cuda_device(buffer.buffer().context().info(), ctx.driver()->device(ctx.device()));
  ExportedMemory exported = buffer.buffer().export_memory();
  // One mapping covering both planes; the planes are offsets into it (the
  // driver's documented advice over one mapping per plane).
  auto import = std::make_shared<CudaVkMemory>(ctx, exported, 0, buffer.layout().buffer_bytes());
  Frame f = buffer.layout().describe(MemoryKind::Cuda, {reinterpret_cast<void*>(import->device_pointer())});
  f.device = import->device();
  f.cuda_context = import->context();
  f.owner = import;  // the import and its context live as long as the frame
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

struct CudaVkSemaphore::Handles {
  cuda::detail::RetainedContext ctx;
  cuda::detail::UniqueExternalSemaphore semaphore;
};

CudaVkSemaphore::~CudaVkSemaphore() = default;

CudaVkSemaphore::CudaVkSemaphore(const cuda::PrimaryContext& ctx, UniqueFd& fd)
    : handles_(std::make_unique<Handles>(Handles{cuda::detail::retain(ctx, "CudaVkSemaphore"), {}})) {
  if (!fd) throw UsageError("CudaVkSemaphore: no descriptor (already imported?)");
  const cuda::detail::RetainedContext& retained = handles_->ctx;
  cuda::ScopedContext current(*retained);
  abi::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC desc{};
  desc.type = abi::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD;
  desc.handle.fd = fd.get();
  abi::CUexternalSemaphore imported = nullptr;
  HANDOFF_CU_CHECK(retained->driver()->api().cuImportExternalSemaphore(&imported, &desc),
                   "OPAQUE_FD semaphore (fall back to CPU fences)");
  (void)fd.release();  // CUDA owns the descriptor now
  handles_->semaphore = cuda::detail::UniqueExternalSemaphore(imported, {retained});
}

void CudaVkSemaphore::wait(CudaStream stream) {
  const Handles& h = *handles_;
  cuda::ScopedContext current(*h.ctx);
  abi::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS p{};
  const abi::CUexternalSemaphore sem = h.semaphore.get();
  HANDOFF_CU_CHECK(
      h.ctx->driver()->api().cuWaitExternalSemaphoresAsync(&sem, &p, 1, static_cast<abi::CUstream>(stream.handle())));
}

void CudaVkSemaphore::signal(CudaStream stream) {
  const Handles& h = *handles_;
  cuda::ScopedContext current(*h.ctx);
  abi::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS p{};
  const abi::CUexternalSemaphore sem = h.semaphore.get();
  HANDOFF_CU_CHECK(
      h.ctx->driver()->api().cuSignalExternalSemaphoresAsync(&sem, &p, 1, static_cast<abi::CUstream>(stream.handle())));
}

}  // namespace handoff
