#pragma once
// Test hooks of the interop library: counters the tests and benchmarks read to
// find leaks and races, and switches they flip to reach paths a real GPU never
// takes. From handoff_interop_testing (tests/support), which reads the
// library's internal state (gl/worker_core.hpp, hooks/library_hooks.hpp) and
// the public counts (handoff/diagnostics.hpp);
// nothing here is installed or shipped.
//
//   handoff::GlWorker gl(options);
//   handoff::testing::throw_on_gl_errors(gl);    // a KHR_debug error fails its run() call
//   handoff::testing::skip_same_gpu_check(gl);   // fake CUDA driver vs llvmpipe
#include <handoff/gl_worker.hpp>

#include <cstddef>
#include <cstdint>

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
// CudaGlBuffers made on this worker from now on skip the check that the CUDA
// device is the GL device (a test driver reports a GPU identity GL cannot
// match). Thread safety: any thread.
void skip_same_gpu_check(GlWorker& worker, bool skip = true) noexcept;
// The same for every GlWorker constructed from now on, including the ones a
// library object makes for itself (handoff::Viewer's). Thread safety: any thread.
void skip_same_gpu_check_in_new_workers(bool skip = true) noexcept;

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
