// The overlay model, the store, colours, filters and label placement
// (parsing is in overlay_parser.cpp).
#include <handoff/error.hpp>
#include <handoff/log.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/overlay.hpp>

#include "byte_reader.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace handoff::media {

void OverlayFrame::clear() {
  frame = -1;
  objects.clear();
  keypoints.clear();
  edges.clear();
  shapes.clear();
  points.clear();
  texts.clear();
  text_pool.clear();
  layers.clear();
}

TextRef OverlayFrame::add_text(std::string_view s) {
  if (s.size() > 0xFFFFFFFFu || text_pool.size() > 0xFFFFFFFFu - s.size()) {
    throw UsageError("OverlayFrame: text pool over 4 GiB");
  }
  TextRef r{static_cast<std::uint32_t>(text_pool.size()), static_cast<std::uint32_t>(s.size())};
  text_pool.append(s);
  return r;
}

std::uint32_t OverlayFrame::add_box(float x0, float y0, float x1, float y1, std::string_view label, float score,
                                    std::int32_t class_id, std::int32_t track_id) {
  OverlayObject o;
  o.x0 = std::min(x0, x1);
  o.x1 = std::max(x0, x1);
  o.y0 = std::min(y0, y1);
  o.y1 = std::max(y0, y1);
  o.has_box = true;
  o.score = score;
  o.class_id = class_id;
  o.track_id = track_id;
  if (!label.empty()) o.label = add_text(label);
  objects.push_back(o);
  return static_cast<std::uint32_t>(objects.size() - 1);
}

void OverlayFrame::set_keypoints(std::uint32_t object, const Keypoint* kps, std::uint32_t count,
                                 const std::array<std::uint32_t, 2>* edge_list, std::uint32_t edge_count) {
  if (object >= objects.size()) throw UsageError("OverlayFrame::set_keypoints: no object " + std::to_string(object));
  for (std::uint32_t i = 0; i < edge_count; ++i) {
    if (edge_list[i][0] >= count || edge_list[i][1] >= count) {
      throw UsageError("OverlayFrame::set_keypoints: edge " + std::to_string(i) + " names a keypoint >= " +
                       std::to_string(count));
    }
  }
  OverlayObject& o = objects[object];
  o.keypoint_first = static_cast<std::uint32_t>(keypoints.size());
  o.keypoint_count = count;
  keypoints.insert(keypoints.end(), kps, kps + count);
  o.edge_first = static_cast<std::uint32_t>(edges.size());
  o.edge_count = edge_count;
  edges.insert(edges.end(), edge_list, edge_list + edge_count);
}

void OverlayFrame::add_shape(const Point2* pts, std::uint32_t count, bool closed, std::int32_t object) {
  if (object >= 0 && static_cast<std::size_t>(object) >= objects.size()) {
    throw UsageError("OverlayFrame::add_shape: no object " + std::to_string(object));
  }
  OverlayShape s;
  s.point_first = static_cast<std::uint32_t>(points.size());
  s.point_count = count;
  s.closed = closed;
  s.object = object;
  points.insert(points.end(), pts, pts + count);
  if (object >= 0) {
    OverlayObject& o = objects[static_cast<std::size_t>(object)];
    if (o.shape_count == 0) o.shape_first = static_cast<std::uint32_t>(shapes.size());
    else if (o.shape_first + o.shape_count != shapes.size()) {
      throw UsageError("OverlayFrame::add_shape: an object's shapes must be added one after another");
    }
    ++o.shape_count;
  }
  shapes.push_back(s);
}

void OverlayFrame::add_label_text(float x, float y, std::string_view s) {
  OverlayText t;
  t.x = x;
  t.y = y;
  t.text = add_text(s);
  texts.push_back(t);
}

// --- OverlayStore --------------------------------------------------------------------

std::size_t OverlayStore::load_jsonl(const std::filesystem::path& path, const OverlayParseOptions& options) {
  // A regular file only: a directory, a FIFO or /dev/zero is named, not read without end.
  const std::unique_ptr<detail::ByteReader> in = detail::open_file_reader(path);
  std::string text(static_cast<std::size_t>(in->size()), '\0');
  const std::size_t got = in->read_at(0, text.data(), text.size());
  text.resize(got);  // a file that shrank meanwhile: what is there
  return load_jsonl_text(text, path.string(), options);
}

std::size_t OverlayStore::load_jsonl_text(std::string_view text, std::string_view name,
                                          const OverlayParseOptions& options) {
  OverlayLineParser parser(options);
  OverlayFrame f;
  std::size_t loaded = 0;
  std::int64_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    try {
      parser.parse(line, f, name, line_no);
    } catch (const ParseError& e) {
      diagnostics_.push_back({line_no, e.field(), e.what()});
      log(LogLevel::Warning, std::string("overlays: skipped ") + e.what());
      continue;
    }
    const std::int64_t frame = f.frame;
    frames_[frame] = std::move(f);
    f.clear();  // valid again after the move
    ++loaded;
  }
  return loaded;
}

void OverlayStore::set(std::int64_t frame, OverlayFrame overlays) {
  overlays.frame = frame;
  frames_[frame] = std::move(overlays);
}

void OverlayStore::erase(std::int64_t frame) { frames_.erase(frame); }

void OverlayStore::clear() {
  frames_.clear();
  diagnostics_.clear();
}

const OverlayFrame* OverlayStore::find(std::int64_t frame) const {
  auto it = frames_.find(frame);
  return it == frames_.end() ? nullptr : &it->second;
}

// --- Presentation ----------------------------------------------------------------------

namespace {
// 20 distinguishable colours (bright enough to read on video).
constexpr Color8 kPalette[20] = {
    {230, 25, 75, 255},   {60, 180, 75, 255},   {255, 225, 25, 255},  {0, 130, 200, 255},
    {245, 130, 48, 255},  {145, 30, 180, 255},  {70, 240, 240, 255},  {240, 50, 230, 255},
    {210, 245, 60, 255},  {250, 190, 212, 255}, {0, 128, 128, 255},   {220, 190, 255, 255},
    {170, 110, 40, 255},  {255, 250, 200, 255}, {128, 0, 0, 255},     {170, 255, 195, 255},
    {128, 128, 0, 255},   {255, 215, 180, 255}, {0, 0, 128, 255},     {128, 128, 128, 255},
};
Color8 palette_entry(std::int32_t id) {
  // A fixed permutation hash: ids 0..19 get 20 different colours, and any id
  // always gets the same one.
  const std::uint32_t h = static_cast<std::uint32_t>(id) * 7u + 3u;
  return kPalette[h % 20u];
}
}  // namespace

Color8 class_color(std::int32_t class_id) {
  if (class_id < 0) return Color8{};
  return palette_entry(class_id);
}

Color8 object_color(const OverlayObject& o) {
  if (o.has_color) return o.color;
  if (o.class_id >= 0) return class_color(o.class_id);
  if (o.track_id >= 0) return palette_entry(o.track_id);
  return Color8{};
}

std::optional<Color8> parse_hex_color(std::string_view t) {
  if (t.empty() || t[0] != '#' || (t.size() != 7 && t.size() != 4)) return std::nullopt;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  int v[6];
  for (std::size_t i = 1; i < t.size(); ++i) {
    v[i - 1] = hex(t[i]);
    if (v[i - 1] < 0) return std::nullopt;
  }
  if (t.size() == 4) {
    return Color8{std::uint8_t(v[0] * 17), std::uint8_t(v[1] * 17), std::uint8_t(v[2] * 17), 255};
  }
  return Color8{std::uint8_t(v[0] * 16 + v[1]), std::uint8_t(v[2] * 16 + v[3]), std::uint8_t(v[4] * 16 + v[5]), 255};
}

bool OverlayFilter::accepts(const OverlayObject& o) const {
  if (o.has_score() && o.score < min_score) return false;
  if (!classes.empty() && std::find(classes.begin(), classes.end(), o.class_id) == classes.end()) return false;
  return true;
}

void OverlayFilter::select(const OverlayFrame& f, std::vector<std::uint32_t>& out) const {
  out.clear();
  for (std::uint32_t i = 0; i < f.objects.size(); ++i) {
    if (accepts(f.objects[i])) out.push_back(i);
  }
}

std::string object_caption(const OverlayFrame& f, const OverlayObject& o, const OverlayFilter& filter) {
  std::string s;
  if (filter.labels) {
    if (!o.label.empty()) s.append(f.text(o.label));
    else if (o.class_id >= 0) s += "class " + std::to_string(o.class_id);
  }
  if (filter.scores && o.has_score()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(o.score));
    if (!s.empty()) s += ' ';
    s += buf;
  }
  if (filter.track_ids && o.track_id >= 0) {
    if (!s.empty()) s += ' ';
    s += "#" + std::to_string(o.track_id);
  }
  return s;
}

RectF place_label(const RectF& box, float w, float h, const RectF& view) {
  RectF r{box.x, box.y - h, w, h};
  if (r.y < view.y) r.y = box.y;  // no room above: inside the box's top edge
  auto clamp = [](float v, float lo, float size, float span) {
    if (size >= span) return lo;
    if (v < lo) return lo;
    if (v + size > lo + span) return lo + span - size;
    return v;
  };
  r.x = clamp(r.x, view.x, w, view.w);
  r.y = clamp(r.y, view.y, h, view.h);
  return r;
}

}  // namespace handoff::media
