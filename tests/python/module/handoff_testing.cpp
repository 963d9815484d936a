// The python tier's test hooks: `import handoff_testing`. A test-only
// extension module (tests/python/CMakeLists.txt): built with the tests, never
// installed, never in the wheel; the shipped `handoff` module has none of this.
//
// Nothing here reads or sets the state of the library copy inside
// handoff._handoff (each extension links libhandoff_interop statically, and the
// shipped module publishes no way in): what a test needs of that copy is
// public (handoff.live_objects()). The hooks are stateless:
// - relabel_as_cuda works on handoff.Frame objects, the shipped module's type
//   (nanobind's type registry is shared by modules built with the same
//   nanobind, so it takes and returns them);
// - gl_device_uuid asks GL, through handoff's own API in this module's copy,
//   which GPU it runs on, so a fake CUDA driver can be made that GPU.
#include <handoff/gl_worker.hpp>
#include <handoff/uuid.hpp>

#include "module_common.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

namespace nb = nanobind;
using namespace nb::literals;

NB_MODULE(handoff_testing, m) {
  nb::module_::import_("handoff");  // registers handoff.Frame before relabel_as_cuda is bound

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
