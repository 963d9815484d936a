#version 450 core
// A dense layer's rectangle (its target in frame pixels) on the framebuffer,
// placed like the frame (yuv_frame_vert.glsl): two triangles, 6 vertices, no
// vertex buffer. v_uv runs 0..1 over the layer.
uniform vec4 u_target;       // x, y, w, h in frame pixels
uniform vec2 u_view_scale;   // framebuffer pixels per frame pixel
uniform vec2 u_view_offset;  // framebuffer position (top-left origin) of frame (0, 0)
uniform vec2 u_fb_size;      // framebuffer size in pixels

noperspective out vec2 v_uv;

const vec2 kCorners[6] = vec2[6](vec2(0.0, 0.0), vec2(1.0, 0.0), vec2(0.0, 1.0),
                                 vec2(0.0, 1.0), vec2(1.0, 0.0), vec2(1.0, 1.0));

void main() {
  v_uv = kCorners[gl_VertexID];
  vec2 fb = u_view_offset + (u_target.xy + v_uv * u_target.zw) * u_view_scale;
  gl_Position = vec4(fb.x / u_fb_size.x * 2.0 - 1.0, 1.0 - fb.y / u_fb_size.y * 2.0, 0.0, 1.0);
}
