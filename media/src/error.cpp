#include <handoff/media/error.hpp>

#include <string_view>

namespace handoff::media {
namespace {
std::string join(std::string_view file, std::string_view location, std::string_view field, std::string_view detail) {
  std::string m;
  m.reserve(file.size() + location.size() + field.size() + detail.size() + 8);
  for (std::string_view part : {file, location, field, detail}) {
    if (part.empty()) continue;
    if (!m.empty()) m.append(": ", 2);
    m.append(part.data(), part.size());
  }
  return m;
}
}  // namespace

ParseError::ParseError(std::string file, std::string location, std::string field, std::string detail)
    : handoff::Error(join(file, location, field, detail)),
      file_(std::move(file)), location_(std::move(location)), field_(std::move(field)) {}

}  // namespace handoff::media
