#include "overlay_draw.hpp"

#include <imgui.h>

#include <handoff/log.hpp>

#include <algorithm>
#include <cmath>

namespace handoff::viewer {
namespace {

ImU32 to_imu32(Color8 c, std::uint8_t alpha = 255) { return IM_COL32(c.r, c.g, c.b, alpha); }

// Black or white text, whichever reads better on `bg`.
ImU32 text_on(Color8 bg) {
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
    s->box_renderer->draw(s->boxes, s->box_width, s->boxes_opaque, pos, size);
  } catch (const std::exception& e) {  // not through ImGui's C-style loop
    log(LogLevel::Error, std::string("handoff-view: drawing boxes: ") + e.what());
  }
}

}  // namespace

void draw_overlays(ImDrawList& dl, const OverlayFrame& f, const OverlayFilter& filter,
                   const ViewTransform& v, const RectF& view_rect, const OverlayStyle& style,
                   OverlayScratch& s) {
  ImFont* font = ImGui::GetFont();
  const float font_size = ImGui::GetFontSize();
  const float pad = 2.0f;
  const float lw = style.line_width;
  auto X = [&](float x) { return static_cast<float>(v.to_fb_x(x)); };
  auto Y = [&](float y) { return static_cast<float>(v.to_fb_y(y)); };

  filter.select(f, s.selected);
  s.object_shown.assign(f.objects.size(), 0);
  for (std::uint32_t i : s.selected) s.object_shown[i] = 1;

  // Shapes first (under boxes and captions).
  if (filter.shapes) {
    for (const OverlayShape& sh : f.shapes) {
      if (sh.object >= 0 && (static_cast<std::size_t>(sh.object) >= f.objects.size() ||
                             !s.object_shown[static_cast<std::size_t>(sh.object)]))
        continue;
      if (sh.point_count < 2 || sh.point_first + sh.point_count > f.points.size()) continue;
      const Color8 c = sh.object >= 0 ? object_color(f.objects[static_cast<std::size_t>(sh.object)])
                                      : Color8{0, 255, 255, 255};
      s.points.resize(std::size_t(sh.point_count) * 2);
      for (std::uint32_t k = 0; k < sh.point_count; ++k) {
        const Point2& p = f.points[sh.point_first + k];
        s.points[2 * k] = X(p.x);
        s.points[2 * k + 1] = Y(p.y);
      }
      dl.AddPolyline(reinterpret_cast<const ImVec2*>(s.points.data()), static_cast<int>(sh.point_count),
                     to_imu32(c), sh.closed ? ImDrawFlags_Closed : ImDrawFlags_None, lw);
    }
  }

  // Cull what lies outside the view, then pick which captions to draw.
  const float vx0 = view_rect.x, vy0 = view_rect.y, vx1 = view_rect.x + view_rect.w, vy1 = view_rect.y + view_rect.h;
  s.visible.clear();
  for (std::uint32_t i : s.selected) {
    const OverlayObject& o = f.objects[i];
    if (o.has_box && o.keypoint_count == 0) {
      const float bx0 = X(std::min(o.x0, o.x1)), by0 = Y(std::min(o.y0, o.y1));
      const float bx1 = X(std::max(o.x0, o.x1)), by1 = Y(std::max(o.y0, o.y1));
      if (bx1 < vx0 || by1 < vy0 || bx0 > vx1 || by0 > vy1) continue;
    }
    s.visible.push_back(i);
  }
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

  // Dense overlays: no anti-aliasing fringe (it doubles the pixels a thin
  // outline covers, and at thousands of boxes nobody sees the difference).
  const ImDrawListFlags saved_flags = dl.Flags;
  if (s.visible.size() > 1000)
    dl.Flags &= ~(ImDrawListFlags_AntiAliasedLines | ImDrawListFlags_AntiAliasedLinesUseTex |
                  ImDrawListFlags_AntiAliasedFill);

  // Dense boxes: queued for BoxRenderer, drawn here in the list's order.
  const bool batch = s.box_renderer && filter.boxes && s.visible.size() > style.dense_boxes;
  s.boxes.clear();
  if (batch) {
    s.box_width = lw;
    s.boxes_opaque = true;
    dl.AddCallback(draw_box_batch, &s);
    dl.AddCallback(ImDrawCallback_ResetRenderState, nullptr);
  }

  for (std::uint32_t i : s.visible) {
    const OverlayObject& o = f.objects[i];
    const Color8 c = object_color(o);
    const ImU32 col = to_imu32(c);
    // Keypoints and skeleton.
    if (filter.keypoints && o.keypoint_count > 0 && o.keypoint_first + o.keypoint_count <= f.keypoints.size()) {
      const Keypoint* kp = &f.keypoints[o.keypoint_first];
      if (o.edge_first + o.edge_count <= f.edges.size()) {
        for (std::uint32_t e = 0; e < o.edge_count; ++e) {
          const auto& ed = f.edges[o.edge_first + e];
          if (ed[0] >= o.keypoint_count || ed[1] >= o.keypoint_count) continue;
          const Keypoint& a = kp[ed[0]];
          const Keypoint& b = kp[ed[1]];
          if (a.conf < style.min_keypoint_conf || b.conf < style.min_keypoint_conf) continue;
          dl.AddLine(ImVec2(X(a.x), Y(a.y)), ImVec2(X(b.x), Y(b.y)), col, lw);
        }
      }
      for (std::uint32_t k = 0; k < o.keypoint_count; ++k) {
        if (kp[k].conf < style.min_keypoint_conf) continue;
        dl.AddCircleFilled(ImVec2(X(kp[k].x), Y(kp[k].y)), style.keypoint_radius, col, 8);
      }
    }
    if (!o.has_box) continue;
    const float x0 = X(std::min(o.x0, o.x1)), y0 = Y(std::min(o.y0, o.y1));
    const float x1 = X(std::max(o.x0, o.x1)), y1 = Y(std::max(o.y0, o.y1));
    if (batch) {
      s.boxes.push_back(BoxInstance{x0, y0, x1, y1, col});
      if ((col >> IM_COL32_A_SHIFT) != 255) s.boxes_opaque = false;
    } else if (filter.boxes) {
      dl.AddRect(ImVec2(x0, y0), ImVec2(x1, y1), col, 0.0f, ImDrawFlags_None, lw);
    }
    // Caption: label, score, track id as the filter allows; kept inside the view.
    if (s.captioned[i] && (filter.labels || filter.scores || filter.track_ids)) {
      const std::string caption = object_caption(f, o, filter);
      if (caption.empty()) continue;
      const char* begin = caption.data();
      const char* end = begin + caption.size();
      const ImVec2 ts = font->CalcTextSizeA(font_size, 1e9f, 0.0f, begin, end);
      const RectF at = place_label(RectF{x0, y0, x1 - x0, y1 - y0}, ts.x + 2 * pad, ts.y + 2 * pad, view_rect);
      dl.AddRectFilled(ImVec2(at.x, at.y), ImVec2(at.x + at.w, at.y + at.h), to_imu32(c, 220));
      dl.AddText(font, font_size, ImVec2(at.x + pad, at.y + pad), text_on(c), begin, end);
    }
  }

  dl.Flags = saved_flags;

  if (filter.texts) {
    for (const OverlayText& t : f.texts) {
      const std::string_view text = f.text(t.text);
      if (text.empty()) continue;
      const Color8 c = t.has_color ? t.color : Color8{255, 255, 255, 255};
      const char* begin = text.data();
      const char* end = begin + text.size();
      const ImVec2 ts = font->CalcTextSizeA(font_size, 1e9f, 0.0f, begin, end);
      const RectF at = place_label(RectF{X(t.x), Y(t.y) + ts.y, 0, 0}, ts.x, ts.y, view_rect);
      dl.AddText(font, font_size, ImVec2(at.x + 1, at.y + 1), IM_COL32(0, 0, 0, 200), begin, end);
      dl.AddText(font, font_size, ImVec2(at.x, at.y), to_imu32(c), begin, end);
    }
  }
}

}  // namespace handoff::viewer
