#version 450
#extension GL_GOOGLE_include_directive : require
// Writes the scene into two plane images: luma (R8 / R16) and chroma
// (RG8 / RG16, half size). One invocation per luma pixel; the one at the
// top-left of each 2x2 block also writes that block's chroma sample.
// P010 codes sit in the top 10 bits of the 16-bit UNORM texel.
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(binding = 1) writeonly uniform image2D luma_image;
layout(binding = 2) writeonly uniform image2D chroma_image;

#include "scene.glsl"

float unorm(uint code) {
  return pc.p010 != 0u ? float(code << 6u) / 65535.0 : float(code) / 255.0;
}

void main() {
  uint x = gl_GlobalInvocationID.x;
  uint y = gl_GlobalInvocationID.y;
  if (x >= pc.width || y >= pc.height) return;
  imageStore(luma_image, ivec2(x, y), vec4(unorm(luma_at(int(x), int(y))), 0.0, 0.0, 1.0));
  if ((x & 1u) == 0u && (y & 1u) == 0u) {
    uvec2 uv = chroma_at(int(x / 2u), int(y / 2u));
    imageStore(chroma_image, ivec2(x / 2u, y / 2u), vec4(unorm(uv.x), unorm(uv.y), 0.0, 1.0));
  }
}
