#version 450 core
// YUV to R'G'B', filtered (bilinear luma and chroma), where one texture holds
// the chroma pairs: Cb in .r, Cr in .g of u_chroma. NV12 / P010: an RG8 /
// RG16 texture at half resolution; yuyv / uyvy: an RGBA16 view of the 4:2:2
// pairs, swizzled so that .r is U and .g is V (FrameRenderer's
// frame_textures). i420's separate U and V planes take
// yuv_planar_frame_frag.glsl. The CPU folds code scaling, range offsets and
// the matrix into u_rgb_from_yuv and u_bias (computed in float64 from the
// media library's coefficients), so this shader holds no colour constant.
// yuv_frame_nearest_frag.glsl is the same with each frame pixel drawn flat.
// textureLod(.., 0): the textures have one level, and an explicit LOD spares
// llvmpipe the per-quad derivatives. (4K NV12 clip in a 1280x720 window on
// llvmpipe: 57 fps with the old full-window branching shader, 69-74 now.)
layout(binding = 0) uniform sampler2D u_luma;
layout(binding = 1) uniform sampler2D u_chroma;

uniform mat3 u_rgb_from_yuv;  // applied to normalized texture values (Y, Cb, Cr)
uniform vec3 u_bias;

noperspective in vec2 v_luma;
noperspective in vec2 v_chroma;
out vec4 o_color;

void main() {
  float y = textureLod(u_luma, v_luma, 0.0).r;
  vec2 cbcr = textureLod(u_chroma, v_chroma, 0.0).rg;
  o_color = vec4(clamp(u_rgb_from_yuv * vec3(y, cbcr) + u_bias, 0.0, 1.0), 1.0);
}
