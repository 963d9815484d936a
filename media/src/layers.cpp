// Dense layers: sample types, colormap names, validation.
#include <handoff/frame_validate.hpp>
#include <handoff/media/overlay.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>

namespace handoff::media {

namespace {

constexpr std::string_view kSampleNames[] = {"u8",  "u16", "u32", "u64", "i8",  "i16",
                                             "i32", "i64", "f16", "f32", "f64", "bool"};
constexpr std::string_view kColormapNames[] = {"gray", "viridis", "turbo", "inferno", "magma", "plasma"};

bool known(SampleType t) { return t <= SampleType::Bool; }

std::string sample_name(SampleType t) {
  return known(t) ? std::string(to_string(t)) : "sample type value " + std::to_string(int(t));
}

std::string fmt(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

std::string hex(const void* p) {
  std::ostringstream o;
  o << "0x" << std::hex << reinterpret_cast<std::uintptr_t>(p);
  return o.str();
}

// The one check of a layer's array: `field` is "layers[i].ids" and the like.
void validate_array(const LayerArray& a, const std::string& field, int cuda_device) {
  if (!known(a.type)) throw InvalidFrame(field + ".type", sample_name(a.type) + " is not a sample type");
  if (a.memory != MemoryKind::Host && a.memory != MemoryKind::Cuda) {
    throw InvalidFrame(field + ".memory", "a layer is in host or CUDA memory, not memory kind " +
                                              std::to_string(int(a.memory)));
  }
  if (a.memory == MemoryKind::Cuda) {
    if (cuda_device < 0) {
      throw InvalidFrame(field + ".device", "a CUDA layer (device " + std::to_string(a.device) +
                                                ") where this consumer takes host layers only");
    }
    if (a.device != cuda_device) {
      throw InvalidFrame(field + ".device", "the layer is on CUDA device " + std::to_string(a.device) +
                                                ", the viewer's is " + std::to_string(cuda_device));
    }
    if (a.cuda_context == nullptr) throw InvalidFrame(field + ".cuda_context", "a CUDA layer needs its context");
  }
  for (auto [name, v] : {std::pair{"width", a.width}, std::pair{"height", a.height}}) {
    if (std::string problem = dimension_problem(name, v); !problem.empty()) {
      throw InvalidFrame(field + "." + name, problem);
    }
  }
  if (a.data == nullptr && a.count != 0) throw InvalidFrame(field + ".data", "is null");  // 0 masks read nothing
  const std::size_t s = sample_size(a.type);
  if (reinterpret_cast<std::uintptr_t>(a.data) % s != 0) {
    throw InvalidFrame(field + ".data", hex(a.data) + " is not aligned to its " + std::to_string(s) +
                                            "-byte samples");
  }
  if (a.pitch != 0 && (a.pitch < a.row_bytes() || a.pitch % s != 0)) {
    throw InvalidFrame(field + ".pitch", "pitch " + std::to_string(a.pitch) + " is below the row of " +
                                             std::to_string(a.row_bytes()) + " bytes or not a whole number of " +
                                             std::to_string(s) + "-byte samples");
  }
  const std::size_t image = plane_span_bytes(a.row_pitch(), a.height, a.row_bytes(), field + ".pitch");
  if (a.count > 1 && a.image_stride != 0 && (a.image_stride < image || a.image_stride % s != 0)) {
    throw InvalidFrame(field + ".image_stride", "image stride " + std::to_string(a.image_stride) +
                                                    " is below an image's " + std::to_string(image) +
                                                    " bytes or not a whole number of samples");
  }
  try {
    (void)a.span();
  } catch (const InvalidFrame& e) {  // the same check, named from the layer
    const std::string what = e.what();
    throw InvalidFrame(field + "." + e.field(), what.substr(e.field().size() + 2));
  }
}

void check_opacity(float opacity, const std::string& field) {
  if (!(opacity >= 0.0f && opacity <= 1.0f)) {
    throw InvalidFrame(field + ".opacity", "opacity " + fmt(opacity) + " is not in 0..1");
  }
}

void check_target(const std::optional<RectF>& t, const std::string& field) {
  if (!t) return;
  const bool finite = std::isfinite(t->x) && std::isfinite(t->y) && std::isfinite(t->w) && std::isfinite(t->h);
  if (!finite || !(t->w > 0) || !(t->h > 0)) {
    throw InvalidFrame(field + ".target", "rectangle (" + fmt(t->x) + ", " + fmt(t->y) + ", " + fmt(t->w) + " x " +
                                              fmt(t->h) + ") is not finite with a positive width and height");
  }
}

void check_single(const LayerArray& a, const std::string& field, std::string_view kind) {
  if (a.count != 1) {
    throw InvalidFrame(field + ".count", "a " + std::string(kind) + " is one H x W image, not " +
                                             std::to_string(a.count) + " of them");
  }
}

void validate_one(const ClassMap& m, const std::string& field, std::size_t, int cuda_device) {
  if (!is_integer(m.ids.type)) {
    throw InvalidFrame(field + ".ids.type", "class ids are integers (u8 .. u64, i8 .. i64), not " +
                                                sample_name(m.ids.type));
  }
  check_single(m.ids, field + ".ids", "class map");
  // The ids given a colour or made transparent (those the type holds) become one palette.
  const SampleType t = m.ids.type;
  struct End {
    std::int64_t id = 0;
    const char* arg = nullptr;
  };
  std::optional<End> lo, hi;
  auto see = [&](std::int64_t id, const char* arg) {
    if (!class_id_fits(t, id)) return;
    if (!lo || class_id_order(t, id) < class_id_order(t, lo->id)) lo = End{id, arg};
    if (!hi || class_id_order(t, id) > class_id_order(t, hi->id)) hi = End{id, arg};
  };
  for (const auto& [id, c] : m.colors) see(id, "colors");
  for (std::int64_t id : m.transparent) see(id, "transparent");
  if (lo && class_id_order(t, hi->id) - class_id_order(t, lo->id) >= std::uint64_t(kMaxPaletteSpan)) {
    // Named by the argument holding both ends; colors where they differ (both are in the message).
    const std::string arg = std::string_view(lo->arg) == hi->arg ? lo->arg : "colors";
    throw InvalidFrame(field + "." + arg, "ids given colours or made transparent run from " + class_id_text(t, lo->id) +
                                              " (" + lo->arg + ") to " + class_id_text(t, hi->id) + " (" + hi->arg +
                                              "): they must lie within " + std::to_string(kMaxPaletteSpan) +
                                              " consecutive ids");
  }
  validate_array(m.ids, field + ".ids", cuda_device);
  check_opacity(m.opacity, field);
  check_target(m.target, field);
}

void validate_one(const ScalarMap& m, const std::string& field, std::size_t, int cuda_device) {
  if (!is_integer(m.values.type) && !is_floating(m.values.type)) {
    throw InvalidFrame(field + ".values.type", "scalar values are integers or floats, not " +
                                                   sample_name(m.values.type));
  }
  check_single(m.values, field + ".values", "scalar map");
  validate_array(m.values, field + ".values", cuda_device);
  if (m.colormap > Colormap::Plasma) {
    throw InvalidFrame(field + ".colormap", "colormap value " + std::to_string(int(m.colormap)) + " is not one of " +
                                                "gray, viridis, turbo, inferno, magma, plasma");
  }
  if (m.range) {
    const auto [lo, hi] = *m.range;
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi)) {
      throw InvalidFrame(field + ".range", "range (" + fmt(lo) + ", " + fmt(hi) + ") needs finite lo < hi");
    }
  }
  check_opacity(m.opacity, field);
  check_target(m.target, field);
}

void validate_one(const InstanceMasks& m, const std::string& field, std::size_t boxes, int cuda_device) {
  const SampleType t = m.masks.type;
  if (t != SampleType::Bool && t != SampleType::U8 && !is_floating(t)) {
    throw InvalidFrame(field + ".masks.type", "masks are bool, u8 or float, not " + sample_name(t));
  }
  if (m.masks.count != boxes) {
    throw InvalidFrame(field + ".masks.count", std::to_string(m.masks.count) + " masks for " + std::to_string(boxes) +
                                                   " boxes: one mask per box");
  }
  validate_array(m.masks, field + ".masks", cuda_device);
  if (!std::isfinite(m.threshold)) {
    throw InvalidFrame(field + ".threshold", "threshold " + fmt(m.threshold) + " is not finite");
  }
  check_opacity(m.opacity, field);
  check_target(m.target, field);
}

}  // namespace

std::size_t sample_size(SampleType t) {
  switch (t) {
    case SampleType::U16:
    case SampleType::I16:
    case SampleType::F16: return 2;
    case SampleType::U32:
    case SampleType::I32:
    case SampleType::F32: return 4;
    case SampleType::U64:
    case SampleType::I64:
    case SampleType::F64: return 8;
    default: return 1;
  }
}

bool is_integer(SampleType t) { return t <= SampleType::I64; }

bool class_id_fits(SampleType t, std::int64_t id) {
  switch (t) {
    case SampleType::U8: return id >= 0 && id <= 0xFF;
    case SampleType::I8: return id >= -0x80 && id <= 0x7F;
    case SampleType::U16: return id >= 0 && id <= 0xFFFF;
    case SampleType::I16: return id >= -0x8000 && id <= 0x7FFF;
    case SampleType::U32: return id >= 0 && id <= 0xFFFFFFFFll;
    case SampleType::I32: return id >= -0x80000000ll && id <= 0x7FFFFFFF;
    case SampleType::U64:
    case SampleType::I64: return true;
    default: return false;
  }
}

std::uint64_t class_id_order(SampleType t, std::int64_t id) {
  // Signed ids: shifted by 2^63, so the most negative is 0.
  return t == SampleType::U64 ? std::uint64_t(id) : std::uint64_t(id) ^ (std::uint64_t(1) << 63);
}

std::string class_id_text(SampleType t, std::int64_t id) {
  return t == SampleType::U64 ? std::to_string(std::uint64_t(id)) : std::to_string(id);
}
bool is_floating(SampleType t) { return t >= SampleType::F16 && t <= SampleType::F64; }

std::string_view to_string(SampleType t) { return known(t) ? kSampleNames[std::size_t(t)] : "?"; }

std::string_view to_string(Colormap c) {
  return c <= Colormap::Plasma ? kColormapNames[std::size_t(c)] : "?";
}

Colormap parse_colormap(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  for (Colormap c : kColormaps)
    if (lower == to_string(c)) return c;
  std::string names;
  for (std::string_view n : kColormapNames) names += (names.empty() ? "" : ", ") + std::string(n);
  throw InvalidFrame("colormap", "colormap '" + std::string(text) + "' is not one of " + names);
}

std::size_t LayerArray::span() const {
  if (count == 0) return 0;
  const std::size_t image = plane_span_bytes(row_pitch(), height, row_bytes(), "pitch");
  std::size_t before = 0, total = 0;
  if (__builtin_mul_overflow(image_pitch(), std::size_t(count - 1), &before) ||
      __builtin_add_overflow(before, image, &total) ||
      total > std::size_t(std::numeric_limits<std::int64_t>::max())) {
    throw InvalidFrame("image_stride", std::to_string(count) + " images of " + std::to_string(image_pitch()) +
                                           " bytes overflow the addressable size");
  }
  return total;
}

std::string_view layer_kind(const Layer& layer) {
  switch (layer.index()) {
    case 0: return "class map";
    case 1: return "scalar map";
    default: return "instance masks";
  }
}

std::size_t boxed_objects(const OverlayFrame& overlays) {
  return static_cast<std::size_t>(
      std::count_if(overlays.objects.begin(), overlays.objects.end(), [](const OverlayObject& o) { return o.has_box; }));
}

void validate_layers(const OverlayFrame& overlays, int cuda_device) {
  if (overlays.layers.empty()) return;
  if (overlays.layers.size() > kMaxLayers)
    throw InvalidFrame("layers", std::to_string(overlays.layers.size()) + " layers; a frame has at most " +
                                     std::to_string(kMaxLayers));
  const std::size_t boxes = boxed_objects(overlays);
  for (std::size_t i = 0; i < overlays.layers.size(); ++i) {
    const std::string field = "layers[" + std::to_string(i) + "]";
    std::visit([&](const auto& layer) { validate_one(layer, field, boxes, cuda_device); }, overlays.layers[i]);
  }
}

}  // namespace handoff::media
