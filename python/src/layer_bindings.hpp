#pragma once
// handoff.ClassMap, handoff.ScalarMap, handoff.InstanceMasks (the `layers`
// of Viewer.show) and handoff.colormap. A layer object keeps its array (any
// DLPack, buffer-protocol or array-interface producer: NumPy, PyTorch, CuPy)
// and its settings, checked when it is made (ValueError naming the argument);
// show() reads the array without copying it and the viewer copies it once.
//
// Thread safety: with the GIL held.
#include <handoff/media/overlay.hpp>

#include <nanobind/nanobind.h>

#include <vector>

namespace handoff::py {

void bind_layers(nanobind::module_& m);

// Appends the layers of `layers` (a sequence of layer objects, or None) to
// `out.layers`. The arrays are borrowed: valid while `keep` (filled here)
// holds them. ValueError / TypeError naming "layers[i]" and the argument.
void layers_from_objects(nanobind::handle layers, media::OverlayFrame& out, std::vector<nanobind::object>& keep);

}  // namespace handoff::py
