#include <handoff/uuid.hpp>

namespace handoff {

std::string to_string(const Uuid& uuid) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(36);
  for (std::size_t i = 0; i < uuid.bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += kHex[uuid.bytes[i] >> 4];
    s += kHex[uuid.bytes[i] & 0xF];
  }
  return s;
}

}  // namespace handoff
