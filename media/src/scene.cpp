// The synthetic scene: per-frame state (what moves where), the CPU renderer,
// the ground-truth overlays and the embedded CUDA kernel.
#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/media/color.hpp>
#include <handoff/media/overlay.hpp>
#include <handoff/media/scene.hpp>
#include <handoff/media/y4m_reader.hpp>

#include <handoff/media/band_pool.hpp>
#include <handoff/media/scene_math.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace handoff::media {

namespace detail {
extern const bool kHaveSceneKernel;
extern const unsigned char kScenePtx[];
extern const std::size_t kScenePtxSize;
extern const unsigned char kSceneCubin[];
extern const std::size_t kSceneCubinSize;
}  // namespace detail

namespace {

// Triangle wave 0 -> 1 -> 0 over `period` frames (integer phase: exact for any index).
double tri(std::int64_t index, std::int64_t period, std::int64_t offset = 0) {
  const std::int64_t p = ((index + offset) % period + period) % period;
  const double t = double(p) / double(period);
  return t < 0.5 ? 2.0 * t : 2.0 - 2.0 * t;
}

// Sine of a phase advancing 2*pi per `period` frames.
double wave(std::int64_t index, std::int64_t period) {
  const std::int64_t p = (index % period + period) % period;
  return std::sin(2.0 * std::numbers::pi * double(p) / double(period));
}

struct BoxSpec {
  const char* label;
  std::int32_t class_id;
  double w, h;           // fraction of the frame
  std::int64_t px, py;   // periods of the horizontal / vertical motion
  std::int64_t offset;
  float r, g, b;
};
constexpr BoxSpec kBoxes[] = {
    {"car", 2, 0.16, 0.10, 240, 170, 0, 0.15f, 0.35f, 0.85f},
    {"truck", 7, 0.20, 0.14, 300, 230, 77, 0.85f, 0.45f, 0.10f},
    {"stop sign", 11, 0.07, 0.07, 190, 130, 31, 0.80f, 0.10f, 0.15f},
};
constexpr int kBoxCount = 3;

struct CircleSpec {
  const char* label;
  std::int32_t class_id;
  double radius;  // fraction of the frame height
  std::int64_t px, py, offset;
  float r, g, b;
};
constexpr CircleSpec kCircles[] = {
    {"sports ball", 32, 0.045, 110, 74, 0, 0.95f, 0.95f, 0.20f},
    {"frisbee", 29, 0.035, 150, 96, 40, 0.20f, 0.85f, 0.40f},
};
constexpr int kCircleCount = 2;

constexpr std::int32_t kPersonClass = 0;
constexpr std::int32_t kPersonTrack = 100;
constexpr std::int64_t kBallTrail = 8;

void circle_centre(const scene::SceneState& s, int i, std::int64_t index, double& cx, double& cy, double& r) {
  const CircleSpec& c = kCircles[i];
  r = c.radius * s.height;
  cx = r + tri(index, c.px, c.offset) * std::max(0.0, double(s.width) - 2 * r);
  cy = r + tri(index, c.py, c.offset) * std::max(0.0, double(s.height) - 2 * r);
}

}  // namespace

scene::SceneState scene_state(const SceneOptions& o, std::int64_t index) {
  validate_dimensions(o.width, o.height);  // InvalidFrame naming the dimension
  require_format(o.format, {PixelFormat::NV12, PixelFormat::P010}, "the scene");
  scene::SceneState s{};
  s.width = o.width;
  s.height = o.height;
  s.p010 = o.format == PixelFormat::P010 ? 1u : 0u;
  s.frame = static_cast<std::int32_t>(index & 0x7FFFFFFF);
  const RgbToYuvCoefficients k = rgb_to_yuv_coefficients(o.colorimetry.matrix, o.colorimetry.range, o.format);
  std::copy(k.ky, k.ky + 4, s.ky);
  std::copy(k.kcb, k.kcb + 4, s.kcb);
  std::copy(k.kcr, k.kcr + 4, s.kcr);
  s.max_code = k.max_code;
  const double W = o.width, H = o.height;

  s.box_count = kBoxCount;
  for (int i = 0; i < kBoxCount; ++i) {
    const BoxSpec& b = kBoxes[i];
    const double bw = std::max(1.0, std::round(b.w * W)), bh = std::max(1.0, std::round(b.h * H));
    const double x0 = std::round(tri(index, b.px, b.offset) * std::max(0.0, W - bw));
    const double y0 = std::round(tri(index, b.py, b.offset) * std::max(0.0, H - bh));
    s.boxes[i] = scene::SceneBox{float(x0), float(y0), float(x0 + bw), float(y0 + bh), b.r, b.g, b.b,
                                 b.class_id, i + 1};
  }
  s.circle_count = kCircleCount;
  for (int i = 0; i < kCircleCount; ++i) {
    double cx, cy, r;
    circle_centre(s, i, index, cx, cy, r);
    const CircleSpec& c = kCircles[i];
    s.circles[i] = scene::SceneCircle{float(cx), float(cy), float(r), c.r, c.g, c.b, c.class_id, 10 + i};
  }

  // A walking figure: COCO keypoints around a body of height ph, swinging limbs.
  const double ph = 0.42 * H;
  const double cx = 0.5 * ph + tri(index, 400, 100) * std::max(0.0, W - ph);
  const double top = 0.5 * H - 0.5 * ph + 0.01 * H * wave(index, 30);
  const double swing = 0.12 * ph * wave(index, 36);
  const double u = ph;  // unit
  const double kp[scene::kKeypoints][2] = {
      {cx, top + 0.06 * u},                                   // 0 nose
      {cx - 0.025 * u, top + 0.04 * u}, {cx + 0.025 * u, top + 0.04 * u},  // eyes
      {cx - 0.05 * u, top + 0.05 * u}, {cx + 0.05 * u, top + 0.05 * u},    // ears
      {cx - 0.11 * u, top + 0.18 * u}, {cx + 0.11 * u, top + 0.18 * u},    // shoulders
      {cx - 0.15 * u + 0.3 * swing, top + 0.34 * u}, {cx + 0.15 * u - 0.3 * swing, top + 0.34 * u},  // elbows
      {cx - 0.16 * u + 0.6 * swing, top + 0.48 * u}, {cx + 0.16 * u - 0.6 * swing, top + 0.48 * u},  // wrists
      {cx - 0.08 * u, top + 0.52 * u}, {cx + 0.08 * u, top + 0.52 * u},    // hips
      {cx - 0.09 * u - 0.5 * swing, top + 0.75 * u}, {cx + 0.09 * u + 0.5 * swing, top + 0.75 * u},  // knees
      {cx - 0.10 * u - swing, top + 0.98 * u}, {cx + 0.10 * u + swing, top + 0.98 * u},              // ankles
  };
  s.person_visible = 1;
  s.joint_radius = float(std::max(1.5, 0.018 * u));
  s.limb_radius = float(std::max(1.0, 0.028 * u));
  s.person_r = 0.55f;
  s.person_g = 0.35f;
  s.person_b = 0.70f;
  float x0 = 1e30f, y0 = 1e30f, x1 = -1e30f, y1 = -1e30f;
  for (int i = 0; i < scene::kKeypoints; ++i) {
    s.kp_x[i] = float(kp[i][0]);
    s.kp_y[i] = float(kp[i][1]);
    x0 = std::min(x0, s.kp_x[i]);
    y0 = std::min(y0, s.kp_y[i]);
    x1 = std::max(x1, s.kp_x[i]);
    y1 = std::max(y1, s.kp_y[i]);
  }
  const float pad = std::max(s.joint_radius, s.limb_radius) + 1.0f;
  s.person_x0 = x0 - pad;
  s.person_y0 = y0 - pad;
  s.person_x1 = x1 + pad;
  s.person_y1 = y1 + pad;
  return s;
}

void render_scene_cpu(const scene::SceneState& s, const FrameWriteTarget& t) {
  SourceInfo info;
  info.format = s.p010 ? PixelFormat::P010 : PixelFormat::NV12;
  info.width = s.width;
  info.height = s.height;
  check_target(info, t);
  render_scene_cpu(s, t, 0, chroma_height(s.height));
}

void render_scene_cpu(const scene::SceneState& s, const FrameWriteTarget& t, std::uint32_t first,
                      std::uint32_t count) {
  const std::uint32_t cw = chroma_width(s.width), ch = chroma_height(s.height);
  const std::uint32_t end = std::min(ch, first + count);
  for (std::uint32_t cy = first; cy < end; ++cy) {
    for (std::uint32_t cx = 0; cx < cw; ++cx) {
      scene::scene_write_block(s, cx, cy, t.luma, t.luma_pitch, t.chroma, t.chroma_pitch);
    }
  }
}

void scene_overlays(const scene::SceneState& s, OverlayFrame& out) {
  out.clear();
  const std::int64_t index = s.frame;
  out.frame = index;
  for (int i = 0; i < s.box_count; ++i) {
    const scene::SceneBox& b = s.boxes[i];
    const float score = float(0.55 + 0.44 * tri(index, 97 + 13 * i, 7 * i));
    out.add_box(b.x0, b.y0, b.x1, b.y1, kBoxes[i].label, score, b.class_id, b.track_id);
  }
  for (int i = 0; i < s.circle_count; ++i) {
    const scene::SceneCircle& c = s.circles[i];
    const float score = float(0.50 + 0.45 * tri(index, 83 + 11 * i, 5 * i));
    out.add_box(c.cx - c.radius, c.cy - c.radius, c.cx + c.radius, c.cy + c.radius, kCircles[i].label, score,
                c.class_id, c.track_id);
  }
  if (s.person_visible) {
    const std::uint32_t p = out.add_box(s.person_x0, s.person_y0, s.person_x1, s.person_y1, "person",
                                        float(0.9 + 0.09 * tri(index, 61)), kPersonClass, kPersonTrack);
    Keypoint kps[scene::kKeypoints];
    for (int k = 0; k < scene::kKeypoints; ++k) {
      kps[k] = Keypoint{s.kp_x[k], s.kp_y[k], float(0.6 + 0.4 * tri(index + k, 50))};
    }
    std::array<std::uint32_t, 2> edges[scene::kSkeletonEdges];
    for (int e = 0; e < scene::kSkeletonEdges; ++e) {
      int a = 0, b = 0;
      scene::skeleton_edge(e, a, b);
      edges[e] = {std::uint32_t(a), std::uint32_t(b)};
    }
    out.set_keypoints(p, kps, scene::kKeypoints, edges, scene::kSkeletonEdges);
  }
  // A polygon (a fixed "zone" over the ramps) and a polyline (the ball's trail).
  const float W = float(s.width), H = float(s.height);
  const Point2 zone[4] = {{0.05f * W, 0.70f * H}, {0.45f * W, 0.70f * H}, {0.40f * W, 0.95f * H}, {0.10f * W, 0.95f * H}};
  out.add_shape(zone, 4, true);
  Point2 trail[kBallTrail];
  for (std::int64_t k = 0; k < kBallTrail; ++k) {
    double cx, cy, r;
    circle_centre(s, 0, index - (kBallTrail - 1 - k) * 2, cx, cy, r);
    trail[k] = Point2{float(cx), float(cy)};
  }
  out.add_shape(trail, kBallTrail, false, static_cast<std::int32_t>(kBoxCount));  // the ball's object
  out.add_label_text(8.0f, 8.0f, "handoff scene, frame " + std::to_string(index));
}

namespace {
class SceneSource final : public FrameSource {
 public:
  explicit SceneSource(const SceneOptions& o) : options_(o), pool_(o.threads) {
    scene_state(o, 0);  // validates the size
    if (o.rate.num <= 0 || o.rate.den <= 0) throw UsageError("scene: frame rate terms must be positive");
    info_ = SourceInfo{"scene", o.format, o.width, o.height, o.colorimetry, o.rate, -1};
  }
  const SourceInfo& info() const override { return info_; }
  std::int64_t position() const override { return position_; }
  void seek(std::int64_t index) override {
    if (index < 0) throw UsageError("scene: seek to negative frame " + std::to_string(index));
    position_ = index;
  }
  // Four bands per thread, so a thread that started late still gets work.
  bool read_into(const FrameWriteTarget& t) override {
    const scene::SceneState s = scene_state(options_, position_);
    check_target(info_, t);
    const std::uint32_t ch = chroma_height(s.height);
    const unsigned bands = std::max(1u, std::min<unsigned>(ch, pool_.threads() * 4));
    pool_.run(bands, [&](unsigned b) {
      const std::uint32_t first = std::uint32_t(std::uint64_t(ch) * b / bands);
      const std::uint32_t next = std::uint32_t(std::uint64_t(ch) * (b + 1) / bands);
      render_scene_cpu(s, t, first, next - first);
    });
    ++position_;
    return true;
  }
  bool overlays_for(std::int64_t index, OverlayFrame& out) const override {
    scene_overlays(scene_state(options_, index), out);
    return true;
  }

 private:
  SceneOptions options_;
  SourceInfo info_;
  std::int64_t position_ = 0;
  BandPool pool_;
};
}  // namespace

std::unique_ptr<FrameSource> make_scene_source(const SceneOptions& options) {
  return std::make_unique<SceneSource>(options);
}

Grid scene_grid(std::uint32_t width, std::uint32_t height) {
  return {(chroma_width(width) + kSceneBlock - 1) / kSceneBlock, (chroma_height(height) + kSceneBlock - 1) / kSceneBlock};
}

bool has_cuda_kernel() { return detail::kHaveSceneKernel; }

std::string_view scene_ptx() {
  return {reinterpret_cast<const char*>(detail::kScenePtx), detail::kScenePtxSize};
}

std::span<const std::uint8_t> scene_cubin() { return {detail::kSceneCubin, detail::kSceneCubinSize}; }

}  // namespace handoff::media
