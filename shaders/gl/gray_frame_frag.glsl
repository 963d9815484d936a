#version 450 core
// gray8 / gray16 / gray32f as grey: a value s (UNORM for gray8 / gray16, the
// float itself for gray32f) mapped by (s * u_prescale - u_lo) * u_scale +
// u_offset and clamped to 0..1, with the uniforms float_mapping
// (value_range.hpp) makes of the range: the format's full range for an
// integer format, or the range a user gave / the automatic one of a float
// frame (finite for any finite range, so no data makes them inf or 0).
// Bilinear by hand from the four texels around the position (texelFetch):
// in float for every format (a texture unit filtering 8-bit texels rounds the
// mix to 8 bits), and NaN / +-inf texels (holes in a depth map) take no part
// in the mix instead of turning it into NaN: a position whose nearest texel
// is not finite is drawn as u_non_finite; around it the finite texels share
// the weight. gray_frame_nearest_frag.glsl: flat pixels.
layout(binding = 0) uniform sampler2D u_luma;

uniform float u_prescale;  // float_mapping (value_range.hpp): finite, scale > 0
uniform float u_lo;
uniform float u_scale;
uniform float u_offset;
uniform vec3 u_non_finite;
uniform vec2 u_frame_size;  // pixels (W, H)

noperspective in vec2 v_p;  // frame coordinates (pixel centres at +0.5)
out vec4 o_color;

bool finite(float s) { return !(isnan(s) || isinf(s)); }

void main() {
  vec2 t = v_p - 0.5;
  vec2 f = fract(t);
  ivec2 i0 = ivec2(floor(t));
  ivec2 last = ivec2(u_frame_size) - 1;
  float s[4];
  float w[4] = float[4]((1.0 - f.x) * (1.0 - f.y), f.x * (1.0 - f.y), (1.0 - f.x) * f.y, f.x * f.y);
  const ivec2 kStep[4] = ivec2[4](ivec2(0, 0), ivec2(1, 0), ivec2(0, 1), ivec2(1, 1));
  float sum = 0.0, weight = 0.0, nearest_w = -1.0;
  bool nearest_finite = true;
  for (int k = 0; k < 4; ++k) {
    s[k] = texelFetch(u_luma, clamp(i0 + kStep[k], ivec2(0), last), 0).r;
    bool ok = finite(s[k]);
    if (w[k] > nearest_w) {
      nearest_w = w[k];
      nearest_finite = ok;
    }
    if (ok && w[k] > 0.0) {
      sum += w[k] * s[k];
      weight += w[k];
    }
  }
  if (!nearest_finite || weight <= 0.0) {
    o_color = vec4(u_non_finite, 1.0);
    return;
  }
  float v = clamp((sum / weight * u_prescale - u_lo) * u_scale + u_offset, 0.0, 1.0);
  o_color = vec4(v, v, v, 1.0);
}
