#version 450 core
// yuv_frame_frag.glsl for i420: U and V in textures of their own (R16 at half
// resolution, units 1 and 2), so one more fetch per pixel than the formats
// whose chroma pairs share a texel. yuv_planar_frame_nearest_frag.glsl: flat
// pixels.
layout(binding = 0) uniform sampler2D u_luma;
layout(binding = 1) uniform sampler2D u_cb;
layout(binding = 2) uniform sampler2D u_cr;

uniform mat3 u_rgb_from_yuv;
uniform vec3 u_bias;

noperspective in vec2 v_luma;
noperspective in vec2 v_chroma;
out vec4 o_color;

void main() {
  float y = textureLod(u_luma, v_luma, 0.0).r;
  float cb = textureLod(u_cb, v_chroma, 0.0).r;
  float cr = textureLod(u_cr, v_chroma, 0.0).r;
  o_color = vec4(clamp(u_rgb_from_yuv * vec3(y, cb, cr) + u_bias, 0.0, 1.0), 1.0);
}
