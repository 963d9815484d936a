#pragma once
// The arguments every method that takes a frame shares (Viewer.show,
// Publisher.publish, RecordingWriter.write, AcquiredFrame.set_overlays):
// the frame (a handoff.Frame, one array, a (luma, chroma) pair or (luma, u, v)) and its
// overlays (the arrays of overlay_arrays.hpp, or a handoff.Overlays), and the
// handoff.Overlays object itself. Not a public header (python/src only).
//
// Thread safety: call with the GIL held. Ownership: a frame made from arrays
// holds them (Frame.from_planes); overlays are copied out of the arrays.
#include "module_common.hpp"
#include "overlay_arrays.hpp"

#include <handoff/frame.hpp>
#include <handoff/media/overlay.hpp>

#include <nanobind/nanobind.h>

#include <memory>
#include <optional>
#include <string>
#include <tuple>

namespace handoff::py {

// A frame argument: a handoff.Frame (then `format` / `colorimetry` must be
// None: it carries its own), one array, a (luma, chroma) pair or (luma, u, v),
// imported without copying by Frame.from_arrays: `format` wins; without it an
// H x W x 3 / 4 uint8 array is rgb8 / rgba8, H x W uint8 / uint16 / float32
// gray8 / gray16 / gray32f, a pair nv12 (p010 for 16-bit samples), three
// arrays i420 (docs/python.md, "Which format an array is"). TypeError /
// ValueError / InvalidFrame naming "frame" or "format".
PyFrame frame_of(nb::handle obj, std::optional<std::string> format, std::optional<Colorimetry> colorimetry);

// Waits for the CUDA work queued on a CUDA frame's context (the primary context
// PyTorch and CuPy share), so its memory is complete; nothing for other frames.
// `what` names that work in the error (handoff::Error, Api::Cuda). Call without
// the GIL (it blocks).
void synchronise_frame_context(const Frame& f, const char* what);

// handoff.Overlays: one frame's overlays (from a source, a subscriber, or built
// from arrays). Immutable: copies share them.
struct PyOverlays {
  std::shared_ptr<const media::OverlayFrame> overlays = std::make_shared<media::OverlayFrame>();
};

// The overlay keyword arguments: the arrays, or a handoff.Overlays.
struct OverlayArgs {
  OverlayArrays arrays;
  nb::handle overlays;  // a handoff.Overlays, or None
};

inline OverlayArgs overlay_args(nb::handle boxes, const std::string& box_format, bool normalized, nb::handle labels,
                                nb::handle scores, nb::handle class_ids, nb::handle track_ids, nb::handle keypoints,
                                nb::handle skeleton, nb::handle overlays) {
  return OverlayArgs{{boxes, labels, scores, class_ids, track_ids, keypoints, skeleton, box_format, normalized},
                     overlays};
}

// The overlays `a` gives for `frame` (normalized coordinates scale by its
// size): the Overlays object's, or the arrays converted into `scratch`.
// ValueError / TypeError naming the field.
const media::OverlayFrame& resolve_overlays(const OverlayArgs& a, const Frame& frame, media::OverlayFrame& scratch);

// The keyword arguments in overlay_args()'s order, with their defaults, for
// .def(): std::apply them after the method's own arguments.
inline auto overlay_kwargs() {
  using namespace nb::literals;
  return std::make_tuple("boxes"_a = nb::none(), "box_format"_a = "xywh", "normalized"_a = false,
                         "labels"_a = nb::none(), "scores"_a = nb::none(), "class_ids"_a = nb::none(),
                         "track_ids"_a = nb::none(), "keypoints"_a = nb::none(), "skeleton"_a = nb::none(),
                         "overlays"_a = nb::none());
}

}  // namespace handoff::py
