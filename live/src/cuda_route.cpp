// The publisher's CUDA route: which way slots can be shared on this device and
// driver, found by trying each way once (a small allocation exported and
// released) when the publisher starts, with the reason for every fallback.
#include <handoff/log.hpp>
#include <handoff/publisher.hpp>
#include <handoff/unique_handle.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda.hpp>
#include <handoff/cuda_check.hpp>
#include "cuda_slots.hpp"
#include "slot_storage.hpp"

namespace handoff::live::detail {

namespace {

int attribute(const cuda::Driver& d, int device, cuda::abi::CUdevice_attribute attr, const char* name) {
  cuda::abi::CUdevice dev = 0;
  HANDOFF_CU_CHECK(d.api().cuDeviceGet(&dev, device));
  int v = 0;
  d.check(d.api().cuDeviceGetAttribute(&v, attr, dev), "cuDeviceGetAttribute", name, HANDOFF_WHERE);
  return v;
}

// Virtual memory exported as a POSIX fd: the entry points, the device
// attributes, and one granularity-sized allocation exported and released.
std::size_t probe_vmm(const cuda::Driver& d, const cuda::PrimaryContext& ctx) {
  const cuda::abi::DriverApi& a = d.api();
  require_entry_points("virtual-memory export",
                       {{"cuMemCreate", reinterpret_cast<const void*>(a.cuMemCreate)},
                        {"cuMemExportToShareableHandle", reinterpret_cast<const void*>(a.cuMemExportToShareableHandle)},
                        {"cuMemGetAllocationGranularity", reinterpret_cast<const void*>(a.cuMemGetAllocationGranularity)},
                        {"cuMemAddressReserve", reinterpret_cast<const void*>(a.cuMemAddressReserve)},
                        {"cuMemMap", reinterpret_cast<const void*>(a.cuMemMap)},
                        {"cuMemSetAccess", reinterpret_cast<const void*>(a.cuMemSetAccess)},
                        {"cuMemUnmap", reinterpret_cast<const void*>(a.cuMemUnmap)},
                        {"cuMemRelease", reinterpret_cast<const void*>(a.cuMemRelease)},
                        {"cuMemAddressFree", reinterpret_cast<const void*>(a.cuMemAddressFree)}});
  const int device = ctx.device();
  if (!attribute(d, device, cuda::abi::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, "VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED"))
    throw Error("device " + std::to_string(device) + " has no virtual memory management");
  if (!attribute(d, device, cuda::abi::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                 "HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED"))
    throw Error("device " + std::to_string(device) + " cannot export memory as a POSIX file descriptor");
  cuda::ScopedContext current(ctx);
  const cuda::abi::CUmemAllocationProp prop = device_allocation(device);
  std::size_t granularity = 0;
  HANDOFF_CU_CHECK(d.api().cuMemGetAllocationGranularity(&granularity, &prop, cuda::abi::CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  if (granularity == 0) throw Error("cuMemGetAllocationGranularity gave 0");
  cuda::abi::CUmemGenericAllocationHandle h = 0;
  HANDOFF_CU_CHECK(d.api().cuMemCreate(&h, granularity, &prop, 0ull));
  int fd = -1;
  const cuda::abi::CUresult r = a.cuMemExportToShareableHandle(&fd, h, cuda::abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  const UniqueFd owned(fd);  // the probe only needed to see that it could export
  a.cuMemRelease(h);
  d.check(r, "cuMemExportToShareableHandle", "POSIX_FILE_DESCRIPTOR", HANDOFF_WHERE);
  return granularity;
}

void probe_legacy(const cuda::Driver& d, const cuda::PrimaryContext& ctx) {
  const cuda::abi::DriverApi& a = d.api();
  require_entry_points("legacy IPC", {{"cuIpcGetMemHandle", reinterpret_cast<const void*>(a.cuIpcGetMemHandle)}});
  cuda::ScopedContext current(ctx);
  cuda::abi::CUdeviceptr p = 0;
  HANDOFF_CU_CHECK(d.api().cuMemAlloc(&p, std::size_t{1} << 20));
  cuda::abi::CUipcMemHandle h{};
  const cuda::abi::CUresult r = a.cuIpcGetMemHandle(&h, p);
  a.cuMemFree(p);
  d.check(r, "cuIpcGetMemHandle", {}, HANDOFF_WHERE);
}

// Interprocess events: where missing, the stream is synchronised instead.
bool probe_ipc_event(const cuda::Driver& d, const cuda::PrimaryContext& ctx, std::string& why) {
  const cuda::abi::DriverApi& a = d.api();
  if (!a.cuEventCreate || !a.cuEventRecord || !a.cuIpcGetEventHandle || !a.cuEventDestroy) {
    why = "the driver has no interprocess events";
    return false;
  }
  cuda::ScopedContext current(ctx);
  cuda::abi::CUevent e = nullptr;
  cuda::abi::CUresult r = a.cuEventCreate(&e, cuda::abi::CU_EVENT_INTERPROCESS | cuda::abi::CU_EVENT_DISABLE_TIMING);
  if (r == cuda::abi::CUDA_SUCCESS) {
    cuda::abi::CUipcEventHandle h{};
    r = a.cuIpcGetEventHandle(&h, e);
    a.cuEventDestroy(e);
  }
  if (r != cuda::abi::CUDA_SUCCESS) why = "no interprocess events (" + d.error_name(r) + ")";
  return r == cuda::abi::CUDA_SUCCESS;
}

class CudaRoute final : public SlotRoute {
 public:
  CudaRoute(cuda::PrimaryContext ctx, CudaSlotExport how, std::size_t granularity, std::string description)
      : ctx_(std::move(ctx)), how_(how), granularity_(granularity), description_(std::move(description)) {
    const auto info = ctx_.driver()->device(ctx_.device());
    uuid_ = info.uuid;
    std::string why;
    ipc_event_ = probe_ipc_event(*ctx_.driver(), ctx_, why);
    description_ += ipc_event_ ? ", interprocess events" : ", stream synchronised before each frame (" + why + ")";
  }
  SlotMemory memory() const override { return SlotMemory::Cuda; }
  CudaSync cuda_sync() const override { return ipc_event_ ? CudaSync::IpcEvent : CudaSync::StreamSynchronized; }
  const std::string& description() const override { return description_; }
  std::unique_ptr<SlotStorage> allocate(const FrameLayout& l, unsigned) override {
    return make_cuda_storage(ctx_, how_, l.buffer_bytes(), granularity_, uuid_, ipc_event_);
  }

 private:
  cuda::PrimaryContext ctx_;
  CudaSlotExport how_;
  std::size_t granularity_;
  std::string description_;
  Uuid uuid_{};
  bool ipc_event_ = false;
};

}  // namespace

std::unique_ptr<SlotRoute> make_cuda_route(const std::string& publisher, int device, int export_mode) {
  const auto mode = static_cast<CudaExport>(export_mode);
  const cuda::Driver& d = cuda::driver();
  if (mode == CudaExport::Host) return make_host_route(publisher, "CUDA frames copied to host: asked for");
  if (!d.usable()) {
    if (mode != CudaExport::Auto) d.require();
    return make_host_route(publisher, d.describe());
  }
  cuda::PrimaryContext ctx(d, device);
  std::string why;
  if (mode == CudaExport::Auto || mode == CudaExport::VirtualMemory) {
    try {
      const std::size_t g = probe_vmm(d, ctx);
      return std::make_unique<CudaRoute>(std::move(ctx), CudaSlotExport::VirtualMemory, g,
                                         "CUDA VMM fd (cuMemCreate, device " + std::to_string(device) + ")");
    } catch (const Error& e) {
      if (mode == CudaExport::VirtualMemory) throw;
      why = std::string("CUDA VMM fd export unavailable: ") + e.what();
    }
  }
  try {
    probe_legacy(d, ctx);
    return std::make_unique<CudaRoute>(std::move(ctx), CudaSlotExport::LegacyIpc, 1,
                                       "CUDA legacy IPC handles (device " + std::to_string(device) + "; " + why + ")");
  } catch (const Error& e) {
    if (mode == CudaExport::LegacyIpc) throw;
    why += std::string("; legacy CUDA IPC unavailable: ") + e.what();
  }
  log(LogLevel::Warning, "live publisher '" + publisher + "': CUDA frames go through host memory: " + why);
  return make_host_route(publisher, "CUDA frames copied to host; " + why);
}

}  // namespace handoff::live::detail
