#pragma once
// The built-in synthetic scene: deterministic for a frame index, rendered on
// the CPU (render_scene_cpu) or by the CUDA kernel embedded as PTX, both from
// the same per-pixel code (private to the library). It also emits its own ground-truth
// overlays (boxes, labels, scores, class and track ids, the figure's
// keypoints with skeleton, a polygon, a polyline and a text).
#include <handoff/media/frame_source.hpp>
#include <handoff/media/scene_state.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace handoff::media {

struct SceneOptions {
  std::uint32_t width = 1280;
  std::uint32_t height = 720;
  PixelFormat format = PixelFormat::NV12;
  // Colour the scene is encoded with (the frame carries the same colorimetry).
  Colorimetry colorimetry{ColorMatrix::BT709, ColorRange::Limited, ChromaSiting::Left};
  Rational rate{30, 1};
  // The CPU renderer (make_scene_source) draws bands of the frame on this
  // many threads; 0: one per core.
  unsigned threads = 0;
};

// The scene's state for frame `index` (pure function; UsageError on a bad size).
scene::SceneState scene_state(const SceneOptions& options, std::int64_t index);

// Renders a frame on the CPU (the same math as the kernel).
void render_scene_cpu(const scene::SceneState& state, const FrameWriteTarget& target);
// Renders chroma rows [first, first + count) (luma rows twice that) only: a band.
void render_scene_cpu(const scene::SceneState& state, const FrameWriteTarget& target, std::uint32_t first,
                      std::uint32_t count);

// The ground-truth overlays of `state` (replaces `out`'s contents, keeps capacity).
void scene_overlays(const scene::SceneState& state, OverlayFrame& out);

// An endless FrameSource rendering the scene on the CPU, in bands on
// options.threads threads.
std::unique_ptr<FrameSource> make_scene_source(const SceneOptions& options = {});

// --- The CUDA kernel --------------------------------------------------------------
// extern "C" __global__ void handoff_scene_kernel(
//     unsigned char* luma, size_t luma_pitch, unsigned char* chroma, size_t chroma_pitch,
//     handoff::media::scene::SceneState state);
// One thread per chroma sample (cx, cy) = (blockIdx.x*blockDim.x + threadIdx.x, ...y),
// writing its 2x2 luma block; threads outside chroma_width x chroma_height return.
// Launch with kSceneBlock x kSceneBlock threads and scene_grid() blocks, no
// shared memory; kernelParams = {&luma_devptr, &luma_pitch, &chroma_devptr,
// &chroma_pitch, &state}.
inline constexpr const char* kSceneKernelName = "handoff_scene_kernel";
inline constexpr unsigned kSceneBlock = 16;
struct Grid {
  unsigned x, y;
};
Grid scene_grid(std::uint32_t width, std::uint32_t height);

// True when the library was built with nvcc and carries the kernel.
bool has_cuda_kernel();
// NUL-terminated PTX text (compute_75) for cuModuleLoadData; empty without nvcc.
std::string_view scene_ptx();
// sm_90 cubin image (for cuModuleLoadData on Hopper, no JIT); empty without nvcc.
std::span<const std::uint8_t> scene_cubin();

}  // namespace handoff::media
