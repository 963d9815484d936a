#pragma once
// GL error helper for the viewer: throws handoff::Error naming the call and
// the GL error. Needs a current GL context with glad loaded.
#include <glad/gl.h>

#include <string>

#include <handoff/error.hpp>

namespace handoff::viewer {

const char* gl_error_name(GLenum e) noexcept;
// Throws handoff::Error(Api::Gl, call, ...) if glGetError reports an error.
void gl_check(const char* call, const char* where);

}  // namespace handoff::viewer

#define HANDOFF_VIEW_GL(call) ::handoff::viewer::gl_check(#call, HANDOFF_WHERE)
