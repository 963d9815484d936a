// valid_utf8: text made fit for a protobuf string field (the foxglove.TextAnnotation
// a label becomes in a recording, and the ROS annotations read through it).
#include <gtest/gtest.h>

#include <string>

#include <handoff/media/utf8.hpp>

namespace handoff::media {
namespace {

const std::string R = "\xEF\xBF\xBD";  // U+FFFD

TEST(Utf8, ValidTextIsKeptAsItIs) {
  for (const std::string& s : {std::string(), std::string("person"), std::string("caf\xC3\xA9"),  // é
                              std::string("\xE2\x82\xAC 5"),                                     // € 5
                              std::string("\xF0\x9F\x9A\x97"),                                   // U+1F697
                              std::string("\xED\x9F\xBF"),                                       // U+D7FF, below the surrogates
                              std::string("\xF4\x8F\xBF\xBF"),                                   // U+10FFFF
                              std::string("a\0b", 3)})
    EXPECT_EQ(valid_utf8(s), s);
}

TEST(Utf8, EachMaximalInvalidSubpartBecomesOneReplacement) {
  EXPECT_EQ(valid_utf8("caf\xE9"), "caf" + R);                 // Latin-1 é: a start byte whose sequence ends there
  EXPECT_EQ(valid_utf8("\xE9t\xE9"), R + "t" + R);             // ... and in the middle
  EXPECT_EQ(valid_utf8("\x80\xBF"), R + R);                    // lone continuation bytes: one each
  EXPECT_EQ(valid_utf8("\xE2\x82"), R);                        // a three-byte character cut short: one
  EXPECT_EQ(valid_utf8("\xE2\x82x"), R + "x");
  EXPECT_EQ(valid_utf8("\xF0\x9F\x9A"), R);                    // a four-byte one cut short
  EXPECT_EQ(valid_utf8("\xC0\x80"), R + R);                    // overlong NUL: C0 never starts
  EXPECT_EQ(valid_utf8("\xE0\x80\x80"), R + R + R);            // overlong: E0 wants A0..BF next
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), R + R + R);            // a surrogate, U+D800
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), R + R + R + R);    // past U+10FFFF
  EXPECT_EQ(valid_utf8("\xF5\xFF\xFE"), R + R + R);            // never in UTF-8
  EXPECT_EQ(valid_utf8("ok\xC3\xA9\xFFok"), "ok\xC3\xA9" + R + "ok");
}

}  // namespace
}  // namespace handoff::media
