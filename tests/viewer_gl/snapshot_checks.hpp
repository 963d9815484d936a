#pragma once
// Pixel checks on a Viewer snapshot (RgbaImage) shared by the viewer tests:
// one pixel's RGB within a tolerance, and an overlay box's edge where the
// geometry puts it (box_edge.hpp) over a known colour.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include <handoff/viewer.hpp>

#include "box_edge.hpp"

namespace handoff::view::test {

inline void expect_rgb_near(const RgbaImage& img, std::uint32_t x, std::uint32_t y, std::array<std::uint8_t, 3> want,
                            int tolerance, const std::string& what) {
  const std::uint8_t* p = img.pixel(x, y);
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(int(p[k]), int(want[std::size_t(k)]), tolerance) << what << " at (" << x << ", " << y << ") channel " << k;
}

// The edge through (x, y) drawn in `line` over `under`; the fringes are the
// float64 blend of the two at half coverage, rounded.
inline void expect_box_edge(const RgbaImage& img, std::uint32_t x, std::uint32_t y, bool vertical,
                            std::array<std::uint8_t, 3> line, std::array<std::uint8_t, 3> under,
                            const std::string& what) {
  std::array<std::uint8_t, 3> half{};
  for (std::size_t k = 0; k < 3; ++k) half[k] = std::uint8_t(std::lround(0.5 * line[k] + 0.5 * under[k]));
  handoff::test::expect_box_edge(
      [&](int px, int py, const std::array<std::uint8_t, 3>& want, int tol, const std::string& w) {
        expect_rgb_near(img, std::uint32_t(px), std::uint32_t(py), want, tol, w);
      },
      int(x), int(y), vertical, line, half, under, what);
}

}  // namespace handoff::view::test
