#pragma once
// The GL check helper: after a GL call, on the thread that made it,
// turn glGetError into a handoff::Error naming the call, the GL error and file:line.
//   glNamedBufferStorage(...); HANDOFF_GL_CHECK("glNamedBufferStorage");
#include <handoff/error.hpp>

#include <string>
#include <string_view>

namespace handoff {

// "GL_INVALID_OPERATION", ... ("GL error" for an unknown code).
std::string_view gl_error_name(unsigned code) noexcept;

// Reads (and clears) every pending glGetError; throws handoff::Error (Api::Gl)
// for the first one. Needs a current context on the calling thread.
void gl_check(const char* call, const char* where, const std::string& detail = {});

}  // namespace handoff

#define HANDOFF_GL_CHECK(call, ...) ::handoff::gl_check(call, HANDOFF_WHERE __VA_OPT__(, ) __VA_ARGS__)
