#pragma once
// An RGBA8 framebuffer of a frame's own size: what --output writes and what
// the golden / accuracy tests read back. Needs a current GL context.
#include <glad/gl.h>

#include <cstdint>
#include <vector>

#include <handoff/gl_handles.hpp>

namespace handoff::view {

class FrameTarget {
 public:
  FrameTarget() = default;
  FrameTarget(const FrameTarget&) = delete;
  FrameTarget& operator=(const FrameTarget&) = delete;

  // (Re)allocates when the size changes; after a failure the target is empty (width 0).
  void resize(int width, int height);
  void bind() const;  // as draw + read framebuffer
  static void unbind();
  // Reads back RGBA8, rows top-down (row 0 = top of the image), into `out`
  // (resized; no allocation once it has the right size).
  void read_rgba(std::vector<std::uint8_t>& out) const;

  int width() const { return width_; }
  int height() const { return height_; }
  GLuint framebuffer() const { return fbo_.get(); }

 private:
  // Member order is destruction order: the framebuffer goes before its colour texture.
  handoff::UniqueGlTexture color_;
  handoff::UniqueGlFramebuffer fbo_;
  int width_ = 0;
  int height_ = 0;
};

// Pixel pack state for reading back into client memory (GL_PACK_ALIGNMENT 1,
// no GL_PIXEL_PACK_BUFFER bound) for its lifetime; the application's values
// are restored when it ends. Current context's thread only.
class PackStateScope {
 public:
  PackStateScope();
  ~PackStateScope();
  PackStateScope(const PackStateScope&) = delete;
  PackStateScope& operator=(const PackStateScope&) = delete;

 private:
  GLint alignment_ = 4;
  GLint pack_buffer_ = 0;
};

// Reads a w x h RGBA8 image from `buffer` (GL_BACK, GL_COLOR_ATTACHMENT0, ...)
// of `framebuffer` (0: the default one), rows top-down, into `out`. The pack
// state, the read framebuffer binding and that framebuffer's read buffer are
// left as they were.
void read_framebuffer_rgba(GLuint framebuffer, GLenum buffer, int width, int height, std::vector<std::uint8_t>& out);

}  // namespace handoff::view
