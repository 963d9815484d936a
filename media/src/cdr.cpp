// CDR (OMG XCDR1, plain CDR) decoding by message definition into
// CdrMessage's node tree, and the queries on it.
#include <handoff/media/cdr.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>

namespace handoff::media::ros {
namespace {

constexpr std::size_t kHeaderBytes = 4;

std::size_t primitive_size(Primitive p) {
  switch (p) {
    case Primitive::Int16: case Primitive::UInt16: return 2;
    case Primitive::Int32: case Primitive::UInt32: case Primitive::Float32: return 4;
    case Primitive::Int64: case Primitive::UInt64: case Primitive::Float64: return 8;
    default: return 1;
  }
}

bool is_text(Primitive p) { return p == Primitive::String || p == Primitive::WString; }

template <typename T>
T load(const std::uint8_t* p, bool big_endian) {
  T v;
  std::memcpy(&v, p, sizeof v);
  if (big_endian != (std::endian::native == std::endian::big)) {
    auto bits = std::bit_cast<std::array<std::uint8_t, sizeof(T)>>(v);
    std::reverse(bits.begin(), bits.end());
    v = std::bit_cast<T>(bits);
  }
  return v;
}

}  // namespace

// Walks the bytes by definition, filling the message's nodes.
class CdrDecoder {
 public:
  CdrDecoder(CdrMessage& m, const MessageDefinition& d) : m_(m), d_(d), bytes_(m.bytes_) {}

  void run() {
    if (bytes_.size() < kHeaderBytes) fail(0, "the 4-byte encapsulation header is cut short");
    if (bytes_[0] != 0 || bytes_[1] > 1) {
      fail(0, "encapsulation 0x" + hex(bytes_[0]) + hex(bytes_[1]) +
                  " is not plain CDR (0x0000 big-endian, 0x0001 little-endian)");
    }
    m_.big_endian_ = bytes_[1] == 0;
    pos_ = kHeaderBytes;
    m_.nodes_.resize(1);
    decode_struct(0, 0);
  }

 private:
  static std::string hex(std::uint8_t b) {
    const char* digits = "0123456789abcdef";
    return {digits[b >> 4], digits[b & 15]};
  }

  [[noreturn]] void fail(std::size_t at, const std::string& detail) const {
    std::string field = m_.type_name_;
    if (!path_.empty()) field += "." + path_;
    throw ParseError(m_.place_.file, m_.place_.location, field, detail + " (at byte " + std::to_string(at) + ")");
  }

  void need(std::size_t n, const char* what) const {
    if (n > bytes_.size() - pos_) {
      fail(pos_, std::string(what) + " needs " + std::to_string(n) + " bytes, " + std::to_string(bytes_.size() - pos_) +
                     " left in the message");
    }
  }

  // Skips the padding before a value of `n`-byte alignment (counted after the header).
  void align(std::size_t n) {
    const std::size_t pad = (n - (pos_ - kHeaderBytes) % n) % n;
    need(pad, "alignment padding");
    pos_ += pad;
  }

  std::uint32_t read_u32(const char* what) {
    align(4);
    need(4, what);
    const auto v = load<std::uint32_t>(bytes_.data() + pos_, m_.big_endian_);
    pos_ += 4;
    return v;
  }

  // A string: uint32 length including the NUL, the characters, the NUL.
  void decode_string(std::uint32_t node, std::uint32_t bound) {
    const std::size_t at = pos_;
    const std::uint32_t n = read_u32("string length");
    need(n, "string");
    if (n > 0 && bytes_[pos_ + n - 1] != 0) fail(at, "string of length " + std::to_string(n) + " does not end in NUL");
    const std::uint32_t chars = n == 0 ? 0 : n - 1;  // 0: an empty string written without its NUL
    if (bound && chars > bound) fail(at, "string of " + std::to_string(chars) + " characters exceeds its bound " + std::to_string(bound));
    m_.nodes_[node].offset = std::uint32_t(pos_);
    m_.nodes_[node].count = chars;
    pos_ += n;
  }

  void decode_primitive(std::uint32_t node, const FieldType& t) {
    const Primitive p = *t.primitive;
    m_.nodes_[node].primitive = p;
    if (p == Primitive::WString) fail(pos_, "wstring is not decoded (its CDR layout differs between ROS 2 middlewares)");
    if (p == Primitive::String) return decode_string(node, t.string_bound);
    const std::size_t size = primitive_size(p);
    align(size);
    need(size, "a value");
    m_.nodes_[node].offset = std::uint32_t(pos_);
    pos_ += size;
  }

  void decode_struct(std::size_t type, std::uint32_t node) {
    const MessageType& mt = d_.types()[type];
    const auto first = std::uint32_t(m_.nodes_.size());
    m_.nodes_.resize(m_.nodes_.size() + mt.fields.size());
    m_.nodes_[node].first_child = first;
    m_.nodes_[node].children = std::uint32_t(mt.fields.size());
    m_.nodes_[node].offset = std::uint32_t(pos_);
    for (std::size_t i = 0; i < mt.fields.size(); ++i) {
      const std::size_t keep = path_.size();
      path_ += (keep ? "." : "") + mt.fields[i].name;
      m_.nodes_[first + i].field = &mt.fields[i];
      decode_field(std::uint32_t(first + i), mt.fields[i].type);
      path_.resize(keep);
    }
  }

  void decode_single(std::uint32_t node, const FieldType& t) {
    if (t.primitive) decode_primitive(node, t);
    else decode_struct(t.nested, node);
  }

  void decode_field(std::uint32_t node, const FieldType& t) {
    if (t.array == ArrayKind::None) return decode_single(node, t);
    const std::size_t at = pos_;
    const std::uint32_t n = t.array == ArrayKind::Fixed ? t.count : read_u32("sequence length");
    if (t.array == ArrayKind::Bounded && n > t.count) {
      fail(at, "sequence of " + std::to_string(n) + " elements exceeds its bound " + std::to_string(t.count));
    }
    m_.nodes_[node].array = true;
    m_.nodes_[node].count = n;
    m_.nodes_[node].primitive = t.primitive;
    if (t.primitive && !is_text(*t.primitive)) {  // one node: a span over the elements
      const std::size_t size = primitive_size(*t.primitive);
      if (n > 0) align(size);  // an empty sequence has no padding before it
      need(std::size_t(n) * size, "array");
      m_.nodes_[node].offset = std::uint32_t(pos_);
      pos_ += std::size_t(n) * size;
      return;
    }
    // Every element takes at least one byte, so a count past the message's
    // end is refused before any node is allocated for it.
    if (n > bytes_.size() - pos_) fail(at, std::to_string(n) + " elements cannot fit in the " + std::to_string(bytes_.size() - pos_) + " bytes left");
    const auto first = std::uint32_t(m_.nodes_.size());
    m_.nodes_.resize(m_.nodes_.size() + n);
    m_.nodes_[node].first_child = first;
    m_.nodes_[node].children = n;
    m_.nodes_[node].offset = std::uint32_t(pos_);
    FieldType element = t;
    element.array = ArrayKind::None;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::size_t keep = path_.size();
      path_.push_back('[');
      path_.append(std::to_string(i));
      path_.push_back(']');
      decode_single(first + i, element);
      path_.resize(keep);
    }
  }

  CdrMessage& m_;
  const MessageDefinition& d_;
  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
  std::string path_;
};

CdrMessage CdrMessage::decode(std::shared_ptr<const MessageDefinition> definition, std::span<const std::uint8_t> bytes,
                              CdrPlace place) {
  if (!definition) throw UsageError("CdrMessage::decode: no definition");
  CdrMessage m;
  m.definition_ = std::move(definition);
  m.bytes_ = bytes;
  m.place_ = std::move(place);
  m.type_name_ = m.definition_->root().name;
  if (bytes.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw ParseError(m.place_.file, m.place_.location, m.type_name_, "message larger than 4 GiB");
  }
  CdrDecoder(m, *m.definition_).run();
  return m;
}

CdrValue CdrMessage::root() const { return CdrValue(this, 0, CdrValue::kWhole, ""); }

// --- CdrValue ---------------------------------------------------------------------------

void CdrValue::fail(const std::string& detail) const {
  std::string field = message_->type_name_;
  if (!path_.empty()) field += "." + path_;
  throw ParseError(message_->place_.file, message_->place_.location, field, detail);
}

bool CdrValue::is_struct() const {
  const auto& n = message_->nodes_[node_];
  return element_ == kWhole && !n.array && !n.primitive;
}
bool CdrValue::is_array() const { return element_ == kWhole && message_->nodes_[node_].array; }
std::optional<Primitive> CdrValue::primitive() const { return message_->nodes_[node_].primitive; }

std::size_t CdrValue::byte_offset() const {
  const auto& n = message_->nodes_[node_];
  if (element_ == kWhole) return n.offset;
  return n.offset + element_ * primitive_size(*n.primitive);
}

std::size_t CdrValue::size() const {
  if (!is_array()) fail("is not an array");
  return message_->nodes_[node_].count;
}

CdrValue CdrValue::operator[](std::size_t i) const {
  const auto& n = message_->nodes_[node_];
  if (!is_array()) fail("is not an array");
  if (i >= n.count) fail("index " + std::to_string(i) + " is past its " + std::to_string(n.count) + " elements");
  std::string p = path_;
  p.push_back('[');
  p.append(std::to_string(i));
  p.push_back(']');
  if (n.children) return CdrValue(message_, n.first_child + std::uint32_t(i), kWhole, std::move(p));
  return CdrValue(message_, node_, std::uint32_t(i), std::move(p));
}

CdrValue CdrValue::at(std::string_view path) const {
  CdrValue v = *this;
  while (!path.empty()) {
    if (path[0] == '[') {
      const auto close = path.find(']');
      std::size_t i = 0;
      const auto r = std::from_chars(path.data() + 1, path.data() + (close == std::string_view::npos ? 1 : close), i);
      if (close == std::string_view::npos || r.ptr != path.data() + close || close == 1) {
        v.fail("malformed index in the path \"" + std::string(path) + "\"");
      }
      v = v[i];
      path.remove_prefix(close + 1);
      if (!path.empty() && path[0] == '.') path.remove_prefix(1);
      continue;
    }
    const auto end = std::min(path.find_first_of(".["), path.size());
    const std::string_view name = path.substr(0, end);
    if (!v.is_struct()) v.fail("is not a message, it has no field \"" + std::string(name) + "\"");
    const auto& n = message_->nodes_[v.node_];
    std::optional<std::uint32_t> found;
    for (std::uint32_t c = 0; c < n.children; ++c) {
      if (message_->nodes_[n.first_child + c].field->name == name) found = n.first_child + c;
    }
    if (!found) v.fail("has no field \"" + std::string(name) + "\"");
    v = CdrValue(message_, *found, kWhole, v.path_.empty() ? std::string(name) : v.path_ + "." + std::string(name));
    path.remove_prefix(end);
    if (!path.empty() && path[0] == '.') path.remove_prefix(1);
  }
  return v;
}

const std::uint8_t* CdrValue::scalar_bytes(Primitive& p) const {
  const auto& n = message_->nodes_[node_];
  if (!n.primitive || (element_ == kWhole && n.array)) fail("is not a primitive value");
  p = *n.primitive;
  return message_->bytes_.data() + byte_offset();
}

bool CdrValue::as_bool() const {
  Primitive p;
  const std::uint8_t* b = scalar_bytes(p);
  if (p != Primitive::Bool) fail("is " + std::string(to_string(p)) + ", not bool");
  return *b != 0;
}

std::int64_t CdrValue::as_int() const {
  Primitive p;
  const std::uint8_t* b = scalar_bytes(p);
  const bool be = message_->big_endian_;
  switch (p) {
    case Primitive::Int8: return std::int8_t(*b);
    case Primitive::Byte: case Primitive::Char: case Primitive::UInt8: case Primitive::Bool: return *b;
    case Primitive::Int16: return load<std::int16_t>(b, be);
    case Primitive::UInt16: return load<std::uint16_t>(b, be);
    case Primitive::Int32: return load<std::int32_t>(b, be);
    case Primitive::UInt32: return load<std::uint32_t>(b, be);
    case Primitive::Int64: return load<std::int64_t>(b, be);
    case Primitive::UInt64: {
      const auto v = load<std::uint64_t>(b, be);
      if (v > std::uint64_t(std::numeric_limits<std::int64_t>::max())) fail(std::to_string(v) + " does not fit int64");
      return std::int64_t(v);
    }
    default: fail("is " + std::string(to_string(p)) + ", not an integer");
  }
}

std::uint64_t CdrValue::as_uint() const {
  Primitive p;
  const std::uint8_t* b = scalar_bytes(p);
  if (p == Primitive::UInt64) return load<std::uint64_t>(b, message_->big_endian_);
  const std::int64_t v = as_int();
  if (v < 0) fail(std::to_string(v) + " is negative");
  return std::uint64_t(v);
}

double CdrValue::as_double() const {
  Primitive p;
  const std::uint8_t* b = scalar_bytes(p);
  if (p == Primitive::Float32) return load<float>(b, message_->big_endian_);
  if (p == Primitive::Float64) return load<double>(b, message_->big_endian_);
  if (p == Primitive::UInt64) return double(as_uint());
  return double(as_int());
}

std::string_view CdrValue::as_string() const {
  const auto& n = message_->nodes_[node_];
  if (element_ != kWhole || n.array || n.primitive != Primitive::String) fail("is not a string");
  return {reinterpret_cast<const char*>(message_->bytes_.data() + n.offset), n.count};
}

std::span<const std::uint8_t> CdrValue::as_bytes() const {
  const auto& n = message_->nodes_[node_];
  if (element_ == kWhole && n.primitive == Primitive::String && !n.array) return message_->bytes_.subspan(n.offset, n.count);
  if (element_ != kWhole || !n.array || !n.primitive || is_text(*n.primitive)) fail("is not an array of numbers");
  return message_->bytes_.subspan(n.offset, std::size_t(n.count) * primitive_size(*n.primitive));
}

}  // namespace handoff::media::ros
