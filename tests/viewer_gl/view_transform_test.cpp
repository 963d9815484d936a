// View maths (no GL): fit keeps the aspect and centres, zoom keeps the point
// under the cursor fixed, pan moves by whole pixels.
#include <gtest/gtest.h>

#include "view_transform.hpp"

namespace handoff::view::test {
namespace {

TEST(ViewTransform, FitKeepsAspectAndCentres) {
  const ViewTransform v = fit_view(1920, 1080, 800, 800);
  EXPECT_DOUBLE_EQ(v.scale, 800.0 / 1920.0);
  EXPECT_DOUBLE_EQ(v.offset_x, 0.0);
  EXPECT_NEAR(v.to_fb_y(540), 400.0, 0.5) << "frame centre at the view centre";
  const ViewTransform tall = fit_view(100, 400, 800, 800);
  EXPECT_DOUBLE_EQ(tall.scale, 2.0);
  EXPECT_DOUBLE_EQ(tall.offset_x, 300.0);
}

TEST(ViewTransform, ZoomKeepsThePointUnderTheCursor) {
  ViewTransform v = fit_view(640, 360, 1280, 720);
  const double fx = v.to_frame_x(333), fy = v.to_frame_y(222);
  v = zoom_around(v, 3.7, 333, 222);
  EXPECT_NEAR(v.to_frame_x(333), fx, 1e-9);
  EXPECT_NEAR(v.to_frame_y(222), fy, 1e-9);
  EXPECT_NEAR(v.scale, 2.0 * 3.7, 1e-12);
  v = zoom_around(v, 1e9, 0, 0);
  EXPECT_LE(v.scale, 256.0) << "zoom is bounded";
}

TEST(ViewTransform, ActualSizeAndPan) {
  ViewTransform v = actual_size_view(100, 50, 300, 150);
  EXPECT_DOUBLE_EQ(v.scale, 1.0);
  EXPECT_DOUBLE_EQ(v.to_fb_x(0), 100.0);
  v = pan(v, -7, 3);
  EXPECT_DOUBLE_EQ(v.to_fb_x(0), 93.0);
  EXPECT_DOUBLE_EQ(v.to_fb_y(0), 53.0);
}

}  // namespace
}  // namespace handoff::view::test
