// Binary form of media::OverlayFrame for the live protocol: a count header,
// then each flat array as fixed-size little-endian records, then the text pool.
// Decoding checks every index and text range, so a consumer can index the
// arrays without checking again.
#include <handoff/live/protocol.hpp>
#include <handoff/media/overlay.hpp>

#include "layer_codec.hpp"
#include "wire.hpp"

#include <cmath>

namespace handoff::live {

using detail::WireReader;
using detail::WireWriter;

namespace {

// Record sizes (bytes), kept in one place with the writers below.
constexpr std::uint64_t kObjectBytes = 65, kKeypointBytes = 12, kEdgeBytes = 8, kShapeBytes = 13,
                        kPointBytes = 8, kTextBytes = 21;
constexpr std::uint64_t kCountsBytes = 8 + 7 * 4;

void put_color(WireWriter& w, media::Color8 c) {
  w.u8(c.r);
  w.u8(c.g);
  w.u8(c.b);
  w.u8(c.a);
}

media::Color8 get_color(WireReader& r) {
  media::Color8 c;
  c.r = r.u8("color");
  c.g = r.u8("color");
  c.b = r.u8("color");
  c.a = r.u8("color");
  return c;
}

void put_object(WireWriter& w, const media::OverlayObject& o) {
  w.f32(o.x0);
  w.f32(o.y0);
  w.f32(o.x1);
  w.f32(o.y1);
  w.u8(static_cast<std::uint8_t>((o.has_box ? 1 : 0) | (o.has_color ? 2 : 0)));
  put_color(w, o.color);
  w.f32(o.score);
  w.i32(o.class_id);
  w.i32(o.track_id);
  w.u32(o.label.offset);
  w.u32(o.label.size);
  for (std::uint32_t v : {o.keypoint_first, o.keypoint_count, o.edge_first, o.edge_count, o.shape_first,
                          o.shape_count})
    w.u32(v);
}

}  // namespace

void encode_overlays(const media::OverlayFrame& f, std::vector<std::byte>& out) {
  out.clear();
  WireWriter w(out);
  w.i64(f.frame);
  for (std::size_t n : {f.objects.size(), f.keypoints.size(), f.edges.size(), f.shapes.size(), f.points.size(),
                        f.texts.size(), f.text_pool.size()}) {
    if (n > 0xFFFFFFFFu) throw UsageError("encode_overlays: an overlay array holds more than 2^32 entries");
    w.u32(static_cast<std::uint32_t>(n));
  }
  for (const auto& o : f.objects) put_object(w, o);
  for (const auto& k : f.keypoints) {
    w.f32(k.x);
    w.f32(k.y);
    w.f32(k.conf);
  }
  for (const auto& e : f.edges) {
    w.u32(e[0]);
    w.u32(e[1]);
  }
  for (const auto& s : f.shapes) {
    w.u32(s.point_first);
    w.u32(s.point_count);
    w.u8(s.closed ? 1 : 0);
    w.i32(s.object);
  }
  for (const auto& p : f.points) {
    w.f32(p.x);
    w.f32(p.y);
  }
  for (const auto& t : f.texts) {
    w.f32(t.x);
    w.f32(t.y);
    w.u32(t.text.offset);
    w.u32(t.text.size);
    w.u8(t.has_color ? 1 : 0);
    put_color(w, t.color);
  }
  w.bytes(f.text_pool.data(), f.text_pool.size());
  detail::encode_layers(f, w);
  if (out.size() > kMaxOverlayBytes)
    throw UsageError("encode_overlays: " + std::to_string(out.size()) + " bytes exceed the limit of " +
                     std::to_string(kMaxOverlayBytes));
}

// --- decoding ---------------------------------------------------------------------------
namespace {

struct Counts {
  std::uint64_t objects, keypoints, edges, shapes, points, texts, pool;
};

// [first, first + count) inside [0, size).
bool in_range(std::uint64_t first, std::uint64_t count, std::uint64_t size) {
  return first <= size && count <= size - first;
}

void finite(WireReader& r, std::string_view field, std::initializer_list<float> values) {
  for (float v : values)
    if (!std::isfinite(v)) r.fail(field, "not a finite number");
}

void read_object(WireReader& r, const Counts& c, media::OverlayObject& o) {
  o.x0 = r.f32("objects.box");
  o.y0 = r.f32("objects.box");
  o.x1 = r.f32("objects.box");
  o.y1 = r.f32("objects.box");
  finite(r, "objects.box", {o.x0, o.y0, o.x1, o.y1});
  const std::uint8_t flags = r.u8("objects.flags");
  if (flags & ~3u) r.fail("objects.flags", "unknown bits");
  o.has_box = flags & 1;
  o.has_color = flags & 2;
  o.color = get_color(r);
  o.score = r.f32("objects.score");
  if (std::isinf(o.score)) r.fail("objects.score", "infinite");
  o.class_id = r.i32("objects.class_id");
  o.track_id = r.i32("objects.track_id");
  o.label.offset = r.u32("objects.label");
  o.label.size = r.u32("objects.label");
  if (!in_range(o.label.offset, o.label.size, c.pool)) r.fail("objects.label", "outside the text pool");
  o.keypoint_first = r.u32("objects.keypoints");
  o.keypoint_count = r.u32("objects.keypoints");
  o.edge_first = r.u32("objects.edges");
  o.edge_count = r.u32("objects.edges");
  o.shape_first = r.u32("objects.shapes");
  o.shape_count = r.u32("objects.shapes");
  if (!in_range(o.keypoint_first, o.keypoint_count, c.keypoints)) r.fail("objects.keypoints", "out of range");
  if (!in_range(o.edge_first, o.edge_count, c.edges)) r.fail("objects.edges", "out of range");
  if (!in_range(o.shape_first, o.shape_count, c.shapes)) r.fail("objects.shapes", "out of range");
}

Counts read_counts(WireReader& r, std::size_t total, media::OverlayFrame& out) {
  out.frame = r.i64("frame");
  Counts c{r.u32("objects"), r.u32("keypoints"), r.u32("edges"), r.u32("shapes"),
           r.u32("points"),  r.u32("texts"),     r.u32("text_pool")};
  // Each product is below 2^39: the sum cannot overflow.
  const std::uint64_t need = kCountsBytes + c.objects * kObjectBytes + c.keypoints * kKeypointBytes +
                             c.edges * kEdgeBytes + c.shapes * kShapeBytes + c.points * kPointBytes +
                             c.texts * kTextBytes + c.pool;
  if (need + 4 > total)  // + the layer count
    r.fail("counts", "the counts need " + std::to_string(need + 4) + " bytes, the block has " + std::to_string(total));
  return c;
}

void read_arrays(WireReader& r, const Counts& c, media::OverlayFrame& out) {
  out.objects.resize(c.objects);
  for (auto& o : out.objects) read_object(r, c, o);
  out.keypoints.resize(c.keypoints);
  for (auto& k : out.keypoints) {
    k.x = r.f32("keypoints");
    k.y = r.f32("keypoints");
    k.conf = r.f32("keypoints");
    finite(r, "keypoints", {k.x, k.y, k.conf});
  }
  out.edges.resize(c.edges);
  for (auto& e : out.edges) {
    e[0] = r.u32("edges");
    e[1] = r.u32("edges");
  }
  out.shapes.resize(c.shapes);
  for (auto& s : out.shapes) {
    s.point_first = r.u32("shapes.points");
    s.point_count = r.u32("shapes.points");
    const std::uint8_t closed = r.u8("shapes.closed");
    if (closed > 1) r.fail("shapes.closed", "not 0 or 1");
    s.closed = closed == 1;
    s.object = r.i32("shapes.object");
    if (!in_range(s.point_first, s.point_count, c.points)) r.fail("shapes.points", "out of range");
    if (s.object < -1 || (s.object >= 0 && std::uint64_t(s.object) >= c.objects))
      r.fail("shapes.object", "names no object");
  }
}

void read_tail(WireReader& r, const Counts& c, media::OverlayFrame& out) {
  out.points.resize(c.points);
  for (auto& p : out.points) {
    p.x = r.f32("points");
    p.y = r.f32("points");
    finite(r, "points", {p.x, p.y});
  }
  out.texts.resize(c.texts);
  for (auto& t : out.texts) {
    t.x = r.f32("texts.pos");
    t.y = r.f32("texts.pos");
    finite(r, "texts.pos", {t.x, t.y});
    t.text.offset = r.u32("texts.text");
    t.text.size = r.u32("texts.text");
    if (!in_range(t.text.offset, t.text.size, c.pool)) r.fail("texts.text", "outside the text pool");
    const std::uint8_t has = r.u8("texts.has_color");
    if (has > 1) r.fail("texts.has_color", "not 0 or 1");
    t.has_color = has == 1;
    t.color = get_color(r);
  }
  auto pool = r.view("text_pool", c.pool);
  out.text_pool.assign(reinterpret_cast<const char*>(pool.data()), pool.size());
}

// Skeleton edges index their object's own keypoints.
void check_edges(WireReader& r, const media::OverlayFrame& f) {
  for (const auto& o : f.objects)
    for (std::uint32_t i = 0; i < o.edge_count; ++i) {
      const auto& e = f.edges[o.edge_first + i];
      if (e[0] >= o.keypoint_count || e[1] >= o.keypoint_count)
        r.fail("edges", "an edge names a keypoint its object does not have");
    }
}

}  // namespace

void decode_overlays(std::span<const std::byte> bytes, media::OverlayFrame& out) {
  out.clear();
  if (bytes.size() > kMaxOverlayBytes)
    throw ProtocolError("overlays", std::to_string(bytes.size()) + " bytes exceed " + std::to_string(kMaxOverlayBytes));
  WireReader r(bytes, "overlays");
  const Counts c = read_counts(r, bytes.size(), out);
  read_arrays(r, c, out);
  read_tail(r, c, out);
  check_edges(r, out);
  detail::decode_layers(r, out);  // after the objects: masks go with their boxes
  r.expect_end();
}

}  // namespace handoff::live
