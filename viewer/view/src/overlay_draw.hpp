#pragma once
// Draws a frame's overlays into one ImDrawList (boxes, captions, keypoints and
// skeletons, polygons / polylines, texts), mapped from frame coordinates by a
// ViewTransform, so zoom and pan keep them aligned with the picture. Batched:
// ImGui turns the whole list into a handful of draw calls, whatever the count.
//
// Thread safety: needs the current ImGui context (its font) on the calling thread.
#include <cstdint>
#include <string>
#include <vector>

#include <handoff/media/overlay.hpp>

#include "box_renderer.hpp"
#include "view_transform.hpp"

struct ImDrawList;

namespace handoff::view {

struct OverlayStyle {
  float line_width = 2.0f;
  float keypoint_radius = 3.0f;
  float min_keypoint_conf = 0.05f;  // keypoints below are not drawn
  // Captions drawn at most (the highest-scoring visible objects first): past
  // a few hundred they cover the picture, and text is most of the cost.
  std::uint32_t max_captions = 500;
  // Past this many primitives drawn (the visible objects' boxes, keypoints
  // and skeleton edges), box outlines and keypoint dots are drawn by
  // BoxRenderer (when the scratch has one) instead of as ImGui geometry, and
  // what ImGui still draws (edges, shapes) without anti-aliasing.
  std::uint32_t dense_primitives = 1000;
};

// Reused between frames so drawing allocates nothing once warm.
struct OverlayScratch {
  std::vector<std::uint32_t> selected;
  std::vector<std::uint32_t> visible;     // selected objects inside the view
  std::vector<unsigned char> captioned;
  std::vector<float> points;  // x, y pairs (ImVec2-compatible)
  std::vector<unsigned char> object_shown;
  // Dense boxes and keypoints: queued here, drawn by `box_renderer` from an
  // ImGui draw callback when the list is rendered (so the scratch must outlive that).
  BoxRenderer* box_renderer = nullptr;
  std::vector<BoxInstance> boxes;
  std::vector<DotInstance> dots;
  float box_width = 1.0f;
  float dot_radius = 3.0f;
  bool boxes_opaque = true;  // every queued colour is opaque
};

// `view_rect` (framebuffer pixels: x, y, w, h) is the visible area: labels are
// kept inside it.
void draw_overlays(ImDrawList& list, const media::OverlayFrame& frame, const media::OverlayFilter& filter,
                   const ViewTransform& view, const media::RectF& view_rect, const OverlayStyle& style,
                   OverlayScratch& scratch);

}  // namespace handoff::view
