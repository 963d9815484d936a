#version 450 core
// Dense keypoints (viewer/view/src/box_renderer.cpp): one instance per dot, a
// square around its centre from gl_VertexID; the fragment shader keeps the
// disc. Display coordinates (top-left origin), mapped like ImGui's projection.
layout(location = 0) in vec2 a_centre;
layout(location = 1) in vec4 a_color;  // RGBA, normalised from 8 bits

uniform vec2 u_display_pos;
uniform vec2 u_display_size;
uniform float u_radius;  // display units

out vec2 v_local;  // from the centre, display units
out vec4 v_color;

const vec2 kCorners[6] = vec2[6](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(-1.0, 1.0),
                                 vec2(-1.0, 1.0), vec2(1.0, -1.0), vec2(1.0, 1.0));

void main() {
  v_local = kCorners[gl_VertexID] * u_radius;
  const vec2 ndc = (a_centre + v_local - u_display_pos) / u_display_size * 2.0 - 1.0;
  gl_Position = vec4(ndc.x, -ndc.y, 0.0, 1.0);
  v_color = a_color;
}
