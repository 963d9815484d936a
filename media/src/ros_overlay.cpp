// vision_msgs/msg/Detection2DArray and foxglove_msgs/msg/ImageAnnotations
// (CDR) -> overlays. ImageAnnotations are copied into a foxglove.ImageAnnotations
// protobuf message and read by decode_annotations(), so both spellings of the
// message map onto the overlay model the same way.
#include "ros_overlay.hpp"

#include <handoff/log.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/media/utf8.hpp>

#include <foxglove/ImageAnnotations.pb.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace handoff::media::ros {
namespace {

std::optional<CdrValue> field(const CdrValue& s, std::string_view name) {
  try {
    return s.at(name);
  } catch (const ParseError&) {  // the definition has no such field (an older layout)
    return std::nullopt;
  }
}

[[noreturn]] void fail(const CdrMessage& m, const std::string& path, const std::string& detail) {
  throw ParseError(m.place().file, m.place().location, m.type_name() + "." + path, detail);
}

double finite(const CdrMessage& m, const CdrValue& v, bool non_negative) {
  const double d = v.as_double();
  if (std::isnan(d)) fail(m, v.path(), "is NaN");
  if (!std::isfinite(d)) fail(m, v.path(), "is infinite");
  if (non_negative && d < 0) fail(m, v.path(), std::to_string(d) + " is negative");
  return d;
}

std::optional<std::int32_t> small_int(std::string_view s) {
  std::int32_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

std::uint64_t stamp_ns(const CdrValue& t) {
  // Wraps for negative seconds as the image's stamp does (ros_image.cpp).
  return std::uint64_t(t.at("sec").as_int()) * 1'000'000'000u + t.at("nanosec").as_uint();
}

// The best hypothesis: highest score. vision_msgs 4 (Humble on) nests it as
// results[i].hypothesis.{class_id,score}; vision_msgs 3 has results[i].{id,score}.
void best_hypothesis(const CdrMessage& m, const CdrValue& results, OverlayObject& o, std::string& label) {
  double best = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < results.size(); ++k) {
    const CdrValue r = results[k];
    const CdrValue h = field(r, "hypothesis").value_or(r);
    const std::optional<CdrValue> id = field(h, "class_id") ? field(h, "class_id") : field(h, "id");
    const double score = finite(m, h.at("score"), false);
    if (k > 0 && !(score > best)) continue;
    best = score;
    o.score = float(score);
    label = id ? std::string(id->as_string()) : std::string();
  }
  if (const auto n = small_int(label)) o.class_id = *n;  // numeric class ids colour by class
}

void append_detection(const CdrMessage& m, const CdrValue& d, OverlayFrame& out) {
  const CdrValue box = d.at("bbox");
  const CdrValue center = box.at("center");
  const std::optional<CdrValue> position = field(center, "position");  // vision_msgs 4; 3: center.x/y
  const double cx = finite(m, (position ? *position : center).at("x"), false);
  const double cy = finite(m, (position ? *position : center).at("y"), false);
  const double theta = finite(m, center.at("theta"), false);
  const double w = finite(m, box.at("size_x"), true), h = finite(m, box.at("size_y"), true);
  OverlayObject o;
  std::string label;
  best_hypothesis(m, d.at("results"), o, label);
  if (const auto id = field(d, "id")) {
    const std::string_view track = id->as_string();
    if (const auto n = small_int(track)) o.track_id = *n;
    else if (!track.empty()) label += (label.empty() ? "#" : " #") + std::string(track);
  }
  if (!label.empty()) o.label = out.add_text(label);
  const auto index = std::int32_t(out.objects.size());
  if (theta == 0.0) {
    o.has_box = true;
    o.x0 = float(cx - w / 2), o.x1 = float(cx + w / 2), o.y0 = float(cy - h / 2), o.y1 = float(cy + h / 2);
  } else {  // a rotated box: its four corners as the object's polygon
    const double c = std::cos(theta), s = std::sin(theta);
    o.shape_first = std::uint32_t(out.shapes.size());
    o.shape_count = 1;
    out.shapes.push_back({std::uint32_t(out.points.size()), 4, true, index});
    for (const auto& [u, v] : {std::pair{-1, -1}, {1, -1}, {1, 1}, {-1, 1}}) {
      const double dx = u * w / 2, dy = v * h / 2;
      out.points.push_back({float(cx + dx * c - dy * s), float(cy + dx * s + dy * c)});
    }
  }
  out.objects.push_back(o);
}

void copy_color(const CdrValue& c, foxglove::Color* to) {
  to->set_r(c.at("r").as_double());
  to->set_g(c.at("g").as_double());
  to->set_b(c.at("b").as_double());
  to->set_a(c.at("a").as_double());
}

void copy_time(const CdrValue& t, google::protobuf::Timestamp* to) {
  to->set_seconds(t.at("sec").as_int());
  to->set_nanos(std::int32_t(t.at("nanosec").as_uint() % 1'000'000'000u));
}

void copy_point(const CdrValue& p, foxglove::Point2* to) {
  to->set_x(p.at("x").as_double());
  to->set_y(p.at("y").as_double());
}

foxglove::ImageAnnotations to_protobuf(const CdrMessage& m) {
  foxglove::ImageAnnotations msg;
  const CdrValue circles = m.at("circles"), points = m.at("points"), texts = m.at("texts");
  for (std::size_t i = 0; i < circles.size(); ++i) {
    const CdrValue c = circles[i];
    auto* a = msg.add_circles();
    copy_time(c.at("timestamp"), a->mutable_timestamp());
    copy_point(c.at("position"), a->mutable_position());
    a->set_diameter(c.at("diameter").as_double());
    a->set_thickness(c.at("thickness").as_double());
    copy_color(c.at("fill_color"), a->mutable_fill_color());
    copy_color(c.at("outline_color"), a->mutable_outline_color());
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const CdrValue p = points[i];
    auto* a = msg.add_points();
    copy_time(p.at("timestamp"), a->mutable_timestamp());
    const std::uint64_t type = p.at("type").as_uint();
    a->set_type(foxglove::PointsAnnotation::Type_IsValid(int(type)) ? foxglove::PointsAnnotation::Type(type)
                                                                     : foxglove::PointsAnnotation::UNKNOWN);
    const CdrValue pts = p.at("points");
    for (std::size_t k = 0; k < pts.size(); ++k) copy_point(pts[k], a->add_points());
    copy_color(p.at("outline_color"), a->mutable_outline_color());
    copy_color(p.at("fill_color"), a->mutable_fill_color());
    a->set_thickness(p.at("thickness").as_double());
  }
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const CdrValue t = texts[i];
    auto* a = msg.add_texts();
    copy_time(t.at("timestamp"), a->mutable_timestamp());
    copy_point(t.at("position"), a->mutable_position());
    a->set_text(valid_utf8(t.at("text").as_string()));  // ROS strings are bytes nobody checked
    a->set_font_size(t.at("font_size").as_double());
    copy_color(t.at("text_color"), a->mutable_text_color());
    copy_color(t.at("background_color"), a->mutable_background_color());
  }
  return msg;
}

// Appends `src` to `dst`, moving its indices past what `dst` holds.
void append_frame(const OverlayFrame& src, OverlayFrame& dst) {
  const auto objects = std::uint32_t(dst.objects.size()), keypoints = std::uint32_t(dst.keypoints.size());
  const auto edges = std::uint32_t(dst.edges.size()), shapes = std::uint32_t(dst.shapes.size());
  const auto points = std::uint32_t(dst.points.size());
  auto text = [&](TextRef r) { return r.empty() ? TextRef{} : dst.add_text(src.text(r)); };
  for (OverlayObject o : src.objects) {
    o.keypoint_first += keypoints;
    o.edge_first += edges;
    o.shape_first += shapes;
    o.label = text(o.label);
    dst.objects.push_back(o);
  }
  dst.keypoints.insert(dst.keypoints.end(), src.keypoints.begin(), src.keypoints.end());
  dst.edges.insert(dst.edges.end(), src.edges.begin(), src.edges.end());
  for (OverlayShape s : src.shapes) {
    s.point_first += points;
    if (s.object >= 0) s.object += std::int32_t(objects);
    dst.shapes.push_back(s);
  }
  dst.points.insert(dst.points.end(), src.points.begin(), src.points.end());
  for (OverlayText t : src.texts) {
    t.text = text(t.text);
    dst.texts.push_back(t);
  }
}

}  // namespace

bool is_overlay_type(std::string_view type_name) {
  const std::string t = normalize_type_name(type_name);
  return t == kDetectionsType || t == kRosAnnotationsType;
}

std::string parent_namespace(std::string_view topic) {
  const auto slash = topic.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return "/";
  return std::string(topic.substr(0, slash));
}

std::string image_namespace(std::string_view image_topic) {
  constexpr std::string_view kCompressed = "/compressed";
  if (image_topic.size() > kCompressed.size() && image_topic.ends_with(kCompressed))
    image_topic.remove_suffix(kCompressed.size());
  return parent_namespace(image_topic);
}

std::optional<std::uint64_t> overlay_stamp(const CdrMessage& m) {
  if (normalize_type_name(m.type_name()) == kDetectionsType) return stamp_ns(m.at("header.stamp"));
  // As the protobuf path keys foxglove.ImageAnnotations (annotations_timestamp): circles, points, then texts.
  for (const char* list : {"circles", "points", "texts"}) {
    const CdrValue v = m.at(list);
    if (v.size() > 0) return stamp_ns(v[0].at("timestamp"));
  }
  return std::nullopt;
}

void append_overlays(const CdrMessage& m, OverlayFrame& out) {
  if (normalize_type_name(m.type_name()) == kDetectionsType) {
    OverlayFrame added;  // complete before anything reaches `out`
    const CdrValue detections = m.at("detections");
    for (std::size_t i = 0; i < detections.size(); ++i) append_detection(m, detections[i], added);
    append_frame(added, out);
    return;
  }
  std::string bytes;
  to_protobuf(m).SerializeToString(&bytes);
  OverlayFrame added;
  const std::span<const std::uint8_t> view(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  decode_annotations(view, added, {m.place().file, [&] { return m.place().location; }});
  append_frame(added, out);
}

OverlayTopic::OverlayTopic(std::string file, std::string topic, std::shared_ptr<const MessageDefinition> definition,
                           std::vector<std::uint64_t> log_times, Read read)
    : file_(std::move(file)), topic_(std::move(topic)), definition_(std::move(definition)),
      log_times_(std::move(log_times)), read_(std::move(read)), keys_(log_times_.size()) {}

CdrMessage OverlayTopic::decode(std::size_t k, const std::vector<std::uint8_t>& bytes) const {
  return CdrMessage::decode(definition_, bytes, {file_, "overlay topic \"" + topic_ + "\" message " + std::to_string(k)});
}

std::optional<std::uint64_t> OverlayTopic::key(std::size_t k) const {
  auto& cached = keys_[k];
  if (!cached) {
    try {
      const std::vector<std::uint8_t> bytes = read_(k);
      cached = overlay_stamp(decode(k, bytes)).value_or(log_times_[k]);
    } catch (const Error& e) {  // ParseError: this message is left out
      warn(e.what());
      cached = std::optional<std::uint64_t>();
    }
  }
  return *cached;
}

void OverlayTopic::warn(const std::string& what) const {
  if (warned_.insert(what).second) log(LogLevel::Warning, "recording: overlay message left out: " + what);
}

void OverlayTopic::add(std::uint64_t t, std::uint64_t key_ns, std::uint64_t window, OverlayFrame& out) const {
  const std::uint64_t lo = t - std::min(t, window);
  const std::uint64_t hi = t + std::min(window, std::numeric_limits<std::uint64_t>::max() - t);
  const auto first = std::size_t(std::lower_bound(log_times_.begin(), log_times_.end(), lo) - log_times_.begin());
  const auto last = std::size_t(std::upper_bound(log_times_.begin(), log_times_.end(), hi) - log_times_.begin());
  std::size_t right = std::size_t(std::lower_bound(log_times_.begin() + first, log_times_.begin() + last, t) - log_times_.begin());
  std::size_t left = right;
  while (left != first || right != last) {  // nearest in log time first
    const bool go_right = right != last && (left == first || log_times_[right] - t <= t - log_times_[left - 1]);
    const std::size_t k = go_right ? right++ : --left;
    if (key(k) != key_ns) continue;
    try {
      const std::vector<std::uint8_t> bytes = read_(k);
      append_overlays(decode(k, bytes), out);
    } catch (const Error& e) {
      warn(e.what());
    }
    return;
  }
}

}  // namespace handoff::media::ros
