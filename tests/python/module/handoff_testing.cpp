// The python tier's test hooks: `import handoff_testing`. A test-only
// extension module (tests/python/CMakeLists.txt): built with the tests, never
// installed, never in the wheel; the shipped `handoff` module has none of this.
//
// It links no library code of its own that holds state. The counters and the
// new workers' same-GPU default are those of the library copy inside
// handoff._handoff (each extension links libhandoff_interop statically), read
// through the table that module publishes as the capsule `_library_hooks`.
// handoff.Frame objects are that module's type too: nanobind's type registry
// is shared by modules built with the same nanobind, so relabel_as_cuda takes
// and returns them.
#include <handoff/gl_worker.hpp>
#include <handoff/uuid.hpp>

#include "library_hooks.hpp"
#include "module_common.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using handoff::detail::LibraryHooks;

const LibraryHooks* g_hooks = nullptr;  // handoff._handoff's table, found when this module is imported

const LibraryHooks& library_hooks() {
  nb::object capsule = nb::module_::import_("handoff._handoff").attr("_library_hooks");
  void* table = PyCapsule_GetPointer(capsule.ptr(), handoff::detail::kLibraryHooksCapsule);
  if (!table) throw nb::python_error();  // not a capsule of that name: a handoff built from other sources
  return *static_cast<const LibraryHooks*>(table);
}

}  // namespace

NB_MODULE(handoff_testing, m) {
  nb::module_::import_("handoff");  // registers handoff.Frame before relabel_as_cuda is bound
  g_hooks = &library_hooks();

  m.def("live_frames", [] { return g_hooks->live_frame_count(); },
        "Frame storage objects alive (host allocations, imported planes).");
  m.def("export_counts", [] {
    const handoff::detail::DlpackExportCounts c = g_hooks->dlpack_export_counts();
    nb::dict d;
    d["live"] = c.live;
    d["exported"] = c.exported;
    d["deleted"] = c.deleted;
    return d;
  }, "DLPack tensors exported: still alive, made, and deleted (deleter runs).");
  m.def("skip_same_gpu_check_in_new_workers", [](bool skip) { g_hooks->skip_same_gpu_check_in_new_workers(skip); },
        "skip"_a = true,
        "GL workers made from now on (a Viewer's own included) skip the check that CUDA and GL are one GPU "
        "(the fake CUDA driver against llvmpipe).");
  m.def("relabel_as_cuda", [](const handoff::py::PyFrame& f, int device) {
    // Describes a host frame as CUDA memory so the CUDA export paths (kDLCUDA
    // device, CUDA Array Interface) can be checked without a GPU: a consumer
    // given it would read a host pointer as a device pointer.
    if (f.frame.memory != handoff::MemoryKind::Host) throw nb::value_error("relabel_as_cuda: needs a host frame");
    handoff::py::PyFrame g{f.frame, false};
    g.frame.memory = handoff::MemoryKind::Cuda;
    g.frame.device = device;
    return g;
  }, "frame"_a, "device"_a = 0, "The same host memory described as CUDA memory (device `device`).");

  m.def("gl_device_uuid", []() -> std::optional<std::string> {
    // A GlWorker with its default headless EGL context: the context a headless
    // handoff.Viewer makes (the same EGL device), made and gone here.
    nb::gil_scoped_release unlocked;
    handoff::GlWorker probe;
    if (!probe.info().device_uuid) return std::nullopt;
    return handoff::to_string(*probe.info().device_uuid);
  }, "The GL device's UUID (GL_DEVICE_UUID_EXT) of a headless GL context, as "
     "'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx' (handoff::to_string), or None where GL does not report one "
     "(no GL_EXT_memory_object). For the fake CUDA driver's fake_cuda_set_uuid: CUDA on the GL device.");
}
