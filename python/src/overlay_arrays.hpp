#pragma once
// Overlays handed in as arrays (the keyword arguments of Viewer.show,
// Publisher.publish, RecordingWriter.write, AcquiredFrame.set_overlays and
// Overlays.from_arrays; frame_args.hpp binds them) -> handoff::media::OverlayFrame.
//
//   boxes      (N, 4) numbers, in `box_format`: "xywh" (top-left + size), "xyxy"
//              (corners) or "cxcywh" (centre + size); pixels, or 0..1 of the
//              frame's width / height when `normalized`
//   labels     N strings (None: no label for that object)
//   scores     (N,) numbers
//   class_ids  (N,) integers; track_ids (N,) integers (-1: none)
//   keypoints  (N, K, 2) or (N, K, 3) numbers: x, y[, confidence]
//   skeleton   (E, 2) integers: pairs of keypoint indices (0..K-1), one
//              skeleton for every object
// Arrays come from NumPy, PyTorch, CuPy (DLPack, the buffer protocol) or plain
// sequences; arrays in CUDA memory are copied to the host once per call.
// Every error is a ValueError naming the field (and the row): shape, dtype,
// a length that does not match N, NaN or infinite values, indices out of range.
//
// Thread safety: call with the GIL held. Ownership: reads the arrays, keeps
// nothing of them.
#include <handoff/media/overlay.hpp>

#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>

namespace handoff::py {

struct OverlayArrays {
  nanobind::handle boxes, labels, scores, class_ids, track_ids, keypoints, skeleton;
  std::string box_format = "xywh";
  bool normalized = false;

  // True when no array is given (each is null or None).
  bool empty() const {
    for (nanobind::handle h : {boxes, labels, scores, class_ids, track_ids, keypoints, skeleton}) {
      if (h.ptr() && !h.is_none()) return false;
    }
    return true;
  }
};

// Converts into `out` (cleared first). `frame_width` / `frame_height` scale
// normalized coordinates.
void overlays_from_arrays(const OverlayArrays& arrays, std::uint32_t frame_width, std::uint32_t frame_height,
                          media::OverlayFrame& out);

}  // namespace handoff::py
