#pragma once
// Text made valid UTF-8 before it goes into a protobuf `string` field
// (foxglove.TextAnnotation.text). proto3 requires UTF-8 there: libprotobuf
// logs an error for each invalid string it serializes, and parsers (handoff's
// own, Foxglove's) refuse the whole message. Labels reach those fields from
// bytes nobody checked: a ROS bag's CDR strings, a C++ caller's std::string,
// a live publisher's labels.
#include <string>
#include <string_view>

namespace handoff::media {

// `text` itself when it is valid UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF); else a copy in which each maximal
// invalid subsequence (a byte that cannot start a character, or a start and
// the continuation bytes that fit it before the sequence breaks) is U+FFFD,
// as the Unicode standard's "U+FFFD substitution of maximal subparts" does.
std::string valid_utf8(std::string_view text);

}  // namespace handoff::media
