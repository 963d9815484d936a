#version 450 core
// Scalar maps (layer_renderer.cpp): an R32F texture sampled bilinearly, mapped
// over the range (lo, hi), clamped, through a 256-entry colormap. NaN and
// +-inf are not drawn (a hole's neighbours blend into it as NaN, and are left
// out too).
layout(binding = 0) uniform sampler2D u_values;    // R32F, linear
layout(binding = 1) uniform sampler2D u_colormap;  // RGBA8, 256 x 1
uniform vec2 u_range;   // lo, hi (lo < hi)
uniform float u_opacity;

noperspective in vec2 v_uv;
out vec4 o_color;

void main() {
  float v = texture(u_values, v_uv).r;
  if (isnan(v) || isinf(v)) discard;
  float t = clamp((v - u_range.x) / (u_range.y - u_range.x), 0.0, 1.0);
  o_color = vec4(texelFetch(u_colormap, ivec2(int(t * 255.0 + 0.5), 0), 0).rgb, u_opacity);
}
