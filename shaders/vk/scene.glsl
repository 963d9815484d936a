// The built-in test scene (colour bars, a grey ramp, a moving square and a
// moving disc) and its conversion to Y'CbCr codes. Included by the scene_*.comp
// producers; the per-pixel geometry is integer-only so a CPU reference agrees
// exactly on which pixel shows what. Not compiled on its own: the *.comp files
// include it (the build tracks that). The CPU reference is
// tests/vulkan/scene_reference.hpp; handoff-view's ground-truth boxes for the
// square and the disc (viewer/app/src/viewer_state.cpp) use the same geometry.

layout(push_constant) uniform Params {
  uint width;
  uint height;
  uint pitch;          // bytes per row, both planes (buffer target)
  uint chroma_offset;  // bytes (buffer target) = pitch * height
  uint frame;          // frame index (mod 2^32)
  uint p010;           // 0: NV12 (8-bit), 1: P010 (10-bit codes in the top bits of 16)
  uint full_range;     // 0: limited, 1: full
  float kr;            // luma coefficients of the matrix (BT.601 / 709 / 2020)
  float kb;
} pc;

ivec3 scene_rgb(int x, int y) {
  int w = int(pc.width), h = int(pc.height);
  ivec3 c;
  if (y < (h * 2) / 3) {
    const ivec3 bars[7] = ivec3[7](ivec3(191, 191, 191), ivec3(191, 191, 0), ivec3(0, 191, 191),
                                   ivec3(0, 191, 0), ivec3(191, 0, 191), ivec3(191, 0, 0),
                                   ivec3(0, 0, 191));
    c = bars[(x * 7) / w];
  } else {
    int v = w > 1 ? (x * 255) / (w - 1) : 0;
    c = ivec3(v, v, v);
  }
  int n = int(pc.frame % 1000000u);
  // A white square sliding back and forth across the middle.
  int s = max(2, min(w, h) / 8);
  int range = max(1, w - s);
  int t = (n * 4) % (2 * range);
  int sx = t < range ? t : 2 * range - t;
  int sy = max(0, h / 2 - s / 2);
  if (x >= sx && x < sx + s && y >= sy && y < sy + s) c = ivec3(255, 255, 255);
  // An orange disc moving right to left near the bottom.
  int r = max(1, min(w, h) / 10);
  int cx = w - 1 - (n * 3) % w;
  int cy = (h * 5) / 6;
  int dx = x - cx, dy = y - cy;
  if (dx * dx + dy * dy <= r * r) c = ivec3(255, 128, 0);
  return c;
}

uint code_max() { return pc.p010 != 0u ? 1023u : 255u; }

uint quantise(float v) { return uint(clamp(floor(v + 0.5), 0.0, float(code_max()))); }

// Y' code of an RGB triple in 0..255.
uint luma_code(vec3 rgb255) {
  vec3 rgb = rgb255 / 255.0;
  float kg = 1.0 - pc.kr - pc.kb;
  float y = pc.kr * rgb.r + kg * rgb.g + pc.kb * rgb.b;
  float scale = pc.p010 != 0u ? 4.0 : 1.0;
  return pc.full_range != 0u ? quantise(y * float(code_max())) : quantise((16.0 + 219.0 * y) * scale);
}

// (Cb, Cr) codes of an RGB triple in 0..255.
uvec2 chroma_code(vec3 rgb255) {
  vec3 rgb = rgb255 / 255.0;
  float kg = 1.0 - pc.kr - pc.kb;
  float y = pc.kr * rgb.r + kg * rgb.g + pc.kb * rgb.b;
  float cb = (rgb.b - y) / (2.0 * (1.0 - pc.kb));
  float cr = (rgb.r - y) / (2.0 * (1.0 - pc.kr));
  float scale = pc.p010 != 0u ? 4.0 : 1.0;
  if (pc.full_range != 0u) {
    float mid = pc.p010 != 0u ? 512.0 : 128.0;
    return uvec2(quantise(mid + cb * float(code_max())), quantise(mid + cr * float(code_max())));
  }
  return uvec2(quantise((128.0 + 224.0 * cb) * scale), quantise((128.0 + 224.0 * cr) * scale));
}

uint luma_at(int x, int y) { return luma_code(vec3(scene_rgb(x, y))); }

// Chroma sample (cx, cy): the average colour of its 2x2 luma block (edges clamp).
uvec2 chroma_at(int cx, int cy) {
  int x0 = 2 * cx, y0 = 2 * cy;
  int x1 = min(x0 + 1, int(pc.width) - 1), y1 = min(y0 + 1, int(pc.height) - 1);
  ivec3 sum = scene_rgb(x0, y0) + scene_rgb(x1, y0) + scene_rgb(x0, y1) + scene_rgb(x1, y1);
  return chroma_code(vec3(sum) / 4.0);
}
