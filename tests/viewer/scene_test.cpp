// The synthetic scene: determinism, motion, colour of the bars, ground-truth
// overlays, odd sizes, P010, and the embedded kernel's ABI (PTX parameter size
// equals sizeof(SceneState), so host and kernel agree on the struct).
#include <handoff/error.hpp>
#include <handoff/media/color.hpp>
#include <handoff/media/overlay.hpp>
#include <handoff/media/scene.hpp>
#include <handoff/media/scene_math.hpp>  // private: the per-pixel code checked here

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace handoff::media {
namespace {

bool same(const HostFrame& a, const HostFrame& b) {
  return std::memcmp(a.luma(), b.luma(), a.luma_pitch() * a.height()) == 0 &&
         std::memcmp(a.chroma(), b.chroma(), a.chroma_pitch() * chroma_height(a.height())) == 0;
}

TEST(Scene, DeterministicForAFrameIndex) {
  SceneOptions o;
  o.width = 160;
  o.height = 90;
  auto a = make_scene_source(o);
  auto b = make_scene_source(o);
  HostFrame fa(PixelFormat::NV12, 160, 90), fb(PixelFormat::NV12, 160, 90, 64);
  a->seek(17);
  ASSERT_TRUE(a->read_into(fa.target()));
  for (int i = 0; i < 17; ++i) ASSERT_TRUE(b->read_into(fb.target()));  // play up to it
  ASSERT_TRUE(b->read_into(fb.target()));
  for (std::uint32_t y = 0; y < 90; ++y)
    for (std::uint32_t x = 0; x < 160; ++x) ASSERT_EQ(fa.y(x, y), fb.y(x, y)) << x << "," << y;
  EXPECT_EQ(a->position(), 18);
  EXPECT_EQ(a->info().frame_count, -1);
  // The next frame differs (things move).
  HostFrame next(PixelFormat::NV12, 160, 90);
  ASSERT_TRUE(a->read_into(next.target()));
  EXPECT_FALSE(same(fa, next));
}

TEST(Scene, StateIsPureAndObjectsMove) {
  SceneOptions o;
  const scene::SceneState s1 = scene_state(o, 5), s2 = scene_state(o, 5), s3 = scene_state(o, 40);
  EXPECT_EQ(std::memcmp(&s1, &s2, sizeof s1), 0);
  EXPECT_NE(s1.boxes[0].x0, s3.boxes[0].x0);
  EXPECT_NE(s1.circles[0].cx, s3.circles[0].cx);
  EXPECT_NE(s1.kp_x[0], s3.kp_x[0]);
  for (int i = 0; i < s1.box_count; ++i) {
    EXPECT_GE(s1.boxes[i].x0, 0);
    EXPECT_LE(s1.boxes[i].x1, float(o.width));
    EXPECT_LE(s1.boxes[i].y1, float(o.height));
  }
  EXPECT_THROW(scene_state(SceneOptions{0, 10}, 0), UsageError);
  EXPECT_THROW(scene_state(SceneOptions{kMaxFrameDimension + 1, 10}, 0), UsageError);
}

// Finds a pixel of bar `bar` not covered by any moving object, reads its codes.
TEST(Scene, BarsHaveTheReferenceColours) {
  for (PixelFormat fmt : {PixelFormat::NV12, PixelFormat::P010}) {
    for (Colorimetry c : {Colorimetry{ColorMatrix::BT709, ColorRange::Limited, ChromaSiting::Left},
                          Colorimetry{ColorMatrix::BT601, ColorRange::Full, ChromaSiting::Center}}) {
      SceneOptions o;
      o.width = 224;
      o.height = 126;
      o.format = fmt;
      o.colorimetry = c;
      auto src = make_scene_source(o);
      src->seek(3);
      HostFrame fr(fmt, o.width, o.height);
      ASSERT_TRUE(src->read_into(fr.target()));
      const scene::SceneState s = scene_state(o, 3);
      const double bars[7][3] = {{.75, .75, .75}, {.75, .75, 0}, {0, .75, .75}, {0, .75, 0},
                                 {.75, 0, .75},   {.75, 0, 0},   {0, 0, .75}};
      int checked = 0;
      for (int bar = 0; bar < 7; ++bar) {
        // Bars are 32 px wide here; scan a 2x2 block inside the bar until one is free of objects.
        for (std::uint32_t cy = 0; cy < 40 && checked <= bar; ++cy) {
          const std::uint32_t cx = std::uint32_t(bar * 16 + 8);
          const float px = 2.0f * cx + 0.5f, py = 2.0f * cy + 0.5f;
          float rgb[4][3];
          bool clear = true;
          for (int k = 0; k < 4; ++k) {
            scene::scene_rgb(s, px + float(k % 2), py + float(k / 2), rgb[k]);
            float bg[3];
            scene::background_rgb(s, px + float(k % 2), py + float(k / 2), bg);
            clear = clear && std::memcmp(rgb[k], bg, sizeof bg) == 0;
          }
          if (!clear) continue;
          const YuvCodes want = rgb_to_yuv(bars[bar][0], bars[bar][1], bars[bar][2], c.matrix, c.range, fmt);
          EXPECT_NEAR(fr.y(2 * cx, 2 * cy), want.y, 1) << "bar " << bar;
          EXPECT_NEAR(fr.u(cx, cy), want.cb, 1) << "bar " << bar;
          EXPECT_NEAR(fr.v(cx, cy), want.cr, 1) << "bar " << bar;
          ++checked;
        }
      }
      EXPECT_EQ(checked, 7) << "every bar has a free block";
    }
  }
}

TEST(Scene, BoxesAreDrawnWhereTheOverlaysSay) {
  SceneOptions o;
  o.width = 320;
  o.height = 180;
  auto src = make_scene_source(o);
  OverlayFrame ov;
  for (std::int64_t index : {0, 33, 250}) {
    src->seek(index);
    HostFrame fr(PixelFormat::NV12, o.width, o.height);
    ASSERT_TRUE(src->read_into(fr.target()));
    ASSERT_TRUE(src->overlays_for(index, ov));
    EXPECT_EQ(ov.frame, index);
    const scene::SceneState s = scene_state(o, index);
    ASSERT_EQ(ov.objects.size(), 6u);  // 3 boxes, 2 circles, 1 person
    // The person has 17 keypoints and 16 edges; there is a polygon, a polyline and a text.
    const OverlayObject& person = ov.objects[5];
    EXPECT_EQ(ov.text(person.label), "person");
    EXPECT_EQ(person.keypoint_count, 17u);
    EXPECT_EQ(person.edge_count, 16u);
    EXPECT_EQ(ov.shapes.size(), 2u);
    EXPECT_EQ(ov.texts.size(), 1u);
    EXPECT_NE(ov.text(ov.texts[0].text).find(std::to_string(index)), std::string::npos);
    for (int i = 0; i < 3; ++i) {
      const OverlayObject& b = ov.objects[std::size_t(i)];
      EXPECT_TRUE(b.has_box);
      EXPECT_GE(b.score, 0.5f);
      EXPECT_LE(b.score, 1.0f);
      EXPECT_EQ(b.track_id, i + 1);
      // The box's top-left pixel carries the box's colour unless something drawn later covers it.
      const std::uint32_t x = std::uint32_t(b.x0), y = std::uint32_t(b.y0);
      float rgb[3];
      scene::scene_rgb(s, float(x) + 0.5f, float(y) + 0.5f, rgb);
      if (rgb[0] != s.boxes[i].r || rgb[1] != s.boxes[i].g || rgb[2] != s.boxes[i].b) continue;
      const YuvCodes want = rgb_to_yuv(s.boxes[i].r, s.boxes[i].g, s.boxes[i].b, o.colorimetry.matrix,
                                       o.colorimetry.range, PixelFormat::NV12);
      EXPECT_NEAR(fr.y(x, y), want.y, 1) << "box " << i << " frame " << index;
      // ...and the pixel just outside the box does not (bars / ramps are other colours).
      if (x > 0) {
        float out[3];
        scene::scene_rgb(s, float(x) - 0.5f, float(y) + 0.5f, out);
        EXPECT_FALSE(out[0] == s.boxes[i].r && out[1] == s.boxes[i].g && out[2] == s.boxes[i].b);
      }
    }
    // Keypoints are drawn white.
    const Keypoint& nose = ov.keypoints[person.keypoint_first];
    EXPECT_NEAR(fr.y(std::uint32_t(nose.x), std::uint32_t(nose.y)), 235, 1);
  }
}

TEST(Scene, OddSizesAndP010) {
  for (auto [w, h] : {std::pair{7u, 5u}, std::pair{1u, 1u}, std::pair{33u, 17u}}) {
    SceneOptions o;
    o.width = w;
    o.height = h;
    o.format = PixelFormat::P010;
    auto src = make_scene_source(o);
    HostFrame fr(PixelFormat::P010, w, h);
    ASSERT_TRUE(src->read_into(fr.target()));
    for (std::uint32_t y = 0; y < h; ++y)
      for (std::uint32_t x = 0; x < w; ++x) {
        const std::uint8_t lo = fr.luma()[y * fr.luma_pitch() + 2 * x];
        EXPECT_EQ(lo & 0x3F, 0) << "P010 keeps its low 6 bits zero";
        EXPECT_GE(fr.y(x, y), 64);
        EXPECT_LE(fr.y(x, y), 940);
      }
  }
}

// The CPU renderer draws bands on several threads: the same bytes as one
// thread, for odd sizes (a last band shorter than the others) and P010.
TEST(Scene, BandsOnSeveralThreadsGiveTheSameFrame) {
  for (PixelFormat f : {PixelFormat::NV12, PixelFormat::P010}) {
    SceneOptions one;
    one.width = 333;
    one.height = 187;
    one.format = f;
    one.threads = 1;
    SceneOptions many = one;
    many.threads = 5;
    auto a = make_scene_source(one);
    auto b = make_scene_source(many);
    HostFrame fa(f, one.width, one.height), fb(f, one.width, one.height);
    for (int i = 0; i < 4; ++i) {
      std::memset(fb.luma(), 0xAB, fb.luma_pitch() * one.height);
      ASSERT_TRUE(a->read_into(fa.target()));
      ASSERT_TRUE(b->read_into(fb.target()));
      EXPECT_EQ(std::memcmp(fa.luma(), fb.luma(), fa.luma_pitch() * one.height), 0) << "frame " << i;
      EXPECT_EQ(std::memcmp(fa.chroma(), fb.chroma(), fa.chroma_pitch() * chroma_height(one.height)), 0)
          << "frame " << i;
    }
  }
}

TEST(Scene, GridCoversEveryChromaSample) {
  const Grid g = scene_grid(1920, 1080);
  EXPECT_EQ(g.x, (960u + kSceneBlock - 1) / kSceneBlock);
  EXPECT_EQ(g.y, (540u + kSceneBlock - 1) / kSceneBlock);
  const Grid odd = scene_grid(33, 1);
  EXPECT_EQ(odd.x, 2u);
  EXPECT_EQ(odd.y, 1u);
}

TEST(Scene, EmbeddedKernelMatchesTheHostStruct) {
  if (!has_cuda_kernel()) {
    EXPECT_TRUE(scene_ptx().empty());
    EXPECT_TRUE(scene_cubin().empty());
    GTEST_SKIP() << "built without nvcc: no embedded scene kernel";
  }
  const std::string ptx(scene_ptx());
  EXPECT_EQ(ptx.size(), std::strlen(scene_ptx().data())) << "PTX text is NUL-terminated for cuModuleLoadData";
  EXPECT_NE(ptx.find(".entry " + std::string(kSceneKernelName)), std::string::npos);
  // ".param .align 4 .b8 handoff_scene_kernel_param_4[N]": the by-value SceneState.
  const std::string param = std::string(kSceneKernelName) + "_param_4[";
  const auto at = ptx.find(param);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(std::stoul(ptx.substr(at + param.size())), sizeof(scene::SceneState))
      << "kernel and host disagree on SceneState";
  EXPECT_NE(ptx.find(".target sm_75"), std::string::npos);
  const auto cubin = scene_cubin();
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(std::memcmp(cubin.data(), "\x7f" "ELF", 4), 0);
}

}  // namespace
}  // namespace handoff::media
