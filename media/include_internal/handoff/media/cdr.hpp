#pragma once
// ROS 2 messages: their definitions (.msg text as MCAP `ros2msg` schemas and
// rosbag2 store it) and their CDR serialization (OMG XCDR1, plain CDR:
// a 4-byte encapsulation header, CDR_BE 0x0000 or CDR_LE 0x0001, then the
// fields with each primitive aligned to its size, up to 8, counted from the
// end of the header). Messages are decoded by definition into a tree of
// nodes queried by field path; strings and arrays of primitives are spans
// over the message bytes (nothing is copied).
#include <handoff/media/error.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::media::ros {

enum class Primitive : std::uint8_t {
  Bool, Byte, Char, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Float32, Float64, String, WString
};
// The .msg spelling ("uint8", "float64", "string", ...).
std::string_view to_string(Primitive p);

enum class ArrayKind : std::uint8_t { None, Fixed, Bounded, Sequence };  // T, T[N], T[<=N], T[]

struct FieldType {
  std::optional<Primitive> primitive;  // else a message type:
  std::size_t nested = 0;              // its index in MessageDefinition::types()
  std::string type_name;               // as normalised: "pkg/Type" or the primitive's spelling
  ArrayKind array = ArrayKind::None;
  std::uint32_t count = 0;         // N of T[N] / T[<=N]
  std::uint32_t string_bound = 0;  // N of string<=N (0: unbounded)
};

struct Field {
  std::string name;
  FieldType type;
  std::string default_value;  // the text after the name, comments removed ("" when none)
};

struct MessageType {
  std::string name;  // "pkg/Type" (a "pkg/msg/Type" spelling is normalised)
  std::vector<Field> fields;  // constants are left out: they are not serialized
};

// A message type with every type it uses, resolved. Types the text does not
// define are taken from the built-in definitions (builtin_definition), so a
// bag that stores only the main type still decodes.
class MessageDefinition {
 public:
  // Parses `text`: the main type's fields, then each dependency after a line
  // of '=' and a line "MSG: pkg/Type". ParseError(file, "definition of
  // <type>", "<type>.<field>" or "line N", ...) on a malformed line, an
  // unknown type, a type that contains itself, or absurd sizes.
  // Shared: each decoded message keeps its definition alive.
  static std::shared_ptr<const MessageDefinition> parse(std::string_view type_name, std::string_view text,
                                                        std::string_view file = {});
  // The built-in definition of `type_name`; ParseError when there is none.
  static std::shared_ptr<const MessageDefinition> builtin(std::string_view type_name);

  const MessageType& root() const { return types_.front(); }
  const std::vector<MessageType>& types() const { return types_; }

 private:
  std::vector<MessageType> types_;  // types_[0] is the main type
};

// "pkg/Type" for "pkg/msg/Type" (and "pkg/Type"); other names unchanged.
std::string normalize_type_name(std::string_view name);
// The ROS 2 type hash of a definition (REP 2011, "RIHS01_" and 64 hex
// digits): SHA-256 of the type description as JSON (the type and every type
// it uses, sorted by name, each field's name, type id, capacity, string
// capacity and nested type; defaults and constants left out), as rosbag2
// Iron and later store it beside a topic's type.
std::string type_hash(const MessageDefinition& definition);
// The built-in .msg text of a type (std_msgs/Header, builtin_interfaces/Time
// and Duration, sensor_msgs/Image and CompressedImage, vision_msgs/Detection2DArray
// and what it uses, foxglove_msgs ImageAnnotations and CompressedVideo), written
// from the ROS 2 interface documentation;
// std::nullopt for others.
std::optional<std::string_view> builtin_definition(std::string_view type_name);

class CdrMessage;

// One value of a decoded message: a struct, an array (of any element
// type), or a primitive. Cheap to copy; valid while its CdrMessage lives.
class CdrValue {
 public:
  bool is_struct() const;
  bool is_array() const;
  bool is_primitive() const { return !is_struct() && !is_array(); }
  // The primitive (of a primitive, or of an array's elements); nullopt for structs and arrays of structs.
  std::optional<Primitive> primitive() const;
  const std::string& path() const { return path_; }
  std::size_t byte_offset() const;  // where it starts in the message bytes

  // Field `path` below this struct ("stamp.sec", "detections[0].id").
  CdrValue at(std::string_view path) const;
  std::size_t size() const;               // an array's length
  CdrValue operator[](std::size_t i) const;  // an array's element

  // Primitives. ParseError naming the path when the type does not fit
  // (as_int of a float, as_uint of a negative value, as_string of a number).
  bool as_bool() const;
  std::int64_t as_int() const;
  std::uint64_t as_uint() const;
  double as_double() const;
  std::string_view as_string() const;  // without the terminating NUL
  // An array of primitives (or a string): its bytes in the message, in the
  // message's byte order.
  std::span<const std::uint8_t> as_bytes() const;

 private:
  friend class CdrMessage;
  CdrValue(const CdrMessage* m, std::uint32_t node, std::uint32_t element, std::string path)
      : message_(m), node_(node), element_(element), path_(std::move(path)) {}
  static constexpr std::uint32_t kWhole = ~std::uint32_t(0);
  [[noreturn]] void fail(const std::string& detail) const;
  const std::uint8_t* scalar_bytes(Primitive& p) const;

  const CdrMessage* message_;
  std::uint32_t node_;
  std::uint32_t element_;  // an element of a primitive array, else kWhole
  std::string path_;
};

// Where a message is, for ParseError: the file and a location ("frame 3 ...").
struct CdrPlace {
  std::string file;
  std::string location;
};

// A decoded CDR message: the bytes are referenced, not copied (keep them alive).
class CdrMessage {
 public:
  // Decodes `bytes` (encapsulation header first) as definition.root().
  // ParseError(place.file, place.location, "<Type>.<field path>", "... at
  // byte N ...") when the bytes are cut short, a length runs past the end, a
  // string lacks its NUL, a bounded sequence is over its bound, or the header
  // is not plain CDR. Trailing bytes (padding) are allowed.
  static CdrMessage decode(std::shared_ptr<const MessageDefinition> definition, std::span<const std::uint8_t> bytes,
                           CdrPlace place = {});

  bool big_endian() const { return big_endian_; }
  CdrValue root() const;
  CdrValue at(std::string_view path) const { return root().at(path); }
  const CdrPlace& place() const { return place_; }
  const std::string& type_name() const { return type_name_; }

  // A node of the tree. Structs and arrays of non-primitives have children
  // (a struct's fields in order, an array's elements); a primitive array is
  // one node whose `count` elements start at `offset`.
  struct Node {
    const Field* field = nullptr;           // null for array elements and the root
    std::optional<Primitive> primitive;     // of a primitive or of a primitive array's elements
    bool array = false;
    std::uint32_t offset = 0;               // first byte (a string's characters)
    std::uint32_t count = 0;                // array elements; a string's length without NUL
    std::uint32_t first_child = 0, children = 0;
  };
  const std::vector<Node>& nodes() const { return nodes_; }
  std::span<const std::uint8_t> bytes() const { return bytes_; }

 private:
  friend class CdrValue;
  friend class CdrDecoder;
  std::shared_ptr<const MessageDefinition> definition_;  // the nodes' fields point into it
  std::span<const std::uint8_t> bytes_;
  std::vector<Node> nodes_;
  bool big_endian_ = false;
  std::string type_name_;
  CdrPlace place_;
};

}  // namespace handoff::media::ros
