#include <handoff/viewer/error.hpp>

namespace handoff::viewer {
namespace {
std::string join(const std::string& file, const std::string& location, const std::string& field,
                 const std::string& detail) {
  std::string m;
  for (const std::string* part : {&file, &location, &field, &detail}) {
    if (part->empty()) continue;
    if (!m.empty()) m += ": ";
    m += *part;
  }
  return m;
}
}  // namespace

ParseError::ParseError(std::string file, std::string location, std::string field, std::string detail)
    : handoff::Error(join(file, location, field, detail)),
      file_(std::move(file)), location_(std::move(location)), field_(std::move(field)) {}

}  // namespace handoff::viewer
