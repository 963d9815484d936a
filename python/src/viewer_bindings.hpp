#pragma once
// handoff.Viewer, handoff.Overlays, handoff.AttachStatus, handoff.open /
// open_scene and their exceptions (viewer_bindings.cpp), added to the module by
// handoff_module.cpp.
#include <nanobind/nanobind.h>

namespace handoff::py {

void bind_viewer(nanobind::module_& m);

}  // namespace handoff::py
