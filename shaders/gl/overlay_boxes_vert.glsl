#version 450 core
// Dense overlays (viewer/app/src/box_renderer.cpp): one instance per box, its
// outline as four edge quads (24 vertices, from gl_VertexID) inside the box.
// Coordinates are ImGui display coordinates (top-left origin), mapped like
// ImGui's own projection, so the boxes line up with the captions drawn there.
layout(location = 0) in vec4 a_rect;   // x0, y0, x1, y1 (x0 <= x1, y0 <= y1)
layout(location = 1) in vec4 a_color;  // RGBA, normalised from 8 bits

uniform vec2 u_display_pos;
uniform vec2 u_display_size;
uniform float u_width;  // outline width in display units

out vec4 v_color;

const vec2 kCorners[6] = vec2[6](vec2(0.0, 0.0), vec2(1.0, 0.0), vec2(0.0, 1.0),
                                 vec2(0.0, 1.0), vec2(1.0, 0.0), vec2(1.0, 1.0));

void main() {
  const int edge = gl_VertexID / 6;
  // Thin boxes: the outline never overlaps itself.
  const float tx = min(u_width, 0.5 * (a_rect.z - a_rect.x));
  const float ty = min(u_width, 0.5 * (a_rect.w - a_rect.y));
  vec2 lo, hi;
  if (edge == 0) {         // top
    lo = a_rect.xy;
    hi = vec2(a_rect.z, a_rect.y + ty);
  } else if (edge == 1) {  // bottom
    lo = vec2(a_rect.x, a_rect.w - ty);
    hi = a_rect.zw;
  } else if (edge == 2) {  // left
    lo = vec2(a_rect.x, a_rect.y + ty);
    hi = vec2(a_rect.x + tx, a_rect.w - ty);
  } else {                 // right
    lo = vec2(a_rect.z - tx, a_rect.y + ty);
    hi = vec2(a_rect.z, a_rect.w - ty);
  }
  vec2 ndc = (mix(lo, hi, kCorners[gl_VertexID % 6]) - u_display_pos) / u_display_size * 2.0 - 1.0;
  gl_Position = vec4(ndc.x, -ndc.y, 0.0, 1.0);
  v_color = a_color;
}
