#version 450 core
// Class maps and instance masks (layer_renderer.cpp): an integer per layer
// texel, nearest, coloured from a palette texture; ids outside the palette take
// the default class colour (media::default_class_color, computed the same way
// here). Instance masks (u_outline) are an instance index per texel (0: none)
// and get an outline where a neighbour one display pixel away differs.
// The texel of a pixel: layer_renderer.hpp's nearest_texel rule from the
// pixel's centre (gl_FragCoord, exact), not the interpolated v_uv, so that
// the CPU composite (layer_canvas.cpp) picks the same one, ties included.
layout(binding = 0) uniform usampler2D u_ids;    // R8UI / R16UI / R32UI
layout(binding = 1) uniform sampler2D u_palette; // RGBA8, 256 wide; alpha 0: not drawn
uniform int u_bits;          // bits of an id (8, 16, 32)
uniform bool u_signed;       // ids are signed: sign-extend from u_bits
uniform int u_palette_first; // the id of palette entry 0 (its low 32 bits: ids compare as 32-bit, wrapping)
uniform int u_palette_size;  // entries
uniform bool u_defaults;     // ids outside the palette take the default colours (class maps)
uniform float u_opacity;
uniform bool u_outline;      // instance masks
uniform vec2 u_origin;       // the target's top-left on the framebuffer (pixels from its top-left)
uniform vec2 u_texels;       // layer texels per framebuffer pixel
uniform vec2 u_fb_size;      // framebuffer size in pixels (layer_vert.glsl's)

out vec4 o_color;

const float kNudge = 1.0 + exp2(-21.0);  // kNearestNudge

// The id `step` pixels from this one.
int id_at(ivec2 step) {
  ivec2 size = textureSize(u_ids, 0);
  precise vec2 c = vec2(gl_FragCoord.x, u_fb_size.y - gl_FragCoord.y) + vec2(step);
  precise vec2 s = (c - u_origin) * u_texels;
  precise vec2 p = floor(s * kNudge);
  ivec2 t = ivec2(clamp(p, vec2(0.0), vec2(size - 1)));
  uint raw = texelFetch(u_ids, t, 0).r;
  return u_signed ? bitfieldExtract(int(raw), 0, u_bits) : int(raw);
}

vec3 hsv(float h, float s, float v) {
  float h6 = h * 6.0;
  int sector = int(h6) % 6;
  float f = h6 - floor(h6);
  float p = v * (1.0 - s), q = v * (1.0 - s * f), t = v * (1.0 - s * (1.0 - f));
  if (sector == 1) return vec3(q, v, p);
  if (sector == 2) return vec3(p, v, t);
  if (sector == 3) return vec3(p, q, v);
  if (sector == 4) return vec3(t, p, v);
  if (sector == 5) return vec3(v, p, q);
  return vec3(v, t, p);
}

// media::default_class_color: a golden-ratio hue walk over the id's 32 bits,
// three brightness levels in turn.
vec3 default_color(int id) {
  uint u = uint(id);
  float hue = float((u * 0x9E3779B9u) >> 8) / 16777216.0;
  uint level = u % 3u;
  float value = level == 1u ? 0.70 : 0.95;
  float saturation = level == 0u ? 0.90 : level == 1u ? 0.80 : 0.55;
  return hsv(hue, saturation, value);
}

vec4 color_of(int id) {
  // Unsigned and wrapping: a palette anywhere in the 32-bit ids (3000000000 of a uint32 map, -5 of an int8 one).
  uint i = uint(id) - uint(u_palette_first);
  if (i < uint(u_palette_size)) return texelFetch(u_palette, ivec2(int(i & 255u), int(i >> 8)), 0);
  return u_defaults ? vec4(default_color(id), 1.0) : vec4(0.0);
}

void main() {
  int id = id_at(ivec2(0));
  vec4 c = color_of(id);
  if (u_outline) {
    // An edge: the instance differs one display pixel away (either side).
    int l = id_at(ivec2(-1, 0)), r = id_at(ivec2(1, 0));
    int t = id_at(ivec2(0, -1)), b = id_at(ivec2(0, 1));
    if (id != 0 && (l != id || r != id || t != id || b != id)) {
      o_color = vec4(c.rgb, 1.0);
      return;
    }
  }
  if (c.a == 0.0) discard;
  o_color = vec4(c.rgb, u_opacity);
}
