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
#include <nanobind/ndarray.h>

#include <vector>

namespace handoff::py {

void bind_layers(nanobind::module_& m);

// What the layers read in place hang on, for the call that reads them: the
// layer objects' arrays, and the tensors nanobind read them through (a
// capsule's, or a fresh __dlpack__ export: then the only owner of the data).
// Dropped with the GIL held.
struct LayerKeep {
  std::vector<nanobind::object> objects;
  std::vector<nanobind::ndarray<nanobind::ro>> tensors;
};

// Appends the layers of `layers` (a sequence of layer objects, or None) to
// `out.layers`. The arrays are borrowed: valid while `keep` (filled here)
// holds them. ValueError / TypeError naming "layers[i]" and the argument.
void layers_from_objects(nanobind::handle layers, media::OverlayFrame& out, LayerKeep& keep);

// The layers of `overlays` (host arrays: as a Subscriber or a recording gives
// them) as handoff.ClassMap / ScalarMap / InstanceMasks objects over read-only
// NumPy views of their samples (2-D; masks 3-D), which keep them alive.
nanobind::list layers_to_objects(const media::OverlayFrame& overlays);

}  // namespace handoff::py
