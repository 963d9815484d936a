// CUDA for handoff::live, publisher side: frame copies, and the CUDA slot
// route. Slots are virtual-memory allocations exported as POSIX file
// descriptors where the device and driver can (cuMemCreate with
// CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), else legacy IPC handles
// (cuIpcGetMemHandle), else host memfds; the route says why it fell back.
// Writes are ordered before an announcement by an interprocess event recorded
// after them, or, where there are none, by synchronising the stream.
#include "cuda_slots.hpp"

#include <handoff/frame_copy.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/publisher.hpp>
#include <handoff/unique_handle.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda.hpp>
#include <handoff/detail/cuda_handles.hpp>
#include <handoff/cuda_check.hpp>
#include "slot_storage.hpp"

#include <cstring>

namespace handoff::live::detail {

cuda::abi::CUmemAllocationProp device_allocation(int device) {
  cuda::abi::CUmemAllocationProp prop{};
  prop.type = cuda::abi::CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = cuda::abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type = cuda::abi::CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

void require_entry_points(const char* what, std::initializer_list<std::pair<const char*, const void*>> fns) {
  for (const auto& [name, fn] : fns)
    if (fn == nullptr) throw Error(std::string("the CUDA driver has no ") + name + " (needed for " + what + ")");
}

namespace {

// --- one slot's CUDA memory ----------------------------------------------------------------
class CudaStorage final : public SlotStorage {
 public:
  using Export = CudaSlotExport;

  CudaStorage(const cuda::PrimaryContext& ctx, Export how, std::size_t bytes, std::size_t granularity,
              const Uuid& uuid, bool ipc_event)
      : ctx_(cuda::detail::retain(ctx, "live: a CUDA slot")), how_(how), uuid_(uuid) {
    cuda::ScopedContext current(*ctx_);
    if (how == Export::VirtualMemory) create_vmm(bytes, granularity);
    else create_legacy(bytes);
    if (ipc_event) create_event();
  }

  SlotKind kind() const override { return how_ == Export::VirtualMemory ? SlotKind::CudaVmmFd : SlotKind::CudaIpcHandle; }
  std::uint64_t capacity() const override { return size_; }
  Frame describe(const FrameLayout& l) const override;
  void write(const Frame& src, const FrameLayout& l, CudaStream stream) override {
    copy_frame(src, describe(l), stream, CopyCompletion::Queued);  // ordered before finish() on the same stream
  }
  void finish(const PresentSync& sync) override {
    cuda::ScopedContext current(*ctx_);
    auto* s = static_cast<cuda::abi::CUstream>(sync.cuda_stream.handle());
    if (event_) HANDOFF_CU_CHECK(api().cuEventRecord(event_.get(), s));
    else HANDOFF_CU_CHECK(api().cuStreamSynchronize(s));
  }
  void announce(SlotAnnounce& out) const override;
  int descriptor() const override { return fd_ ? fd_.get() : -1; }

 private:
  void create_vmm(std::size_t bytes, std::size_t granularity);
  void create_legacy(std::size_t bytes);
  void create_event();
  const cuda::abi::DriverApi& api() const { return ctx_->driver()->api(); }

  cuda::detail::RetainedContext ctx_;  // the slot's device; every handle below holds it retained too
  Export how_;
  Uuid uuid_;
  std::size_t size_ = 0;
  // Member order is destruction order, the documented teardown: the event,
  // then unmap, release the allocation, free the range; the descriptor last.
  UniqueFd fd_;
  cuda::detail::UniqueAddressRange reserved_;
  cuda::detail::UniqueAllocation handle_;
  cuda::detail::UniqueMemoryMapping mapped_;
  cuda::detail::UniqueDevicePointer allocated_;  // legacy IPC: cuMemAlloc'd
  cuda::abi::CUipcMemHandle ipc_memory_{};
  cuda::detail::UniqueEvent event_;
  cuda::abi::CUipcEventHandle ipc_event_{};
};

// cuMemCreate, export the descriptor (sent to every subscriber), and map it
// here too so the publisher can write it.
void CudaStorage::create_vmm(std::size_t bytes, std::size_t granularity) {
  const cuda::abi::DriverApi& a = api();
  size_ = (bytes + granularity - 1) / granularity * granularity;
  const cuda::abi::CUmemAllocationProp prop = device_allocation(ctx_->device());
  cuda::abi::CUmemGenericAllocationHandle handle = 0;
  HANDOFF_CU_CHECK(a.cuMemCreate(&handle, size_, &prop, 0ull));
  handle_ = cuda::detail::UniqueAllocation(handle, {ctx_});
  int fd = -1;
  ctx_->driver()->check(a.cuMemExportToShareableHandle(&fd, handle, cuda::abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                        "cuMemExportToShareableHandle", "POSIX_FILE_DESCRIPTOR", HANDOFF_WHERE);
  fd_.reset(fd);
  cuda::abi::CUdeviceptr range = 0;
  HANDOFF_CU_CHECK(a.cuMemAddressReserve(&range, size_, granularity, cuda::abi::CUdeviceptr{0}, 0ull));
  reserved_ = cuda::detail::UniqueAddressRange(range, {ctx_, size_});
  HANDOFF_CU_CHECK(a.cuMemMap(range, size_, std::size_t{0}, handle, 0ull));
  mapped_ = cuda::detail::UniqueMemoryMapping(range, {ctx_, size_});
  cuda::abi::CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = cuda::abi::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  HANDOFF_CU_CHECK(a.cuMemSetAccess(range, size_, &access, std::size_t{1}));
}

void CudaStorage::create_legacy(std::size_t bytes) {
  size_ = bytes;
  cuda::abi::CUdeviceptr p = 0;
  HANDOFF_CU_CHECK(api().cuMemAlloc(&p, size_));
  allocated_ = cuda::detail::UniqueDevicePointer(p, {ctx_});
  HANDOFF_CU_CHECK(api().cuIpcGetMemHandle(&ipc_memory_, p));
}

void CudaStorage::create_event() {
  cuda::abi::CUevent e = nullptr;
  HANDOFF_CU_CHECK(api().cuEventCreate(&e, unsigned(cuda::abi::CU_EVENT_INTERPROCESS | cuda::abi::CU_EVENT_DISABLE_TIMING)));
  event_ = cuda::detail::UniqueEvent(e, {ctx_});
  HANDOFF_CU_CHECK(api().cuIpcGetEventHandle(&ipc_event_, e));
}

Frame CudaStorage::describe(const FrameLayout& l) const {
  const cuda::abi::CUdeviceptr base = mapped_ ? mapped_.get() : allocated_.get();
  Frame f = l.describe(MemoryKind::Cuda, {reinterpret_cast<void*>(base)});
  f.device = ctx_->device();
  f.cuda_context = ctx_->handle();
  return f;
}

void CudaStorage::announce(SlotAnnounce& out) const {
  out.kind = kind();
  out.size = out.allocation_size = size_;
  out.offset = 0;
  out.device_uuid = uuid_;
  if (how_ == Export::LegacyIpc) std::memcpy(out.ipc_memory.data(), ipc_memory_.reserved, kIpcHandleBytes);
  out.has_event = bool(event_);
  if (event_) std::memcpy(out.ipc_event.data(), ipc_event_.reserved, kIpcHandleBytes);
}

}  // namespace

std::unique_ptr<SlotStorage> make_cuda_storage(const cuda::PrimaryContext& ctx, CudaSlotExport how, std::size_t bytes,
                                               std::size_t granularity, const Uuid& uuid, bool ipc_event) {
  return std::make_unique<CudaStorage>(ctx, how, bytes, granularity, uuid, ipc_event);
}

}  // namespace handoff::live::detail
