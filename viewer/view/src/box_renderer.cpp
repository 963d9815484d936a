#include "box_renderer.hpp"

#include <cstddef>

#include <handoff/gl_check.hpp>

#include "frame_renderer.hpp"  // build_program

namespace handoff::view {

BoxRenderer::BoxRenderer() : program_(build_program("overlay_boxes_vert", "overlay_boxes_frag")) {
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
}

void BoxRenderer::draw(const std::vector<BoxInstance>& boxes, float line_width, bool opaque,
                       const float display_pos[2], const float display_size[2]) {
  if (boxes.empty() || display_size[0] <= 0 || display_size[1] <= 0) return;
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

}  // namespace handoff::view
