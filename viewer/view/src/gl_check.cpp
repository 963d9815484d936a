#include "gl_check.hpp"

namespace handoff::viewer {

const char* gl_error_name(GLenum e) noexcept {
  switch (e) {
    case GL_NO_ERROR: return "GL_NO_ERROR";
    case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
    case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
    case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
    case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
    case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
    case GL_STACK_OVERFLOW: return "GL_STACK_OVERFLOW";
    case GL_STACK_UNDERFLOW: return "GL_STACK_UNDERFLOW";
    default: return "GL_UNKNOWN_ERROR";
  }
}

void gl_check(const char* call, const char* where) {
  GLenum e = glGetError();
  if (e == GL_NO_ERROR) return;
  while (glGetError() != GL_NO_ERROR) {
  }
  throw Error(Api::Gl, call, static_cast<long long>(e), gl_error_name(e), "", where);
}

}  // namespace handoff::viewer
