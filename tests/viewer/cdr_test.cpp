// The ROS 2 message definition parser and the CDR decoder (issue 24): every
// primitive, alignment, both byte orders, arrays and sequences, nested types,
// strings; malformed definitions and messages (cut short at every length,
// lengths past the end, strings without NUL, unknown types, cycles, absurd
// sizes), each a ParseError naming the field path and the byte offset.
#include <handoff/media/cdr.hpp>

#include "cdr_test_util.hpp"

#include <gmock/gmock.h>

#include <cmath>
#include <limits>

namespace handoff::media::ros {
namespace {

using test::CdrWriter;
using ::testing::HasSubstr;

template <typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const ParseError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ParseError";
  return {};
}

CdrMessage decode(const std::shared_ptr<const MessageDefinition>& d, const CdrWriter& w) {
  return CdrMessage::decode(d, w.bytes(), {"test.mcap", "frame 0"});
}

constexpr std::string_view kAllPrimitives =
    "bool a\nbyte b\nchar c\nint8 d\nuint8 e\nint16 f\nuint16 g\nint32 h\nuint32 i\nint64 j\nuint64 k\n"
    "float32 l\nfloat64 m\nstring n\n";

class CdrBothOrders : public ::testing::TestWithParam<bool> {};

TEST_P(CdrBothOrders, EveryPrimitive) {
  const bool be = GetParam();
  const auto d = MessageDefinition::parse("test_msgs/msg/All", kAllPrimitives);
  CdrWriter w(be);
  w.u8(1).u8(0xAB).u8('z').put(std::int8_t(-5)).u8(250).put(std::int16_t(-1234)).put(std::uint16_t(65000));
  w.i32(-123456789).u32(4000000000u).put(std::int64_t(-9000000000000LL)).put(std::uint64_t(18000000000000000000ULL));
  w.put(1.5f).f64(-2.25).string("hello");
  const auto m = decode(d, w);
  EXPECT_EQ(m.big_endian(), be);
  EXPECT_TRUE(m.at("a").as_bool());
  EXPECT_EQ(m.at("b").as_uint(), 0xABu);
  EXPECT_EQ(m.at("c").as_int(), 'z');
  EXPECT_EQ(m.at("d").as_int(), -5);
  EXPECT_EQ(m.at("e").as_uint(), 250u);
  EXPECT_EQ(m.at("f").as_int(), -1234);
  EXPECT_EQ(m.at("g").as_uint(), 65000u);
  EXPECT_EQ(m.at("h").as_int(), -123456789);
  EXPECT_EQ(m.at("i").as_uint(), 4000000000u);
  EXPECT_EQ(m.at("j").as_int(), -9000000000000LL);
  EXPECT_EQ(m.at("k").as_uint(), 18000000000000000000ULL);
  EXPECT_EQ(m.at("l").as_double(), 1.5);
  EXPECT_EQ(m.at("m").as_double(), -2.25);
  EXPECT_EQ(m.at("n").as_string(), "hello");
  EXPECT_EQ(m.at("m").primitive(), Primitive::Float64);
  // Type mismatches are errors naming the path.
  EXPECT_THAT(message_of([&] { (void)m.at("k").as_int(); }), HasSubstr("test_msgs/All.k: 18000000000000000000 does not fit int64"));
  EXPECT_THAT(message_of([&] { (void)m.at("d").as_uint(); }), HasSubstr("test_msgs/All.d: -5 is negative"));
  EXPECT_THAT(message_of([&] { (void)m.at("m").as_int(); }), HasSubstr("is float64, not an integer"));
  EXPECT_THAT(message_of([&] { (void)m.at("n").as_double(); }), HasSubstr("not an integer"));
  EXPECT_THAT(message_of([&] { (void)m.at("a").as_string(); }), HasSubstr("test_msgs/All.a: is not a string"));
}

TEST_P(CdrBothOrders, AlignmentIsCountedAfterTheHeader) {
  const bool be = GetParam();
  const auto d = MessageDefinition::parse("t/A", "uint8 a\nfloat64 b\nuint16 c\nuint32 d\n");
  CdrWriter w(be);
  w.u8(7).f64(3.5).put(std::uint16_t(9)).u32(11);
  ASSERT_EQ(w.size(), 4u + 8 + 8 + 2 + 2 + 4);
  const auto m = decode(d, w);
  EXPECT_EQ(m.at("b").byte_offset(), 12u);  // 4 header + 1 + 7 padding
  EXPECT_EQ(m.at("b").as_double(), 3.5);
  EXPECT_EQ(m.at("c").byte_offset(), 20u);
  EXPECT_EQ(m.at("d").byte_offset(), 24u);  // 2 bytes of padding after c
  EXPECT_EQ(m.at("d").as_uint(), 11u);
}

TEST_P(CdrBothOrders, NestedStructAfterAString) {
  const bool be = GetParam();
  const auto d = MessageDefinition::parse("t/Outer",
                                          "string name\nInner inner\nuint8 tail\n"
                                          "================================================================================\n"
                                          "MSG: t/Inner\nuint8 x\nfloat64 y\n");
  CdrWriter w(be);
  w.string("abcd").u8(3).f64(-1.0).u8(4);  // "abcd\0" at 8..12, x at 13, y aligned to 4 + 16 = 20
  const auto m = decode(d, w);
  EXPECT_EQ(m.at("name").as_string(), "abcd");
  EXPECT_EQ(m.at("inner.x").byte_offset(), 13u);
  EXPECT_EQ(m.at("inner.x").as_uint(), 3u);
  EXPECT_EQ(m.at("inner.y").byte_offset(), 20u);
  EXPECT_EQ(m.at("inner.y").as_double(), -1.0);
  EXPECT_EQ(m.at("inner").at("y").as_double(), -1.0);
  EXPECT_EQ(m.at("tail").as_uint(), 4u);
  EXPECT_TRUE(m.at("inner").is_struct());
}

TEST_P(CdrBothOrders, SequencesOfStructsAndArrays) {
  const bool be = GetParam();
  const auto d = MessageDefinition::parse("t/S",
                                          "Point[] points\nint16[3] fixed\nfloat32[<=4] bounded\nstring[] names\n"
                                          "uint8[] empty\nfloat64 after\n"
                                          "===\nMSG: t/Point\nfloat64 x\nint8 tag\n");
  CdrWriter w(be);
  w.u32(2).f64(1.0).put(std::int8_t(-1)).f64(2.0).put(std::int8_t(-2));
  w.put(std::int16_t(10)).put(std::int16_t(-20)).put(std::int16_t(30));
  w.u32(2).put(0.5f).put(0.25f);
  w.u32(3).string("a").string("").string("ccc");
  w.u32(0);  // an empty sequence: no padding before its (absent) elements
  w.f64(9.0);
  const auto m = decode(d, w);
  ASSERT_EQ(m.at("points").size(), 2u);
  EXPECT_EQ(m.at("points[1].x").as_double(), 2.0);
  EXPECT_EQ(m.at("points")[0].at("tag").as_int(), -1);
  EXPECT_EQ(m.at("points[1].tag").as_int(), -2);
  ASSERT_EQ(m.at("fixed").size(), 3u);
  EXPECT_EQ(m.at("fixed[1]").as_int(), -20);
  EXPECT_EQ(m.at("fixed")[2].as_int(), 30);
  EXPECT_EQ(m.at("fixed").as_bytes().size(), 6u);
  ASSERT_EQ(m.at("bounded").size(), 2u);
  EXPECT_EQ(m.at("bounded[1]").as_double(), 0.25);
  ASSERT_EQ(m.at("names").size(), 3u);
  EXPECT_EQ(m.at("names[0]").as_string(), "a");
  EXPECT_EQ(m.at("names[1]").as_string(), "");
  EXPECT_EQ(m.at("names[2]").as_string(), "ccc");
  EXPECT_EQ(m.at("empty").size(), 0u);
  EXPECT_EQ(m.at("after").as_double(), 9.0);
  EXPECT_THAT(message_of([&] { (void)m.at("points[2]"); }), HasSubstr("t/S.points: index 2 is past its 2 elements"));
  EXPECT_THAT(message_of([&] { (void)m.at("points[0].nope"); }), HasSubstr("t/S.points[0]: has no field \"nope\""));
  EXPECT_THAT(message_of([&] { (void)m.at("after.x"); }), HasSubstr("is not a message"));
  EXPECT_THAT(message_of([&] { (void)m.at("points[x]"); }), HasSubstr("malformed index"));
}

INSTANTIATE_TEST_SUITE_P(ByteOrder, CdrBothOrders, ::testing::Values(false, true),
                         [](const auto& i) { return i.param ? "BigEndian" : "LittleEndian"; });

TEST(Cdr, ImageDataIsASpanIntoTheMessage) {
  const std::vector<std::uint8_t> pixels{1, 2, 3, 4, 5, 6};
  const auto bytes = test::cdr_image(false, 12, 345, "cam", 2, 1, "rgb8", 0, 3, pixels);
  const auto m = CdrMessage::decode(MessageDefinition::builtin("sensor_msgs/msg/Image"), bytes);
  EXPECT_EQ(m.at("header.stamp.sec").as_int(), 12);
  EXPECT_EQ(m.at("header.stamp.nanosec").as_uint(), 345u);
  EXPECT_EQ(m.at("header.frame_id").as_string(), "cam");
  EXPECT_EQ(m.at("encoding").as_string(), "rgb8");
  const auto data = m.at("data").as_bytes();
  EXPECT_EQ(data.data(), bytes.data() + bytes.size() - pixels.size());  // not copied
  EXPECT_EQ(std::vector<std::uint8_t>(data.begin(), data.end()), pixels);
}

// A Detection2DArray (built-in definition) with two detections, written field by field.
std::vector<std::uint8_t> detections(bool be) {
  CdrWriter w(be);
  w.i32(5).u32(6).string("cam");
  w.u32(2);
  for (int k = 0; k < 2; ++k) {
    w.i32(5).u32(6).string("cam");  // header
    w.u32(1);                          // results
    w.string(k ? "dog" : "cat").f64(0.5 + k * 0.25);
    for (double v : {1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0}) w.f64(v);  // pose
    for (int c = 0; c < 36; ++c) w.f64(c);                          // covariance
    w.f64(10.0 + k).f64(20.0).f64(0.0).f64(4.0).f64(6.0);           // bbox
    w.string(k ? "track-2" : "");
  }
  return w.bytes();
}

TEST(Cdr, Detection2DArrayByTheBuiltInDefinition) {
  for (bool be : {false, true}) {
    const auto bytes = detections(be);
    const auto m = CdrMessage::decode(MessageDefinition::builtin("vision_msgs/msg/Detection2DArray"), bytes);
    ASSERT_EQ(m.at("detections").size(), 2u);
    EXPECT_EQ(m.at("detections[1].results[0].hypothesis.class_id").as_string(), "dog");
    EXPECT_EQ(m.at("detections[1].results[0].hypothesis.score").as_double(), 0.75);
    EXPECT_EQ(m.at("detections[0].results[0].pose.pose.orientation.w").as_double(), 1.0);
    EXPECT_EQ(m.at("detections[0].results[0].pose.covariance[35]").as_double(), 35.0);
    EXPECT_EQ(m.at("detections[1].bbox.center.position.x").as_double(), 11.0);
    EXPECT_EQ(m.at("detections[1].bbox.size_y").as_double(), 6.0);
    EXPECT_EQ(m.at("detections[1].id").as_string(), "track-2");
    EXPECT_EQ(m.at("detections[0].id").as_string(), "");
  }
}

TEST(Cdr, CutShortAtEveryLengthIsAnError) {
  const auto d = MessageDefinition::builtin("vision_msgs/Detection2DArray");
  for (bool be : {false, true}) {
    const auto bytes = detections(be);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      const std::span<const std::uint8_t> cut(bytes.data(), n);
      try {
        (void)CdrMessage::decode(d, cut, {"f", "frame 1"});
        ADD_FAILURE() << "decoded " << n << " of " << bytes.size() << " bytes";
      } catch (const ParseError& e) {
        EXPECT_THAT(e.what(), HasSubstr("vision_msgs/Detection2DArray")) << n;
        EXPECT_THAT(e.what(), HasSubstr("at byte ")) << n;
      }
    }
  }
  // The whole message, and with trailing padding, decodes.
  auto bytes = detections(false);
  EXPECT_NO_THROW((void)CdrMessage::decode(d, bytes));
  bytes.insert(bytes.end(), 3, 0);
  EXPECT_NO_THROW((void)CdrMessage::decode(d, bytes));
}

TEST(Cdr, ErrorsNameTheFieldPathAndOffset) {
  const auto d = MessageDefinition::builtin("sensor_msgs/Image");
  auto bytes = test::cdr_image(false, 1, 2, "cam", 1, 1, "mono8", 0, 1, {7});
  bytes.resize(bytes.size() - 1);
  EXPECT_THAT(message_of([&] { (void)CdrMessage::decode(d, bytes, {"bag.mcap", "frame 4"}); }),
              HasSubstr("bag.mcap: frame 4: sensor_msgs/Image.data: array needs 1 bytes, 0 left in the message (at byte 48)"));
}

TEST(Cdr, LengthsPastTheMessage) {
  // A byte sequence, a struct sequence and a string claiming 0xFFFFFFFF: refused before any allocation.
  const auto bytes_def = MessageDefinition::parse("t/B", "uint8[] data\n");
  EXPECT_THAT(message_of([&] { (void)decode(bytes_def, CdrWriter().u32(0xFFFFFFFFu).u8(1)); }),
              HasSubstr("t/B.data: array needs 4294967295 bytes, 1 left in the message (at byte 8)"));
  const auto f64_def = MessageDefinition::parse("t/F", "float64[] v\n");
  EXPECT_THAT(message_of([&] { (void)decode(f64_def, CdrWriter().u32(0xFFFFFFFFu).u32(0).f64(1)); }),
              HasSubstr("t/F.v: array needs 34359738360 bytes"));
  const auto structs = MessageDefinition::parse("t/P", "Q[] q\n===\nMSG: t/Q\nuint8 x\n");
  EXPECT_THAT(message_of([&] { (void)decode(structs, CdrWriter().u32(0xFFFFFFFFu).u8(1)); }),
              HasSubstr("t/P.q: 4294967295 elements cannot fit in the 1 bytes left (at byte 4)"));
  EXPECT_THAT(message_of([&] { (void)decode(structs, CdrWriter().u32(3).u8(1).u8(2)); }),
              HasSubstr("t/P.q: 3 elements cannot fit in the 2 bytes left"));
  const auto pairs = MessageDefinition::parse("t/P", "Q[] q\n===\nMSG: t/Q\nuint8 x\nuint8 y\n");
  EXPECT_THAT(message_of([&] { (void)decode(pairs, CdrWriter().u32(2).u8(1).u8(2)); }),
              HasSubstr("t/P.q[1].x: a value needs 1 bytes, 0 left"));
  const auto s = MessageDefinition::parse("t/S", "string s\n");
  EXPECT_THAT(message_of([&] { (void)decode(s, CdrWriter().u32(0xFFFFFFFFu).u8('a')); }),
              HasSubstr("t/S.s: string needs 4294967295 bytes, 1 left"));
}

TEST(Cdr, Strings) {
  const auto d = MessageDefinition::parse("t/S", "string s\nstring<=3 b\n");
  // With the NUL (as every ROS 2 middleware writes it); an empty string with length 0 is also read.
  EXPECT_EQ(decode(d, CdrWriter().string("abc").string("xy")).at("s").as_string(), "abc");
  EXPECT_EQ(decode(d, CdrWriter().u32(0).string("")).at("s").as_string(), "");
  // Without the NUL: an error.
  EXPECT_THAT(message_of([&] { (void)decode(d, CdrWriter().u32(3).u8('a').u8('b').u8('c').string("")); }),
              HasSubstr("t/S.s: string of length 3 does not end in NUL (at byte 4)"));
  // Over its bound.
  EXPECT_THAT(message_of([&] { (void)decode(d, CdrWriter().string("").string("abcd")); }),
              HasSubstr("t/S.b: string of 4 characters exceeds its bound 3"));
  // A NUL inside is kept (the length says where the string ends).
  CdrWriter nul;
  nul.u32(4).u8('a').u8(0).u8('b').u8(0).string("");
  const auto m = decode(d, nul);
  EXPECT_EQ(m.at("s").as_string(), std::string_view("a\0b", 3));
}

TEST(Cdr, BoundedSequenceOverItsBound) {
  const auto d = MessageDefinition::parse("t/S", "int32[<=2] v\n");
  EXPECT_EQ(decode(d, CdrWriter().u32(2).i32(1).i32(2)).at("v[1]").as_int(), 2);
  EXPECT_THAT(message_of([&] { (void)decode(d, CdrWriter().u32(3).i32(1).i32(2).i32(3)); }),
              HasSubstr("t/S.v: sequence of 3 elements exceeds its bound 2 (at byte 4)"));
}

TEST(Cdr, EncapsulationHeader) {
  const auto d = MessageDefinition::parse("t/S", "uint8 x\n");
  for (std::vector<std::uint8_t> bad : {std::vector<std::uint8_t>{0x00, 0x03, 0, 0, 1}, {0x00, 0x07, 0, 0, 1}, {0x01, 0x00, 0, 0, 1}}) {
    EXPECT_THAT(message_of([&] { (void)CdrMessage::decode(d, bad); }), HasSubstr("is not plain CDR"));
  }
  EXPECT_THAT(message_of([&] { (void)CdrMessage::decode(d, std::vector<std::uint8_t>{0x00, 0x01, 0}); }),
              HasSubstr("encapsulation header is cut short"));
  // The options bytes are ignored.
  EXPECT_EQ(CdrMessage::decode(d, std::vector<std::uint8_t>{0x00, 0x01, 0xAA, 0xBB, 42}).at("x").as_uint(), 42u);
}

TEST(Cdr, EmptyTypesCarryOneByte) {
  const auto d = MessageDefinition::parse("t/S", "Empty e\nuint8 after\n===\nMSG: t/Empty\n# nothing\n");
  CdrWriter w;
  w.u8(0).u8(9);
  const auto m = decode(d, w);
  EXPECT_EQ(m.at("after").as_uint(), 9u);
}

TEST(Cdr, WStringIsRefusedClearly) {
  const auto d = MessageDefinition::parse("t/S", "wstring w\n");
  EXPECT_THAT(message_of([&] { (void)decode(d, CdrWriter().u32(0)); }), HasSubstr("t/S.w: wstring is not decoded"));
}

// --- Definitions --------------------------------------------------------------------------

TEST(MsgDefinition, ConstantsDefaultsCommentsAndNames) {
  const auto d = MessageDefinition::parse(
      "pkg/msg/Thing",
      "# A comment line\n"
      "uint8 RED=1   # a constant, not serialized\n"
      "string NAME = \"a # b\"\n"
      "  int32 count 7  # default 7\n"
      "string label \"x # y\"\n"
      "Header header\n"
      "Part[2] parts\n"
      "pkg/msg/Part[<=3] more\n"
      "time t\n"
      "\n"
      "================================================================================\n"
      "MSG: pkg/Part\n"
      "float32[] v\n");
  EXPECT_EQ(d->root().name, "pkg/Thing");
  ASSERT_EQ(d->root().fields.size(), 6u);
  EXPECT_EQ(d->root().fields[0].name, "count");
  EXPECT_EQ(d->root().fields[0].default_value, "7");
  EXPECT_EQ(d->root().fields[1].default_value, "\"x # y\"");
  EXPECT_EQ(d->root().fields[2].type.type_name, "std_msgs/Header");
  EXPECT_EQ(d->root().fields[3].type.array, ArrayKind::Fixed);
  EXPECT_EQ(d->root().fields[3].type.count, 2u);
  EXPECT_EQ(d->types()[d->root().fields[3].type.nested].name, "pkg/Part");
  EXPECT_EQ(d->root().fields[4].type.array, ArrayKind::Bounded);
  EXPECT_EQ(d->root().fields[4].type.nested, d->root().fields[3].type.nested);
  EXPECT_EQ(d->root().fields[5].type.type_name, "builtin_interfaces/Time");  // from the built-ins
}

TEST(MsgDefinition, EveryBuiltInParses) {
  for (const char* t : {"builtin_interfaces/Time", "builtin_interfaces/msg/Duration", "std_msgs/msg/Header",
                        "sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage", "vision_msgs/msg/Detection2DArray"}) {
    EXPECT_NO_THROW((void)MessageDefinition::builtin(t)) << t;
  }
  EXPECT_THAT(message_of([] { (void)MessageDefinition::builtin("foo/Bar"); }), HasSubstr("no built-in definition of foo/Bar"));
}

TEST(MsgDefinition, Malformed) {
  auto error = [](std::string_view text) {
    return message_of([&] { (void)MessageDefinition::parse("t/msg/T", text, "bag.mcap"); });
  };
  EXPECT_THAT(error("uint8 a\nnosuch_pkg/Foo f\n"),
              HasSubstr("bag.mcap: definition of t/T: line 2: unknown type nosuch_pkg/Foo"));
  EXPECT_THAT(error("Missing m\n"), HasSubstr("unknown type t/Missing"));
  EXPECT_THAT(error("A a\n===\nMSG: t/A\nB b\n===\nMSG: t/B\nA a\n"), HasSubstr("type t/A contains itself"));
  EXPECT_THAT(error("T[] self\n"), HasSubstr("type t/T contains itself"));
  EXPECT_THAT(error("uint8\n"), HasSubstr("line 1: a field needs a type and a name"));
  EXPECT_THAT(error("uint8 9lives\n"), HasSubstr("expected a field name"));
  EXPECT_THAT(error("uint8 a\nuint8 a\n"), HasSubstr("field \"a\" is defined twice"));
  EXPECT_THAT(error("uint8[0] a\n"), HasSubstr("array size \"0\" is not a number in 1..4294967295"));
  EXPECT_THAT(error("uint8[99999999999] a\n"), HasSubstr("array size \"99999999999\" is not a number"));
  EXPECT_THAT(error("uint8[<=x] a\n"), HasSubstr("array bound \"x\""));
  EXPECT_THAT(error("uint8[3 a\n"), HasSubstr("malformed array type"));
  EXPECT_THAT(error("uint8<=3 a\n"), HasSubstr("only strings take a bound"));
  EXPECT_THAT(error("uint8 a\n=====\nuint8 b\n"), HasSubstr("line 3: expected \"MSG: pkg/Type\""));
  EXPECT_THAT(error("uint8 a\n=====\n"), HasSubstr("a line of '=' ends the text"));
  EXPECT_THAT(error("a-b/c d\n"), HasSubstr("\"a-b/c\" is not a type name"));
  EXPECT_THAT(message_of([] { (void)MessageDefinition::parse("NoPackage", "uint8 a\n"); }), HasSubstr("is not pkg/Type"));
  // A chain deeper than the limit.
  std::string deep = "t/L0 x\n";
  for (int i = 0; i < 80; ++i) deep += "===\nMSG: t/L" + std::to_string(i) + "\nt/L" + std::to_string(i + 1) + " x\n";
  EXPECT_THAT(error(deep), HasSubstr("types nested more than 64 deep"));
}

TEST(MsgDefinition, HugeFixedArrayIsRefusedWhenDecodingWithoutAllocating) {
  const auto d = MessageDefinition::parse("t/S", "float64[4000000000] v\nQ[4000000000] q\n===\nMSG: t/Q\nuint8 x\n");
  EXPECT_THAT(message_of([&] { (void)decode(d, CdrWriter().f64(1)); }), HasSubstr("t/S.v: array needs 32000000000 bytes"));
  const auto q = MessageDefinition::parse("t/S", "Q[4000000000] q\n===\nMSG: t/Q\nuint8 x\n");
  EXPECT_THAT(message_of([&] { (void)decode(q, CdrWriter().u8(1)); }), HasSubstr("4000000000 elements cannot fit"));
}

}  // namespace
}  // namespace handoff::media::ros
