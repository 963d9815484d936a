#include "overlay_draw.hpp"

#include <imgui.h>

#include <handoff/log.hpp>

#include <algorithm>
#include <cmath>

namespace handoff::view {
namespace {

ImU32 to_imu32(media::Color8 c, std::uint8_t alpha = 255) { return IM_COL32(c.r, c.g, c.b, alpha); }

// Black or white text, whichever reads better on `bg`.
ImU32 text_on(media::Color8 bg) {
  const int luma = (bg.r * 2126 + bg.g * 7152 + bg.b * 722) / 10000;
  return luma > 140 ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
}

// Runs inside ImGui_ImplOpenGL3_RenderDrawData, at the boxes' place in the list.
void draw_box_batch(const ImDrawList*, const ImDrawCmd* cmd) {
  auto* s = static_cast<OverlayScratch*>(cmd->UserCallbackData);
  const ImDrawData* dd = ImGui::GetDrawData();
  if (!s || !s->box_renderer || !dd) return;
  const float pos[2] = {dd->DisplayPos.x, dd->DisplayPos.y}, size[2] = {dd->DisplaySize.x, dd->DisplaySize.y};
  try {
    s->box_renderer->draw(OverlayBatch{&s->boxes, s->box_width, &s->dots, s->dot_radius, s->boxes_opaque}, pos, size);
  } catch (const std::exception& e) {  // not through ImGui's C-style loop
    log(LogLevel::Error, std::string("handoff-view: drawing boxes: ") + e.what());
  }
}

// What every step draws with: the list, frame -> framebuffer, the visible
// area, the style and the font.
struct Painter {
  ImDrawList& dl;
  const ViewTransform& view;
  const media::RectF& view_rect;
  const OverlayStyle& style;
  ImFont* font;
  float font_size;
  float x(float fx) const { return static_cast<float>(view.to_fb_x(fx)); }
  float y(float fy) const { return static_cast<float>(view.to_fb_y(fy)); }
};

constexpr float kCaptionPad = 2.0f;

// s.selected (the filter's objects) and s.object_shown (one flag per object).
void select_objects(const media::OverlayFrame& f, const media::OverlayFilter& filter, OverlayScratch& s) {
  filter.select(f, s.selected);
  s.object_shown.assign(f.objects.size(), 0);
  for (std::uint32_t i : s.selected) s.object_shown[i] = 1;
}

// Polygons and polylines, of shown objects or of none, in their object's colour.
void draw_shapes(const Painter& p, const media::OverlayFrame& f, OverlayScratch& s) {
  for (const media::OverlayShape& sh : f.shapes) {
    if (sh.object >= 0 && (static_cast<std::size_t>(sh.object) >= f.objects.size() ||
                           !s.object_shown[static_cast<std::size_t>(sh.object)]))
      continue;
    if (sh.point_count < 2 || sh.point_first + sh.point_count > f.points.size()) continue;
    const media::Color8 c = sh.object >= 0 ? object_color(f.objects[static_cast<std::size_t>(sh.object)])
                                    : media::Color8{0, 255, 255, 255};
    s.points.resize(std::size_t(sh.point_count) * 2);
    for (std::uint32_t k = 0; k < sh.point_count; ++k) {
      const media::Point2& pt = f.points[sh.point_first + k];
      s.points[2 * k] = p.x(pt.x);
      s.points[2 * k + 1] = p.y(pt.y);
    }
    p.dl.AddPolyline(reinterpret_cast<const ImVec2*>(s.points.data()), static_cast<int>(sh.point_count),
                     to_imu32(c), sh.closed ? ImDrawFlags_Closed : ImDrawFlags_None, p.style.line_width);
  }
}

// s.visible: the selected objects but boxes (without keypoints) wholly outside the view.
void cull_to_view(const Painter& p, const media::OverlayFrame& f, OverlayScratch& s) {
  const media::RectF& r = p.view_rect;
  const float vx0 = r.x, vy0 = r.y, vx1 = r.x + r.w, vy1 = r.y + r.h;
  s.visible.clear();
  for (std::uint32_t i : s.selected) {
    const media::OverlayObject& o = f.objects[i];
    if (o.has_box && o.keypoint_count == 0) {
      const float bx0 = p.x(std::min(o.x0, o.x1)), by0 = p.y(std::min(o.y0, o.y1));
      const float bx1 = p.x(std::max(o.x0, o.x1)), by1 = p.y(std::max(o.y0, o.y1));
      if (bx1 < vx0 || by1 < vy0 || bx0 > vx1 || by0 > vy1) continue;
    }
    s.visible.push_back(i);
  }
}

// s.captioned: every visible object, or the style.max_captions highest
// scoring ones (s.visible stays in file order).
void pick_captions(const media::OverlayFrame& f, const OverlayStyle& style, OverlayScratch& s) {
  s.captioned.assign(f.objects.size(), 0);
  if (s.visible.size() <= style.max_captions) {
    for (std::uint32_t i : s.visible) s.captioned[i] = 1;
  } else if (style.max_captions > 0) {
    auto score = [&](std::uint32_t i) { return f.objects[i].has_score() ? f.objects[i].score : 0.0f; };
    std::nth_element(s.visible.begin(), s.visible.begin() + style.max_captions, s.visible.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return score(a) > score(b); });
    for (std::uint32_t k = 0; k < style.max_captions; ++k) s.captioned[s.visible[k]] = 1;
    std::sort(s.visible.begin(), s.visible.end());  // draw in file order
  }
}

// What the visible objects draw: a box each, their keypoints and skeleton
// edges. The cost of ImGui geometry grows with these, not with the objects.
std::size_t drawn_primitives(const media::OverlayFrame& f, const media::OverlayFilter& filter, const OverlayScratch& s) {
  std::size_t n = 0;
  for (std::uint32_t i : s.visible) {
    const media::OverlayObject& o = f.objects[i];
    n += filter.boxes && o.has_box ? 1 : 0;
    if (filter.keypoints) n += std::size_t(o.keypoint_count) + o.edge_count;
  }
  return n;
}

// Dense boxes: queued for BoxRenderer (s.boxes), drawn at this place in the
// list by a callback. True when they are batched.
bool start_box_batch(ImDrawList& dl, const media::OverlayFilter& filter, const OverlayStyle& style, bool dense,
                     OverlayScratch& s) {
  const bool batch = s.box_renderer && (filter.boxes || filter.keypoints) && dense;
  s.boxes.clear();
  s.dots.clear();
  if (batch) {
    s.box_width = style.line_width;
    s.dot_radius = style.keypoint_radius;
    s.boxes_opaque = true;
    dl.AddCallback(draw_box_batch, &s);
    dl.AddCallback(ImDrawCallback_ResetRenderState, nullptr);
  }
  return batch;
}

// An object's skeleton edges and keypoints, those confident enough; the dots
// queued for BoxRenderer when batched.
void draw_keypoints(const Painter& p, const media::OverlayFrame& f, const media::OverlayObject& o, ImU32 col,
                    bool batch, OverlayScratch& s) {
  const float min_conf = p.style.min_keypoint_conf;
  const media::Keypoint* kp = &f.keypoints[o.keypoint_first];
  if (o.edge_first + o.edge_count <= f.edges.size()) {
    for (std::uint32_t e = 0; e < o.edge_count; ++e) {
      const auto& ed = f.edges[o.edge_first + e];
      if (ed[0] >= o.keypoint_count || ed[1] >= o.keypoint_count) continue;
      const media::Keypoint& a = kp[ed[0]];
      const media::Keypoint& b = kp[ed[1]];
      if (a.conf < min_conf || b.conf < min_conf) continue;
      p.dl.AddLine(ImVec2(p.x(a.x), p.y(a.y)), ImVec2(p.x(b.x), p.y(b.y)), col, p.style.line_width);
    }
  }
  for (std::uint32_t k = 0; k < o.keypoint_count; ++k) {
    if (kp[k].conf < min_conf) continue;
    if (batch) {
      s.dots.push_back(DotInstance{p.x(kp[k].x), p.y(kp[k].y), col});
      if ((col >> IM_COL32_A_SHIFT) != 255) s.boxes_opaque = false;
    } else {
      p.dl.AddCircleFilled(ImVec2(p.x(kp[k].x), p.y(kp[k].y)), p.style.keypoint_radius, col, 8);
    }
  }
}

// Label, score, track id as the filter allows, on the object's colour, kept
// inside the view.
void draw_caption(const Painter& p, const media::OverlayFrame& f, const media::OverlayObject& o, const media::OverlayFilter& filter,
                  media::Color8 c, const media::RectF& box) {
  const std::string caption = object_caption(f, o, filter);
  if (caption.empty()) return;
  const char* begin = caption.data();
  const char* end = begin + caption.size();
  const ImVec2 ts = p.font->CalcTextSizeA(p.font_size, 1e9f, 0.0f, begin, end);
  const media::RectF at = place_label(box, ts.x + 2 * kCaptionPad, ts.y + 2 * kCaptionPad, p.view_rect);
  p.dl.AddRectFilled(ImVec2(at.x, at.y), ImVec2(at.x + at.w, at.y + at.h), to_imu32(c, 220));
  p.dl.AddText(p.font, p.font_size, ImVec2(at.x + kCaptionPad, at.y + kCaptionPad), text_on(c), begin, end);
}

// One visible object: keypoints, then its box (queued when batched), then its caption.
void draw_object(const Painter& p, const media::OverlayFrame& f, std::uint32_t i, const media::OverlayFilter& filter, bool batch,
                 OverlayScratch& s) {
  const media::OverlayObject& o = f.objects[i];
  const media::Color8 c = object_color(o);
  const ImU32 col = to_imu32(c);
  if (filter.keypoints && o.keypoint_count > 0 && o.keypoint_first + o.keypoint_count <= f.keypoints.size())
    draw_keypoints(p, f, o, col, batch, s);
  if (!o.has_box) return;
  const float x0 = p.x(std::min(o.x0, o.x1)), y0 = p.y(std::min(o.y0, o.y1));
  const float x1 = p.x(std::max(o.x0, o.x1)), y1 = p.y(std::max(o.y0, o.y1));
  if (batch) {
    if (filter.boxes) {
      s.boxes.push_back(BoxInstance{x0, y0, x1, y1, col});
      if ((col >> IM_COL32_A_SHIFT) != 255) s.boxes_opaque = false;
    }
  } else if (filter.boxes) {
    p.dl.AddRect(ImVec2(x0, y0), ImVec2(x1, y1), col, 0.0f, ImDrawFlags_None, p.style.line_width);
  }
  if (s.captioned[i] && (filter.labels || filter.scores || filter.track_ids))
    draw_caption(p, f, o, filter, c, media::RectF{x0, y0, x1 - x0, y1 - y0});
}

// Free texts, shadowed, kept inside the view.
void draw_texts(const Painter& p, const media::OverlayFrame& f) {
  for (const media::OverlayText& t : f.texts) {
    const std::string_view text = f.text(t.text);
    if (text.empty()) continue;
    const media::Color8 c = t.has_color ? t.color : media::Color8{255, 255, 255, 255};
    const char* begin = text.data();
    const char* end = begin + text.size();
    const ImVec2 ts = p.font->CalcTextSizeA(p.font_size, 1e9f, 0.0f, begin, end);
    const media::RectF at = place_label(media::RectF{p.x(t.x), p.y(t.y) + ts.y, 0, 0}, ts.x, ts.y, p.view_rect);
    p.dl.AddText(p.font, p.font_size, ImVec2(at.x + 1, at.y + 1), IM_COL32(0, 0, 0, 200), begin, end);
    p.dl.AddText(p.font, p.font_size, ImVec2(at.x, at.y), to_imu32(c), begin, end);
  }
}

}  // namespace

// Shapes first (under boxes and captions), then the visible objects, then the texts.
void draw_overlays(ImDrawList& dl, const media::OverlayFrame& f, const media::OverlayFilter& filter,
                   const ViewTransform& v, const media::RectF& view_rect, const OverlayStyle& style,
                   OverlayScratch& s) {
  const Painter p{dl, v, view_rect, style, ImGui::GetFont(), ImGui::GetFontSize()};
  select_objects(f, filter, s);
  if (filter.shapes) draw_shapes(p, f, s);
  cull_to_view(p, f, s);
  pick_captions(f, style, s);

  // Dense overlays: no anti-aliasing fringe (it doubles the pixels a thin
  // outline covers, and at thousands of boxes nobody sees the difference).
  // Decided on what is drawn (keypoints and edges too), so that no count of
  // objects draws much slower than a larger one.
  const bool dense = drawn_primitives(f, filter, s) > style.dense_primitives;
  const ImDrawListFlags saved_flags = dl.Flags;
  if (dense)
    dl.Flags &= ~(ImDrawListFlags_AntiAliasedLines | ImDrawListFlags_AntiAliasedLinesUseTex |
                  ImDrawListFlags_AntiAliasedFill);
  const bool batch = start_box_batch(dl, filter, style, dense, s);
  for (std::uint32_t i : s.visible) draw_object(p, f, i, filter, batch, s);
  dl.Flags = saved_flags;

  if (filter.texts) draw_texts(p, f);
}

}  // namespace handoff::view
