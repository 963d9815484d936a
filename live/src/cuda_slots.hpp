#pragma once
// CUDA for handoff::live: the publisher's CUDA slots (slot_storage.hpp) and the subscriber's imports
// (slot_import.hpp).
#include <handoff/cuda.hpp>
#include <handoff/cuda_abi.hpp>
#include <handoff/frame.hpp>
#include "slot_storage.hpp"

#include <initializer_list>
#include <memory>
#include <utility>

namespace handoff::live::detail {

enum class CudaSlotExport { VirtualMemory, LegacyIpc };

// One CUDA slot of at least `bytes` (rounded up to `granularity` for virtual
// memory) on ctx's device, with an interprocess event when `ipc_event`. The
// slot keeps `ctx`'s primary context retained (a retain of its own) while it lives.
std::unique_ptr<SlotStorage> make_cuda_storage(const cuda::PrimaryContext& ctx, CudaSlotExport how, std::size_t bytes,
                                               std::size_t granularity, const Uuid& uuid, bool ipc_event);

// Pinned device memory on `device`, exportable as a POSIX file descriptor.
cuda::abi::CUmemAllocationProp device_allocation(int device);

// Throws handoff::Error naming the first entry point the driver lacks.
void require_entry_points(const char* what, std::initializer_list<std::pair<const char*, const void*>> fns);

}  // namespace handoff::live::detail
