#version 450
#extension GL_GOOGLE_include_directive : require
// Writes the scene as NV12 / P010 into one buffer: luma rows then chroma rows,
// `pitch` bytes each. One invocation per 32-bit word (x) of a row (y), so
// every byte, padding included, is written exactly once with no atomics.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(std430, binding = 0) writeonly buffer Frame { uint words[]; };

#include "scene.glsl"

void main() {
  uint wx = gl_GlobalInvocationID.x;
  uint row = gl_GlobalInvocationID.y;
  uint chroma_h = (pc.height + 1u) / 2u;
  if (wx >= pc.pitch / 4u || row >= pc.height + chroma_h) return;
  uint word = 0u;
  if (row < pc.height) {
    if (pc.p010 == 0u) {
      for (uint i = 0u; i < 4u; ++i) {
        uint x = wx * 4u + i;
        if (x < pc.width) word |= luma_at(int(x), int(row)) << (8u * i);
      }
    } else {
      for (uint i = 0u; i < 2u; ++i) {
        uint x = wx * 2u + i;
        if (x < pc.width) word |= (luma_at(int(x), int(row)) << 6u) << (16u * i);
      }
    }
  } else {
    uint cy = row - pc.height;
    uint cw = (pc.width + 1u) / 2u;
    if (pc.p010 == 0u) {
      for (uint j = 0u; j < 2u; ++j) {
        uint cx = wx * 2u + j;
        if (cx < cw) {
          uvec2 uv = chroma_at(int(cx), int(cy));
          word |= (uv.x | (uv.y << 8u)) << (16u * j);
        }
      }
    } else {
      uint cx = wx;
      if (cx < cw) {
        uvec2 uv = chroma_at(int(cx), int(cy));
        word = (uv.x << 6u) | ((uv.y << 6u) << 16u);
      }
    }
  }
  words[row * (pc.pitch / 4u) + wx] = word;
}
