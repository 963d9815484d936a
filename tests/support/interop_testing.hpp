#pragma once
// Test hooks of the interop library: counters the tests and benchmarks read to
// find leaks and races, and a switch that turns KHR_debug errors into throws. From handoff_interop_testing (tests/support), which reads the
// library's internal state (gl/worker_core.hpp) and
// the public counts (handoff/diagnostics.hpp);
// nothing here is installed or shipped.
//
//   handoff::GlWorker gl(options);
//   handoff::testing::throw_on_gl_errors(gl);    // a KHR_debug error fails its run() call
#include <handoff/gl_worker.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace handoff::testing {

// --- GlWorker -----------------------------------------------------------------
// Calls queued on the worker and not yet started. Thread safety: any thread.
std::size_t queued(const GlWorker& worker) noexcept;
// KHR_debug ERROR messages the worker's context reported so far. Thread safety: any thread.
std::size_t gl_error_count(const GlWorker& worker) noexcept;
// Resources registered on the worker and not yet released (GL buffers, CUDA
// registrations, Vulkan imports). The core overload counts after the GlWorker
// object is gone (GlWorker::core() keeps it). Thread safety: any thread.
std::size_t live_resources(const GlWorker& worker) noexcept;
std::size_t live_resources(const detail::WorkerCore& core) noexcept;
// From now on, a KHR_debug ERROR message raised while a run() call executes
// makes that call throw handoff::Error (Api::Gl, "KHR_debug") with the message.
// Thread safety: any thread; calls already running may see either setting.
void throw_on_gl_errors(GlWorker& worker, bool on = true) noexcept;
// The GL device's UUID (GL_DEVICE_UUID_EXT of a default headless worker's
// context) in handoff::to_string's form; nullopt where GL reports none. The
// fake CUDA driver is given it (fake_cuda_set_uuid) so that the same-GPU check
// runs and passes against llvmpipe. Thread safety: any thread.
std::optional<std::string> gl_device_uuid();

// --- frames and DLPack --------------------------------------------------------
// Shorthands over the public counts (handoff::live_objects(),
// <handoff/diagnostics.hpp>), in the spelling the tests were written with.
// Frame storage objects alive (LiveObjects::frames). Thread safety: any thread.
std::size_t live_frames() noexcept;

// Exported DLPack tensors whose deleter has not run yet, and the totals.
struct ExportCounts {
  std::size_t live = 0;        // LiveObjects::dlpack_alive
  std::uint64_t exported = 0;  // LiveObjects::dlpack_exported
  std::uint64_t deleted = 0;   // LiveObjects::dlpack_deleted
};
// Thread safety: any thread.
ExportCounts export_counts() noexcept;

}  // namespace handoff::testing
