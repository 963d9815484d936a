// to_string / from_string / try_from_string / spellings for the frame enums.
#include <handoff/error.hpp>
#include <handoff/frame.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>

namespace handoff {
namespace {

using ::testing::HasSubstr;

template <typename E>
std::string parse_error(std::string_view text) {
  try {
    from_string<E>(text);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "from_string accepted '" << text << "'";
  return {};
}

// Every value round-trips through its spelling, in any letter case, and the
// spellings list is exactly the values' spellings in order.
template <typename Values, typename E = std::decay_t<decltype(*std::begin(std::declval<const Values&>()))>>
void expect_round_trip(const Values& values) {
  std::string listed;
  for (E v : values) {
    const std::string name(to_string(v));
    EXPECT_EQ(from_string<E>(name), v) << name;
    std::string upper = name;
    for (char& c : upper) c = char(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    EXPECT_EQ(from_string<E>(upper), v) << upper;
    EXPECT_EQ(try_from_string<E>(name), v) << name;
    listed += (listed.empty() ? "" : ", ") + name;
  }
  EXPECT_EQ(spellings<E>(), listed);
}

TEST(FrameStrings, EveryValueRoundTrips) {
  expect_round_trip(kPixelFormats);
  expect_round_trip(std::array{ColorMatrix::BT601, ColorMatrix::BT709, ColorMatrix::BT2020});
  expect_round_trip(std::array{ColorRange::Limited, ColorRange::Full});
  expect_round_trip(std::array{ChromaSiting::Left, ChromaSiting::Center, ChromaSiting::TopLeft});
}

TEST(FrameStrings, SpellingsTakeASeparator) {
  EXPECT_EQ(spellings<PixelFormat>(" | "),
            "nv12 | p010 | i420 | yuyv | uyvy | rgb8 | bgr8 | rgba8 | bgra8 | gray8 | gray16 | gray32f");
  EXPECT_EQ(spellings<ChromaSiting>("/"), "left/center/topleft");
}

TEST(FrameStrings, MalformedTextNamesTheKindTheTextAndTheSpellings) {
  EXPECT_EQ(parse_error<PixelFormat>("yuv420p"), "pixel format 'yuv420p' is not one of " + spellings<PixelFormat>());
  EXPECT_EQ(parse_error<ColorMatrix>("bt.709"), "colour matrix 'bt.709' is not one of bt601, bt709, bt2020");
  EXPECT_EQ(parse_error<ColorRange>("tv"), "colour range 'tv' is not one of limited, full");
  EXPECT_EQ(parse_error<ChromaSiting>("top-left"), "chroma siting 'top-left' is not one of left, center, topleft");
  // Empty text, surrounding blanks, prefixes, trailing bytes and an embedded NUL are all refused.
  for (std::string_view bad : {std::string_view(""), std::string_view(" nv12"), std::string_view("nv12 "),
                               std::string_view("nv1"), std::string_view("nv120"), std::string_view("nv12\0", 5)}) {
    EXPECT_THAT(parse_error<PixelFormat>(bad), HasSubstr("is not one of nv12, p010, i420,")) << bad.size();
    EXPECT_FALSE(try_from_string<PixelFormat>(bad).has_value());
  }
  EXPECT_EQ(parse_error<PixelFormat>(std::string_view("nv12\0\n\xff", 7)),
            "pixel format 'nv12\\x00\\x0a\\xff' is not one of " + spellings<PixelFormat>());
  EXPECT_FALSE(try_from_string<ColorRange>("fullest").has_value());
  EXPECT_FALSE(try_from_string<ColorMatrix>("BT2020x").has_value());
  EXPECT_FALSE(try_from_string<ChromaSiting>("").has_value());
}

TEST(FrameStrings, OutOfRangeValuesPrintAsAQuestionMark) {
  EXPECT_EQ(to_string(static_cast<PixelFormat>(12)), "?");
  EXPECT_EQ(to_string(static_cast<ColorRange>(9)), "?");
}

}  // namespace
}  // namespace handoff
