#pragma once
// Per-pixel math of the built-in synthetic scene, shared by the CPU renderer
// (scene.cpp) and the CUDA kernel (media/cuda/scene.cu): the same
// source compiles in g++/clang (HANDOFF_HD empty) and in nvcc
// (__host__ __device__). Only <cstdint>-level C++ here: no std library calls,
// no globals, no exceptions. The kernel is built with -fmad=false so float
// results match the CPU bit for bit on x86-64 (no FMA contraction).
//
// The scene: 75% colour bars (top 2/3) over grey / R / G / B ramps (bottom
// third), with moving boxes, circles and a person-like keypoint figure.
// Everything that moves is decided on the host per frame (scene_state() in
// scene.hpp) and passed by value as a SceneState, so a frame is a pure
// function of (SceneState, pixel).
//
// A private header of the media library (include_internal/, target
// handoff::media_private): the types it works on are public
// (scene_state.hpp); the per-pixel functions are not an API.
#include <handoff/media/scene_state.hpp>

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define HANDOFF_HD __host__ __device__
#else
#define HANDOFF_HD
#endif

namespace handoff::media::scene {

// COCO skeleton edge i (0 <= i < kSkeletonEdges) as keypoint indices.
HANDOFF_HD inline void skeleton_edge(int i, int& a, int& b) {
  switch (i) {
    case 0: a = 0; b = 1; return;    // nose - left eye
    case 1: a = 0; b = 2; return;    // nose - right eye
    case 2: a = 1; b = 3; return;    // eye - ear
    case 3: a = 2; b = 4; return;
    case 4: a = 5; b = 6; return;    // shoulders
    case 5: a = 5; b = 7; return;    // left arm
    case 6: a = 7; b = 9; return;
    case 7: a = 6; b = 8; return;    // right arm
    case 8: a = 8; b = 10; return;
    case 9: a = 5; b = 11; return;   // torso
    case 10: a = 6; b = 12; return;
    case 11: a = 11; b = 12; return; // hips
    case 12: a = 11; b = 13; return; // left leg
    case 13: a = 13; b = 15; return;
    case 14: a = 12; b = 14; return; // right leg
    default: a = 14; b = 16; return;
  }
}

HANDOFF_HD inline float clamp01(float v) { return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v); }

// Background at pixel centre (px, py): 75% bars (white, yellow, cyan, green,
// magenta, red, blue) over four ramps (grey, red, green, blue) left to right 0..1.
HANDOFF_HD inline void background_rgb(const SceneState& s, float px, float py, float rgb[3]) {
  const float w = float(s.width), h = float(s.height);
  const float bars_end = h * (2.0f / 3.0f);
  if (py < bars_end) {
    int bar = int(px * 7.0f / w);
    if (bar > 6) bar = 6;
    // Bits of the bar index in the classic order: R on for 0,1,4,5; G on for 0..3; B on for 0,2,4,6.
    const float r = (bar == 0 || bar == 1 || bar == 4 || bar == 5) ? 0.75f : 0.0f;
    const float g = (bar <= 3) ? 0.75f : 0.0f;
    const float b = (bar % 2 == 0) ? 0.75f : 0.0f;
    rgb[0] = r; rgb[1] = g; rgb[2] = b;
    return;
  }
  const float t = w > 1.0f ? clamp01((px - 0.5f) / (w - 1.0f)) : 0.0f;
  int strip = int((py - bars_end) * 4.0f / (h - bars_end));
  if (strip > 3) strip = 3;
  if (strip < 0) strip = 0;
  rgb[0] = (strip == 0 || strip == 1) ? t : 0.0f;
  rgb[1] = (strip == 0 || strip == 2) ? t : 0.0f;
  rgb[2] = (strip == 0 || strip == 3) ? t : 0.0f;
}

// Squared distance from p to segment ab.
HANDOFF_HD inline float segment_distance2(float px, float py, float ax, float ay, float bx, float by) {
  const float dx = bx - ax, dy = by - ay;
  const float len2 = dx * dx + dy * dy;
  float t = len2 > 0.0f ? ((px - ax) * dx + (py - ay) * dy) / len2 : 0.0f;
  t = clamp01(t);
  const float qx = ax + t * dx - px, qy = ay + t * dy - py;
  return qx * qx + qy * qy;
}

// Scene colour at pixel centre (px, py), 0..1.
HANDOFF_HD inline void scene_rgb(const SceneState& s, float px, float py, float rgb[3]) {
  background_rgb(s, px, py, rgb);
  for (int i = 0; i < s.box_count && i < kMaxBoxes; ++i) {
    const SceneBox& b = s.boxes[i];
    if (px >= b.x0 && px < b.x1 && py >= b.y0 && py < b.y1) {
      rgb[0] = b.r; rgb[1] = b.g; rgb[2] = b.b;
    }
  }
  for (int i = 0; i < s.circle_count && i < kMaxCircles; ++i) {
    const SceneCircle& c = s.circles[i];
    const float dx = px - c.cx, dy = py - c.cy;
    if (dx * dx + dy * dy <= c.radius * c.radius) {
      rgb[0] = c.r; rgb[1] = c.g; rgb[2] = c.b;
    }
  }
  if (s.person_visible && px >= s.person_x0 && px < s.person_x1 && py >= s.person_y0 && py < s.person_y1) {
    const float lr2 = s.limb_radius * s.limb_radius;
    bool hit = false;
    for (int e = 0; e < kSkeletonEdges && !hit; ++e) {
      int a = 0, b = 0;
      skeleton_edge(e, a, b);
      hit = segment_distance2(px, py, s.kp_x[a], s.kp_y[a], s.kp_x[b], s.kp_y[b]) <= lr2;
    }
    if (hit) {
      rgb[0] = s.person_r; rgb[1] = s.person_g; rgb[2] = s.person_b;
    }
    const float jr2 = s.joint_radius * s.joint_radius;
    for (int k = 0; k < kKeypoints; ++k) {
      const float dx = px - s.kp_x[k], dy = py - s.kp_y[k];
      if (dx * dx + dy * dy <= jr2) {
        rgb[0] = 1.0f; rgb[1] = 1.0f; rgb[2] = 1.0f;
      }
    }
  }
}

HANDOFF_HD inline std::uint32_t to_code(const float k[4], const float rgb[3], float max_code) {
  float v = k[0] * rgb[0] + k[1] * rgb[1] + k[2] * rgb[2] + k[3];
  v = v < 0.0f ? 0.0f : (v > max_code ? max_code : v);
  return std::uint32_t(v + 0.5f);
}

HANDOFF_HD inline void store_sample(std::uint8_t* row, std::uint32_t index, std::uint32_t code, std::uint32_t p010) {
  if (p010) {
    const std::uint32_t word = code << 6;
    row[2 * index] = std::uint8_t(word & 0xFFu);
    row[2 * index + 1] = std::uint8_t(word >> 8);
  } else {
    row[index] = std::uint8_t(code);
  }
}

// Writes the 2x2 luma block whose chroma sample is (cx, cy) and that chroma
// sample (the average of the block's colours, edge pixels clamped). One call
// per chroma sample: the kernel's thread, the CPU's loop body.
HANDOFF_HD inline void scene_write_block(const SceneState& s, std::uint32_t cx, std::uint32_t cy,
                                         std::uint8_t* luma, std::size_t luma_pitch,
                                         std::uint8_t* chroma, std::size_t chroma_pitch) {
  float sum[3] = {0.0f, 0.0f, 0.0f};
  int n = 0;
  for (std::uint32_t dy = 0; dy < 2; ++dy) {
    const std::uint32_t y = 2 * cy + dy;
    if (y >= s.height) continue;
    for (std::uint32_t dx = 0; dx < 2; ++dx) {
      const std::uint32_t x = 2 * cx + dx;
      if (x >= s.width) continue;
      float rgb[3];
      scene_rgb(s, float(x) + 0.5f, float(y) + 0.5f, rgb);
      store_sample(luma + std::size_t(y) * luma_pitch, x, to_code(s.ky, rgb, s.max_code), s.p010);
      sum[0] += rgb[0]; sum[1] += rgb[1]; sum[2] += rgb[2];
      ++n;
    }
  }
  const float inv = 1.0f / float(n);
  const float avg[3] = {sum[0] * inv, sum[1] * inv, sum[2] * inv};
  std::uint8_t* crow = chroma + std::size_t(cy) * chroma_pitch;
  store_sample(crow, 2 * cx, to_code(s.kcb, avg, s.max_code), s.p010);
  store_sample(crow, 2 * cx + 1, to_code(s.kcr, avg, s.max_code), s.p010);
}

}  // namespace handoff::media::scene
