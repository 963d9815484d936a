// The releases behind the CUDA handle aliases (handoff/detail/cuda_handles.hpp).
#include <handoff/detail/cuda_handles.hpp>
#include <handoff/log.hpp>

#include <string>

namespace handoff::cuda::detail {

namespace {

// Runs `call(api)` with `ctx` current; a failure is logged, never thrown.
// CUDA_ERROR_DEINITIALIZED (the driver is shutting down at process exit) is
// not a failure worth a line.
template <typename Call>
void release_in(const PrimaryContext& ctx, const char* entry, Call&& call) noexcept {
  try {
    ScopedContext current(ctx);
    const abi::CUresult r = call(ctx.driver()->api());
    if (r != abi::CUDA_SUCCESS && r != abi::CUDA_ERROR_DEINITIALIZED)
      log(LogLevel::Error, std::string(entry) + " failed with " + ctx.driver()->error_name(r) + " (CUDA device " +
                               std::to_string(ctx.device()) + ")");
  } catch (const std::exception& e) {
    log(LogLevel::Error, std::string(entry) + " not called: " + e.what());
  }
}

}  // namespace

RetainedContext retain(const PrimaryContext& ctx, const char* who) {
  if (!ctx) throw UsageError(std::string(who) + ": the PrimaryContext holds no context (moved from or reset)");
  return std::make_shared<const PrimaryContext>(*ctx.driver(), ctx.device());
}

void destroy_external_memory(const PrimaryContext& ctx, abi::CUexternalMemory memory) noexcept {
  release_in(ctx, "cuDestroyExternalMemory",
             [&](const abi::DriverApi& api) { return api.cuDestroyExternalMemory(memory); });
}

void free_device_memory(const PrimaryContext& ctx, abi::CUdeviceptr pointer) noexcept {
  release_in(ctx, "cuMemFree", [&](const abi::DriverApi& api) { return api.cuMemFree(pointer); });
}

void destroy_external_semaphore(const PrimaryContext& ctx, abi::CUexternalSemaphore semaphore) noexcept {
  release_in(ctx, "cuDestroyExternalSemaphore",
             [&](const abi::DriverApi& api) { return api.cuDestroyExternalSemaphore(semaphore); });
}

void unregister_resource(const PrimaryContext& ctx, abi::CUgraphicsResource resource) noexcept {
  release_in(ctx, "cuGraphicsUnregisterResource",
             [&](const abi::DriverApi& api) { return api.cuGraphicsUnregisterResource(resource); });
}

void unmap_resource(const PrimaryContext& ctx, abi::CUgraphicsResource resource) noexcept {
  release_in(ctx, "cuGraphicsUnmapResources",
             [&](const abi::DriverApi& api) { return api.cuGraphicsUnmapResources(1, &resource, nullptr); });
}

void destroy_event(const PrimaryContext& ctx, abi::CUevent event) noexcept {
  release_in(ctx, "cuEventDestroy", [&](const abi::DriverApi& api) { return api.cuEventDestroy(event); });
}

void release_allocation(const PrimaryContext& ctx, abi::CUmemGenericAllocationHandle handle) noexcept {
  release_in(ctx, "cuMemRelease", [&](const abi::DriverApi& api) { return api.cuMemRelease(handle); });
}

void free_address_range(const PrimaryContext& ctx, abi::CUdeviceptr start, std::size_t size) noexcept {
  release_in(ctx, "cuMemAddressFree", [&](const abi::DriverApi& api) { return api.cuMemAddressFree(start, size); });
}

void unmap_memory(const PrimaryContext& ctx, abi::CUdeviceptr start, std::size_t size) noexcept {
  release_in(ctx, "cuMemUnmap", [&](const abi::DriverApi& api) { return api.cuMemUnmap(start, size); });
}

void close_ipc_memory(const PrimaryContext& ctx, abi::CUdeviceptr pointer) noexcept {
  release_in(ctx, "cuIpcCloseMemHandle", [&](const abi::DriverApi& api) { return api.cuIpcCloseMemHandle(pointer); });
}

}  // namespace handoff::cuda::detail
