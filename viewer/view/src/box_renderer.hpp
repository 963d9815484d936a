#pragma once
// Box outlines for dense overlays, drawn by the GPU from one instance per box
// instead of ImGui geometry. Past a thousand visible boxes, building ImGui's
// outlines (four quads, vertex by vertex on the CPU) and rasterising them with
// ImGui's textured, blended shader dominated a frame on llvmpipe; here the CPU
// writes 20 bytes per box and the shader writes a flat colour.
//
// draw_overlays() queues the boxes and inserts an ImGui draw callback where
// they belong in the list (under captions and keypoints); the callback draws
// them with this renderer inside ImGui_ImplOpenGL3_RenderDrawData, and the
// backend's state is restored after it (ImDrawCallback_ResetRenderState).
//
// Thread safety: construct, use and destroy on one thread, GL 4.5 core context current.
#include <glad/gl.h>

#include <cstdint>
#include <vector>

#include <handoff/detail/gl_handles.hpp>

namespace handoff::view {

struct BoxInstance {
  float x0, y0, x1, y1;  // display coordinates, x0 <= x1, y0 <= y1
  std::uint32_t rgba;    // IM_COL32 layout (R in the low byte)
};

class BoxRenderer {
 public:
  BoxRenderer();  // throws handoff::Error on GL failure (nothing is left behind)
  BoxRenderer(const BoxRenderer&) = delete;
  BoxRenderer& operator=(const BoxRenderer&) = delete;

  // Draws `boxes` into the bound framebuffer, whose viewport shows the
  // display rectangle (pos, size) like ImGui's projection. `opaque`: no blending.
  void draw(const std::vector<BoxInstance>& boxes, float line_width, bool opaque, const float display_pos[2],
            const float display_size[2]);

 private:
  // Member order is destruction order: the vertex array goes before the buffer it reads.
  handoff::detail::UniqueGlProgram program_;
  handoff::detail::UniqueGlBuffer buffer_;
  handoff::detail::UniqueGlVertexArray vao_;
  GLint loc_pos_ = -1, loc_size_ = -1, loc_width_ = -1;
};

}  // namespace handoff::view
