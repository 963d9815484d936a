#pragma once
// Box outlines for dense overlays, drawn from one batch instead of ImGui
// geometry. Past a thousand visible boxes, building ImGui's outlines (four
// quads, vertex by vertex on the CPU) and rasterising them with ImGui's
// textured, blended shader dominated a frame on llvmpipe. Two ways to draw
// the batch, chosen once per renderer:
// - Gpu: one instance per box (20 bytes: the rectangle and its colour), the
//   outline as four edge quads from gl_VertexID, a flat colour. What a GPU
//   does best.
// - Cpu: the outlines are filled into a premultiplied RGBA canvas the size of
//   the viewport (row runs and short columns: a few stores per pixel), which is
//   uploaded once and blended over the framebuffer as one quad. A software GL
//   (Mesa's llvmpipe / softpipe, SwiftShader) spends its time per triangle per
//   64-pixel tile it bins into, and two-pixel-wide edge quads are the worst case
//   for that: at 10,000 boxes in a 1280x720 view, the instanced draw took
//   about 57 ms of llvmpipe's time; filling the same pixels on the CPU takes a
//   few. The two are drawn to the same pixels (the GL rule: a pixel is covered
//   when its centre is inside the edge rectangle; BoxRendererTest compares them).
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

#include <handoff/gl_handles.hpp>

namespace handoff::view {

enum class BoxRaster : std::uint8_t { Gpu, Cpu };

// Cpu where the current context's GL_RENDERER is a software rasteriser
// (llvmpipe, softpipe, swrast, SwiftShader), else Gpu.
BoxRaster default_box_raster();

struct BoxInstance {
  float x0, y0, x1, y1;  // display coordinates, x0 <= x1, y0 <= y1
  std::uint32_t rgba;    // IM_COL32 layout (R in the low byte)
};

// A filled disc (a keypoint): the pixels whose centres are within the radius.
struct DotInstance {
  float x, y;          // centre, display coordinates
  std::uint32_t rgba;  // IM_COL32 layout
};

// What one draw puts on the framebuffer: outlines, then dots over them.
struct OverlayBatch {
  const std::vector<BoxInstance>* boxes = nullptr;
  float line_width = 1.0f;
  const std::vector<DotInstance>* dots = nullptr;
  float dot_radius = 3.0f;
  bool opaque = true;  // every colour's alpha is 255: no blending
};

class BoxRenderer {
 public:
  // Throws handoff::Error on GL failure (nothing is left behind).
  explicit BoxRenderer(BoxRaster raster = default_box_raster());
  BoxRenderer(const BoxRenderer&) = delete;
  BoxRenderer& operator=(const BoxRenderer&) = delete;

  // Draws the batch into the bound framebuffer, whose viewport shows the
  // display rectangle (pos, size) like ImGui's projection.
  void draw(const OverlayBatch& batch, const float display_pos[2], const float display_size[2]);
  // Outlines only. `opaque`: no blending.
  void draw(const std::vector<BoxInstance>& boxes, float line_width, bool opaque, const float display_pos[2],
            const float display_size[2]);
  BoxRaster raster() const noexcept { return raster_; }

 private:
  void draw_instanced(const std::vector<BoxInstance>& boxes, float line_width, bool opaque,
                      const float display_pos[2], const float display_size[2]);
  void draw_dots_instanced(const std::vector<DotInstance>& dots, float radius, bool opaque,
                           const float display_pos[2], const float display_size[2]);
  void draw_canvas(const OverlayBatch& batch, const float display_pos[2], const float display_size[2]);
  // Fills rows [y0, y1) x columns [x0, x1) of the canvas (already clipped).
  void fill(int x0, int y0, int x1, int y1, std::uint32_t premultiplied, bool opaque);

  BoxRaster raster_;
  // Member order is destruction order: the vertex array goes before the buffer it reads.
  handoff::UniqueGlProgram program_;
  handoff::UniqueGlBuffer buffer_;
  handoff::UniqueGlVertexArray vao_;
  GLint loc_pos_ = -1, loc_size_ = -1, loc_width_ = -1;
  // Gpu: dots, made at the first draw that has some.
  handoff::UniqueGlProgram dot_program_;
  handoff::UniqueGlBuffer dot_buffer_;
  handoff::UniqueGlVertexArray dot_vao_;
  GLint loc_dot_pos_ = -1, loc_dot_size_ = -1, loc_dot_radius_ = -1;
  // Cpu: the canvas (premultiplied RGBA8, the viewport's top row first), its
  // texture and the program that blends it; rows [dirty_top_, dirty_bottom_)
  // were written by the last draw and are cleared by the next.
  handoff::UniqueGlProgram canvas_program_;
  handoff::UniqueGlTexture canvas_texture_;
  handoff::UniqueGlVertexArray canvas_vao_;  // no attributes: the vertex shader uses gl_VertexID
  GLint loc_top_left_ = -1;
  std::vector<std::uint32_t> canvas_;
  int canvas_w_ = 0, canvas_h_ = 0;
  int dirty_top_ = 0, dirty_bottom_ = 0;
};

}  // namespace handoff::view
