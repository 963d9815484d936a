#version 450 core
// YUV to R'G'B', filtered (bilinear luma and chroma), for every YUV layout the
// renderer makes textures for (FrameRenderer's PlaneTextures): luma in .r of
// u_luma; Cb in .r of u_cb and Cr in .g of u_cr. NV12 / P010 bind their one
// RG chroma texture to both units; i420 binds its U and V textures (V's .g
// swizzled to its red); yuyv / uyvy bind one RGBA view of the 4:2:2 pairs to
// both, swizzled so that .r is U and .g is V. The CPU folds code scaling,
// range offsets and the matrix into u_rgb_from_yuv and u_bias (computed in
// float64 from the media library's coefficients), so this shader holds no
// colour constant.
// yuv_frame_nearest_frag.glsl is the same with each frame pixel drawn flat.
// textureLod(.., 0): the textures have one level, and an explicit LOD spares
// llvmpipe the per-quad derivatives.
layout(binding = 0) uniform sampler2D u_luma;
layout(binding = 1) uniform sampler2D u_cb;
layout(binding = 2) uniform sampler2D u_cr;

uniform mat3 u_rgb_from_yuv;  // applied to normalized texture values (Y, Cb, Cr)
uniform vec3 u_bias;

noperspective in vec2 v_luma;
noperspective in vec2 v_chroma;
out vec4 o_color;

void main() {
  float y = textureLod(u_luma, v_luma, 0.0).r;
  float cb = textureLod(u_cb, v_chroma, 0.0).r;
  float cr = textureLod(u_cr, v_chroma, 0.0).g;
  o_color = vec4(clamp(u_rgb_from_yuv * vec3(y, cb, cr) + u_bias, 0.0, 1.0), 1.0);
}
