#pragma once
// The state of one frame of the built-in synthetic scene (scene.hpp): what
// scene_state() computes on the host and the CUDA kernel takes by value.
// Plain C++ with <cstdint> only, so nvcc compiles it too (the kernel and the
// CPU renderer share the private per-pixel code in scene_math.hpp).
#include <cstdint>

namespace handoff::media::scene {

inline constexpr int kMaxBoxes = 4;
inline constexpr int kMaxCircles = 3;
inline constexpr int kKeypoints = 17;      // COCO order: nose, eyes, ears, shoulders, elbows, wrists, hips, knees, ankles
inline constexpr int kSkeletonEdges = 16;

struct SceneBox {
  float x0, y0, x1, y1;  // pixels, xyxy
  float r, g, b;         // fill colour, 0..1
  std::int32_t class_id, track_id;
};

struct SceneCircle {
  float cx, cy, radius;
  float r, g, b;
  std::int32_t class_id, track_id;
};

// Everything one frame needs. Trivially copyable: passed by value to the kernel.
struct SceneState {
  std::uint32_t width, height;
  std::uint32_t p010;          // 0: NV12 (8-bit), 1: P010 (10-bit << 6)
  std::int32_t frame;          // frame index (mod 2^31)
  float ky[4], kcb[4], kcr[4]; // RGB -> code coefficients (color.hpp RgbToYuvCoefficients)
  float max_code;              // 255 or 1023
  std::int32_t box_count;
  SceneBox boxes[kMaxBoxes];
  std::int32_t circle_count;
  SceneCircle circles[kMaxCircles];
  std::int32_t person_visible;
  float kp_x[kKeypoints], kp_y[kKeypoints];
  float joint_radius, limb_radius;
  float person_r, person_g, person_b;
  float person_x0, person_y0, person_x1, person_y1;  // bounds of the figure incl. radii
};

}  // namespace handoff::media::scene
