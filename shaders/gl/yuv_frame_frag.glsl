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
uniform float u_nearest;       // 1: each frame pixel drawn as a flat square (zoomed in); else 0

noperspective in vec2 v_p;     // frame coordinates of this fragment (pixel centres at +0.5)
out vec4 o_color;

// Only fragments inside the frame run (the vertex shader draws the frame's
// rectangle), and nothing branches: nearest is a select of the sample
// position (a texel centre, where linear filtering returns the texel itself).
// textureLod(.., 0): the textures have one level, and an explicit LOD spares
// llvmpipe the per-quad derivatives (both measured on a 4K NV12 clip in a
// 1280x720 window: 57 -> 64 fps with the UI shown).
void main() {
  vec2 p = mix(v_p, floor(v_p) + 0.5, u_nearest);
  float y = textureLod(u_luma, p / u_frame_size, 0.0).r;
  // Chroma sample i sits at luma position 2 i + siting (sample centres at +0.5).
  vec2 c = (p - 0.5 - u_siting) * 0.5 + 0.5;
  vec2 cbcr = textureLod(u_chroma, c / u_chroma_size, 0.0).rg;
  vec3 rgb = u_rgb_from_yuv * vec3(y, cbcr) + u_bias;
  o_color = vec4(clamp(rgb, 0.0, 1.0), 1.0);
}
