#version 450 core
// One texel per framebuffer pixel (texelFetch: no filtering, no rounding),
// premultiplied alpha, blended with GL_ONE, GL_ONE_MINUS_SRC_ALPHA. The
// canvas's first row is the viewport's top row: u_top_left is the window
// position (x, y) of that row's first pixel.
layout(binding = 0) uniform sampler2D u_canvas;
uniform ivec2 u_top_left;
out vec4 o_color;
void main() {
  const ivec2 p = ivec2(gl_FragCoord.xy);
  o_color = texelFetch(u_canvas, ivec2(p.x - u_top_left.x, u_top_left.y - p.y), 0);
}
