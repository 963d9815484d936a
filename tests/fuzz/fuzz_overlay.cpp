// Fuzz target: the overlay line parser and the JSON Lines store. A ParseError
// is an accepted outcome; anything else (crash, sanitizer report, another
// exception type, an object range outside the flat arrays) is a bug.
#include <handoff/media/error.hpp>
#include <handoff/media/overlay.hpp>

#include "fuzz_common.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {
void check_ranges(const handoff::media::OverlayFrame& f) {
  for (const auto& o : f.objects) {
    if (std::size_t(o.keypoint_first) + o.keypoint_count > f.keypoints.size()) __builtin_trap();
    if (std::size_t(o.edge_first) + o.edge_count > f.edges.size()) __builtin_trap();
    if (std::size_t(o.shape_first) + o.shape_count > f.shapes.size()) __builtin_trap();
    if (std::size_t(o.label.offset) + o.label.size > f.text_pool.size()) __builtin_trap();
    for (std::uint32_t e = 0; e < o.edge_count; ++e) {
      const auto& edge = f.edges[o.edge_first + e];
      if (edge[0] >= o.keypoint_count || edge[1] >= o.keypoint_count) __builtin_trap();
    }
  }
  for (const auto& s : f.shapes) {
    if (std::size_t(s.point_first) + s.point_count > f.points.size()) __builtin_trap();
  }
  for (const auto& t : f.texts) {
    if (std::size_t(t.text.offset) + t.text.size > f.text_pool.size()) __builtin_trap();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace handoff::media;
  fuzz::quiet_log();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  OverlayParseOptions options;
  options.frame_width = 1920;
  options.frame_height = 1080;
  options.max_objects = 100000;
  options.max_points = 400000;
  // One line, as the parser sees it.
  OverlayLineParser parser(options);
  OverlayFrame frame;
  try {
    parser.parse(text, frame, "fuzz.jsonl", 1);
    check_ranges(frame);
  } catch (const ParseError&) {
  }
  // The whole input as a file: bad lines are skipped.
  OverlayStore store;
  try {
    store.load_jsonl_text(text, "fuzz.jsonl", options);
  } catch (const ParseError&) {
    __builtin_trap();  // the store never throws for bad lines
  }
  for (std::int64_t i = 0; i < 4; ++i) {
    if (const OverlayFrame* f = store.find(i)) check_ranges(*f);
  }
  return 0;
}
