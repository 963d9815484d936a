// JSON Lines overlay parser (simdjson DOM). Schema: overlay.hpp and
// README.md ("Overlay files (JSON Lines)"). Every error names the field by its path
// ("objects[3].box[2]").
#include <handoff/media/error.hpp>
#include <handoff/media/overlay.hpp>

#include <simdjson.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace handoff::media {

struct OverlayLineParser::Impl {
  simdjson::dom::parser parser;
  std::vector<char> padded;  // the line plus SIMDJSON_PADDING, reused
};

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

enum class BoxFormat { Xywh, Xyxy, Cxcywh };

// Where a value sits in the line ("objects[3].box[2]"), built on the stack and
// turned into text only when there is an error: the happy path allocates nothing.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;     // empty for a bare index
  std::int64_t index = -1;  // -1 for none
  std::string str() const {
    std::string s = parent ? parent->str() : std::string();
    if (!key.empty()) {
      if (!s.empty()) s += '.';
      s.append(key.data(), key.size());
    }
    if (index >= 0) {
      s += '[';
      s += std::to_string(index);
      s += ']';
    }
    return s;
  }
};
Path child(const Path& p, std::string_view key, std::int64_t index = -1) { return Path{&p, key, index}; }
Path item(const Path& p, std::int64_t index) { return Path{&p, {}, index}; }

struct LineContext {
  std::string_view file;
  std::int64_t line;
  const OverlayParseOptions& options;

  [[noreturn]] void fail(const Path& field, const std::string& detail) const {
    throw ParseError(std::string(file), "line " + std::to_string(line), field.str(), detail);
  }
};

const char* type_name(element_type t) {
  switch (t) {
    case element_type::ARRAY: return "an array";
    case element_type::OBJECT: return "an object";
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE: return "a number";
    case element_type::STRING: return "a string";
    case element_type::BOOL: return "a boolean";
    case element_type::NULL_VALUE: return "null";
  }
  return "?";
}

float number(const LineContext& c, element e, const Path& field) {
  double d = 0;
  if (e.get_double().get(d) != simdjson::SUCCESS) c.fail(field, std::string("expected a number, got ") + type_name(e.type()));
  if (!std::isfinite(d) || std::fabs(d) > double(std::numeric_limits<float>::max())) {
    c.fail(field, "number out of range");
  }
  return static_cast<float>(d);
}

std::int64_t integer(const LineContext& c, element e, const Path& field, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  if (e.get_int64().get(v) != simdjson::SUCCESS) {
    c.fail(field, std::string("expected an integer, got ") +
                      (e.is_number() ? "a non-integer or too large number" : type_name(e.type())));
  }
  if (v < lo || v > hi) c.fail(field, std::to_string(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}

array get_array(const LineContext& c, element e, const Path& field) {
  array a;
  if (e.get_array().get(a) != simdjson::SUCCESS) c.fail(field, std::string("expected an array, got ") + type_name(e.type()));
  return a;
}

std::string_view get_string(const LineContext& c, element e, const Path& field) {
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) c.fail(field, std::string("expected a string, got ") + type_name(e.type()));
  return s;
}

bool get_bool(const LineContext& c, element e, const Path& field) {
  bool b = false;
  if (e.get_bool().get(b) != simdjson::SUCCESS) c.fail(field, std::string("expected true or false, got ") + type_name(e.type()));
  return b;
}

// Looks up an optional key; false when absent.
bool field(object o, std::string_view key, element& out) {
  return o.at_key(key).get(out) == simdjson::SUCCESS;
}

Color8 color(const LineContext& c, element e, const Path& f) {
  if (e.type() == element_type::STRING) {
    const std::string_view s = get_string(c, e, f);
    auto col = parse_hex_color(s);
    if (!col) c.fail(f, "expected \"#rrggbb\" or \"#rgb\", got \"" + std::string(s.substr(0, 16)) + "\"");
    return *col;
  }
  if (e.type() != element_type::ARRAY) c.fail(f, std::string("expected \"#rrggbb\" or [r, g, b], got ") + type_name(e.type()));
  array a = get_array(c, e, f);
  const std::size_t n = a.size();
  if (n != 3 && n != 4) c.fail(f, "expected [r, g, b] or [r, g, b, a], got " + std::to_string(n) + " values");
  std::uint8_t v[4] = {0, 0, 0, 255};
  std::size_t i = 0;
  for (element x : a) {
    v[i] = static_cast<std::uint8_t>(integer(c, x, item(f, std::int64_t(i)), 0, 255));
    ++i;
  }
  return Color8{v[0], v[1], v[2], v[3]};
}

struct Scale {
  float sx = 1, sy = 1;
};

Scale scale_for(const LineContext& c, bool normalized, const Path& f) {
  if (!normalized) return {};
  if (!(c.options.frame_width > 0 && c.options.frame_height > 0)) {
    c.fail(f, "normalized coordinates need the frame size (not known to the parser)");
  }
  return {c.options.frame_width, c.options.frame_height};
}

// Reads a fixed-size [a, b(, c)] array of numbers into out[]; returns the count.
std::size_t numbers(const LineContext& c, element e, const Path& f, float* out, std::size_t min, std::size_t max,
                    const char* form) {
  array a = get_array(c, e, f);
  const std::size_t n = a.size();
  if (n < min || n > max) c.fail(f, std::string("expected ") + form + ", got " + std::to_string(n) + " values");
  std::size_t i = 0;
  for (element x : a) {
    out[i] = number(c, x, item(f, std::int64_t(i)));
    ++i;
  }
  return n;
}

// [[x, y], ...] -> points (scaled). Returns the count.
std::uint32_t points(const LineContext& c, element e, const Path& f, Scale s, OverlayFrame& out,
                     std::size_t min_count) {
  array a = get_array(c, e, f);
  const std::size_t n = a.size();
  if (n < min_count) c.fail(f, "needs at least " + std::to_string(min_count) + " points, got " + std::to_string(n));
  if (out.points.size() + n > c.options.max_points) c.fail(f, "too many points in the line (cap " + std::to_string(c.options.max_points) + ")");
  std::size_t i = 0;
  for (element p : a) {
    float xy[2];
    numbers(c, p, item(f, std::int64_t(i)), xy, 2, 2, "[x, y]");
    const Point2 pt{xy[0] * s.sx, xy[1] * s.sy};
    if (!std::isfinite(pt.x) || !std::isfinite(pt.y)) c.fail(item(f, std::int64_t(i)), "number out of range");
    out.points.push_back(pt);
    ++i;
  }
  return static_cast<std::uint32_t>(n);
}

BoxFormat box_format(const LineContext& c, element v, const Path& f) {
  const std::string_view s = get_string(c, v, f);
  if (s == "xywh") return BoxFormat::Xywh;
  if (s == "xyxy") return BoxFormat::Xyxy;
  if (s == "cxcywh") return BoxFormat::Cxcywh;
  c.fail(f, "expected \"xywh\", \"xyxy\" or \"cxcywh\", got \"" + std::string(s.substr(0, 16)) + "\"");
}

// The keys of an object, found in one pass over its fields (a 10,000-object
// line would otherwise pay a dozen key scans per object).
constexpr int kBox = 0, kLabel = 1, kScore = 2, kClassId = 3, kTrackId = 4, kColor = 5, kKeypoints = 6,
              kSkeleton = 7, kPolygon = 8, kPolyline = 9, kBoxFormat = 10, kNormalized = 11, kObjectKeyCount = 12;

int object_key(std::string_view k) {
  switch (k.size()) {
    case 3: return k == "box" ? kBox : -1;
    case 5: return k == "label" ? kLabel : k == "score" ? kScore : k == "color" ? kColor : -1;
    case 7: return k == "polygon" ? kPolygon : -1;
    case 8: return k == "class_id" ? kClassId : k == "track_id" ? kTrackId : k == "skeleton" ? kSkeleton
                 : k == "polyline" ? kPolyline : -1;
    case 9: return k == "keypoints" ? kKeypoints : -1;
    case 10: return k == "box_format" ? kBoxFormat : k == "normalized" ? kNormalized : -1;
    default: return -1;
  }
}

struct ObjectFields {
  element value[kObjectKeyCount];
  unsigned have = 0;
  // Like field(): true and `out` set when the key is present (the first occurrence wins).
  bool get(int k, element& out) const {
    if (!(have & (1u << k))) return false;
    out = value[k];
    return true;
  }
};

// The object at `f`, its known keys found in one pass.
ObjectFields object_fields(const LineContext& c, element e, const Path& f) {
  object obj_json;
  if (e.get_object().get(obj_json) != simdjson::SUCCESS) c.fail(f, std::string("expected an object, got ") + type_name(e.type()));
  ObjectFields fields;
  for (simdjson::dom::key_value_pair kv : obj_json) {
    const int k = object_key(kv.key);
    if (k >= 0 && !(fields.have & (1u << k))) {
      fields.value[k] = kv.value;
      fields.have |= 1u << k;
    }
  }
  return fields;
}

// "box" in `format` -> obj's corners (scaled when normalized).
void parse_box(const LineContext& c, element v, const Path& bf, BoxFormat format, bool normalized,
               OverlayObject& obj) {
  float b[4];
  numbers(c, v, bf, b, 4, 4, "4 numbers");
  const Scale s = scale_for(c, normalized, bf);
  switch (format) {
    case BoxFormat::Xywh:
      if (b[2] < 0 || b[3] < 0) c.fail(bf, "negative width or height");
      obj.x0 = b[0]; obj.y0 = b[1]; obj.x1 = b[0] + b[2]; obj.y1 = b[1] + b[3];
      break;
    case BoxFormat::Xyxy:
      if (b[2] < b[0] || b[3] < b[1]) c.fail(bf, "x1 < x0 or y1 < y0 (box_format xyxy)");
      obj.x0 = b[0]; obj.y0 = b[1]; obj.x1 = b[2]; obj.y1 = b[3];
      break;
    case BoxFormat::Cxcywh:
      if (b[2] < 0 || b[3] < 0) c.fail(bf, "negative width or height");
      obj.x0 = b[0] - b[2] / 2; obj.y0 = b[1] - b[3] / 2; obj.x1 = b[0] + b[2] / 2; obj.y1 = b[1] + b[3] / 2;
      break;
  }
  obj.x0 *= s.sx; obj.x1 *= s.sx; obj.y0 *= s.sy; obj.y1 *= s.sy;
  if (!std::isfinite(obj.x0) || !std::isfinite(obj.y0) || !std::isfinite(obj.x1) || !std::isfinite(obj.y1)) {
    c.fail(bf, "number out of range");
  }
  obj.has_box = true;
}

// "keypoints": [[x, y(, conf)], ...] appended to out.keypoints (scaled when normalized).
void parse_keypoints(const LineContext& c, element v, const Path& kf, bool normalized, OverlayFrame& out,
                     OverlayObject& obj) {
  array a = get_array(c, v, kf);
  const Scale s = scale_for(c, normalized, kf);
  if (out.keypoints.size() + a.size() > c.options.max_points) c.fail(kf, "too many keypoints in the line");
  obj.keypoint_first = static_cast<std::uint32_t>(out.keypoints.size());
  std::size_t i = 0;
  for (element p : a) {
    float k[3];
    const std::size_t n = numbers(c, p, item(kf, std::int64_t(i)), k, 2, 3, "[x, y] or [x, y, conf]");
    const Keypoint kp{k[0] * s.sx, k[1] * s.sy, n == 3 ? k[2] : 1.0f};
    if (!std::isfinite(kp.x) || !std::isfinite(kp.y)) c.fail(item(kf, std::int64_t(i)), "number out of range");
    out.keypoints.push_back(kp);
    ++i;
  }
  obj.keypoint_count = static_cast<std::uint32_t>(i);
}

// "skeleton": [[i, j], ...] edges between the object's keypoints, appended to out.edges.
void parse_skeleton(const LineContext& c, element v, const Path& sf, OverlayFrame& out, OverlayObject& obj) {
  array a = get_array(c, v, sf);
  if (out.edges.size() + a.size() > c.options.max_points) c.fail(sf, "too many edges in the line");
  obj.edge_first = static_cast<std::uint32_t>(out.edges.size());
  std::size_t i = 0;
  for (element p : a) {
    const Path pf = item(sf, std::int64_t(i));
    array ij = get_array(c, p, pf);
    if (ij.size() != 2) c.fail(pf, "expected [i, j], got " + std::to_string(ij.size()) + " values");
    const std::int64_t hi = std::int64_t(obj.keypoint_count) - 1;
    if (hi < 0) c.fail(pf, "skeleton without keypoints");
    std::uint32_t idx[2];
    std::size_t k = 0;
    for (element x : ij) {
      idx[k] = static_cast<std::uint32_t>(integer(c, x, item(pf, std::int64_t(k)), 0, hi));
      ++k;
    }
    out.edges.push_back({idx[0], idx[1]});
    ++i;
  }
  obj.edge_count = static_cast<std::uint32_t>(i);
}

// The object's "polygon" and "polyline", appended to out.shapes as the
// shapes of object `index`.
void parse_object_shapes(const LineContext& c, const ObjectFields& fields, const Path& f, bool normalized,
                         std::uint32_t index, OverlayFrame& out, OverlayObject& obj) {
  obj.shape_first = static_cast<std::uint32_t>(out.shapes.size());
  element v;
  for (auto [key, id, closed, min] : {std::tuple{"polygon", kPolygon, true, 3}, std::tuple{"polyline", kPolyline, false, 2}}) {
    if (!fields.get(id, v)) continue;
    const Path pf = child(f, key);
    OverlayShape sh;
    sh.point_first = static_cast<std::uint32_t>(out.points.size());
    sh.point_count = points(c, v, pf, scale_for(c, normalized, pf), out, std::size_t(min));
    sh.closed = closed;
    sh.object = static_cast<std::int32_t>(index);
    out.shapes.push_back(sh);
    ++obj.shape_count;
  }
}

// One element of "objects", appended to out.objects (its keypoints, edges,
// shapes, points and texts to out's other arrays). The object's own
// box_format and normalized override the line's.
void parse_object(const LineContext& c, element e, const Path& f, BoxFormat line_format,
                  bool line_normalized, OverlayFrame& out) {
  const ObjectFields fields = object_fields(c, e, f);
  OverlayObject obj;
  element v;
  BoxFormat format = line_format;
  if (fields.get(kBoxFormat, v)) format = box_format(c, v, child(f, "box_format"));
  bool normalized = line_normalized;
  if (fields.get(kNormalized, v)) normalized = get_bool(c, v, child(f, "normalized"));

  if (fields.get(kBox, v)) parse_box(c, v, child(f, "box"), format, normalized, obj);
  if (fields.get(kLabel, v)) obj.label = out.add_text(get_string(c, v, child(f, "label")));
  if (fields.get(kScore, v)) obj.score = number(c, v, child(f, "score"));
  if (fields.get(kClassId, v)) obj.class_id = static_cast<std::int32_t>(integer(c, v, child(f, "class_id"), 0, INT32_MAX));
  if (fields.get(kTrackId, v)) obj.track_id = static_cast<std::int32_t>(integer(c, v, child(f, "track_id"), 0, INT32_MAX));
  if (fields.get(kColor, v)) {
    obj.color = color(c, v, child(f, "color"));
    obj.has_color = true;
  }
  if (fields.get(kKeypoints, v)) parse_keypoints(c, v, child(f, "keypoints"), normalized, out, obj);
  if (fields.get(kSkeleton, v)) parse_skeleton(c, v, child(f, "skeleton"), out, obj);
  parse_object_shapes(c, fields, f, normalized, static_cast<std::uint32_t>(out.objects.size()), out, obj);
  out.objects.push_back(obj);
}

// One element of "texts": {"text": ..., "pos": [x, y], "color": ...}.
OverlayText parse_text(const LineContext& c, element e, const Path& f, bool normalized, OverlayFrame& out) {
  object t;
  if (e.get_object().get(t) != simdjson::SUCCESS) c.fail(f, std::string("expected an object, got ") + type_name(e.type()));
  OverlayText text;
  element tv;
  if (!field(t, "text", tv)) c.fail(child(f, "text"), "missing");
  text.text = out.add_text(get_string(c, tv, child(f, "text")));
  if (field(t, "pos", tv)) {
    const Path pf = child(f, "pos");
    float xy[2];
    numbers(c, tv, pf, xy, 2, 2, "[x, y]");
    const Scale s = scale_for(c, normalized, pf);
    text.x = xy[0] * s.sx;
    text.y = xy[1] * s.sy;
    if (!std::isfinite(text.x) || !std::isfinite(text.y)) c.fail(pf, "number out of range");
  }
  if (field(t, "color", tv)) {
    text.color = color(c, tv, child(f, "color"));
    text.has_color = true;
  }
  return text;
}

// The line's own "polygons" and "polylines" (shapes of no object).
void parse_line_shapes(const LineContext& c, object o, const Path& top, bool normalized, OverlayFrame& out) {
  element v;
  for (auto [key, closed, min] : {std::tuple{"polygons", true, 3}, std::tuple{"polylines", false, 2}}) {
    if (!field(o, key, v)) continue;
    array a = get_array(c, v, child(top, key));
    std::int64_t i = 0;
    for (element e : a) {
      const Path f = child(top, key, i++);
      OverlayShape sh;
      sh.point_first = static_cast<std::uint32_t>(out.points.size());
      sh.point_count = points(c, e, f, scale_for(c, normalized, f), out, std::size_t(min));
      sh.closed = closed;
      out.shapes.push_back(sh);
    }
  }
}

}  // namespace

OverlayLineParser::OverlayLineParser(OverlayParseOptions options)
    : impl_(std::make_unique<Impl>()), options_(options) {}
OverlayLineParser::~OverlayLineParser() = default;
OverlayLineParser::OverlayLineParser(OverlayLineParser&&) noexcept = default;
OverlayLineParser& OverlayLineParser::operator=(OverlayLineParser&&) noexcept = default;

void OverlayLineParser::parse(std::string_view line, OverlayFrame& out, std::string_view file,
                              std::int64_t line_number) {
  out.clear();
  const LineContext c{file, line_number, options_};
  auto& buf = impl_->padded;
  if (buf.size() < line.size() + simdjson::SIMDJSON_PADDING) buf.resize(line.size() + simdjson::SIMDJSON_PADDING);
  std::memcpy(buf.data(), line.data(), line.size());
  std::memset(buf.data() + line.size(), 0, simdjson::SIMDJSON_PADDING);
  element root;
  const Path top{};
  if (auto err = impl_->parser.parse(buf.data(), line.size(), false).get(root); err != simdjson::SUCCESS) {
    c.fail(child(top, "json"), std::string("not valid JSON (") + simdjson::error_message(err) + ")");
  }
  object o;
  if (root.get_object().get(o) != simdjson::SUCCESS) {
    c.fail(child(top, "json"), std::string("expected an object, got ") + type_name(root.type()));
  }

  element v;
  if (!field(o, "frame", v)) c.fail(child(top, "frame"), "missing (every line needs \"frame\": <index>)");
  out.frame = integer(c, v, child(top, "frame"), 0, std::numeric_limits<std::int64_t>::max());

  BoxFormat format = BoxFormat::Xywh;
  if (field(o, "box_format", v)) format = box_format(c, v, child(top, "box_format"));
  bool normalized = false;
  if (field(o, "normalized", v)) normalized = get_bool(c, v, child(top, "normalized"));

  if (field(o, "objects", v)) {
    const Path of = child(top, "objects");
    array a = get_array(c, v, of);
    if (a.size() > options_.max_objects) {
      c.fail(of, std::to_string(a.size()) + " objects exceed the cap of " + std::to_string(options_.max_objects));
    }
    out.objects.reserve(a.size());
    std::int64_t i = 0;
    for (element e : a) parse_object(c, e, child(top, "objects", i++), format, normalized, out);
  }
  parse_line_shapes(c, o, top, normalized, out);
  if (field(o, "texts", v)) {
    array a = get_array(c, v, child(top, "texts"));
    std::int64_t i = 0;
    for (element e : a) out.texts.push_back(parse_text(c, e, child(top, "texts", i++), normalized, out));
  }
}

}  // namespace handoff::media
