#pragma once
// The GL check: wraps one GL call; right after it, on the thread that made it,
// turns glGetError into a handoff::Error (Api::Gl) naming the function, the GL
// error, the optional detail and file:line. A call that returns a value
// (glMapNamedBufferRange, glFenceSync, ...) is checked the same way and the
// macro yields that value.
//   HANDOFF_GL_CHECK(glNamedBufferStorage(name, size, nullptr, flags));
//   HANDOFF_GL_CHECK(glNamedBufferStorage(name, size, nullptr, flags), "luma buffer");
//   void* p = HANDOFF_GL_CHECK(glMapNamedBufferRange(name, 0, size, GL_MAP_READ_BIT));
// Every error pending when the call returns is read and cleared; the first one
// is reported (an error an earlier, unchecked call left is reported here too).
// Thread safety: any thread with a current GL context (the one the call used).
#include <handoff/detail/check.hpp>
#include <handoff/error.hpp>

#include <string>
#include <string_view>
#include <type_traits>

namespace handoff {

// "GL_INVALID_OPERATION", ... ("GL error" for an unknown code).
std::string_view gl_error_name(unsigned code) noexcept;

namespace detail {

// Reads every pending glGetError and returns the first (0 when there is none).
// Needs a current context on the calling thread.
unsigned pop_gl_errors() noexcept;
// The handoff::Error of a failed check: `expression` is the stringified call.
[[noreturn]] void throw_gl_error(unsigned code, std::string_view expression, const char* where,
                                 const std::string& detail);

template <typename Call, typename Detail>
decltype(auto) gl_checked(Call&& call, const char* expression, const char* where, Detail&& detail) {
  using R = decltype(call());
  static_assert(!std::is_convertible_v<R, const char*>,
                "HANDOFF_GL_CHECK wraps the GL call itself: HANDOFF_GL_CHECK(glFoo(args), \"detail\")");
  if constexpr (std::is_void_v<R>) {
    call();
    if (unsigned e = pop_gl_errors()) throw_gl_error(e, expression, where, detail());
  } else {
    R result = call();
    if (unsigned e = pop_gl_errors()) throw_gl_error(e, expression, where, detail());
    return result;
  }
}

}  // namespace detail
}  // namespace handoff

#define HANDOFF_GL_CHECK(call, ...)                                                                   \
  ::handoff::detail::gl_checked([&]() -> decltype(auto) { return call; }, #call, HANDOFF_WHERE, \
                                [&] { return ::handoff::detail::check_detail(__VA_ARGS__); })
