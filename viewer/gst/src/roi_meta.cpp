#include "roi_meta.hpp"

#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>

namespace handoff::gst {

namespace {

std::optional<double> number_field(const GstStructure* s, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const GValue* v = gst_structure_get_value(s, name);
    if (!v) continue;
    if (G_VALUE_HOLDS_DOUBLE(v)) return g_value_get_double(v);
    if (G_VALUE_HOLDS_FLOAT(v)) return double(g_value_get_float(v));
    if (G_VALUE_HOLDS_INT(v)) return double(g_value_get_int(v));
    if (G_VALUE_HOLDS_UINT(v)) return double(g_value_get_uint(v));
    if (G_VALUE_HOLDS_INT64(v)) return double(g_value_get_int64(v));
    if (G_VALUE_HOLDS_UINT64(v)) return double(g_value_get_uint64(v));
  }
  return std::nullopt;
}

// An id that fits the overlay model's int32 (-1: none); others are ignored.
std::int32_t id_field(const GstStructure* s, std::initializer_list<const char*> names) {
  const auto v = number_field(s, names);
  if (!v || !std::isfinite(*v) || *v < 0 || *v > 2147483647.0) return -1;
  return std::int32_t(*v);
}

struct Detection {
  std::string label;
  float score = NAN;
  std::int32_t class_id = -1, track_id = -1;
};

void read_params(const GstVideoRegionOfInterestMeta* m, Detection& d) {
  for (GList* l = m->params; l; l = l->next) {
    const auto* s = static_cast<const GstStructure*>(l->data);
    if (!s) continue;
    if (const auto score = number_field(s, {"confidence", "score"}); score && std::isfinite(*score))
      d.score = float(*score);
    if (const std::int32_t c = id_field(s, {"class-id", "class_id", "label-id", "label_id"}); c >= 0) d.class_id = c;
    if (const std::int32_t t = id_field(s, {"track-id", "track_id", "tracking-id", "object-id"}); t >= 0)
      d.track_id = t;
    if (const char* label = gst_structure_get_string(s, "label")) d.label = label;
  }
}

}  // namespace

void overlays_from_buffer(GstBuffer* buffer, media::OverlayFrame& out) {
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    const auto* roi = reinterpret_cast<const GstVideoRegionOfInterestMeta*>(meta);
    Detection d;
    if (const char* type = g_quark_to_string(roi->roi_type)) d.label = type;
    read_params(roi, d);
    out.add_box(float(roi->x), float(roi->y), float(roi->x) + float(roi->w), float(roi->y) + float(roi->h), d.label,
                d.score, d.class_id, d.track_id);
  }
}

namespace {

guint to_pixel(float v) {
  if (!(v > 0)) return 0;
  return v >= 4294967295.0f ? G_MAXUINT : guint(std::lround(v));
}

}  // namespace

void add_roi_metas(GstBuffer* buffer, const media::OverlayFrame& overlays) {
  for (const media::OverlayObject& o : overlays.objects) {
    if (!o.has_box) continue;
    const std::string label = o.label.empty() ? std::string("object") : std::string(overlays.text(o.label));
    const guint x0 = to_pixel(o.x0), y0 = to_pixel(o.y0), x1 = to_pixel(o.x1), y1 = to_pixel(o.y1);
    GstVideoRegionOfInterestMeta* m = gst_buffer_add_video_region_of_interest_meta(
        buffer, label.c_str(), x0, y0, x1 > x0 ? x1 - x0 : 0, y1 > y0 ? y1 - y0 : 0);
    if (!m) continue;
    if (!o.has_score() && o.class_id < 0 && o.track_id < 0) continue;
    GstStructure* s = gst_structure_new_empty("detection");
    if (o.has_score()) gst_structure_set(s, "confidence", G_TYPE_DOUBLE, double(o.score), nullptr);
    if (o.class_id >= 0) gst_structure_set(s, "class-id", G_TYPE_INT, o.class_id, nullptr);
    if (o.track_id >= 0) gst_structure_set(s, "track-id", G_TYPE_INT, o.track_id, nullptr);
    gst_video_region_of_interest_meta_add_param(m, s);  // transfer: full
  }
}

}  // namespace handoff::gst
