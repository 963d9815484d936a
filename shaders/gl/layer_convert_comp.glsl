#version 450 core
// A CUDA layer's packed samples (a GL buffer the viewer's CUDA copy wrote)
// into the texture the host path fills (layer_gpu.cpp), as layer_copy.cpp
// converts host layers:
//   MODE 0  ids: the low 8 / 16 / 32 bits (64-bit ids: the low 32) into OUT_FORMAT
//   MODE 1  scalars: as float (f16, f64 and integers converted; NaN and inf kept) into r32f
//   MODE 2  masks: the index (1-based) of the last mask with sample > threshold, 0 if none, into r16ui
// MODE and OUT_FORMAT are defined by the code that compiles this text.
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer Samples { uint words[]; };
#if MODE == 1
layout(r32f, binding = 0) writeonly uniform image2D u_out;
#else
layout(OUT_FORMAT, binding = 0) writeonly uniform uimage2D u_out;
#endif
uniform ivec2 u_size;     // width, height
uniform int u_count;      // images (masks)
uniform int u_type;       // media::SampleType: U8 U16 U32 U64 I8 I16 I32 I64 F16 F32 F64 Bool
uniform double u_threshold;

const int U8 = 0, U16 = 1, U32 = 2, U64 = 3, I8 = 4, I16 = 5, I32 = 6, I64 = 7, F16 = 8, F32 = 9, F64 = 10;

int sample_bytes(int t) {
  if (t == U8 || t == I8 || t > F64) return 1;
  if (t == U16 || t == I16 || t == F16) return 2;
  if (t == U32 || t == I32 || t == F32) return 4;
  return 8;
}

// The low 32 bits of sample `i` (zero-extended), and the high 32 of an 8-byte one.
uint low_bits(uint i, int bytes) {
  if (bytes == 8) return words[2u * i];
  if (bytes == 4) return words[i];
  uint byte_at = i * uint(bytes);
  return bitfieldExtract(words[byte_at >> 2], int(byte_at & 3u) * 8, bytes * 8);
}

// Sample `i` as a double, as layer_copy.cpp's sample() reads it.
double value_at(uint i) {
  int bytes = sample_bytes(u_type);
  uint lo = low_bits(i, bytes);
  uint hi = bytes == 8 ? words[2u * i + 1u] : 0u;
  switch (u_type) {
    case I8: return double(bitfieldExtract(int(lo), 0, 8));
    case I16: return double(bitfieldExtract(int(lo), 0, 16));
    case I32: return double(int(lo));
    case U64: return double(hi) * 4294967296.0 + double(lo);  // exact terms, one rounding
    case I64: return double(int(hi)) * 4294967296.0 + double(lo);
    case F16: return double(unpackHalf2x16(lo).x);
    case F32: return double(uintBitsToFloat(lo));
    case F64: return packDouble2x32(uvec2(lo, hi));
    default: return double(lo);  // U8, U16, U32, Bool
  }
}

void main() {
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  if (p.x >= u_size.x || p.y >= u_size.y) return;
  uint i = uint(p.y) * uint(u_size.x) + uint(p.x);
#if MODE == 0
  imageStore(u_out, p, uvec4(low_bits(i, sample_bytes(u_type))));
#elif MODE == 1
  float v = u_type == F32 ? uintBitsToFloat(words[i]) : float(value_at(i));
  imageStore(u_out, p, vec4(v));
#else
  uint plane = uint(u_size.x) * uint(u_size.y);
  uint top = 0u;
  for (int k = 0; k < u_count; ++k)
    if (value_at(uint(k) * plane + i) > u_threshold) top = uint(min(k + 1, 65535));
  imageStore(u_out, p, uvec4(top));
#endif
}
