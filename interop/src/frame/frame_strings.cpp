#include <handoff/error.hpp>
#include <handoff/frame.hpp>

#include <array>
#include <utility>

namespace handoff {

namespace {

// One table per enum: to_string, from_string and spellings all read it.
template <typename E, std::size_t N>
struct Names {
  const char* kind;  // what the value is, for error messages
  std::array<std::pair<E, std::string_view>, N> names;
};

constexpr Names<PixelFormat, 12> kFormats{"pixel format",
                                          {{{PixelFormat::NV12, "nv12"},
                                            {PixelFormat::P010, "p010"},
                                            {PixelFormat::I420, "i420"},
                                            {PixelFormat::YUYV, "yuyv"},
                                            {PixelFormat::UYVY, "uyvy"},
                                            {PixelFormat::RGB8, "rgb8"},
                                            {PixelFormat::BGR8, "bgr8"},
                                            {PixelFormat::RGBA8, "rgba8"},
                                            {PixelFormat::BGRA8, "bgra8"},
                                            {PixelFormat::GRAY8, "gray8"},
                                            {PixelFormat::GRAY16, "gray16"},
                                            {PixelFormat::GRAY32F, "gray32f"}}}};
constexpr Names<ColorMatrix, 3> kMatrices{
    "colour matrix",
    {{{ColorMatrix::BT601, "bt601"}, {ColorMatrix::BT709, "bt709"}, {ColorMatrix::BT2020, "bt2020"}}}};
constexpr Names<ColorRange, 2> kRanges{"colour range", {{{ColorRange::Limited, "limited"}, {ColorRange::Full, "full"}}}};
constexpr Names<ChromaSiting, 3> kSitings{
    "chroma siting",
    {{{ChromaSiting::Left, "left"}, {ChromaSiting::Center, "center"}, {ChromaSiting::TopLeft, "topleft"}}}};

template <typename E, std::size_t N>
std::string_view name_of(const Names<E, N>& t, E v) {
  for (const auto& [value, name] : t.names)
    if (value == v) return name;
  return "?";
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; };
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

template <typename E, std::size_t N>
std::optional<E> find(const Names<E, N>& t, std::string_view text) {
  for (const auto& [value, name] : t.names)
    if (equal_ignoring_case(text, name)) return value;
  return std::nullopt;
}

template <typename E, std::size_t N>
std::string joined(const Names<E, N>& t, std::string_view separator) {
  std::string s;
  for (const auto& [value, name] : t.names) {
    if (!s.empty()) s += separator;
    s += name;
  }
  return s;
}

// `text` with control and non-ASCII bytes as \xNN: an error message stays one
// printable line whatever the caller passed (a NUL would cut what() short).
std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7f) {
      s += c;
    } else {
      s += "\\x";
      s += kHex[b >> 4];
      s += kHex[b & 15];
    }
  }
  return s;
}

template <typename E, std::size_t N>
E parse(const Names<E, N>& t, std::string_view text) {
  if (auto v = find(t, text)) return *v;
  throw UsageError(std::string(t.kind) + " '" + printable(text) + "' is not one of " + joined(t, ", "));
}

}  // namespace

std::string_view to_string(PixelFormat f) { return name_of(kFormats, f); }
std::string_view to_string(ColorMatrix m) { return name_of(kMatrices, m); }
std::string_view to_string(ColorRange r) { return name_of(kRanges, r); }
std::string_view to_string(ChromaSiting s) { return name_of(kSitings, s); }

template <> PixelFormat from_string<PixelFormat>(std::string_view t) { return parse(kFormats, t); }
template <> ColorMatrix from_string<ColorMatrix>(std::string_view t) { return parse(kMatrices, t); }
template <> ColorRange from_string<ColorRange>(std::string_view t) { return parse(kRanges, t); }
template <> ChromaSiting from_string<ChromaSiting>(std::string_view t) { return parse(kSitings, t); }

template <> std::optional<PixelFormat> try_from_string<PixelFormat>(std::string_view t) { return find(kFormats, t); }
template <> std::optional<ColorMatrix> try_from_string<ColorMatrix>(std::string_view t) { return find(kMatrices, t); }
template <> std::optional<ColorRange> try_from_string<ColorRange>(std::string_view t) { return find(kRanges, t); }
template <> std::optional<ChromaSiting> try_from_string<ChromaSiting>(std::string_view t) { return find(kSitings, t); }

template <> std::string spellings<PixelFormat>(std::string_view sep) { return joined(kFormats, sep); }
template <> std::string spellings<ColorMatrix>(std::string_view sep) { return joined(kMatrices, sep); }
template <> std::string spellings<ColorRange>(std::string_view sep) { return joined(kRanges, sep); }
template <> std::string spellings<ChromaSiting>(std::string_view sep) { return joined(kSitings, sep); }

}  // namespace handoff
