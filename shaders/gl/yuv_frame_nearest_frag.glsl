#version 450 core
// yuv_frame_frag.glsl with each frame pixel drawn as a flat square (zoomed in,
// "nearest"): the sample position snaps to the pixel's centre, where linear
// filtering returns the texel itself, and chroma is sampled where that pixel's
// chroma would be.
layout(binding = 0) uniform sampler2D u_luma;
layout(binding = 1) uniform sampler2D u_chroma;

uniform mat3 u_rgb_from_yuv;
uniform vec3 u_bias;
uniform vec2 u_frame_size;   // luma samples (W, H)
uniform vec2 u_chroma_size;  // chroma samples
uniform vec2 u_siting;       // chroma sample position in luma samples
uniform vec2 u_subsample;    // luma samples per chroma sample: (2, 2) for 4:2:0, (2, 1) for 4:2:2

noperspective in vec2 v_p;  // frame coordinates (pixel centres at +0.5)
out vec4 o_color;

void main() {
  vec2 p = floor(v_p) + 0.5;
  float y = textureLod(u_luma, p / u_frame_size, 0.0).r;
  vec2 cbcr = textureLod(u_chroma, ((p - 0.5 - u_siting) / u_subsample + 0.5) / u_chroma_size, 0.0).rg;
  o_color = vec4(clamp(u_rgb_from_yuv * vec3(y, cbcr) + u_bias, 0.0, 1.0), 1.0);
}
