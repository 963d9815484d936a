#include "frame_target.hpp"

#include "frame_renderer.hpp"  // check_texture_size

#include <algorithm>
#include <string>

#include <handoff/error.hpp>
#include <handoff/gl_check.hpp>


namespace handoff::view {

void FrameTarget::resize(int width, int height) {
  if (width <= 0 || height <= 0)
    throw UsageError("FrameTarget::resize: " + std::to_string(width) + "x" + std::to_string(height));
  check_texture_size("FrameTarget::resize", std::uint32_t(width), std::uint32_t(height));
  if (width == width_ && height == height_) return;
  fbo_.reset();  // the old target's memory goes before the new one is made
  color_.reset();
  width_ = height_ = 0;
  GLuint name = 0;
  glCreateTextures(GL_TEXTURE_2D, 1, &name);
  handoff::UniqueGlTexture color(name);
  glTextureStorage2D(color.get(), 1, GL_RGBA8, width, height);
  glCreateFramebuffers(1, &name);
  handoff::UniqueGlFramebuffer fbo(name);
  glNamedFramebufferTexture(fbo.get(), GL_COLOR_ATTACHMENT0, color.get(), 0);
  const GLenum status =
      HANDOFF_GL_CHECK(glCheckNamedFramebufferStatus(fbo.get(), GL_FRAMEBUFFER), "RGBA8 frame target");
  if (status != GL_FRAMEBUFFER_COMPLETE)
    throw Error(Api::Gl, "glCheckNamedFramebufferStatus", static_cast<long long>(status),
                "GL_FRAMEBUFFER_INCOMPLETE", "RGBA8 frame target", HANDOFF_WHERE);
  color_ = std::move(color);
  fbo_ = std::move(fbo);
  width_ = width;
  height_ = height;
}

void FrameTarget::bind() const { glBindFramebuffer(GL_FRAMEBUFFER, fbo_.get()); }
void FrameTarget::unbind() { glBindFramebuffer(GL_FRAMEBUFFER, 0); }

void FrameTarget::read_rgba(std::vector<std::uint8_t>& out) const {
  const std::size_t row = static_cast<std::size_t>(width_) * 4;
  out.resize(row * static_cast<std::size_t>(height_));
  {
    PackStateScope pack;
    HANDOFF_GL_CHECK(glGetTextureImage(color_.get(), 0, GL_RGBA, GL_UNSIGNED_BYTE, static_cast<GLsizei>(out.size()),
                                       out.data()));
  }
  // GL rows are bottom-up; flip in place.
  for (int y = 0; y < height_ / 2; ++y) {
    std::uint8_t* a = out.data() + static_cast<std::size_t>(y) * row;
    std::uint8_t* b = out.data() + static_cast<std::size_t>(height_ - 1 - y) * row;
    std::swap_ranges(a, a + row, b);
  }
}

PackStateScope::PackStateScope() {
  glGetIntegerv(GL_PACK_ALIGNMENT, &alignment_);
  glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &pack_buffer_);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
}

PackStateScope::~PackStateScope() {
  glPixelStorei(GL_PACK_ALIGNMENT, alignment_);
  glBindBuffer(GL_PIXEL_PACK_BUFFER, static_cast<GLuint>(pack_buffer_));
}

void read_framebuffer_rgba(GLuint framebuffer, GLenum buffer, int width, int height, std::vector<std::uint8_t>& out) {
  const std::size_t row = static_cast<std::size_t>(width) * 4;
  out.resize(row * static_cast<std::size_t>(height));
  GLint prev_framebuffer = 0, prev_buffer = GL_NONE;
  glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &prev_framebuffer);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, framebuffer);
  glGetIntegerv(GL_READ_BUFFER, &prev_buffer);
  {
    PackStateScope pack;
    glReadBuffer(buffer);
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, out.data());
    glReadBuffer(static_cast<GLenum>(prev_buffer));
  }
  HANDOFF_GL_CHECK(glBindFramebuffer(GL_READ_FRAMEBUFFER, static_cast<GLuint>(prev_framebuffer)), "RGBA8 read-back");
  for (int y = 0; y < height / 2; ++y)
    std::swap_ranges(out.begin() + std::ptrdiff_t(y * row), out.begin() + std::ptrdiff_t((y + 1) * row),
                     out.begin() + std::ptrdiff_t((height - 1 - y) * row));
}

}  // namespace handoff::view
