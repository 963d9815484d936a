#pragma once
// Shaders embedded at build time: GLSL sources as "glsl_<file>" (text; a NUL
// follows the bytes) and SPIR-V as "spv_<file>" (4-byte aligned words).
#include <cstddef>
#include <span>
#include <string_view>

namespace handoff::shaders {

// The bytes of an embedded shader; throws std::out_of_range naming `name` if
// no such shader was embedded. Thread-safe (read-only data).
std::span<const unsigned char> get(std::string_view name);
// GLSL text of shaders/gl/<name>.glsl.
std::string_view glsl(std::string_view name);
// SPIR-V words of shaders/vk/<name>.comp.
std::span<const unsigned int> spirv(std::string_view name);

struct Entry {
  const char* name;
  const unsigned char* data;
  std::size_t size;
};
extern const Entry* const kEntries[];  // generated; ends with nullptr

}  // namespace handoff::shaders
