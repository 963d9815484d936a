// The colour accuracy sweep: a grid over the whole input code cube (8-bit for
// NV12, 10-bit for P010) is rendered by the real shader (and again by the CPU
// path, ViewerConvert::Cpu) into an FBO, read back, and every pixel compared
// with the float64 reference. Max error <= 1 code value for all 12
// combinations of matrix x range x bit depth, on both paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <handoff/media/color.hpp>

#include "frame_renderer.hpp"
#include "frame_target.hpp"
#include "gl_test_context.hpp"
#include "test_frames.hpp"

namespace handoff::view::test {
namespace {

struct Combo {
  ColorMatrix matrix;
  ColorRange range;
  PixelFormat format;
};

using Param = std::tuple<Combo, ViewerConvert>;

std::string combo_name(const ::testing::TestParamInfo<Param>& info) {
  const Combo& c = std::get<0>(info.param);
  return std::string(to_string(c.matrix)) + "_" + std::string(to_string(c.range)) + "_" +
         std::string(to_string(c.format)) + (std::get<1>(info.param) == ViewerConvert::Cpu ? "_cpu" : "_gpu");
}

class AccuracySweep : public GlTest, public ::testing::WithParamInterface<Param> {};

// Grid of codes covering the whole range, both ends included.
std::vector<int> code_grid(PixelFormat f) {
  std::vector<int> v;
  const int max = f == PixelFormat::NV12 ? 255 : 1023;
  const int step = f == PixelFormat::NV12 ? 5 : 19;
  for (int c = 0; c <= max; c += step) v.push_back(c);
  if (v.back() != max) v.push_back(max);
  return v;
}

TEST_P(AccuracySweep, EveryGridPointWithinOneCodeOfFloat64Reference) {
  const Combo c = std::get<0>(GetParam());
  const Colorimetry col{c.matrix, c.range, ChromaSiting::Left};
  const std::vector<int> g = code_grid(c.format);
  const std::size_t n = g.size();
  const std::size_t cells = n * n * n;
  // Each grid point is a 4x4 luma block with its 2x2 chroma samples equal, and
  // the block's centre 2x2 pixels are checked: their chroma interpolation
  // stays inside the block for every siting.
  const std::uint32_t cols = 512;
  const std::uint32_t rows = static_cast<std::uint32_t>((cells + cols - 1) / cols);
  TestFrame tf(c.format, cols * 4, rows * 4);
  for (std::size_t i = 0; i < cells; ++i) {
    const int y = g[i % n], cb = g[(i / n) % n], cr = g[i / (n * n)];
    const std::uint32_t bx = static_cast<std::uint32_t>(i % cols) * 4, by = static_cast<std::uint32_t>(i / cols) * 4;
    for (std::uint32_t dy = 0; dy < 4; ++dy)
      for (std::uint32_t dx = 0; dx < 4; ++dx) tf.set_y(bx + dx, by + dy, y);
    for (std::uint32_t dy = 0; dy < 2; ++dy)
      for (std::uint32_t dx = 0; dx < 2; ++dx) tf.set_uv(bx / 2 + dx, by / 2 + dy, cb, cr);
  }

  FrameRenderer renderer(std::get<1>(GetParam()));
  ASSERT_EQ(renderer.cpu_convert(), std::get<1>(GetParam()) == ViewerConvert::Cpu);
  FrameTarget target;
  target.resize(static_cast<int>(tf.width()), static_cast<int>(tf.height()));
  renderer.upload(tf.frame(col));
  target.bind();
  DrawOptions o;
  o.colorimetry = col;
  renderer.draw(o, target.width(), target.height());
  std::vector<std::uint8_t> rgba;
  target.read_rgba(rgba);
  FrameTarget::unbind();

  int worst = 0;
  std::string worst_at;
  std::size_t checked = 0;
  for (std::size_t i = 0; i < cells; ++i) {
    const int y = g[i % n], cb = g[(i / n) % n], cr = g[i / (n * n)];
    const media::Rgb r = media::yuv_to_rgb(y, cb, cr, c.matrix, c.range, c.format);  // the media library's float64 reference
    const double ref[3] = {r.r, r.g, r.b};
    const std::size_t bx = (i % cols) * 4, by = (i / cols) * 4;
    for (std::size_t dy = 1; dy < 3; ++dy)
      for (std::size_t dx = 1; dx < 3; ++dx) {
        const std::uint8_t* px = &rgba[((by + dy) * tf.width() + bx + dx) * 4];
        for (int k = 0; k < 3; ++k) {
          const int want = static_cast<int>(std::lround(std::clamp(ref[k], 0.0, 1.0) * 255.0));
          const int err = std::abs(int(px[k]) - want);
          if (err > worst) {
            worst = err;
            worst_at = "Y=" + std::to_string(y) + " Cb=" + std::to_string(cb) + " Cr=" + std::to_string(cr) +
                       " channel " + "RGB"[k] + ": got " + std::to_string(px[k]) + ", want " + std::to_string(want);
          }
        }
        ++checked;
      }
  }
  EXPECT_EQ(checked, cells * 4);
  EXPECT_LE(worst, 1) << "worst at " << worst_at;
  RecordProperty("max_error", worst);
}

std::vector<Combo> all_combos() {
  std::vector<Combo> v;
  for (auto f : {PixelFormat::NV12, PixelFormat::P010})
    for (auto m : {ColorMatrix::BT601, ColorMatrix::BT709, ColorMatrix::BT2020})
      for (auto r : {ColorRange::Limited, ColorRange::Full}) v.push_back({m, r, f});
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllCombos, AccuracySweep,
                         ::testing::Combine(::testing::ValuesIn(all_combos()),
                                            ::testing::Values(ViewerConvert::Gpu, ViewerConvert::Cpu)),
                         combo_name);

}  // namespace
}  // namespace handoff::view::test
