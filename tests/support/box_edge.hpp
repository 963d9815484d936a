#pragma once
// Where an overlay box's edge must be on screen, for the tiers that check
// drawn boxes (viewer_gl, gst). ImGui's AddRect (line width 2, anti-aliased;
// viewer/view/src/overlay_draw.cpp) strokes through the centres of the box's
// first and last columns and rows (x0, x1 - 1, y0, y1 - 1): a 1-px solid core
// covers that pixel, 1-px fringes cover the pixels either side by half, and
// two pixels off the frame is untouched.
#include <string>

namespace handoff::test {

// Checks the edge through (x, y) (`vertical`: a left or right edge, else a top
// or bottom one): the line's colour on it, `half` (the line over the frame at
// half coverage) either side within 2 codes, `under` two pixels off within 1.
// `check(x, y, want, tolerance, what)` asserts one pixel in the caller's image
// and colour types.
template <typename Check, typename Colour>
void expect_box_edge(Check&& check, int x, int y, bool vertical, const Colour& line, const Colour& half,
                     const Colour& under, const std::string& what) {
  auto at = [&](int d, const Colour& want, int tolerance, const char* part) {
    check(vertical ? x + d : x, vertical ? y : y + d, want, tolerance, what + part);
  };
  at(0, line, 2, ": the line");
  at(-1, half, 2, ": its outer fringe");
  at(1, half, 2, ": its inner fringe");
  at(-2, under, 1, ": clear of it outside");
  at(2, under, 1, ": clear of it inside");
}

}  // namespace handoff::test
