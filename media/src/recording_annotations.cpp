// Overlays <-> foxglove.ImageAnnotations. What the annotation types cannot
// hold (score, class, track, which object a part belongs to, whether a colour
// was given, keypoint confidences, skeleton indices) travels in each
// annotation's metadata under "handoff.*" keys (docs/recording.md), so an
// OverlayFrame comes back as it was written; annotations from other writers
// are mapped onto the overlay model as decode_annotations() says.
#include <handoff/error.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/media/utf8.hpp>

#include <foxglove/ImageAnnotations.pb.h>
#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <map>
#include <numbers>
#include <optional>

namespace handoff::media {
namespace {

using foxglove::PointsAnnotation;
using foxglove::TextAnnotation;

constexpr double kFontSize = 14.0;    // text height written for labels and texts
constexpr double kLineWidth = 2.0;    // box, shape and skeleton lines
constexpr double kPointSize = 4.0;    // keypoints
constexpr int kCircleSides = 32;      // circles become polygons with this many corners

constexpr const char* kKind = "handoff.kind";
constexpr const char* kObject = "handoff.object";
constexpr const char* kScore = "handoff.score";
constexpr const char* kClass = "handoff.class_id";
constexpr const char* kTrack = "handoff.track_id";
constexpr const char* kColor = "handoff.color";  // "explicit": the colour was given, not derived
constexpr const char* kConfidences = "handoff.confidences";
constexpr const char* kEdges = "handoff.edges";

// --- Writing ------------------------------------------------------------------------

std::string number(float v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest form that reads back to the same float
  return std::string(buf, r.ptr);
}

template <typename A>
void add_meta(A* a, std::string_view key, std::string_view value) {
  auto* kv = a->add_metadata();
  kv->set_key(std::string(key));
  kv->set_value(std::string(value));
}

void set_time(google::protobuf::Timestamp* t, std::uint64_t ns) {
  t->set_seconds(std::int64_t(ns / 1'000'000'000u));
  t->set_nanos(std::int32_t(ns % 1'000'000'000u));
}

void set_color(foxglove::Color* c, Color8 v) {
  c->set_r(v.r / 255.0);
  c->set_g(v.g / 255.0);
  c->set_b(v.b / 255.0);
  c->set_a(v.a / 255.0);
}

PointsAnnotation* add_points(foxglove::ImageAnnotations& msg, PointsAnnotation::Type type, Color8 color,
                             std::uint64_t ts, double thickness = kLineWidth) {
  PointsAnnotation* a = msg.add_points();
  set_time(a->mutable_timestamp(), ts);
  a->set_type(type);
  set_color(a->mutable_outline_color(), color);
  a->set_thickness(thickness);
  return a;
}

void add_point(PointsAnnotation* a, float x, float y) {
  auto* p = a->add_points();
  p->set_x(x);
  p->set_y(y);
}

// `baseline`: Foxglove places text by its bottom-left corner.
TextAnnotation* add_text(foxglove::ImageAnnotations& msg, std::string_view text, float x, double baseline, Color8 color,
                         std::uint64_t ts) {
  TextAnnotation* t = msg.add_texts();
  set_time(t->mutable_timestamp(), ts);
  auto* p = t->mutable_position();
  p->set_x(x);
  p->set_y(baseline);
  t->set_text(valid_utf8(text));  // a proto3 string: invalid UTF-8 would make the message unreadable
  t->set_font_size(kFontSize);
  set_color(t->mutable_text_color(), color);
  set_color(t->mutable_background_color(), Color8{0, 0, 0, 160});
  return t;
}

template <typename T>
void check_range(std::size_t first, std::size_t count, const std::vector<T>& v, const char* what, std::size_t object) {
  if (first > v.size() || count > v.size() - first) {
    throw UsageError("OverlayFrame: objects[" + std::to_string(object) + "]." + what + " range is past the arrays");
  }
}

PointsAnnotation* encode_shape(const OverlayFrame& f, const OverlayShape& s, Color8 color, std::uint64_t ts,
                               foxglove::ImageAnnotations& msg) {
  if (s.point_first > f.points.size() || s.point_count > f.points.size() - s.point_first) {
    throw UsageError("OverlayFrame: a shape's points are past the arrays");
  }
  PointsAnnotation* a = add_points(msg, s.closed ? PointsAnnotation::LINE_LOOP : PointsAnnotation::LINE_STRIP, color, ts);
  for (std::uint32_t k = 0; k < s.point_count; ++k) add_point(a, f.points[s.point_first + k].x, f.points[s.point_first + k].y);
  return a;
}

PointsAnnotation* encode_keypoints(const Keypoint* kp, std::uint32_t n, Color8 color, std::uint64_t ts,
                                   foxglove::ImageAnnotations& msg) {
  PointsAnnotation* a = add_points(msg, PointsAnnotation::POINTS, color, ts, kPointSize);
  std::string conf;
  bool all_one = true;
  for (std::uint32_t k = 0; k < n; ++k) {
    add_point(a, kp[k].x, kp[k].y);
    if (k) conf += ' ';
    conf += number(kp[k].conf);
    all_one = all_one && kp[k].conf == 1.0f;
  }
  if (!all_one) add_meta(a, kConfidences, conf);
  return a;
}

PointsAnnotation* encode_skeleton(const OverlayFrame& f, const OverlayObject& o, Color8 color, std::uint64_t ts,
                                  foxglove::ImageAnnotations& msg) {
  const Keypoint* kp = f.keypoints.data() + o.keypoint_first;
  PointsAnnotation* a = add_points(msg, PointsAnnotation::LINE_LIST, color, ts);
  std::string edges;
  for (std::uint32_t k = 0; k < o.edge_count; ++k) {
    const auto [p, q] = f.edges[o.edge_first + k];
    if (p >= o.keypoint_count || q >= o.keypoint_count) throw UsageError("OverlayFrame: a skeleton edge names no keypoint");
    add_point(a, kp[p].x, kp[p].y);
    add_point(a, kp[q].x, kp[q].y);
    if (k) edges += ' ';
    edges += std::to_string(p);
    edges += '-';
    edges += std::to_string(q);
  }
  add_meta(a, kEdges, edges);
  return a;
}

// Writes object `i`'s annotations; its properties go on the first one.
void encode_object(const OverlayFrame& f, std::uint32_t i, std::uint64_t ts, foxglove::ImageAnnotations& msg) {
  const OverlayObject& o = f.objects[i];
  check_range(o.keypoint_first, o.keypoint_count, f.keypoints, "keypoints", i);
  check_range(o.edge_first, o.edge_count, f.edges, "edges", i);
  check_range(o.shape_first, o.shape_count, f.shapes, "shapes", i);
  const Color8 color = object_color(o);
  const std::string index = std::to_string(i);
  bool first = true;
  auto tag = [&](PointsAnnotation* a, const char* kind) {
    add_meta(a, kKind, kind);
    add_meta(a, kObject, index);
    if (!first) return;
    first = false;
    if (o.has_score()) add_meta(a, kScore, number(o.score));
    if (o.class_id >= 0) add_meta(a, kClass, std::to_string(o.class_id));
    if (o.track_id >= 0) add_meta(a, kTrack, std::to_string(o.track_id));
    if (o.has_color) add_meta(a, kColor, "explicit");
  };
  if (o.has_box) {
    PointsAnnotation* a = add_points(msg, PointsAnnotation::LINE_LOOP, color, ts);
    add_point(a, o.x0, o.y0);
    add_point(a, o.x1, o.y0);
    add_point(a, o.x1, o.y1);
    add_point(a, o.x0, o.y1);
    tag(a, "box");
  }
  const Keypoint* kp = f.keypoints.data() + o.keypoint_first;
  if (o.keypoint_count > 0) tag(encode_keypoints(kp, o.keypoint_count, color, ts, msg), "keypoints");
  if (o.edge_count > 0) tag(encode_skeleton(f, o, color, ts, msg), "skeleton");
  for (std::uint32_t k = 0; k < o.shape_count; ++k) {
    const OverlayShape& shape = f.shapes[o.shape_first + k];
    tag(encode_shape(f, shape, color, ts, msg), shape.closed ? "polygon" : "polyline");
  }
  if (first) tag(add_points(msg, PointsAnnotation::POINTS, color, ts, kPointSize), "object");  // only properties
  if (!o.label.empty()) {
    // On the box's top edge, else above the first keypoint, else at the origin.
    const float x = o.has_box ? o.x0 : o.keypoint_count ? kp[0].x : 0.0f;
    const double y = o.has_box ? o.y0 : o.keypoint_count ? kp[0].y : kFontSize;
    TextAnnotation* t = add_text(msg, f.text(o.label), x, y, color, ts);
    add_meta(t, kKind, "label");
    add_meta(t, kObject, index);
  }
}

}  // namespace

void encode_annotations(const OverlayFrame& f, std::uint64_t timestamp_ns, std::string& out) {
  foxglove::ImageAnnotations msg;
  set_time(msg.mutable_timestamp(), timestamp_ns);
  for (std::uint32_t i = 0; i < f.objects.size(); ++i) encode_object(f, i, timestamp_ns, msg);
  for (const OverlayShape& s : f.shapes) {
    if (s.object >= 0) continue;  // written with its object
    add_meta(encode_shape(f, s, Color8{}, timestamp_ns, msg), kKind, s.closed ? "polygon" : "polyline");
  }
  for (const OverlayText& t : f.texts) {
    TextAnnotation* a =
        add_text(msg, f.text(t.text), t.x, double(t.y) + kFontSize, t.has_color ? t.color : Color8{}, timestamp_ns);
    add_meta(a, kKind, "text");
    if (t.has_color) add_meta(a, kColor, "explicit");
  }
  out.clear();
  if (!msg.SerializeToString(&out)) throw Error("encode_annotations: protobuf serialization failed");
}

// --- Reading ------------------------------------------------------------------------

namespace {

// One object as decoded, before it is laid out in the frame's flat arrays.
struct Parts {
  bool has_box = false;
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool has_color = false;
  Color8 color{};
  float score = NAN;
  std::int32_t class_id = -1, track_id = -1;
  bool has_label = false;
  std::string label;
  std::vector<Keypoint> keypoints;
  std::vector<std::array<std::uint32_t, 2>> edges;
  std::vector<std::pair<bool, std::vector<Point2>>> shapes;  // (closed, points)
};

template <typename A>
std::string_view meta(const A& a, std::string_view key) {
  for (const auto& kv : a.metadata()) {
    if (kv.key() == key) return kv.value();
  }
  return {};
}

template <typename T>
std::optional<T> parse_number(std::string_view s) {
  T v{};
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

Color8 color8(const foxglove::Color& c) {
  auto q = [](double v) {
    return std::uint8_t(std::isfinite(v) ? std::lround(std::clamp(v, 0.0, 1.0) * 255.0) : 255);
  };
  return {q(c.r()), q(c.g()), q(c.b()), q(c.a())};
}

// "a b c" -> floats; std::nullopt unless it holds exactly n finite numbers.
std::optional<std::vector<float>> parse_floats(std::string_view s, std::size_t n) {
  std::vector<float> out;
  while (!s.empty()) {
    const std::size_t sp = s.find(' ');
    const auto v = parse_number<float>(s.substr(0, sp));
    if (!v || !std::isfinite(*v)) return std::nullopt;
    out.push_back(*v);
    s = sp == std::string_view::npos ? std::string_view{} : s.substr(sp + 1);
  }
  if (out.size() != n) return std::nullopt;
  return out;
}

// "0-1 1-2" -> edges.
std::vector<std::array<std::uint32_t, 2>> parse_edges(std::string_view s) {
  std::vector<std::array<std::uint32_t, 2>> out;
  while (!s.empty()) {
    const std::size_t sp = s.find(' ');
    const std::string_view e = s.substr(0, sp);
    const std::size_t dash = e.find('-');
    if (dash != std::string_view::npos) {
      const auto a = parse_number<std::uint32_t>(e.substr(0, dash));
      const auto b = parse_number<std::uint32_t>(e.substr(dash + 1));
      if (a && b) out.push_back({*a, *b});
    }
    s = sp == std::string_view::npos ? std::string_view{} : s.substr(sp + 1);
  }
  return out;
}

bool finite_points(const PointsAnnotation& a, std::vector<Point2>& out) {
  out.clear();
  for (const auto& p : a.points()) {
    if (!std::isfinite(p.x()) || !std::isfinite(p.y())) return false;
    out.push_back({float(p.x()), float(p.y())});
  }
  return true;
}

// Four corners of an axis-aligned rectangle, in loop order.
bool is_box(const std::vector<Point2>& p) {
  if (p.size() != 4) return false;
  for (int i = 0; i < 4; ++i) {
    const Point2& a = p[i];
    const Point2& b = p[(i + 1) % 4];
    if ((a.x == b.x) == (a.y == b.y)) return false;  // each side moves along exactly one axis
  }
  return p[0].x != p[2].x && p[0].y != p[2].y;
}

void set_box(Parts& o, const std::vector<Point2>& p) {
  o.has_box = true;
  o.x0 = o.x1 = p[0].x;
  o.y0 = o.y1 = p[0].y;
  for (const Point2& q : p) {
    o.x0 = std::min(o.x0, q.x);
    o.x1 = std::max(o.x1, q.x);
    o.y0 = std::min(o.y0, q.y);
    o.y1 = std::max(o.y1, q.y);
  }
}

class Decoder {
 public:
  explicit Decoder(OverlayFrame& out) : out_(out) {}
  void points(const PointsAnnotation& a);
  void circle(const foxglove::CircleAnnotation& c);
  void text(const TextAnnotation& t);
  void finish();

 private:
  void tagged_points(Parts& o, std::string_view kind, const PointsAnnotation& a);
  void foreign_points(const PointsAnnotation& a);
  void emit(const Parts& o);

  OverlayFrame& out_;
  std::map<std::uint32_t, Parts> tagged_;  // handoff's objects, by their index
  std::vector<Parts> foreign_;             // objects made from other writers' annotations
  std::vector<std::pair<bool, std::vector<Point2>>> free_shapes_;
  std::vector<Point2> pts_;
};

void Decoder::points(const PointsAnnotation& a) {
  if (!finite_points(a, pts_)) return;  // nothing sensible to draw
  const std::string_view kind = meta(a, kKind);
  const auto object = parse_number<std::uint32_t>(meta(a, kObject));
  if (!kind.empty() && object) {
    Parts& o = tagged_[*object];
    if (auto v = parse_number<float>(meta(a, kScore))) o.score = *v;
    if (auto v = parse_number<std::int32_t>(meta(a, kClass)); v && *v >= 0) o.class_id = *v;
    if (auto v = parse_number<std::int32_t>(meta(a, kTrack)); v && *v >= 0) o.track_id = *v;
    if (meta(a, kColor) == "explicit") {
      o.has_color = true;
      o.color = color8(a.outline_color());
    }
    return tagged_points(o, kind, a);
  }
  if ((kind == "polygon" || kind == "polyline") && pts_.size() >= 2) {
    free_shapes_.emplace_back(kind == "polygon", pts_);
    return;
  }
  foreign_points(a);
}

void Decoder::tagged_points(Parts& o, std::string_view kind, const PointsAnnotation& a) {
  if (kind == "box" && pts_.size() == 4) {
    set_box(o, pts_);
  } else if (kind == "keypoints") {
    const auto conf = parse_floats(meta(a, kConfidences), pts_.size());
    o.keypoints.clear();
    for (std::size_t k = 0; k < pts_.size(); ++k) o.keypoints.push_back({pts_[k].x, pts_[k].y, conf ? (*conf)[k] : 1.0f});
  } else if (kind == "skeleton") {
    o.edges = parse_edges(meta(a, kEdges));
  } else if ((kind == "polygon" || kind == "polyline") && pts_.size() >= 2) {
    o.shapes.emplace_back(kind == "polygon", pts_);
  }
}

void Decoder::foreign_points(const PointsAnnotation& a) {
  Parts o;
  if (a.has_outline_color()) {
    o.has_color = true;
    o.color = color8(a.outline_color());
  }
  switch (a.type()) {
    case PointsAnnotation::LINE_LOOP:
      if (is_box(pts_)) {
        set_box(o, pts_);
        foreign_.push_back(std::move(o));
      } else if (pts_.size() >= 2) {
        free_shapes_.emplace_back(pts_.size() >= 3, pts_);
      }
      return;
    case PointsAnnotation::LINE_STRIP:
      if (pts_.size() >= 2) free_shapes_.emplace_back(false, pts_);
      return;
    case PointsAnnotation::POINTS:
    case PointsAnnotation::LINE_LIST:
      if (pts_.empty()) return;
      for (const Point2& p : pts_) o.keypoints.push_back({p.x, p.y, 1.0f});
      if (a.type() == PointsAnnotation::LINE_LIST) {
        for (std::uint32_t k = 0; k + 1 < pts_.size(); k += 2) o.edges.push_back({k, k + 1});
      }
      foreign_.push_back(std::move(o));
      return;
    default: return;  // UNKNOWN: nothing to draw
  }
}

void Decoder::circle(const foxglove::CircleAnnotation& c) {
  const double r = c.diameter() / 2;
  if (!std::isfinite(c.position().x()) || !std::isfinite(c.position().y()) || !std::isfinite(r) || r <= 0) return;
  std::vector<Point2> ring;
  for (int k = 0; k < kCircleSides; ++k) {
    const double a = 2 * std::numbers::pi * k / kCircleSides;
    ring.push_back({float(c.position().x() + r * std::cos(a)), float(c.position().y() + r * std::sin(a))});
  }
  free_shapes_.emplace_back(true, std::move(ring));
}

void Decoder::text(const TextAnnotation& t) {
  const double size = t.font_size() > 0 ? t.font_size() : kFontSize;
  const double x = t.position().x(), top = t.position().y() - size;
  if (!std::isfinite(x) || !std::isfinite(top)) return;
  const auto object = parse_number<std::uint32_t>(meta(t, kObject));
  if (meta(t, kKind) == "label" && object) {
    Parts& o = tagged_[*object];
    o.has_label = true;
    o.label = t.text();
    return;
  }
  OverlayText text;
  text.x = float(x);
  text.y = float(top);
  text.text = out_.add_text(t.text());
  const std::string_view kind = meta(t, kKind);
  text.has_color = kind == "text" ? meta(t, kColor) == "explicit" : t.has_text_color();
  if (text.has_color) text.color = color8(t.text_color());
  out_.texts.push_back(text);
}

void Decoder::emit(const Parts& p) {
  OverlayObject o;
  o.has_box = p.has_box;
  o.x0 = p.x0;
  o.y0 = p.y0;
  o.x1 = p.x1;
  o.y1 = p.y1;
  o.has_color = p.has_color;
  o.color = p.color;
  o.score = p.score;
  o.class_id = p.class_id;
  o.track_id = p.track_id;
  if (p.has_label) o.label = out_.add_text(p.label);
  const auto index = std::int32_t(out_.objects.size());
  o.keypoint_first = std::uint32_t(out_.keypoints.size());
  o.keypoint_count = std::uint32_t(p.keypoints.size());
  out_.keypoints.insert(out_.keypoints.end(), p.keypoints.begin(), p.keypoints.end());
  o.edge_first = std::uint32_t(out_.edges.size());
  for (const auto& e : p.edges) {
    if (e[0] < o.keypoint_count && e[1] < o.keypoint_count) out_.edges.push_back(e);
  }
  o.edge_count = std::uint32_t(out_.edges.size() - o.edge_first);
  o.shape_first = std::uint32_t(out_.shapes.size());
  for (const auto& [closed, pts] : p.shapes) {
    out_.shapes.push_back({std::uint32_t(out_.points.size()), std::uint32_t(pts.size()), closed, index});
    out_.points.insert(out_.points.end(), pts.begin(), pts.end());
  }
  o.shape_count = std::uint32_t(out_.shapes.size() - o.shape_first);
  out_.objects.push_back(o);
}

void Decoder::finish() {
  for (const auto& [index, parts] : tagged_) emit(parts);
  for (const Parts& parts : foreign_) emit(parts);
  for (const auto& [closed, pts] : free_shapes_) {
    out_.shapes.push_back({std::uint32_t(out_.points.size()), std::uint32_t(pts.size()), closed, -1});
    out_.points.insert(out_.points.end(), pts.begin(), pts.end());
  }
}

}  // namespace

namespace {

void parse_annotations(std::span<const std::uint8_t> bytes, const MessagePlace& where, foxglove::ImageAnnotations& msg) {
  // Bad bytes are reported by the ParseError below; libprotobuf's own log lines are not wanted.
  const google::protobuf::LogSilencer quiet;
  if (bytes.size() > std::size_t(INT_MAX) || !msg.ParseFromArray(bytes.data(), int(bytes.size()))) {
    throw ParseError(std::string(where.file), where.location(), "ImageAnnotations",
                     "not a valid foxglove.ImageAnnotations message (" + std::to_string(bytes.size()) + " bytes)");
  }
}

// As parse_raw_image reads RawImage.timestamp.
std::uint64_t nanoseconds(const google::protobuf::Timestamp& t) {
  return std::uint64_t(t.seconds()) * 1'000'000'000u + std::uint64_t(std::int64_t(t.nanos()));
}

}  // namespace

void decode_annotations(std::span<const std::uint8_t> bytes, OverlayFrame& out, const MessagePlace& where) {
  foxglove::ImageAnnotations msg;
  parse_annotations(bytes, where, msg);
  const std::int64_t frame = out.frame;
  out.clear();
  out.frame = frame;
  Decoder d(out);
  for (const auto& a : msg.points()) d.points(a);
  for (const auto& c : msg.circles()) d.circle(c);
  for (const auto& t : msg.texts()) d.text(t);
  d.finish();
}

std::optional<std::uint64_t> annotations_timestamp(std::span<const std::uint8_t> bytes, const MessagePlace& where) {
  foxglove::ImageAnnotations msg;
  parse_annotations(bytes, where, msg);
  if (msg.has_timestamp()) return nanoseconds(msg.timestamp());
  for (const auto& c : msg.circles())
    if (c.has_timestamp()) return nanoseconds(c.timestamp());
  for (const auto& p : msg.points())
    if (p.has_timestamp()) return nanoseconds(p.timestamp());
  for (const auto& t : msg.texts())
    if (t.has_timestamp()) return nanoseconds(t.timestamp());
  return std::nullopt;
}

}  // namespace handoff::media
