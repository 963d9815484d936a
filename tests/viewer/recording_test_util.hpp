#pragma once
// Helpers for the MCAP and recording tests: test frames, a rich overlay set,
// overlay comparison, file bytes, and an independent record walker (written
// here from the specification, not with the library's own parser) used to
// find and damage records on purpose.
#include <handoff/host_frame.hpp>
#include <handoff/media/frame_source.hpp>
#include <handoff/media/overlay.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace handoff::media::test {

inline std::vector<std::uint8_t> read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::filesystem::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

inline std::uint64_t le64(const std::vector<std::uint8_t>& b, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[at + i];
  return v;
}
inline std::uint32_t le32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return std::uint32_t(b[at]) | std::uint32_t(b[at + 1]) << 8 | std::uint32_t(b[at + 2]) << 16 |
         std::uint32_t(b[at + 3]) << 24;
}
inline void put64(std::vector<std::uint8_t>& b, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = std::uint8_t(v >> (8 * i));
}
inline void put32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = std::uint8_t(v >> (8 * i));
}

// One top-level record: opcode, offset of its opcode byte, content length.
struct Rec {
  std::uint8_t op;
  std::size_t at;
  std::uint64_t len;
  std::size_t content() const { return at + 9; }
  std::size_t end() const { return at + 9 + std::size_t(len); }
};

// Walks the records after the leading magic up to (and including) the Footer.
inline std::vector<Rec> records(const std::vector<std::uint8_t>& b) {
  std::vector<Rec> out;
  for (std::size_t at = 8; at + 9 <= b.size();) {
    const Rec r{b[at], at, le64(b, at + 1)};
    if (r.end() > b.size()) break;
    out.push_back(r);
    if (r.op == 0x02) break;
    at = r.end();
  }
  return out;
}

inline std::vector<Rec> records_of(const std::vector<std::uint8_t>& b, std::uint8_t op) {
  std::vector<Rec> out;
  for (const Rec& r : records(b))
    if (r.op == op) out.push_back(r);
  return out;
}

// A host frame with fill_test_pattern's values.
inline Frame pattern_frame(PixelFormat f, std::uint32_t w, std::uint32_t h, std::uint32_t seed,
                           Colorimetry c = {}) {
  HostFrameOptions o;
  o.alignment = 64;  // pitches above the packed rows: the recording must strip them
  o.colorimetry = c;
  Frame frame = allocate_host_frame(f, w, h, o);
  fill_test_pattern(frame, seed);
  return frame;
}

// Does the packed host frame hold fill_test_pattern(seed)'s values?
inline ::testing::AssertionResult has_pattern(const HostFrame& fr, std::uint32_t seed) {
  const int m = fr.format() == PixelFormat::NV12 ? 256 : 1024;
  for (std::uint32_t y = 0; y < fr.height(); ++y)
    for (std::uint32_t x = 0; x < fr.width(); ++x)
      if (fr.y(x, y) != (7 * x + 13 * y + seed) % m)
        return ::testing::AssertionFailure() << "luma " << x << "," << y << " = " << fr.y(x, y);
  for (std::uint32_t y = 0; y < chroma_height(fr.height()); ++y)
    for (std::uint32_t x = 0; x < chroma_width(fr.width()); ++x) {
      if (fr.u(x, y) != (5 * x + 3 * y + seed + 64) % m) return ::testing::AssertionFailure() << "U " << x << "," << y;
      if (fr.v(x, y) != (11 * x + 2 * y + seed + 128) % m) return ::testing::AssertionFailure() << "V " << x << "," << y;
    }
  return ::testing::AssertionSuccess();
}

// Every kind of overlay the model holds, with values that are not round numbers.
inline OverlayFrame rich_overlays(float shift = 0) {
  OverlayFrame f;
  f.add_box(10.25f + shift, 20.5f, 110.75f, 80.125f, "car", 0.912345f, 2, 17);
  const std::uint32_t person = f.add_box(200, 40, 280.5f, 320, "person", 0.5f, 0, -1);
  const Keypoint kps[] = {{240, 60, 0.99f}, {235.5f, 55, 0.25f}, {245, 55, 1.0f}};
  const std::array<std::uint32_t, 2> edges[] = {{0, 1}, {0, 2}};
  f.set_keypoints(person, kps, 3, edges, 2);
  const Point2 outline[] = {{201, 41}, {279, 41}, {279, 319}, {201, 319}, {240, 300}};
  f.add_shape(outline, 5, true, std::int32_t(person));
  const Point2 trail[] = {{240, 320}, {250, 330}};
  f.add_shape(trail, 2, false, std::int32_t(person));
  const std::uint32_t plain = f.add_box(1, 2, 3, 4);  // no label, score, class or track
  (void)plain;
  const std::uint32_t coloured = f.add_box(300, 300, 310, 330, "", NAN, -1, 4);
  f.objects[coloured].has_color = true;
  f.objects[coloured].color = Color8{255, 136, 0, 200};
  // An object with keypoints only (no box), and one with nothing drawable but a label.
  OverlayObject kp_only;
  kp_only.class_id = 7;
  f.objects.push_back(kp_only);
  const Keypoint lone[] = {{5, 6, 1.0f}, {7, 8, 1.0f}};
  f.set_keypoints(std::uint32_t(f.objects.size() - 1), lone, 2, nullptr, 0);
  OverlayObject label_only;
  label_only.label = f.add_text("just a label");
  label_only.score = 0.125f;
  f.objects.push_back(label_only);
  const Point2 tri[] = {{20, 300}, {180, 300}, {160, 350}};
  f.add_shape(tri, 3, true);
  const Point2 line[] = {{0, 0}, {10, 10}, {20, 0}};
  f.add_shape(line, 3, false);
  f.add_label_text(600.5f, 10, "hello");
  OverlayText t;
  t.x = 5;
  t.y = 470.25f;
  t.text = f.add_text("coloured text");
  t.has_color = true;
  t.color = Color8{0, 255, 0, 255};
  f.texts.push_back(t);
  return f;
}

inline bool same_float(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Compares two overlay frames by meaning: objects in order with their parts,
// free shapes in order, texts in order (array layout and text pools may differ).
inline ::testing::AssertionResult same_overlays(const OverlayFrame& a, const OverlayFrame& b) {
  auto fail = [](const std::string& what) { return ::testing::AssertionFailure() << what; };
  if (a.objects.size() != b.objects.size()) {
    return fail("objects: " + std::to_string(a.objects.size()) + " vs " + std::to_string(b.objects.size()));
  }
  for (std::size_t i = 0; i < a.objects.size(); ++i) {
    const OverlayObject& x = a.objects[i];
    const OverlayObject& y = b.objects[i];
    const std::string at = "objects[" + std::to_string(i) + "].";
    if (x.has_box != y.has_box) return fail(at + "has_box");
    if (x.has_box && (x.x0 != y.x0 || x.y0 != y.y0 || x.x1 != y.x1 || x.y1 != y.y1)) return fail(at + "box");
    if (x.has_color != y.has_color || (x.has_color && !(x.color == y.color))) return fail(at + "color");
    if (!same_float(x.score, y.score)) return fail(at + "score");
    if (x.class_id != y.class_id) return fail(at + "class_id");
    if (x.track_id != y.track_id) return fail(at + "track_id");
    if (a.text(x.label) != b.text(y.label)) return fail(at + "label");
    if (x.keypoint_count != y.keypoint_count) return fail(at + "keypoint_count");
    for (std::uint32_t k = 0; k < x.keypoint_count; ++k) {
      const Keypoint& p = a.keypoints[x.keypoint_first + k];
      const Keypoint& q = b.keypoints[y.keypoint_first + k];
      if (p.x != q.x || p.y != q.y || p.conf != q.conf) return fail(at + "keypoints[" + std::to_string(k) + "]");
    }
    if (x.edge_count != y.edge_count) return fail(at + "edge_count");
    for (std::uint32_t k = 0; k < x.edge_count; ++k)
      if (a.edges[x.edge_first + k] != b.edges[y.edge_first + k]) return fail(at + "edges");
    if (x.shape_count != y.shape_count) return fail(at + "shape_count");
  }
  auto shapes = [](const OverlayFrame& f) {
    std::vector<std::pair<std::pair<bool, std::int32_t>, std::vector<std::pair<float, float>>>> out;
    // Object shapes in object order, then free shapes in order.
    for (std::size_t i = 0; i < f.objects.size(); ++i)
      for (std::uint32_t k = 0; k < f.objects[i].shape_count; ++k) {
        const OverlayShape& s = f.shapes[f.objects[i].shape_first + k];
        out.push_back({{s.closed, std::int32_t(i)}, {}});
        for (std::uint32_t p = 0; p < s.point_count; ++p)
          out.back().second.emplace_back(f.points[s.point_first + p].x, f.points[s.point_first + p].y);
      }
    for (const OverlayShape& s : f.shapes) {
      if (s.object >= 0) continue;
      out.push_back({{s.closed, -1}, {}});
      for (std::uint32_t p = 0; p < s.point_count; ++p)
        out.back().second.emplace_back(f.points[s.point_first + p].x, f.points[s.point_first + p].y);
    }
    return out;
  };
  if (shapes(a) != shapes(b)) return fail("shapes differ");
  if (a.texts.size() != b.texts.size()) return fail("texts: count");
  for (std::size_t i = 0; i < a.texts.size(); ++i) {
    const OverlayText& x = a.texts[i];
    const OverlayText& y = b.texts[i];
    if (x.x != y.x || x.y != y.y || a.text(x.text) != b.text(y.text) || x.has_color != y.has_color ||
        (x.has_color && !(x.color == y.color))) {
      return fail("texts[" + std::to_string(i) + "]");
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace handoff::media::test
