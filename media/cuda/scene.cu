// The synthetic scene as a CUDA kernel: one thread per chroma sample writes its
// 2x2 luma block and the chroma pair. The per-pixel math is scene_math.hpp,
// shared with the CPU renderer. Built to PTX / cubin by nvcc at build time and
// loaded by the app with cuModuleLoadData (see scene.hpp for the launch contract).
#include <handoff/media/scene_math.hpp>

extern "C" __global__ void handoff_scene_kernel(unsigned char* luma, size_t luma_pitch,
                                                unsigned char* chroma, size_t chroma_pitch,
                                                handoff::media::scene::SceneState state) {
  const unsigned cx = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned cy = blockIdx.y * blockDim.y + threadIdx.y;
  if (cx >= (state.width + 1) / 2 || cy >= (state.height + 1) / 2) return;
  handoff::media::scene::scene_write_block(state, cx, cy, luma, luma_pitch, chroma, chroma_pitch);
}
