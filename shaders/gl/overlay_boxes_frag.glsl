#version 450 core
// Flat colour: no texture, so a dense outline costs llvmpipe a write per pixel.
in vec4 v_color;
out vec4 o_color;
void main() { o_color = v_color; }
