#version 450 core
// A pixel is the dot's when its centre is within the radius (the CPU canvas
// keeps the same pixels).
in vec2 v_local;
in vec4 v_color;
uniform float u_radius;
out vec4 o_color;
void main() {
  if (dot(v_local, v_local) > u_radius * u_radius) discard;
  o_color = v_color;
}
