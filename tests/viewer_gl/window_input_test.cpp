// The window's mouse and speed keys as logic, without X input: a drag pans so
// the view point grabbed at the press stays under the cursor (also when the
// cursor moved on before the press was read), the wheel zooms around the
// cursor, and + / - keep to --speed's range without turning round.
#include <gtest/gtest.h>

#include <handoff/viewer.hpp>

#include "window_input.hpp"

namespace handoff::view::test {
namespace {

MouseInput at(double x, double y, bool down) {
  MouseInput m;
  m.x = x;
  m.y = y;
  m.down = down;
  return m;
}

MouseInput press(double press_x, double press_y, double x, double y) {
  MouseInput m = at(x, y, true);
  m.pressed = true;
  m.press_x = press_x;
  m.press_y = press_y;
  return m;
}

TEST(WindowInput, ADragKeepsTheGrabbedPointUnderTheCursor) {
  WindowInput in;
  in.mouse(at(100, 100, false));
  const ViewTransform before = in.view();
  const double fx = before.to_frame_x(100), fy = before.to_frame_y(80);
  in.mouse(press(100, 80, 100, 80));
  in.mouse(at(137, 61, true));
  in.mouse(at(150, 90, true));
  EXPECT_DOUBLE_EQ(in.view().to_frame_x(150), fx);
  EXPECT_DOUBLE_EQ(in.view().to_frame_y(90), fy);
  in.mouse(at(300, 300, false));  // released: no more panning
  in.mouse(at(10, 10, false));
  EXPECT_DOUBLE_EQ(in.view().to_frame_x(150), fx);
}

// The press and the motion after it came in the same frame: the press is read
// with the cursor already moved on, and the drag still starts where it went down.
TEST(WindowInput, ADragWhoseMotionCameWithThePressPans) {
  WindowInput in;
  const ViewTransform before = in.view();
  const double fx = before.to_frame_x(200), fy = before.to_frame_y(120);
  in.mouse(press(200, 120, 260, 100));
  EXPECT_DOUBLE_EQ(in.view().to_frame_x(260), fx);
  EXPECT_DOUBLE_EQ(in.view().to_frame_y(100), fy);
  in.mouse(at(270, 90, true));
  EXPECT_DOUBLE_EQ(in.view().to_frame_x(270), fx);
  EXPECT_DOUBLE_EQ(in.view().to_frame_y(90), fy);
}

TEST(WindowInput, APressOverThePanelNeitherDragsNorZooms) {
  WindowInput in;
  const ViewTransform before = in.view();
  MouseInput m = press(10, 10, 40, 40);
  m.captured = true;
  m.wheel = 2;
  in.mouse(m);
  in.mouse(at(80, 80, true));
  EXPECT_EQ(in.view(), before);
}

TEST(WindowInput, TheWheelZoomsAroundTheCursor) {
  WindowInput in;
  MouseInput m = at(33, 44, false);
  const double fx = in.view().to_frame_x(33), fy = in.view().to_frame_y(44);
  m.wheel = 3;
  in.mouse(m);
  EXPECT_NEAR(in.view().scale, 1.953125, 1e-12);
  EXPECT_NEAR(in.view().to_frame_x(33), fx, 1e-9);
  EXPECT_NEAR(in.view().to_frame_y(44), fy, 1e-9);
}

// + never slows and - never speeds up, over --speed's whole range (and from a
// speed set outside it); each stops at the range's end.
TEST(WindowInput, SpeedKeysKeepToTheSpeedRangeAndNeverTurnRound) {
  for (double s : {Viewer::kMinSpeed, 0.03, 0.125, 1.0, 8.0, 12.0, 48.0, Viewer::kMaxSpeed, 100.0, 0.001}) {
    EXPECT_GE(faster(s), s) << s;
    EXPECT_LE(slower(s), s) << s;
  }
  EXPECT_DOUBLE_EQ(faster(8.0), 16.0);
  EXPECT_DOUBLE_EQ(faster(48.0), Viewer::kMaxSpeed);
  EXPECT_DOUBLE_EQ(faster(Viewer::kMaxSpeed), Viewer::kMaxSpeed);
  EXPECT_DOUBLE_EQ(slower(0.125), 0.0625);
  EXPECT_DOUBLE_EQ(slower(0.015), Viewer::kMinSpeed);
  EXPECT_DOUBLE_EQ(slower(Viewer::kMinSpeed), Viewer::kMinSpeed);
}

}  // namespace
}  // namespace handoff::view::test
