#include <handoff/shaders.hpp>

#include <stdexcept>
#include <string>

namespace handoff::shaders {

std::span<const unsigned char> get(std::string_view name) {
  for (const Entry* const* e = kEntries; *e; ++e)
    if (name == (*e)->name) return {(*e)->data, (*e)->size};
  throw std::out_of_range("no embedded shader named '" + std::string(name) + "'");
}

std::string_view glsl(std::string_view name) {
  auto bytes = get("glsl_" + std::string(name));
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

std::span<const unsigned int> spirv(std::string_view name) {
  auto bytes = get("spv_" + std::string(name));
  return {reinterpret_cast<const unsigned int*>(bytes.data()), bytes.size() / 4};
}

}  // namespace handoff::shaders
