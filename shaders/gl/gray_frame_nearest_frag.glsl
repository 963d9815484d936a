#version 450 core
// gray_frame_frag.glsl with each frame pixel drawn as a flat square.
layout(binding = 0) uniform sampler2D u_luma;

uniform float u_prescale;  // float_mapping (value_range.hpp): finite, scale > 0
uniform float u_lo;
uniform float u_scale;
uniform float u_offset;
uniform vec3 u_non_finite;
uniform vec2 u_frame_size;  // pixels (W, H)

noperspective in vec2 v_p;  // frame coordinates (pixel centres at +0.5)
out vec4 o_color;

void main() {
  float s = texelFetch(u_luma, clamp(ivec2(floor(v_p)), ivec2(0), ivec2(u_frame_size) - 1), 0).r;
  if (isnan(s) || isinf(s)) {
    o_color = vec4(u_non_finite, 1.0);
    return;
  }
  float v = clamp((s * u_prescale - u_lo) * u_scale + u_offset, 0.0, 1.0);
  o_color = vec4(v, v, v, 1.0);
}
