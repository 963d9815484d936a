#pragma once
// Inference overlays: an in-memory model with flat arrays (a frame with
// 10,000 boxes is a handful of vectors, no per-object allocation), a JSON
// Lines loader (one line per frame, simdjson), colours, filters and label
// placement. Schema: docs/media.md ("Overlay files").
//
// Line form (all keys optional except "frame"):
//   {"frame": 12,
//    "box_format": "xywh" | "xyxy",      default "xywh" (applies to the line; an
//    "normalized": false | true,          object may override either key)
//    "objects": [{"box": [x, y, w, h], "label": "car", "score": 0.9, "class_id": 2,
//                 "track_id": 7, "color": "#ff8800" | [255, 136, 0],
//                 "keypoints": [[x, y], [x, y, conf], ...], "skeleton": [[0, 1], ...],
//                 "polygon": [[x, y], ...], "polyline": [[x, y], ...]}],
//    "texts": [{"text": "hello", "pos": [x, y], "color": ...}]}
// Coordinates are pixels, top-left origin, unless normalized (0..1 of the
// frame's width / height; the loader then needs the frame size).
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::media {

struct Color8 {
  std::uint8_t r = 255, g = 255, b = 255, a = 255;
  bool operator==(const Color8&) const = default;
};

// A string in OverlayFrame::text_pool.
struct TextRef {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
  bool empty() const { return size == 0; }
};

struct Point2 {
  float x = 0, y = 0;
};

struct Keypoint {
  float x = 0, y = 0;
  float conf = 1.0f;  // 1 when the file gives no confidence
};

// One detected object. Ranges index the frame's flat arrays.
struct OverlayObject {
  // Box in pixels, corners (x0, y0) top-left, (x1, y1) bottom-right, whatever
  // the file's box_format. Valid when has_box.
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool has_box = false;
  bool has_color = false;  // colour given by the file (else class_color)
  Color8 color{};
  float score = NAN;       // NaN when absent
  std::int32_t class_id = -1;  // -1 when absent
  std::int32_t track_id = -1;  // -1 when absent
  TextRef label{};
  std::uint32_t keypoint_first = 0, keypoint_count = 0;  // into keypoints
  std::uint32_t edge_first = 0, edge_count = 0;          // into edges (indices into this object's keypoints)
  std::uint32_t shape_first = 0, shape_count = 0;        // into shapes
  bool has_score() const { return !std::isnan(score); }
};

struct OverlayShape {
  std::uint32_t point_first = 0, point_count = 0;  // into points
  bool closed = false;                             // polygon (true) or polyline
  std::int32_t object = -1;                        // owning object index, -1 for none
};

struct OverlayText {
  float x = 0, y = 0;  // top-left of the text, pixels
  TextRef text{};
  bool has_color = false;
  Color8 color{};
};

// All overlays of one frame. clear() keeps capacity.
struct OverlayFrame {
  std::int64_t frame = -1;
  std::vector<OverlayObject> objects;
  std::vector<Keypoint> keypoints;
  std::vector<std::array<std::uint32_t, 2>> edges;
  std::vector<OverlayShape> shapes;
  std::vector<Point2> points;
  std::vector<OverlayText> texts;
  std::string text_pool;

  void clear();
  bool empty() const { return objects.empty() && shapes.empty() && texts.empty(); }
  std::string_view text(TextRef r) const { return std::string_view(text_pool).substr(r.offset, r.size); }

  // Building helpers (the programmatic API; the scene and the parser use them).
  TextRef add_text(std::string_view s);
  // Adds an object with a box (pixels, xyxy); returns its index.
  std::uint32_t add_box(float x0, float y0, float x1, float y1, std::string_view label = {},
                        float score = NAN, std::int32_t class_id = -1, std::int32_t track_id = -1);
  // Attaches keypoints and skeleton edges to object `object` (replacing none:
  // call once per object, after its box). Edges index `kps`; bad indices throw UsageError.
  void set_keypoints(std::uint32_t object, const Keypoint* kps, std::uint32_t count,
                     const std::array<std::uint32_t, 2>* edge_list, std::uint32_t edge_count);
  // Adds a polygon (closed) or polyline; object = owning object or -1.
  void add_shape(const Point2* pts, std::uint32_t count, bool closed, std::int32_t object = -1);
  void add_label_text(float x, float y, std::string_view s);
};

// --- Parsing ----------------------------------------------------------------------

struct OverlayParseOptions {
  // Frame size, needed for "normalized": true (0 = unknown: such lines are errors).
  float frame_width = 0, frame_height = 0;
  // Caps, so hostile input cannot exhaust memory: per line.
  std::uint32_t max_objects = 1'000'000;
  std::uint32_t max_points = 4'000'000;
};

// Parses JSON Lines overlay lines with simdjson, reusing its buffers. Not
// thread-safe; one parser per thread.
class OverlayLineParser {
 public:
  explicit OverlayLineParser(OverlayParseOptions options = {});
  ~OverlayLineParser();
  OverlayLineParser(OverlayLineParser&&) noexcept;
  OverlayLineParser& operator=(OverlayLineParser&&) noexcept;

  // Parses one line into `out` (cleared first). Throws ParseError naming
  // `file`, "line <line_number>" and the field on bad input; `out` is then
  // unspecified (clear it before reuse).
  void parse(std::string_view line, OverlayFrame& out, std::string_view file = "<overlay>",
             std::int64_t line_number = 0);

  const OverlayParseOptions& options() const { return options_; }
  void set_options(const OverlayParseOptions& o) { options_ = o; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  OverlayParseOptions options_;
};

struct OverlayDiagnostic {
  std::int64_t line = 0;     // 1-based line in the file
  std::string field;         // the offending key ("objects[3].box") or "json"
  std::string message;       // full message, "<file>:<line>: <field>: <detail>"
};

// Overlays of a whole stream: frame index -> OverlayFrame. Loaded from a
// JSON Lines file and/or set programmatically. Not thread-safe: guard it if
// one thread loads while another reads.
class OverlayStore {
 public:
  // Loads every line of `path` (blank lines ignored). A bad line is logged
  // once (handoff::log, Warning) with file:line and the field, recorded in
  // diagnostics(), skipped; loading continues. A missing / unreadable file
  // throws ParseError. Lines for the same frame replace earlier ones.
  // Returns the number of frames loaded from the file.
  std::size_t load_jsonl(const std::filesystem::path& path, const OverlayParseOptions& options = {});
  // Same from text already in memory.
  std::size_t load_jsonl_text(std::string_view text, std::string_view name,
                              const OverlayParseOptions& options = {});

  void set(std::int64_t frame, OverlayFrame overlays);  // overlays.frame is set to `frame`
  void erase(std::int64_t frame);
  void clear();
  // nullptr when the frame has no overlays.
  const OverlayFrame* find(std::int64_t frame) const;
  std::size_t size() const { return frames_.size(); }
  const std::vector<OverlayDiagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::map<std::int64_t, OverlayFrame> frames_;
  std::vector<OverlayDiagnostic> diagnostics_;
};

// --- Presentation helpers ----------------------------------------------------------

// Stable colour per class id: a fixed 20-colour palette indexed by a hash of
// the id (class -1 -> white).
Color8 class_color(std::int32_t class_id);
// The colour to draw object `o` with: its own colour, else its class colour,
// else a colour per track id, else white.
Color8 object_color(const OverlayObject& o);
// "#rrggbb" / "#rgb" -> colour; std::nullopt when malformed.
std::optional<Color8> parse_hex_color(std::string_view text);

// What to draw. accepts() says whether an object passes the score threshold
// and class filter; the per-kind toggles say which parts of it to draw.
struct OverlayFilter {
  float min_score = 0.0f;            // objects with a score below are hidden (no score: shown)
  std::vector<std::int32_t> classes; // empty: every class; else only these
  bool boxes = true, labels = true, scores = true, track_ids = true, keypoints = true,
       shapes = true, texts = true;
  bool accepts(const OverlayObject& o) const;
  // Indices of accepted objects (reuses `out`).
  void select(const OverlayFrame& f, std::vector<std::uint32_t>& out) const;
};

// The caption drawn with a box: "label 0.87 #7" parts as the filter allows.
std::string object_caption(const OverlayFrame& f, const OverlayObject& o, const OverlayFilter& filter);

struct RectF {
  float x = 0, y = 0, w = 0, h = 0;
};
// Places a label of size (w, h) for box `box`: just above the box's top-left
// corner, or inside the box's top edge when there is no room above, then
// clamped so it lies inside `view` (if larger than the view, pinned to its top-left).
RectF place_label(const RectF& box, float w, float h, const RectF& view);

}  // namespace handoff::media
