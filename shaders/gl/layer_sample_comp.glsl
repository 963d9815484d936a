#version 450 core
// Every u_step-th texel of a layer texture (row-major sample order, as the
// host path walks its arrays) into a buffer the display reads back: the
// automatic range's subsample of a scalar map (float bits), the legend's
// sample of a class map (the raw ids). FLOAT_TEXTURE is defined by the code
// that compiles this text (1: sampler2D, 0: usampler2D); WIDE_BUFFER 1 reads
// 64-bit ids from the layer's packed buffer instead (its texture holds their
// low 32 bits only), each as two words (low, high), u_width wide.
layout(local_size_x = 64) in;
#if WIDE_BUFFER
layout(std430, binding = 1) readonly buffer Wide { uvec2 wide[]; };
uniform int u_width;
#elif FLOAT_TEXTURE
layout(binding = 0) uniform sampler2D u_texture;
#else
layout(binding = 0) uniform usampler2D u_texture;
#endif
layout(std430, binding = 0) writeonly buffer Out { uint samples[]; };
uniform uint u_step;
uniform uint u_samples;

void main() {
  uint j = gl_GlobalInvocationID.x;
  if (j >= u_samples) return;
  uint p = j * u_step;
#if WIDE_BUFFER
  uvec2 v = wide[p];
  samples[2u * j] = v.x;
  samples[2u * j + 1u] = v.y;
#else
  int w = textureSize(u_texture, 0).x;
  ivec2 t = ivec2(int(p % uint(w)), int(p / uint(w)));
#endif
#if WIDE_BUFFER
#elif FLOAT_TEXTURE
  samples[j] = floatBitsToUint(texelFetch(u_texture, t, 0).r);
#else
  samples[j] = texelFetch(u_texture, t, 0).r;
#endif
}
