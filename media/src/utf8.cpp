#include <handoff/media/utf8.hpp>

namespace handoff::media {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the valid character at the start of `s` (1 to 4), or 0 with
// `bad` set to the length of the maximal invalid subpart there.
std::size_t valid_char(std::string_view s, std::size_t& bad) {
  const auto b = static_cast<unsigned char>(s[0]);
  if (b < 0x80) return 1;
  std::size_t need = 0;
  unsigned lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (b >= 0xC2 && b <= 0xDF) {
    need = 1;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need = 2;
    if (b == 0xE0) lo = 0xA0;  // overlong below U+0800
    if (b == 0xED) hi = 0x9F;  // surrogates U+D800..U+DFFF
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 3;
    if (b == 0xF0) lo = 0x90;  // overlong below U+10000
    if (b == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    bad = 1;  // a continuation byte, C0 / C1 or F5..FF: never a start
    return 0;
  }
  std::size_t k = 1;
  for (; k <= need && k < s.size(); ++k) {
    const auto c = static_cast<unsigned char>(s[k]);
    if (c < (k == 1 ? lo : 0x80u) || c > (k == 1 ? hi : 0xBFu)) break;
  }
  if (k == need + 1) return k;
  bad = k;
  return 0;
}

}  // namespace

std::string valid_utf8(std::string_view text) {
  std::string out;
  std::size_t copied = 0;  // text[copied, i) is valid and not yet in out
  std::size_t i = 0;
  bool replaced = false;
  while (i < text.size()) {
    std::size_t bad = 0;
    if (const std::size_t n = valid_char(text.substr(i), bad)) {
      i += n;
      continue;
    }
    if (!replaced) out.reserve(text.size() + 2);
    replaced = true;
    out.append(text.substr(copied, i - copied));
    out.append(kReplacement);
    i += bad;
    copied = i;
  }
  if (!replaced) return std::string(text);
  out.append(text.substr(copied));
  return out;
}

}  // namespace handoff::media
