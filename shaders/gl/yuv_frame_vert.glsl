#version 450 core
// The frame's rectangle on the framebuffer, for every frame shader (YUV, RGB, grey) (two triangles, 6 vertices, no
// vertex buffer): only fragments inside the frame run the fragment shader, and
// the background outside it is a glClear, so the fragment shaders have no
// branch. The texture coordinates of both planes are interpolated from the
// corners (they are linear in the frame position), as mpv does, which keeps
// llvmpipe's per-pixel work to the two samples and the matrix.
uniform vec2 u_frame_size;   // luma samples (W, H)
uniform vec2 u_chroma_size;  // chroma samples (4:2:0: ceil(W/2) x ceil(H/2); 4:2:2: ceil(W/2) x H)
uniform vec2 u_siting;       // chroma sample position in luma samples (see yuv_frame_frag.glsl)
uniform vec2 u_subsample;    // luma samples per chroma sample: (2, 2) for 4:2:0, (2, 1) for 4:2:2
uniform vec2 u_view_scale;   // framebuffer pixels per frame pixel
uniform vec2 u_view_offset;  // framebuffer position (top-left origin) of frame (0, 0)
uniform vec2 u_fb_size;      // framebuffer size in pixels

noperspective out vec2 v_p;       // frame coordinates (pixel centres at +0.5)
noperspective out vec2 v_luma;    // luma texture coordinates
noperspective out vec2 v_chroma;  // chroma texture coordinates

const vec2 kCorners[6] = vec2[6](vec2(0.0, 0.0), vec2(1.0, 0.0), vec2(0.0, 1.0),
                                 vec2(0.0, 1.0), vec2(1.0, 0.0), vec2(1.0, 1.0));

void main() {
  v_p = kCorners[gl_VertexID] * u_frame_size;
  v_luma = v_p / u_frame_size;
  // Chroma sample i sits at luma position subsample * i + siting (sample centres at +0.5).
  v_chroma = ((v_p - 0.5 - u_siting) / u_subsample + 0.5) / u_chroma_size;
  vec2 fb = u_view_offset + v_p * u_view_scale;
  gl_Position = vec4(fb.x / u_fb_size.x * 2.0 - 1.0, 1.0 - fb.y / u_fb_size.y * 2.0, 0.0, 1.0);
}
