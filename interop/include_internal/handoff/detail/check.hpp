#pragma once
// Machinery of the check macros (HANDOFF_GL_CHECK in the private gl_check.hpp,
// HANDOFF_VK_CHECK in vk_context.hpp): not an API of its own. Every macro has
// one shape: it wraps the call expression, with an optional detail,
//   HANDOFF_GL_CHECK(glNamedBufferStorage(name, size, nullptr, flags), "luma buffer");
// and names the call in its handoff::Error by the function the expression
// calls. The name and the detail are computed only when the call failed.
#include <string>
#include <string_view>
#include <handoff/vk_check.hpp>

namespace handoff::detail {

constexpr bool is_identifier_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The function a stringified call expression calls:
//   "glNamedBufferStorage(name, size, nullptr, flags)" -> "glNamedBufferStorage"
//   "ctx.get_memory_fd(dev, &gi, &fd)"                 -> "get_memory_fd"
//   "drv.api().cuMemAlloc(&p, n)"                      -> "cuMemAlloc"
// A plain name comes back as it is; text with no name before its argument
// list comes back whole (trimmed).
constexpr std::string_view call_name(std::string_view e) noexcept {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\n')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.remove_suffix(1);
    return s;
  };
  e = trim(e);
  std::string_view callee = e;
  if (!e.empty() && e.back() == ')') {  // drop the argument list of the outermost call
    int depth = 0;
    for (std::size_t i = e.size(); i-- > 0;) {
      if (e[i] == ')') ++depth;
      if (e[i] == '(' && --depth == 0) {
        callee = trim(e.substr(0, i));
        break;
      }
    }
  }
  std::size_t start = callee.size();  // the last identifier: drops "x.", "x->", "x.api().", "ns::"
  while (start > 0 && is_identifier_char(callee[start - 1])) --start;
  return start < callee.size() ? callee.substr(start) : e;
}

// A check macro's optional detail argument as text ("" without one).
inline std::string check_detail() { return {}; }
inline std::string check_detail(std::string_view detail) { return std::string(detail); }

}  // namespace handoff::detail
