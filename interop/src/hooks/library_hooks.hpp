#pragma once
// Library-wide state that handoff's own targets read or set from outside the
// library: counts of live objects (a leak check reads them before and after a
// loop) and the same-GPU check's default for GlWorkers made from now on (a test
// driver's GPU identity cannot match llvmpipe's). Not installed; reached through
// handoff::interop_hooks only (tests/support's hooks library, the Python module).
//
// Why a table as well as functions: an extension module links
// libhandoff_interop statically, so the test-only Python module has its own
// copy of this state. The shipped module publishes its copy's table as an
// opaque capsule, the way NumPy publishes its C API, and the test module calls
// through it. Nothing in the table is callable from Python.
#include "../dlpack/export_counts.hpp"
#include "../frame/live_frames.hpp"

#include <cstddef>
#include <cstdint>

namespace handoff::detail {

// Frame storage objects alive (frame/live_frames.hpp) and exported DLPack
// tensors (dlpack/export_counts.hpp): the public handoff::live_objects().

// GlWorkers constructed from now on (a library object's own ones included)
// start with the same-GPU check skipped or not (gl/gl_worker.cpp). Thread
// safety: any thread.
void skip_same_gpu_check_in_new_workers(bool skip) noexcept;

// The three functions above, of this copy of the library.
struct LibraryHooks {
  std::size_t (*live_frame_count)() noexcept;
  DlpackExportCounts (*dlpack_export_counts)() noexcept;
  void (*skip_same_gpu_check_in_new_workers)(bool skip) noexcept;
};
// The capsule name a module publishing library_hooks() uses; a layout change
// changes the name, so a stale reader is refused rather than misled.
inline constexpr const char* kLibraryHooksCapsule = "handoff.detail.LibraryHooks.v1";
const LibraryHooks& library_hooks() noexcept;

}  // namespace handoff::detail
