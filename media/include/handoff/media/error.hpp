#pragma once
// Errors of the media library's readers. A ParseError is a runtime condition (a
// file the user gave us is bad), so it is a handoff::Error; its message names
// the file, where in it (line / frame / byte offset) and the field.
#include <handoff/error.hpp>

#include <string>

namespace handoff::media {

class ParseError : public handoff::Error {
 public:
  // what() reads "<file>: <location>: <field>: <detail>" (empty parts left out).
  ParseError(std::string file, std::string location, std::string field, std::string detail);

  const std::string& file() const noexcept { return file_; }
  const std::string& location() const noexcept { return location_; }  // "line 3", "frame 7", "header"
  const std::string& field() const noexcept { return field_; }        // "W", "box", "FRAME", ...

 private:
  std::string file_, location_, field_;
};

}  // namespace handoff::media
