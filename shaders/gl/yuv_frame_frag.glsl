#version 450 core
// NV12 / P010 to R'G'B'. Luma in an R8 / R16 texture, interleaved chroma in an
// RG8 / RG16 texture at half resolution. The CPU folds code scaling, range
// offsets and the matrix into u_rgb_from_yuv and u_bias (computed in float64
// from the viewer core's coefficients), so this shader holds no colour constant.
layout(binding = 0) uniform sampler2D u_luma;
layout(binding = 1) uniform sampler2D u_chroma;

uniform mat3 u_rgb_from_yuv;   // applied to normalized texture values (Y, Cb, Cr)
uniform vec3 u_bias;
uniform vec2 u_frame_size;     // luma samples (W, H)
uniform vec2 u_chroma_size;    // chroma samples (ceil(W/2), ceil(H/2))
uniform vec2 u_siting;         // chroma sample position in luma samples: x 0 (left) or 0.5 (center), y 0 (top) or 0.5
uniform vec2 u_view_scale;     // framebuffer pixels per frame pixel
uniform vec2 u_view_offset;    // framebuffer position (top-left origin) of frame (0, 0)
uniform float u_fb_height;     // framebuffer height, to turn gl_FragCoord top-down
uniform int u_nearest;         // 1: each frame pixel drawn as a flat square (zoomed in)
uniform vec4 u_background;

out vec4 o_color;

void main() {
  vec2 fb = vec2(gl_FragCoord.x, u_fb_height - gl_FragCoord.y);
  vec2 p = (fb - u_view_offset) / u_view_scale;          // frame coordinates, pixel centres at +0.5
  if (p.x < 0.0 || p.y < 0.0 || p.x >= u_frame_size.x || p.y >= u_frame_size.y) {
    o_color = u_background;
    return;
  }
  float y;
  if (u_nearest != 0) {
    p = floor(p) + 0.5;
    y = texelFetch(u_luma, ivec2(p), 0).r;
  } else {
    y = texture(u_luma, p / u_frame_size).r;
  }
  // Chroma sample i sits at luma position 2 i + siting (sample centres at +0.5).
  vec2 c = (p - 0.5 - u_siting) * 0.5 + 0.5;
  vec2 cbcr = texture(u_chroma, c / u_chroma_size).rg;
  vec3 rgb = u_rgb_from_yuv * vec3(y, cbcr) + u_bias;
  o_color = vec4(clamp(rgb, 0.0, 1.0), 1.0);
}
