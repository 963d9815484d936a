#include <glad/gl.h>

#include <handoff/gl_check.hpp>

namespace handoff {

std::string_view gl_error_name(unsigned code) noexcept {
  switch (code) {
    case GL_NO_ERROR: return "GL_NO_ERROR";
    case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
    case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
    case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
    case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
    case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
    case GL_STACK_UNDERFLOW: return "GL_STACK_UNDERFLOW";
    case GL_STACK_OVERFLOW: return "GL_STACK_OVERFLOW";
  }
  return "GL error";
}

namespace detail {

unsigned pop_gl_errors() noexcept {
  GLenum first = glGetError();
  if (first == GL_NO_ERROR) return 0;
  // Drain the rest so the next check starts clean (bounded: a lost context repeats forever).
  for (int i = 0; i < 16 && glGetError() != GL_NO_ERROR; ++i) {
  }
  return first;
}

void throw_gl_error(unsigned code, std::string_view expression, const char* where, const std::string& detail) {
  throw Error(Api::Gl, std::string(call_name(expression)), static_cast<long long>(code),
              std::string(gl_error_name(code)), detail, where ? where : "");
}

}  // namespace detail
}  // namespace handoff
