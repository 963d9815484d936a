#version 450 core
// gray8 / gray16 / gray32f as grey: the sampled value s (UNORM for gray8 /
// gray16, the float itself for gray32f) mapped by (s - u_lo) * u_scale and
// clamped to 0..1; the renderer sets lo = 0, scale = 1 for the full range of
// an integer format, or the range a user gave / the automatic one of a float
// frame. NaN and +-inf (and what bilinear filtering mixes them into) are drawn
// as u_non_finite, not as black or white data.
// gray_frame_nearest_frag.glsl: flat pixels.
layout(binding = 0) uniform sampler2D u_luma;

uniform float u_lo;
uniform float u_scale;
uniform vec3 u_non_finite;

noperspective in vec2 v_luma;
out vec4 o_color;

void main() {
  float s = textureLod(u_luma, v_luma, 0.0).r;
  if (isnan(s) || isinf(s)) {
    o_color = vec4(u_non_finite, 1.0);
    return;
  }
  float v = clamp((s - u_lo) * u_scale, 0.0, 1.0);
  o_color = vec4(v, v, v, 1.0);
}
