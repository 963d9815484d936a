#pragma once
// Little-endian field writer and bounds-checked reader for the live protocol.
// The reader throws ProtocolError naming the field it was reading.
#include <handoff/live/protocol.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::live::detail {

class WireWriter {
 public:
  explicit WireWriter(std::vector<std::byte>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(std::byte{v}); }
  void u16(std::uint16_t v) { put(v, 2); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void i32(std::int32_t v) { put(static_cast<std::uint32_t>(v), 4); }
  void i64(std::int64_t v) { put(static_cast<std::uint64_t>(v), 8); }
  void f32(float v) { put(std::bit_cast<std::uint32_t>(v), 4); }
  void f64(double v) { put(std::bit_cast<std::uint64_t>(v), 8); }
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  void str8(std::string_view s) {
    u8(static_cast<std::uint8_t>(s.size()));
    bytes(s.data(), s.size());
  }
  void str16(std::string_view s) {
    u16(static_cast<std::uint16_t>(s.size()));
    bytes(s.data(), s.size());
  }
  std::size_t size() const { return out_.size(); }
  // Overwrites 4 bytes at `at` (the header's payload size, written last).
  void patch_u32(std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out_[at + i] = std::byte(v >> (8 * i));
  }

 private:
  void put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(std::byte(v >> (8 * i)));
  }
  std::vector<std::byte>& out_;
};

class WireReader {
 public:
  // `what` prefixes field names ("frame", "overlays").
  WireReader(std::span<const std::byte> in, std::string what) : in_(in), what_(std::move(what)) {}

  std::uint8_t u8(std::string_view f) { return static_cast<std::uint8_t>(get(f, 1)); }
  std::uint16_t u16(std::string_view f) { return static_cast<std::uint16_t>(get(f, 2)); }
  std::uint32_t u32(std::string_view f) { return static_cast<std::uint32_t>(get(f, 4)); }
  std::uint64_t u64(std::string_view f) { return get(f, 8); }
  std::int32_t i32(std::string_view f) { return static_cast<std::int32_t>(u32(f)); }
  std::int64_t i64(std::string_view f) { return static_cast<std::int64_t>(get(f, 8)); }
  float f32(std::string_view f) { return std::bit_cast<float>(u32(f)); }
  double f64(std::string_view f) { return std::bit_cast<double>(get(f, 8)); }
  void bytes(std::string_view f, void* dst, std::size_t n) {
    need(f, n);
    std::memcpy(dst, in_.data() + pos_, n);
    pos_ += n;
  }
  std::span<const std::byte> view(std::string_view f, std::size_t n) {
    need(f, n);
    auto s = in_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  std::string str8(std::string_view f, std::size_t max) { return str(f, u8(f), max); }
  std::string str16(std::string_view f, std::size_t max) { return str(f, u16(f), max); }

  std::size_t remaining() const { return in_.size() - pos_; }
  std::size_t position() const { return pos_; }
  // The payload must be used exactly: trailing bytes are an error.
  void expect_end() const;
  [[noreturn]] void fail(std::string_view field, const std::string& detail) const;
  std::string name(std::string_view field) const { return what_ + "." + std::string(field); }

 private:
  void need(std::string_view f, std::size_t n) const;
  std::uint64_t get(std::string_view f, int n) {
    need(f, static_cast<std::size_t>(n));
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= std::uint64_t(std::to_integer<std::uint8_t>(in_[pos_ + i])) << (8 * i);
    pos_ += static_cast<std::size_t>(n);
    return v;
  }
  std::string str(std::string_view f, std::size_t n, std::size_t max);

  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  std::string what_;
};

}  // namespace handoff::live::detail
