#pragma once
// Detections on GStreamer buffers (GstVideoRegionOfInterestMeta) <-> handoff
// overlays. Each region of interest is one box: its type (a GQuark) is the
// label; its parameter structures may carry, under any structure name,
//   confidence | score                    (double or float)        -> score
//   class-id | class_id | label-id | label_id  (int or uint)       -> class
//   track-id | track_id | tracking-id | object-id  (int, uint, int64) -> track
//   label                                 (string)                 -> label (over the type)
// which is how detectors in the field set them (gst-plugins-bad's onnx
// element: "detection" with "confidence"; trackers: a track id). The region's
// own `id` numbers it within its buffer and is not a track.
#include <gst/gst.h>
#include <gst/video/video.h>

#include <handoff/media/overlay.hpp>

namespace handoff::gst {

// The buffer's regions of interest as boxes (pixel coordinates), in meta order.
void overlays_from_buffer(GstBuffer* buffer, media::OverlayFrame& out);

// Adds one region of interest per boxed object of `overlays` to `buffer`
// (which must be writable): the label (or "object") as its type, and a
// "detection" parameter structure with confidence, class-id and track-id
// where the object has them. Boxes are clamped to 0 and rounded to pixels.
void add_roi_metas(GstBuffer* buffer, const media::OverlayFrame& overlays);

}  // namespace handoff::gst
