#version 450 core
// rgb8 / bgr8 / rgba8 / bgra8: the codes are R'G'B' already (sRGB-encoded) and
// are written as they are. The texture holds R, G, B in that order whatever
// the frame's byte order (bgr8 / bgra8 are uploaded as GL_BGR / GL_BGRA);
// alpha is carried, not drawn. rgb_frame_nearest_frag.glsl: flat pixels.
layout(binding = 0) uniform sampler2D u_luma;

noperspective in vec2 v_luma;
out vec4 o_color;

void main() { o_color = vec4(textureLod(u_luma, v_luma, 0.0).rgb, 1.0); }
