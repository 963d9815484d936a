#version 450 core
// rgb_frame_frag.glsl with each frame pixel drawn as a flat square (sampled at
// its centre, where linear filtering returns the texel itself).
layout(binding = 0) uniform sampler2D u_luma;

uniform vec2 u_frame_size;  // pixels (W, H)

noperspective in vec2 v_p;  // frame coordinates (pixel centres at +0.5)
out vec4 o_color;

void main() { o_color = vec4(textureLod(u_luma, (floor(v_p) + 0.5) / u_frame_size, 0.0).rgb, 1.0); }
