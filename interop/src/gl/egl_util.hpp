#pragma once
// Small EGL helpers shared by the EGL context code and the EGLImage route.
#include <string>
#include <string_view>

namespace handoff::detail {

// "EGL_BAD_MATCH" for EGL_BAD_MATCH, ...; "EGL error" for codes it does not know.
std::string egl_error_name(int e);
// Whether the space-separated extension list `list` (may be null) holds `word`.
bool has_word(const char* list, std::string_view word);

}  // namespace handoff::detail
