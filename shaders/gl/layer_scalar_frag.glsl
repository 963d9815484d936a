#version 450 core
// Scalar maps (layer_renderer.cpp): an R32F texture, bilinear by hand from
// the four texels around the position (texelFetch, clamped to the edge),
// mixed as a * (1 - w) + b * w, down each column then across (no overflow
// between huge values of opposite signs, where b - a would be inf), mapped
// over the range as float_mapping (value_range.hpp) gives it, clamped,
// through a 256-entry colormap. NaN and +-inf are not drawn (a hole's
// neighbours blend into it as NaN, and are left out too). layer_canvas.cpp
// draws the same on the CPU.
layout(binding = 0) uniform sampler2D u_values;    // R32F
layout(binding = 1) uniform sampler2D u_colormap;  // RGBA8, 256 x 1
uniform vec4 u_map;     // prescale, lo, scale, offset: clamp((v * prescale - lo) * scale + offset, 0, 1)
uniform float u_opacity;

noperspective in vec2 v_uv;
out vec4 o_color;

void main() {
  ivec2 size = textureSize(u_values, 0);
  vec2 s = v_uv * vec2(size) - 0.5;
  vec2 i = floor(s);
  vec2 w = s - i;
  ivec2 i0 = clamp(ivec2(i), ivec2(0), size - 1), i1 = clamp(ivec2(i) + 1, ivec2(0), size - 1);
  precise float c0 = texelFetch(u_values, i0, 0).r * (1.0 - w.y) + texelFetch(u_values, ivec2(i0.x, i1.y), 0).r * w.y;
  precise float c1 = texelFetch(u_values, ivec2(i1.x, i0.y), 0).r * (1.0 - w.y) + texelFetch(u_values, i1, 0).r * w.y;
  precise float v = c0 * (1.0 - w.x) + c1 * w.x;
  if (isnan(v) || isinf(v)) discard;
  precise float t = clamp((v * u_map.x - u_map.y) * u_map.z + u_map.w, 0.0, 1.0);
  o_color = vec4(texelFetch(u_colormap, ivec2(int(t * 255.0 + 0.5), 0), 0).rgb, u_opacity);
}
