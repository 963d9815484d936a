// ROS 2 message definitions: the .msg text of a type and its dependencies
// (as MCAP ros2msg schemas and rosbag2 store them), parsed and resolved into
// MessageDefinition; and the built-in definitions of the messages handoff
// shows, for bags that store none.
#include <handoff/media/cdr.hpp>

extern "C" {
#include <libavutil/mem.h>
#include <libavutil/sha.h>
}

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <set>

namespace handoff::media::ros {
namespace {

constexpr std::array<std::pair<std::string_view, Primitive>, 15> kPrimitives{{
    {"bool", Primitive::Bool},       {"byte", Primitive::Byte},       {"char", Primitive::Char},
    {"int8", Primitive::Int8},       {"uint8", Primitive::UInt8},     {"int16", Primitive::Int16},
    {"uint16", Primitive::UInt16},   {"int32", Primitive::Int32},     {"uint32", Primitive::UInt32},
    {"int64", Primitive::Int64},     {"uint64", Primitive::UInt64},   {"float32", Primitive::Float32},
    {"float64", Primitive::Float64}, {"string", Primitive::String},   {"wstring", Primitive::WString},
}};

// A nesting deeper than this is refused (decoding recurses once per level).
constexpr int kMaxDepth = 64;

// Written from the ROS 2 interface documentation (docs.ros.org: std_msgs,
// builtin_interfaces, sensor_msgs, vision_msgs 4.x, geometry_msgs); comments
// and constants left out.
constexpr std::pair<std::string_view, std::string_view> kBuiltins[] = {
    {"builtin_interfaces/Time", "int32 sec\nuint32 nanosec\n"},
    {"builtin_interfaces/Duration", "int32 sec\nuint32 nanosec\n"},
    {"std_msgs/Header", "builtin_interfaces/Time stamp\nstring frame_id\n"},
    {"sensor_msgs/Image",
     "std_msgs/Header header\nuint32 height\nuint32 width\nstring encoding\nuint8 is_bigendian\nuint32 step\n"
     "uint8[] data\n"},
    {"sensor_msgs/CompressedImage", "std_msgs/Header header\nstring format\nuint8[] data\n"},
    {"vision_msgs/Detection2DArray", "std_msgs/Header header\nvision_msgs/Detection2D[] detections\n"},
    {"vision_msgs/Detection2D",
     "std_msgs/Header header\nvision_msgs/ObjectHypothesisWithPose[] results\nvision_msgs/BoundingBox2D bbox\n"
     "string id\n"},
    {"vision_msgs/ObjectHypothesisWithPose",
     "vision_msgs/ObjectHypothesis hypothesis\ngeometry_msgs/PoseWithCovariance pose\n"},
    {"vision_msgs/ObjectHypothesis", "string class_id\nfloat64 score\n"},
    {"vision_msgs/BoundingBox2D", "vision_msgs/Pose2D center\nfloat64 size_x\nfloat64 size_y\n"},
    {"vision_msgs/Pose2D", "vision_msgs/Point2D position\nfloat64 theta\n"},
    {"vision_msgs/Point2D", "float64 x\nfloat64 y\n"},
    {"geometry_msgs/PoseWithCovariance", "geometry_msgs/Pose pose\nfloat64[36] covariance\n"},
    {"geometry_msgs/Pose", "geometry_msgs/Point position\ngeometry_msgs/Quaternion orientation\n"},
    {"geometry_msgs/Point", "float64 x\nfloat64 y\nfloat64 z\n"},
    {"geometry_msgs/Quaternion", "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n"},
    {"geometry_msgs/Pose2D", "float64 x\nfloat64 y\nfloat64 theta\n"},
    // foxglove_msgs 2.x / 3.x (docs.foxglove.dev message schemas).
    {"foxglove_msgs/ImageAnnotations",
     "foxglove_msgs/CircleAnnotation[] circles\nfoxglove_msgs/PointsAnnotation[] points\n"
     "foxglove_msgs/TextAnnotation[] texts\n"},
    {"foxglove_msgs/CircleAnnotation",
     "builtin_interfaces/Time timestamp\nfoxglove_msgs/Point2 position\nfloat64 diameter\nfloat64 thickness\n"
     "foxglove_msgs/Color fill_color\nfoxglove_msgs/Color outline_color\n"},
    {"foxglove_msgs/PointsAnnotation",
     "builtin_interfaces/Time timestamp\nuint8 type\nfoxglove_msgs/Point2[] points\nfoxglove_msgs/Color outline_color\n"
     "foxglove_msgs/Color[] outline_colors\nfoxglove_msgs/Color fill_color\nfloat64 thickness\n"},
    {"foxglove_msgs/TextAnnotation",
     "builtin_interfaces/Time timestamp\nfoxglove_msgs/Point2 position\nstring text\nfloat64 font_size\n"
     "foxglove_msgs/Color text_color\nfoxglove_msgs/Color background_color\n"},
    {"foxglove_msgs/Point2", "float64 x\nfloat64 y\n"},
    {"foxglove_msgs/CompressedVideo", "builtin_interfaces/Time timestamp\nstring frame_id\nuint8[] data\nstring format\n"},
    {"foxglove_msgs/Color", "float64 r\nfloat64 g\nfloat64 b\nfloat64 a\n"},
};

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

bool is_separator(std::string_view line) {
  line = trim(line);
  return line.size() >= 3 && line.find_first_not_of('=') == std::string_view::npos;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) != 0)) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string package_of(std::string_view type) {
  const auto slash = type.find('/');
  return slash == std::string_view::npos ? std::string() : std::string(type.substr(0, slash));
}

// One section of the text: a type's name and its fields, types not yet resolved.
struct Section {
  std::string name;
  std::vector<Field> fields;
  std::vector<std::size_t> lines;  // each field's line number (1-based), for errors
};

class Parser {
 public:
  Parser(std::string_view file, std::string_view type) : file_(file), type_(type) {}

  // Appends the sections of `text`, the first named `first_name`.
  void parse(std::string_view first_name, std::string_view text, std::vector<Section>& out) {
    Section current{std::string(first_name), {}, {}};
    bool expect_msg = false;
    std::size_t line_no = 0;
    for (std::size_t at = 0; at <= text.size();) {
      const auto end = std::min(text.find('\n', at), text.size());
      const std::string_view line = text.substr(at, end - at);
      at = end + 1;
      ++line_no;
      if (is_separator(line)) {
        out.push_back(std::move(current));
        current = {};
        expect_msg = true;
        continue;
      }
      const std::string_view t = trim(line);
      if (t.empty() || t[0] == '#') continue;
      if (expect_msg) {
        if (t.substr(0, 4) != "MSG:") fail(line_no, "expected \"MSG: pkg/Type\" after a line of '='");
        current.name = normalize_type_name(trim(t.substr(4)));
        if (current.name.empty()) fail(line_no, "\"MSG:\" names no type");
        expect_msg = false;
        continue;
      }
      parse_line(t, line_no, current);
    }
    if (expect_msg) fail(line_no, "a line of '=' ends the text (no \"MSG:\" section follows)");
    out.push_back(std::move(current));
  }

  [[noreturn]] void fail(std::size_t line, const std::string& detail) const {
    throw ParseError(std::string(file_), "definition of " + type_, "line " + std::to_string(line), detail);
  }

 private:
  // "type name", "type name default", "type NAME=value" (a constant, skipped).
  void parse_line(std::string_view t, std::size_t line_no, Section& s) {
    const auto space = t.find_first_of(" \t");
    if (space == std::string_view::npos) fail(line_no, "a field needs a type and a name");
    const std::string_view type = t.substr(0, space);
    std::string_view rest = trim(t.substr(space));
    auto name_end = std::find_if(rest.begin(), rest.end(), [](char c) {
      return !(std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    });
    const std::string_view name = rest.substr(0, std::size_t(name_end - rest.begin()));
    rest = trim(rest.substr(name.size()));
    if (!is_identifier(name)) fail(line_no, "expected a field name after the type \"" + std::string(type) + "\"");
    if (!rest.empty() && rest[0] == '=') return;  // a constant: not serialized
    Field f;
    f.name = std::string(name);
    f.type = parse_type(type, line_no, s.name);
    if (f.type.primitive != Primitive::String && f.type.primitive != Primitive::WString) {
      rest = trim(rest.substr(0, rest.find('#')));
    }
    f.default_value = std::string(rest);
    for (const Field& g : s.fields)
      if (g.name == f.name) fail(line_no, "field \"" + f.name + "\" is defined twice");
    s.fields.push_back(std::move(f));
    s.lines.push_back(line_no);
  }

  std::uint32_t number(std::string_view digits, std::size_t line_no, const char* what) const {
    std::uint32_t v = 0;
    const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (digits.empty() || r.ec != std::errc() || r.ptr != digits.data() + digits.size() || v == 0) {
      fail(line_no, std::string(what) + " \"" + std::string(digits) + "\" is not a number in 1..4294967295");
    }
    return v;
  }

  FieldType parse_type(std::string_view type, std::size_t line_no, const std::string& owner) const {
    FieldType ft;
    std::string_view base = type;
    if (const auto open = type.find('['); open != std::string_view::npos) {
      if (type.back() != ']') fail(line_no, "malformed array type \"" + std::string(type) + "\"");
      const std::string_view inside = type.substr(open + 1, type.size() - open - 2);
      base = type.substr(0, open);
      if (inside.empty()) {
        ft.array = ArrayKind::Sequence;
      } else if (inside.substr(0, 2) == "<=") {
        ft.array = ArrayKind::Bounded;
        ft.count = number(inside.substr(2), line_no, "array bound");
      } else {
        ft.array = ArrayKind::Fixed;
        ft.count = number(inside, line_no, "array size");
      }
    }
    if (const auto le = base.find("<="); le != std::string_view::npos) {
      ft.string_bound = number(base.substr(le + 2), line_no, "string bound");
      base = base.substr(0, le);
      if (base != "string" && base != "wstring") fail(line_no, "only strings take a bound (\"" + std::string(type) + "\")");
    }
    for (const auto& [spelling, p] : kPrimitives) {
      if (spelling == base) {
        ft.primitive = p;
        ft.type_name = std::string(spelling);
        return ft;
      }
    }
    // ROS 1 spellings still found in definitions.
    if (base == "time") ft.type_name = "builtin_interfaces/Time";
    else if (base == "duration") ft.type_name = "builtin_interfaces/Duration";
    else if (base == "Header") ft.type_name = "std_msgs/Header";
    else if (base.find('/') != std::string_view::npos) ft.type_name = normalize_type_name(base);
    else ft.type_name = package_of(owner) + "/" + std::string(base);
    const auto slash = ft.type_name.find('/');
    if (!is_identifier(ft.type_name.substr(0, slash)) || !is_identifier(ft.type_name.substr(slash + 1))) {
      fail(line_no, "\"" + std::string(type) + "\" is not a type name");
    }
    return ft;
  }

  std::string_view file_;
  std::string type_;
};

// Resolves the sections' type names into indices, depth first from the main type.
class Resolver {
 public:
  Resolver(Parser& parser, std::vector<Section>& sections) : parser_(parser), sections_(sections) {}

  std::size_t resolve(const std::string& name, std::size_t line, int depth, std::vector<MessageType>& out) {
    if (const auto it = done_.find(name); it != done_.end()) return it->second;
    if (active_.count(name)) parser_.fail(line, "type " + name + " contains itself");
    if (depth > kMaxDepth) parser_.fail(line, "types nested more than " + std::to_string(kMaxDepth) + " deep");
    const std::size_t s = find_section(name, line);
    const std::size_t index = out.size();
    out.push_back({name, {}});
    active_.insert(name);
    std::vector<Field> fields = sections_[s].fields;
    const std::vector<std::size_t> lines = sections_[s].lines;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (!fields[i].type.primitive) fields[i].type.nested = resolve(fields[i].type.type_name, lines[i], depth + 1, out);
    }
    // An empty type is serialized with one uint8, as rosidl generates it.
    if (fields.empty()) {
      Field f;
      f.name = "structure_needs_at_least_one_member";
      f.type.primitive = Primitive::UInt8;
      f.type.type_name = "uint8";
      fields.push_back(std::move(f));
    }
    out[index].fields = std::move(fields);
    active_.erase(name);
    done_[name] = index;
    return index;
  }

 private:
  std::size_t find_section(const std::string& name, std::size_t line) {
    auto find = [&]() -> std::optional<std::size_t> {
      for (std::size_t i = 0; i < sections_.size(); ++i)
        if (sections_[i].name == name) return i;
      return std::nullopt;
    };
    if (auto i = find()) return *i;
    const auto text = builtin_definition(name);
    if (!text) parser_.fail(line, "unknown type " + name + " (the definition does not define it and handoff has no built-in definition)");
    Parser(parser_).parse(name, *text, sections_);
    return *find();
  }

  Parser& parser_;
  std::vector<Section>& sections_;
  std::map<std::string, std::size_t> done_;
  std::set<std::string> active_;
};

}  // namespace

std::string_view to_string(Primitive p) {
  for (const auto& [spelling, q] : kPrimitives)
    if (q == p) return spelling;
  return "?";
}

std::string normalize_type_name(std::string_view name) {
  name = trim(name);
  if (const auto m = name.find("/msg/"); m != std::string_view::npos && name.find('/', m + 5) == std::string_view::npos) {
    return std::string(name.substr(0, m)) + "/" + std::string(name.substr(m + 5));
  }
  return std::string(name);
}

namespace {

// REP 2011's type ids (type_description_interfaces/msg/FieldType).
int type_id(const FieldType& t) {
  int id = 1;  // a nested type
  if (t.primitive) {
    switch (*t.primitive) {
      case Primitive::Int8: id = 2; break;
      case Primitive::UInt8: id = 3; break;
      case Primitive::Int16: id = 4; break;
      case Primitive::UInt16: id = 5; break;
      case Primitive::Int32: id = 6; break;
      case Primitive::UInt32: id = 7; break;
      case Primitive::Int64: id = 8; break;
      case Primitive::UInt64: id = 9; break;
      case Primitive::Float32: id = 10; break;
      case Primitive::Float64: id = 11; break;
      case Primitive::Char: id = 13; break;
      case Primitive::Bool: id = 15; break;
      case Primitive::Byte: id = 16; break;
      case Primitive::String: id = t.string_bound ? 21 : 17; break;
      case Primitive::WString: id = t.string_bound ? 22 : 18; break;
    }
  }
  switch (t.array) {
    case ArrayKind::None: return id;
    case ArrayKind::Fixed: return id + 48;
    case ArrayKind::Bounded: return id + 96;
    case ArrayKind::Sequence: return id + 144;
  }
  return id;
}

// "pkg/msg/Type" for "pkg/Type".
std::string hashed_type_name(const std::string& name) {
  const auto slash = name.find('/');
  return slash == std::string::npos ? name : name.substr(0, slash) + "/msg" + name.substr(slash);
}

// One type as REP 2011 hashes it, in Python's json.dumps form (", ", ": ").
std::string type_json(const MessageType& t, const std::vector<MessageType>& types) {
  std::string j = "{\"type_name\": \"" + hashed_type_name(t.name) + "\", \"fields\": [";
  auto field = [&](const std::string& name, int id, std::uint32_t capacity, std::uint32_t string_capacity,
                   const std::string& nested) {
    j += "{\"name\": \"" + name + "\", \"type\": {\"type_id\": " + std::to_string(id) +
         ", \"capacity\": " + std::to_string(capacity) + ", \"string_capacity\": " +
         std::to_string(string_capacity) + ", \"nested_type_name\": \"" + nested + "\"}}";
  };
  for (std::size_t i = 0; i < t.fields.size(); ++i) {
    const Field& f = t.fields[i];
    if (i) j += ", ";
    const bool counted = f.type.array == ArrayKind::Fixed || f.type.array == ArrayKind::Bounded;
    field(f.name, type_id(f.type), counted ? f.type.count : 0, f.type.string_bound,
          f.type.primitive ? std::string() : hashed_type_name(types[f.type.nested].name));
  }
  if (t.fields.empty()) field("structure_needs_at_least_one_member", 3, 0, 0, "");  // as IDL gives an empty message
  return j + "]}";
}

}  // namespace

std::string type_hash(const MessageDefinition& definition) {
  const std::vector<MessageType>& types = definition.types();
  std::vector<const MessageType*> referenced;
  for (std::size_t i = 1; i < types.size(); ++i) referenced.push_back(&types[i]);
  std::sort(referenced.begin(), referenced.end(), [](const MessageType* a, const MessageType* b) {
    return hashed_type_name(a->name) < hashed_type_name(b->name);
  });
  std::string json = "{\"type_description\": " + type_json(types.front(), types) + ", \"referenced_type_descriptions\": [";
  for (std::size_t i = 0; i < referenced.size(); ++i) json += (i ? ", " : "") + type_json(*referenced[i], types);
  json += "]}";
  std::array<std::uint8_t, 32> digest{};
  AVSHA* sha = av_sha_alloc();
  if (!sha) throw std::bad_alloc();
  av_sha_init(sha, 256);
  av_sha_update(sha, reinterpret_cast<const std::uint8_t*>(json.data()), json.size());
  av_sha_final(sha, digest.data());
  av_free(sha);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "RIHS01_";
  for (std::uint8_t b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::optional<std::string_view> builtin_definition(std::string_view type_name) {
  const std::string name = normalize_type_name(type_name);
  for (const auto& [n, text] : kBuiltins)
    if (n == name) return text;
  return std::nullopt;
}

std::shared_ptr<const MessageDefinition> MessageDefinition::parse(std::string_view type_name, std::string_view text,
                                                                 std::string_view file) {
  const std::string name = normalize_type_name(type_name);
  Parser parser(file, name);
  if (name.find('/') == std::string::npos) parser.fail(0, "the type name \"" + name + "\" is not pkg/Type");
  std::vector<Section> sections;
  parser.parse(name, text, sections);
  auto d = std::make_shared<MessageDefinition>();
  Resolver(parser, sections).resolve(name, 1, 0, d->types_);
  return d;
}

std::shared_ptr<const MessageDefinition> MessageDefinition::builtin(std::string_view type_name) {
  const auto text = builtin_definition(type_name);
  if (!text) {
    throw ParseError("", "", "type", "no built-in definition of " + std::string(type_name));
  }
  return parse(type_name, *text, "built-in definitions");
}

}  // namespace handoff::media::ros
