#include "box_renderer.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string_view>

#include <handoff/gl_check.hpp>

#include "frame_renderer.hpp"  // build_program

namespace handoff::view {

BoxRaster default_box_raster() {
  const auto* r = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  const std::string_view renderer = r ? r : "";
  for (std::string_view software : {"llvmpipe", "softpipe", "swrast", "SwiftShader"})
    if (renderer.find(software) != std::string_view::npos) return BoxRaster::Cpu;
  return BoxRaster::Gpu;
}

BoxRenderer::BoxRenderer(BoxRaster raster)
    : raster_(raster), program_(build_program("overlay_boxes_vert", "overlay_boxes_frag")) {
  loc_pos_ = glGetUniformLocation(program_.get(), "u_display_pos");
  loc_size_ = glGetUniformLocation(program_.get(), "u_display_size");
  loc_width_ = glGetUniformLocation(program_.get(), "u_width");
  GLuint name = 0;
  glCreateBuffers(1, &name);
  buffer_.reset(name);
  glCreateVertexArrays(1, &name);
  vao_.reset(name);
  const GLuint vao = vao_.get();
  glVertexArrayVertexBuffer(vao, 0, buffer_.get(), 0, sizeof(BoxInstance));
  glVertexArrayBindingDivisor(vao, 0, 1);
  glEnableVertexArrayAttrib(vao, 0);
  glVertexArrayAttribFormat(vao, 0, 4, GL_FLOAT, GL_FALSE, offsetof(BoxInstance, x0));
  glVertexArrayAttribBinding(vao, 0, 0);
  glEnableVertexArrayAttrib(vao, 1);
  glVertexArrayAttribFormat(vao, 1, 4, GL_UNSIGNED_BYTE, GL_TRUE, offsetof(BoxInstance, rgba));
  HANDOFF_GL_CHECK(glVertexArrayAttribBinding(vao, 1, 0), "BoxRenderer setup");
  if (raster_ == BoxRaster::Cpu) {
    canvas_program_ = build_program("overlay_canvas_vert", "overlay_canvas_frag");
    loc_top_left_ = glGetUniformLocation(canvas_program_.get(), "u_top_left");
    glCreateVertexArrays(1, &name);
    canvas_vao_.reset(name);
  }
}

void BoxRenderer::draw(const std::vector<BoxInstance>& boxes, float line_width, bool opaque,
                       const float display_pos[2], const float display_size[2]) {
  draw(OverlayBatch{&boxes, line_width, nullptr, 0.0f, opaque}, display_pos, display_size);
}

void BoxRenderer::draw(const OverlayBatch& b, const float display_pos[2], const float display_size[2]) {
  const bool boxes = b.boxes && !b.boxes->empty(), dots = b.dots && !b.dots->empty() && b.dot_radius > 0;
  if ((!boxes && !dots) || display_size[0] <= 0 || display_size[1] <= 0) return;
  if (raster_ == BoxRaster::Cpu) {
    draw_canvas(b, display_pos, display_size);
    return;
  }
  if (boxes) draw_instanced(*b.boxes, b.line_width, b.opaque, display_pos, display_size);
  if (dots) draw_dots_instanced(*b.dots, b.dot_radius, b.opaque, display_pos, display_size);
}

void BoxRenderer::draw_dots_instanced(const std::vector<DotInstance>& dots, float radius, bool opaque,
                                      const float display_pos[2], const float display_size[2]) {
  if (!dot_program_) {
    dot_program_ = build_program("overlay_dots_vert", "overlay_dots_frag");
    loc_dot_pos_ = glGetUniformLocation(dot_program_.get(), "u_display_pos");
    loc_dot_size_ = glGetUniformLocation(dot_program_.get(), "u_display_size");
    loc_dot_radius_ = glGetUniformLocation(dot_program_.get(), "u_radius");
    GLuint name = 0;
    glCreateBuffers(1, &name);
    dot_buffer_.reset(name);
    glCreateVertexArrays(1, &name);
    dot_vao_.reset(name);
    const GLuint vao = dot_vao_.get();
    glVertexArrayVertexBuffer(vao, 0, dot_buffer_.get(), 0, sizeof(DotInstance));
    glVertexArrayBindingDivisor(vao, 0, 1);
    glEnableVertexArrayAttrib(vao, 0);
    glVertexArrayAttribFormat(vao, 0, 2, GL_FLOAT, GL_FALSE, offsetof(DotInstance, x));
    glVertexArrayAttribBinding(vao, 0, 0);
    glEnableVertexArrayAttrib(vao, 1);
    glVertexArrayAttribFormat(vao, 1, 4, GL_UNSIGNED_BYTE, GL_TRUE, offsetof(DotInstance, rgba));
    HANDOFF_GL_CHECK(glVertexArrayAttribBinding(vao, 1, 0), "BoxRenderer setup (dots)");
  }
  glNamedBufferData(dot_buffer_.get(), static_cast<GLsizeiptr>(dots.size() * sizeof(DotInstance)), dots.data(),
                    GL_STREAM_DRAW);
  glUseProgram(dot_program_.get());
  glUniform2f(loc_dot_pos_, display_pos[0], display_pos[1]);
  glUniform2f(loc_dot_size_, display_size[0], display_size[1]);
  glUniform1f(loc_dot_radius_, radius);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_CULL_FACE);
  glDisable(GL_DEPTH_TEST);
  if (opaque) {
    glDisable(GL_BLEND);
  } else {
    glEnable(GL_BLEND);
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  }
  glBindVertexArray(dot_vao_.get());
  glDrawArraysInstanced(GL_TRIANGLES, 0, 6, static_cast<GLsizei>(dots.size()));
  glBindVertexArray(0);
  HANDOFF_GL_CHECK(glUseProgram(0), "BoxRenderer draw (dots)");
}

void BoxRenderer::draw_instanced(const std::vector<BoxInstance>& boxes, float line_width, bool opaque,
                                 const float display_pos[2], const float display_size[2]) {
  // New storage each time (orphaning): no wait for draws still reading the last batch.
  glNamedBufferData(buffer_.get(), static_cast<GLsizeiptr>(boxes.size() * sizeof(BoxInstance)), boxes.data(),
                    GL_STREAM_DRAW);
  glUseProgram(program_.get());
  glUniform2f(loc_pos_, display_pos[0], display_pos[1]);
  glUniform2f(loc_size_, display_size[0], display_size[1]);
  glUniform1f(loc_width_, line_width);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_CULL_FACE);
  glDisable(GL_DEPTH_TEST);
  if (opaque) {
    glDisable(GL_BLEND);
  } else {
    glEnable(GL_BLEND);
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  }
  glBindVertexArray(vao_.get());
  glDrawArraysInstanced(GL_TRIANGLES, 0, 24, static_cast<GLsizei>(boxes.size()));
  glBindVertexArray(0);
  HANDOFF_GL_CHECK(glUseProgram(0), "BoxRenderer draw");
}

namespace {

// IM_COL32 (R in the low byte) with R, G, B scaled by A: what src-over of
// premultiplied colours needs.
std::uint32_t premultiply(std::uint32_t c) {
  const std::uint32_t a = c >> 24;
  if (a == 255) return c;
  auto scale = [a](std::uint32_t v) { return (v * a + 127) / 255; };
  return scale(c & 0xff) | scale((c >> 8) & 0xff) << 8 | scale((c >> 16) & 0xff) << 16 | a << 24;
}

// src over dst, both premultiplied, per 8-bit channel (alpha included).
std::uint32_t over(std::uint32_t src, std::uint32_t dst) {
  const std::uint32_t keep = 255 - (src >> 24);
  std::uint32_t out = 0;
  for (int shift = 0; shift < 32; shift += 8) {
    const std::uint32_t s = (src >> shift) & 0xff, d = (dst >> shift) & 0xff;
    out |= std::min<std::uint32_t>(255, s + (d * keep + 127) / 255) << shift;
  }
  return out;
}

// The first pixel whose centre is at or right of (below) edge `e`: GL covers
// pixels first(lo) .. first(hi) - 1 of a rectangle [lo, hi), a centre on the
// left or top edge counting as inside (the top-left rule). GL rasterisers
// snap vertices to a subpixel grid first (GL_SUBPIXEL_BITS, 8 on Mesa's
// llvmpipe): so does this, or an edge within 1/512 of a pixel centre would
// land one row or column off theirs.
int first_covered(double e) { return static_cast<int>(std::ceil(std::round(e * 256.0) / 256.0 - 0.5)); }

}  // namespace

void BoxRenderer::fill(int x0, int y0, int x1, int y1, std::uint32_t c, bool opaque) {
  for (int y = y0; y < y1; ++y) {
    std::uint32_t* row = canvas_.data() + std::size_t(y) * std::size_t(canvas_w_);
    if (opaque) {
      std::fill(row + x0, row + x1, c);
    } else {
      for (int x = x0; x < x1; ++x) row[x] = over(c, row[x]);
    }
  }
}

void BoxRenderer::draw_canvas(const OverlayBatch& batch, const float display_pos[2], const float display_size[2]) {
  const float line_width = batch.line_width;
  const bool opaque = batch.opaque;
  GLint vp[4] = {};
  glGetIntegerv(GL_VIEWPORT, vp);
  const int w = vp[2], h = vp[3];
  if (w <= 0 || h <= 0) return;
  if (w != canvas_w_ || h != canvas_h_) {
    canvas_.assign(std::size_t(w) * std::size_t(h), 0);
    canvas_w_ = w;
    canvas_h_ = h;
    dirty_top_ = dirty_bottom_ = 0;
    GLuint t = 0;
    glCreateTextures(GL_TEXTURE_2D, 1, &t);
    canvas_texture_.reset(t);
    glTextureStorage2D(t, 1, GL_RGBA8, w, h);
    glTextureParameteri(t, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTextureParameteri(t, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  } else if (dirty_bottom_ > dirty_top_) {  // what the last draw wrote
    std::fill(canvas_.begin() + std::ptrdiff_t(dirty_top_) * w, canvas_.begin() + std::ptrdiff_t(dirty_bottom_) * w,
              0u);
  }
  // Display coordinates -> viewport pixels (top row 0), as the instanced
  // shader's projection maps them.
  const double sx = double(w) / display_size[0], sy = double(h) / display_size[1];
  int top = h, bottom = 0;
  auto rect = [&](double x0, double y0, double x1, double y1, std::uint32_t c, bool solid) {
    const int px0 = std::max(0, first_covered(x0)), px1 = std::min(w, first_covered(x1));
    const int py0 = std::max(0, first_covered(y0)), py1 = std::min(h, first_covered(y1));
    if (px0 >= px1 || py0 >= py1) return;
    fill(px0, py0, px1, py1, c, solid);
    top = std::min(top, py0);
    bottom = std::max(bottom, py1);
  };
  if (batch.boxes)
  for (const BoxInstance& b : *batch.boxes) {
    const double x0 = (b.x0 - display_pos[0]) * sx, x1 = (b.x1 - display_pos[0]) * sx;
    const double y0 = (b.y0 - display_pos[1]) * sy, y1 = (b.y1 - display_pos[1]) * sy;
    // The shader's edge widths, in display units, never more than half the box.
    const double tx = std::min<double>(line_width, 0.5 * (b.x1 - b.x0)) * sx;
    const double ty = std::min<double>(line_width, 0.5 * (b.y1 - b.y0)) * sy;
    const std::uint32_t c = premultiply(b.rgba);
    const bool solid = opaque || (b.rgba >> 24) == 255;
    rect(x0, y0, x1, y0 + ty, c, solid);            // top
    rect(x0, y1 - ty, x1, y1, c, solid);            // bottom
    rect(x0, y0 + ty, x0 + tx, y1 - ty, c, solid);  // left
    rect(x1 - tx, y0 + ty, x1, y1 - ty, c, solid);  // right
  }
  // Dots: per row, the run of pixels whose centres are within the radius
  // (measured in display units, as the dot shader does).
  const double r = batch.dot_radius;
  if (batch.dots && r > 0)
    for (const DotInstance& d : *batch.dots) {
      const double cx = (d.x - display_pos[0]) * sx, cy = (d.y - display_pos[1]) * sy;
      const int py0 = std::max(0, first_covered(cy - r * sy)), py1 = std::min(h, first_covered(cy + r * sy) + 1);
      const std::uint32_t c = premultiply(d.rgba);
      const bool solid = opaque || (d.rgba >> 24) == 255;
      for (int py = py0; py < py1; ++py) {
        const double dy = (py + 0.5 - cy) / sy;
        const double half = r * r - dy * dy;
        if (half < 0) continue;
        const double hw = std::sqrt(half) * sx;
        // Centres in [cx - hw, cx + hw]: both ends inside, as the shader's <= keeps them.
        const int px0 = std::max(0, int(std::ceil(cx - hw - 0.5))), px1 = std::min(w, int(std::floor(cx + hw - 0.5)) + 1);
        if (px0 >= px1) continue;
        fill(px0, py, px1, py + 1, c, solid);
        top = std::min(top, py);
        bottom = std::max(bottom, py + 1);
      }
    }
  dirty_top_ = top;
  dirty_bottom_ = std::max(top, bottom);
  if (dirty_bottom_ <= dirty_top_) return;
  // Texture row r is canvas row r (the viewport's top row first); the
  // fragment shader flips.
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glTextureSubImage2D(canvas_texture_.get(), 0, 0, dirty_top_, w, dirty_bottom_ - dirty_top_, GL_RGBA,
                      GL_UNSIGNED_BYTE, canvas_.data() + std::size_t(dirty_top_) * std::size_t(w));
  glUseProgram(canvas_program_.get());
  glUniform2i(loc_top_left_, vp[0], vp[1] + h - 1);
  glBindTextureUnit(0, canvas_texture_.get());
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_CULL_FACE);
  glDisable(GL_DEPTH_TEST);
  glEnable(GL_BLEND);
  glBlendFuncSeparate(GL_ONE, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  glBindVertexArray(canvas_vao_.get());
  glDrawArrays(GL_TRIANGLES, 0, 6);
  glBindVertexArray(0);
  glBindTextureUnit(0, 0);
  HANDOFF_GL_CHECK(glUseProgram(0), "BoxRenderer draw (canvas)");
}

}  // namespace handoff::view
