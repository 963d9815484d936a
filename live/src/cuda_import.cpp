// CUDA for handoff::live, subscriber side: a CUDA slot imported into this
// process on the same GPU (found by UUID). Virtual memory: the descriptor is
// imported (cuMemImportFromShareableHandle), a range reserved, mapped and made
// accessible; legacy IPC: the handle opened. The slot's interprocess event is
// opened too. Teardown in the documented order, on whichever thread drops the
// last frame of the slot.
#include <handoff/detail/cuda_handles.hpp>
#include <handoff/log.hpp>
#include <handoff/wait.hpp>
#include <handoff/cuda_check.hpp>

#include "cuda_slots.hpp"
#include "slot_import.hpp"

#include <chrono>
#include <cstring>
#include <thread>

namespace handoff::live::detail {

namespace {

// The ordinal of the device the publisher's memory is on, as this process numbers it.
int device_with_uuid(const cuda::Driver& d, const Uuid& uuid) {
  for (int i = 0; i < d.device_count(); ++i) {
    const cuda::DeviceInfo info = d.device(i);
    if (info.uuid == uuid) return i;
  }
  throw Error("the publisher's CUDA device " + to_string(uuid) + " is not visible to this process");
}

class CudaImport final : public SlotImport {
 public:
  CudaImport(const SlotAnnounce& info, UniqueFd fd);

  MemoryKind memory() const override { return MemoryKind::Cuda; }
  std::byte* base() const override { return reinterpret_cast<std::byte*>(mapped_ ? mapped_.get() : opened_.get()); }
  int device() const override { return ctx_->device(); }
  void* cuda_context() const override { return ctx_->handle(); }
  void* cuda_event() const override { return event_.get(); }
  void wait_event() const override;
  int descriptor() const override { return fd_ ? fd_.get() : -1; }

 private:
  void import_vmm();
  void open_legacy();
  void open_event();
  const cuda::abi::DriverApi& api() const { return drv_.api(); }

  const cuda::Driver& drv_;
  cuda::detail::RetainedContext ctx_;  // the device with the publisher's UUID; every handle holds it too
  UniqueFd fd_;  // kept for duplicate_descriptor(); the import holds its own reference
  // Member order is destruction order, the documented teardown: the event,
  // then unmap, release the allocation, free the range (or close the IPC memory).
  cuda::detail::UniqueAddressRange reserved_;
  cuda::detail::UniqueAllocation handle_;
  cuda::detail::UniqueMemoryMapping mapped_;
  cuda::detail::UniqueIpcMemory opened_;
  cuda::detail::UniqueEvent event_;
};

CudaImport::CudaImport(const SlotAnnounce& info, UniqueFd fd)
    : SlotImport(info), drv_(cuda::driver()), fd_(std::move(fd)) {
  if (!drv_.usable()) throw Error("this process cannot import the publisher's CUDA slots: " + drv_.describe());
  ctx_ = std::make_shared<const cuda::PrimaryContext>(drv_, device_with_uuid(drv_, info.device_uuid));
  cuda::ScopedContext current(*ctx_);
  if (info.kind == SlotKind::CudaVmmFd) import_vmm();
  else open_legacy();
  if (info.has_event) open_event();
}

void CudaImport::import_vmm() {
  const cuda::abi::DriverApi& a = drv_.api();
  require_entry_points("importing a CUDA VMM slot",
                       {{"cuMemImportFromShareableHandle", reinterpret_cast<const void*>(a.cuMemImportFromShareableHandle)},
                        {"cuMemGetAllocationGranularity", reinterpret_cast<const void*>(a.cuMemGetAllocationGranularity)},
                        {"cuMemAddressReserve", reinterpret_cast<const void*>(a.cuMemAddressReserve)},
                        {"cuMemMap", reinterpret_cast<const void*>(a.cuMemMap)},
                        {"cuMemSetAccess", reinterpret_cast<const void*>(a.cuMemSetAccess)}});
  const std::size_t size = info().allocation_size;
  const cuda::abi::CUmemAllocationProp prop = device_allocation(ctx_->device());
  std::size_t granularity = 0;
  HANDOFF_CU_CHECK(a.cuMemGetAllocationGranularity(&granularity, &prop, cuda::abi::CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  if (granularity == 0 || size % granularity != 0)
    throw ProtocolError("slot.allocation_size", std::to_string(size) + " is not a multiple of the allocation granularity " +
                                                    std::to_string(granularity));
  // The descriptor travels as the pointer argument; it stays ours (closed with fd_).
  void* os_handle = reinterpret_cast<void*>(static_cast<std::intptr_t>(fd_.get()));
  cuda::abi::CUmemGenericAllocationHandle handle = 0;
  HANDOFF_CU_CHECK(a.cuMemImportFromShareableHandle(&handle, os_handle, cuda::abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  handle_ = cuda::detail::UniqueAllocation(handle, {ctx_});
  cuda::abi::CUdeviceptr range = 0;
  HANDOFF_CU_CHECK(a.cuMemAddressReserve(&range, size, granularity, cuda::abi::CUdeviceptr{0}, 0ull));
  reserved_ = cuda::detail::UniqueAddressRange(range, {ctx_, size});
  HANDOFF_CU_CHECK(a.cuMemMap(range, size, std::size_t{0}, handle, 0ull));
  mapped_ = cuda::detail::UniqueMemoryMapping(range, {ctx_, size});
  cuda::abi::CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = cuda::abi::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  HANDOFF_CU_CHECK(a.cuMemSetAccess(range, size, &access, std::size_t{1}));
}

void CudaImport::open_legacy() {
  if (!api().cuIpcOpenMemHandle) throw Error("the CUDA driver has no cuIpcOpenMemHandle");
  cuda::abi::CUipcMemHandle h{};
  std::memcpy(h.reserved, info().ipc_memory.data(), kIpcHandleBytes);
  cuda::abi::CUdeviceptr p = 0;
  HANDOFF_CU_CHECK(api().cuIpcOpenMemHandle(&p, h, unsigned(cuda::abi::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)));
  opened_ = cuda::detail::UniqueIpcMemory(p, {ctx_});
}

void CudaImport::open_event() {
  if (!api().cuIpcOpenEventHandle) throw Error("the CUDA driver has no cuIpcOpenEventHandle");
  cuda::abi::CUipcEventHandle h{};
  std::memcpy(h.reserved, info().ipc_event.data(), kIpcHandleBytes);
  cuda::abi::CUevent e = nullptr;
  HANDOFF_CU_CHECK(api().cuIpcOpenEventHandle(&e, h));
  event_ = cuda::detail::UniqueEvent(e, {ctx_});
}

// Polls the event so the wait has a bound (cuEventSynchronize has none).
void CudaImport::wait_event() const {
  if (!event_) return;
  cuda::ScopedContext current(*ctx_);
  const auto limit = wait_limit();
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const cuda::abi::CUresult r = api().cuEventQuery(event_.get());
    if (r == cuda::abi::CUDA_SUCCESS) return;
    if (r != cuda::abi::CUDA_ERROR_NOT_READY) drv_.check(r, "cuEventQuery", "the publisher's frame event", HANDOFF_WHERE);
    if (std::chrono::steady_clock::now() > deadline)
      throw WaitTimeout("the publisher's CUDA work on a live frame (its interprocess event)", limit);
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace

std::shared_ptr<SlotImport> import_cuda_slot(const SlotAnnounce& info, UniqueFd fd) {
  if (info.kind == SlotKind::CudaVmmFd && !fd) throw ProtocolError("descriptors", "a CUDA VMM slot without its descriptor");
  return std::make_shared<CudaImport>(info, std::move(fd));
}

}  // namespace handoff::live::detail
