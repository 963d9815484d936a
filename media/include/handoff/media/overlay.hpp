#pragma once
// Inference overlays: an in-memory model with flat arrays (a frame with
// 10,000 boxes is a handful of vectors, no per-object allocation), a JSON
// Lines loader (one line per frame, simdjson), colours, filters and label
// placement. Schema: docs/media.md ("Overlay files"). Dense layers (class
// maps, scalar maps, instance masks) ride in OverlayFrame::layers; the JSON
// Lines files carry none.
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
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <handoff/frame.hpp>

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

struct RectF {
  float x = 0, y = 0, w = 0, h = 0;
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

// --- Dense layers -------------------------------------------------------------------
//
// Class maps (an id per pixel), scalar maps (depth, heatmaps, confidence,
// shown through a colormap) and instance masks (one per box of the same
// OverlayFrame), drawn over the frame under its vector overlays, each with its
// own opacity; they ride in OverlayFrame::layers.
//
// A layer's samples are a LayerArray: a pitched 2-D array (masks: a stack of
// them) in host or CUDA memory, described like a frame's Plane, with a
// keep-alive (`owner`) as a Frame has. Whoever draws a layer after the call
// that handed it in (the viewer) copies it first.
//
// A layer covers the whole frame by default, stretched to it (nearest for ids
// and masks, bilinear for scalars); `target` puts it over a rectangle of the
// frame instead (frame pixels: a letterboxed model input, a crop).

// The type of one sample of a layer.
enum class SampleType : std::uint8_t { U8, U16, U32, U64, I8, I16, I32, I64, F16, F32, F64, Bool };

std::size_t sample_size(SampleType t);  // bytes: 1 for U8 / I8 / Bool, ...
bool is_integer(SampleType t);          // U8 .. I64 (not Bool)
bool is_floating(SampleType t);         // F16, F32, F64
// "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f16", "f32", "f64", "bool".
std::string_view to_string(SampleType t);

// Samples of a layer: `count` images of `height` rows of `width` samples.
struct LayerArray {
  // Host: address of the first sample; Cuda: a device pointer in `cuda_context`.
  const void* data = nullptr;
  MemoryKind memory = MemoryKind::Host;  // Host or Cuda (GlBuffer: the viewer's copy, below)
  int device = -1;                       // CUDA ordinal (Cuda)
  void* cuda_context = nullptr;          // CUcontext the pointer belongs to (Cuda)
  SampleType type = SampleType::U8;
  std::uint32_t width = 0, height = 0;
  std::uint32_t count = 1;        // images (InstanceMasks: one per mask, 0 for none, with data null; else 1)
  std::size_t pitch = 0;          // bytes from one row to the next (0: packed, width * sample_size)
  std::size_t image_stride = 0;   // bytes from one image to the next (0: pitch * height)
  std::shared_ptr<const void> owner;  // keeps the memory valid
  // The viewer's own copy of a CUDA layer (inside the viewer only; never
  // accepted from a caller): memory GlBuffer, the packed samples in this GL buffer.
  std::uint32_t gl_buffer = 0;

  std::size_t row_bytes() const { return std::size_t(width) * sample_size(type); }
  std::size_t row_pitch() const { return pitch ? pitch : row_bytes(); }
  std::size_t image_pitch() const { return image_stride ? image_stride : row_pitch() * height; }
  // Bytes from the first sample to just past the last one (what the layer touches).
  std::size_t span() const;
};

enum class Colormap : std::uint8_t { Gray, Viridis, Turbo, Inferno, Magma, Plasma };
// Every colormap, in enum order.
inline constexpr Colormap kColormaps[] = {Colormap::Gray,    Colormap::Viridis, Colormap::Turbo,
                                          Colormap::Inferno, Colormap::Magma,   Colormap::Plasma};
// "gray", "viridis", "turbo", "inferno", "magma", "plasma".
std::string_view to_string(Colormap c);
// The colormap spelled `text` (any letter case); InvalidFrame("colormap", ...)
// naming the text and every accepted spelling.
Colormap parse_colormap(std::string_view text);

// An id per pixel (segmentation). Integer ids, 8 to 64 bits, signed or not,
// each by its value (colours, transparent ids, names, the legend and the
// pixel inspector); the maps below key uint64 ids by their 64 bits (id
// 2^64 - 1 is key -1: class_id_fits, class_id_text). Of the ids given colours
// or made transparent, those the ids' type can hold must lie within
// kMaxPaletteSpan consecutive ids (e.g. -1 .. 65534, or 3000000000 ..
// 3000065535): the palette. Ids without a colour take default_class_color,
// which sees an id's low 32 bits.
inline constexpr std::int64_t kMaxPaletteSpan = 65536;
struct ClassMap {
  LayerArray ids;
  // A colour per id; ids without one take default_class_color(id). A list of
  // colours is the map {0: c0, 1: c1, ...}. The colours' alpha is ignored
  // (opacity applies).
  std::map<std::int64_t, Color8> colors;
  std::map<std::int64_t, std::string> names;  // the panel's legend and the pixel inspector
  std::vector<std::int64_t> transparent;      // ids not drawn (background)
  float opacity = 0.5f;                       // 0..1
  std::optional<RectF> target;                // frame pixels; empty: the whole frame
};

// A value per pixel shown through a colormap: integers or floats (depth in
// metres or millimetres, heatmaps). NaN and +-inf are not drawn.
struct ScalarMap {
  LayerArray values;
  Colormap colormap = Colormap::Turbo;
  // Fixed (lo, hi), lo < hi, both finite: values outside clamp. Empty:
  // automatic from the data (ScalarRange).
  std::optional<std::array<double, 2>> range;
  float opacity = 0.5f;
  std::optional<RectF> target;
};

// One mask per boxed object of the same OverlayFrame, in order (mask i goes
// with the i-th object that has a box): count x height x width, bool, u8 or
// float samples. A pixel is in a mask where its sample > threshold; u8
// samples compare as their integer value, so 0 / 1 and 0 / 255 masks both
// work with the default 0.5.
struct InstanceMasks {
  LayerArray masks;
  float threshold = 0.5f;
  float opacity = 0.5f;
  std::optional<RectF> target;
};

// Whether ids of integer type `t` can be `id` as ClassMap keys it (u8: 0 ..
// 255, i32: -2^31 .. 2^31 - 1; u64 and i64: any key). Ids a map cannot hold
// may be given; they are never drawn.
bool class_id_fits(SampleType t, std::int64_t id);
// The order of ids of type `t` (u64 keys unsigned, the others signed) as an
// unsigned number: a < b as ids where class_id_order(t, a) < class_id_order(t, b),
// and the difference of two orders is the number of ids between them.
std::uint64_t class_id_order(SampleType t, std::int64_t id);
// `id` as written for ids of type `t`: "-3", "3000000000", "18446744073709551615" (u64 key -1).
std::string class_id_text(SampleType t, std::int64_t id);

using Layer = std::variant<ClassMap, ScalarMap, InstanceMasks>;

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
  // Dense layers, drawn in order (the first lowest), under everything above.
  std::vector<Layer> layers;

  void clear();
  // No vector overlays (layers aside: see has_content()).
  bool empty() const { return objects.empty() && shapes.empty() && texts.empty(); }
  // Vector overlays or layers.
  bool has_content() const { return !empty() || !layers.empty(); }
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

// "class map", "scalar map", "instance masks".
std::string_view layer_kind(const Layer& layer);
// Objects of `overlays` that have a box (what InstanceMasks::masks.count must equal).
std::size_t boxed_objects(const OverlayFrame& overlays);

// Layers a frame has at most, wherever it goes (Viewer::show / present, a
// Publisher, a RecordingWriter; docs/layers.md).
inline constexpr std::size_t kMaxLayers = 64;

// Checks overlays.layers for a consumer on CUDA device `cuda_device` (CUDA
// layers must be there; -1: no CUDA layer is accepted): at most kMaxLayers, sizes
// 1..kMaxFrameDimension, sample types per kind (integer class ids; a 2-D
// scalar map; bool / u8 / float masks), pitches and pointers, the memory kind,
// opacity in 0..1 (not NaN), a finite threshold, a fixed range with finite lo
// < hi, target rectangles finite with a positive size, a mask count equal to
// boxed_objects(). Throws InvalidFrame naming the field and the values:
// "layers: 65 layers; a frame has at most 64", "layers[2].masks.count: 3 masks
// for 2 boxes", "layers[0].opacity: ...".
void validate_layers(const OverlayFrame& overlays, int cuda_device);

// The samples of a layer (ids, values or masks).
const LayerArray& layer_array(const Layer& layer);
LayerArray& layer_array(Layer& layer);

// Packed host copies in the sample types the viewer draws from (the one
// conversion show(), the live publisher and the recording writer share), each
// owning its memory; the source must be a valid host array:
//   packed_ids      8, 16, 32-bit ids as they are; 64-bit ids keep their low 32 bits,
//                   or all 64 with `whole` (the viewer's copy: its inspector and legend show them)
//   packed_scalars  f32 (f16, f64 and integers converted; NaN and +-inf kept)
//   packed_masks    u8, 1 where sample > threshold, else 0
// `storage`, where given, supplies the copy's memory (at least the bytes
// asked for; the viewer reuses earlier frames' buffers); else it is allocated.
using LayerStorage = std::function<std::shared_ptr<std::uint8_t[]>(std::size_t bytes)>;
LayerArray packed_ids(const LayerArray& ids, const LayerStorage& storage = {}, bool whole = false);
LayerArray packed_scalars(const LayerArray& values, const LayerStorage& storage = {});
LayerArray packed_masks(const LayerArray& masks, float threshold, const LayerStorage& storage = {});
// Replaces the layer's array by its packed copy (masks: threshold 0.5 after;
// a class map of 64-bit ids: its colours, names and transparent ids keyed by
// the low 32 bits its ids keep).
void pack_layer(Layer& layer);
// Half-precision bits to float (IEEE 754 binary16: subnormals, inf, NaN).
float half_to_float(std::uint16_t h);

// The colours layers are drawn with.
//
// colormap_table(c)[i] is the colour of a value at i / 255 of the range
// (alpha 255). Tables generated by scripts/fit_colormaps.py: viridis,
// inferno, magma, plasma and turbo within 4 codes of matplotlib's; gray the
// identity. UsageError for a value outside Colormap.
const std::array<Color8, 256>& colormap_table(Colormap c);

// The colour of class id `id` where a ClassMap gives none: a golden-ratio walk
// around the hue circle over the id's low 32 bits (ids next to each other are
// far apart in hue; every id has one), with three brightness levels in turn,
// so neighbouring ids differ in hue and brightness. Fixed: the same id, the
// same colour.
Color8 default_class_color(std::int64_t id);

// An automatic range for a scalar map: robust (the 1st .. 99th percentile of
// the finite values; NaN and +-inf are ignored) and stable (each frame moves
// the range a fraction of the way to the new one, so it does not flicker;
// a range that jumps by more than its own width is taken at once). Not
// thread-safe: one per layer, on the thread that draws it.
class ScalarRange {
 public:
  // Samples considered per frame at most (a regular subsample of larger maps).
  static constexpr std::size_t kMaxSamples = 1u << 16;
  // Updates the range from `count` values and returns it. With no finite value
  // the range stays (initially (0, 1)). A constant map gets (v - 0.5, v + 0.5),
  // or (v - h, v + h) with h = 2^(floor(log2 |v|) - 20), 8 float steps of v,
  // where that is more (|v| >= 2^20), so that float tells the ends from v.
  std::array<double, 2> update(const float* values, std::size_t count);
  std::array<double, 2> range() const { return range_; }
  // Whether a frame with a finite value has been seen since construction or reset().
  bool valid() const { return valid_; }
  void reset() { valid_ = false; range_ = {0.0, 1.0}; }

 private:
  std::vector<float> scratch_;
  std::array<double, 2> range_{0.0, 1.0};
  bool valid_ = false;
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

// Places a label of size (w, h) for box `box`: just above the box's top-left
// corner, or inside the box's top edge when there is no room above, then
// clamped so it lies inside `view` (if larger than the view, pinned to its top-left).
RectF place_label(const RectF& box, float w, float h, const RectF& view);

}  // namespace handoff::media
