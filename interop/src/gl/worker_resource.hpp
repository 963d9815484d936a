#pragma once
// A resource registered with a GlWorker (detail::track) as a UniqueHandle: when
// the handle goes, on any thread, the resource's release is queued to the
// worker (or does nothing when the worker has shut down and released it).
// For the library's resource types: GlBuffer, GlVkFrame.
#include <handoff/detail/gl_worker_detail.hpp>
#include <handoff/gl_worker.hpp>
#include <handoff/unique_handle.hpp>

#include <cstdint>
#include <memory>

namespace handoff::detail {

struct WorkerResourceRelease {
  std::shared_ptr<WorkerCore> core;
  void operator()(std::uint64_t id) const noexcept { release(*core, id); }
};
using UniqueWorkerResource = UniqueHandle<std::uint64_t, WorkerResourceRelease>;

}  // namespace handoff::detail
