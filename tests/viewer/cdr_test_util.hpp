#pragma once
// A CDR writer for the tests, written from the XCDR1 rules on its own (not
// with the decoder's code): a 4-byte encapsulation header, each primitive
// aligned to its size counted from the end of the header, strings as a
// uint32 length with the NUL, sequences as a uint32 count then the elements.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace handoff::media::test {

class CdrWriter {
 public:
  explicit CdrWriter(bool big_endian = false) : big_(big_endian) {
    bytes_.reserve(256);
    for (std::uint8_t b : {0x00, big_endian ? 0x00 : 0x01, 0x00, 0x00}) bytes_.push_back(b);
  }

  template <typename T>
  CdrWriter& put(T v) {
    pad(sizeof(T));
    std::uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    if (big_ != (std::endian::native == std::endian::big)) std::reverse(b, b + sizeof(T));
    bytes_.insert(bytes_.end(), b, b + sizeof(T));
    return *this;
  }
  CdrWriter& u8(std::uint8_t v) { return put(v); }
  CdrWriter& u32(std::uint32_t v) { return put(v); }
  CdrWriter& i32(std::int32_t v) { return put(v); }
  CdrWriter& f64(double v) { return put(v); }
  CdrWriter& string(std::string_view s) {
    u32(std::uint32_t(s.size() + 1));
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    bytes_.push_back(0);
    return *this;
  }
  CdrWriter& raw(const std::vector<std::uint8_t>& b) {
    bytes_.insert(bytes_.end(), b.begin(), b.end());
    return *this;
  }
  CdrWriter& pad(std::size_t align) {
    while ((bytes_.size() - 4) % align) bytes_.push_back(0);
    return *this;
  }
  std::size_t size() const { return bytes_.size(); }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  bool big_;
  std::vector<std::uint8_t> bytes_;
};

// A sensor_msgs/Image message.
inline std::vector<std::uint8_t> cdr_image(bool big_endian, std::int32_t sec, std::uint32_t nanosec,
                                           std::string_view frame_id, std::uint32_t height, std::uint32_t width,
                                           std::string_view encoding, std::uint8_t is_bigendian, std::uint32_t step,
                                           const std::vector<std::uint8_t>& data) {
  CdrWriter w(big_endian);
  w.i32(sec).u32(nanosec).string(frame_id).u32(height).u32(width).string(encoding).u8(is_bigendian).u32(step);
  w.u32(std::uint32_t(data.size())).raw(data);
  return w.bytes();
}

}  // namespace handoff::media::test
