// Dense layers through handoff::Viewer, checked through snapshot(), built
// twice like viewer_api_test.cpp: headless (EGL) and in a window (Xvfb,
// HANDOFF_TEST_WINDOW=1); GL debug on, any KHR_debug error fails: class maps in their colours at
// their opacity (within 2 codes of round(a * layer + (1 - a) * image)),
// transparent ids, default colours, scalar maps through a colormap with NaN
// holes, a layer over a target rectangle, instance masks in their detection's
// colour with an outline, the caller's arrays free when show() returns, and
// bad layers refused naming the field with the viewer going on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/viewer.hpp>

#include "snapshot_checks.hpp"
#include "viewer_display_test.hpp"

#include "viewer_frames.hpp"

namespace handoff::view::test {
namespace {

constexpr std::uint32_t kW = 64, kH = 48;
constexpr Yuv kGrey{126, 128, 128};

// Param: the colour path (Cpu: layers blended into the converted frame on
// the CPU, layer_canvas.cpp; Gpu: the layer shaders), both on any GL.
class LayersView : public ViewerDisplayTest, public ::testing::WithParamInterface<ViewerConvert> {
 protected:
  void SetUp() override {
    ViewerDisplayTest::SetUp();
    if (IsSkipped()) return;
    ViewerOptions o = test_view_options("layers");
    o.convert = GetParam();
    viewer_ = std::make_unique<Viewer>(o);
    image_ = expected_rgb(kGrey, PixelFormat::NV12, Colorimetry{});
  }
  void TearDown() override {
    if (!viewer_) return;
    const ViewerDiagnostics d = viewer_->diagnostics();
    EXPECT_EQ(d.gl_errors, 0u) << d.first_gl_error;
  }
  RgbaImage show(const media::OverlayFrame& overlays) {
    viewer_->show(solid_frame(PixelFormat::NV12, kW, kH, kGrey, ++index_), overlays);
    return viewer_->snapshot();
  }
  // round(a * layer + (1 - a) * image), the reference blend.
  std::array<std::uint8_t, 3> blend(media::Color8 layer, float a) const {
    const double l[3] = {double(layer.r), double(layer.g), double(layer.b)};
    std::array<std::uint8_t, 3> out{};
    for (int k = 0; k < 3; ++k)
      out[std::size_t(k)] = std::uint8_t(std::lround(a * l[k] + (1 - a) * double(image_[std::size_t(k)])));
    return out;
  }

  std::unique_ptr<Viewer> viewer_;
  std::array<std::uint8_t, 3> image_{};
  std::int64_t index_ = 0;
};

template <typename T>
media::LayerArray host_array(std::vector<T>& v, media::SampleType type, std::uint32_t w, std::uint32_t h,
                             std::uint32_t count = 1) {
  media::LayerArray a;
  a.data = v.data();
  a.type = type;
  a.width = w;
  a.height = h;
  a.count = count;
  return a;
}

TEST_P(LayersView, ClassMapBlendsAtItsOpacityWithTransparentIds) {
  // Left half id 0 (transparent), right half id 5 (given a colour), full size.
  std::vector<std::uint8_t> ids(kW * kH);
  for (std::uint32_t y = 0; y < kH; ++y)
    for (std::uint32_t x = 0; x < kW; ++x) ids[y * kW + x] = x < kW / 2 ? 0 : 5;
  const media::Color8 orange{250, 120, 10, 255};
  for (float a : {0.5f, 0.25f, 1.0f}) {
    media::OverlayFrame f;
    media::ClassMap m;
    m.ids = host_array(ids, media::SampleType::U8, kW, kH);
    m.colors[5] = orange;
    m.transparent = {0};
    m.opacity = a;
    f.layers.push_back(m);
    const RgbaImage img = show(f);
    ASSERT_EQ(img.width(), kW);
    expect_rgb_near(img, 8, 20, image_, 1, "transparent id 0");
    expect_rgb_near(img, 50, 20, blend(orange, a), 2, "id 5 at opacity " + std::to_string(a));
  }
}

TEST_P(LayersView, IdsWithoutAColourTakeTheDefaultPalette) {
  // Three bands of ids 3, 300 (above 255) and -7 (signed), 16-bit signed.
  std::vector<std::int16_t> ids(kW * kH);
  const std::int16_t bands[3] = {3, 300, -7};
  for (std::uint32_t y = 0; y < kH; ++y)
    for (std::uint32_t x = 0; x < kW; ++x) ids[y * kW + x] = bands[std::min<std::uint32_t>(x * 3 / kW, 2)];
  media::OverlayFrame f;
  media::ClassMap m;
  m.ids = host_array(ids, media::SampleType::I16, kW, kH);
  m.opacity = 1.0f;
  f.layers.push_back(m);
  const RgbaImage img = show(f);
  for (int b = 0; b < 3; ++b) {
    const media::Color8 c = media::default_class_color(bands[b]);
    expect_rgb_near(img, std::uint32_t(b * kW / 3 + 8), 24, {c.r, c.g, c.b}, 2, "id " + std::to_string(bands[b]));
  }
}

TEST_P(LayersView, ScalarMapThroughItsColormapWithHolesUndrawn) {
  // A quarter-size map (bilinear up to the frame): constant 0.5 with a NaN
  // hole in its top-left quarter and +inf in its top-right.
  const std::uint32_t w = kW / 4, h = kH / 4;
  std::vector<float> v(w * h, 0.5f);
  for (std::uint32_t y = 0; y < h / 2; ++y)
    for (std::uint32_t x = 0; x < w / 2; ++x) {
      v[y * w + x] = std::numeric_limits<float>::quiet_NaN();
      v[y * w + x + w / 2] = std::numeric_limits<float>::infinity();
    }
  for (media::Colormap cm : {media::Colormap::Viridis, media::Colormap::Turbo}) {
    media::OverlayFrame f;
    media::ScalarMap s;
    s.values = host_array(v, media::SampleType::F32, w, h);
    s.colormap = cm;
    s.range = std::array{0.0, 1.0};
    s.opacity = 1.0f;
    f.layers.push_back(s);
    const RgbaImage img = show(f);
    const media::Color8 c = media::colormap_table(cm)[128];  // 0.5 of the range
    expect_rgb_near(img, 32, 40, {c.r, c.g, c.b}, 1, std::string(media::to_string(cm)) + " at 0.5");
    expect_rgb_near(img, 6, 4, image_, 1, "NaN hole");
    expect_rgb_near(img, 58, 4, image_, 1, "inf hole");
  }
}

TEST_P(LayersView, AScalarMapIsStretchedBilinearly) {
  // A 4 x 4 map, value (x + y) / 6, over the 64 x 48 frame: at each frame
  // pixel the bilinear tap between the map's texel centres (clamped at the
  // edges, as GL's CLAMP_TO_EDGE), against the float64 reference. Nearest
  // sampling would be off by up to 21 codes between the centres.
  constexpr std::uint32_t n = 4;
  std::vector<float> v(n * n);
  for (std::uint32_t y = 0; y < n; ++y)
    for (std::uint32_t x = 0; x < n; ++x) v[y * n + x] = float(x + y) / 6.0f;
  media::OverlayFrame f;
  media::ScalarMap s;
  s.values = host_array(v, media::SampleType::F32, n, n);
  s.colormap = media::Colormap::Gray;
  s.range = std::array{0.0, 1.0};
  s.opacity = 1.0f;
  f.layers.push_back(s);
  const RgbaImage img = show(f);
  auto tap = [](std::uint32_t p, std::uint32_t size) {  // the map coordinate of a frame pixel's centre, clamped
    return std::clamp((double(p) + 0.5) * double(n) / double(size) - 0.5, 0.0, double(n - 1));
  };
  const auto& gray = media::colormap_table(media::Colormap::Gray);
  for (std::uint32_t y : {0u, 5u, 11u, 17u, 24u, 30u, 37u, 47u})
    for (std::uint32_t x : {0u, 3u, 9u, 14u, 22u, 31u, 40u, 51u, 63u}) {
      const double value = (tap(x, kW) + tap(y, kH)) / 6.0;  // bilinear of a linear function: exact
      const media::Color8 c = gray[std::size_t(std::lround(value * 255.0))];
      expect_rgb_near(img, x, y, {c.r, c.g, c.b}, 2, "bilinear value " + std::to_string(value));
    }
}

TEST_P(LayersView, LayersAreDrawnUnderTheVectorOverlays) {
  // An opaque class map over the whole frame and a box on it: the box's edge
  // is drawn over the layer (white line, its fringes half over red).
  std::vector<std::uint8_t> ids(kW * kH, 1);
  media::OverlayFrame f;
  media::ClassMap m;
  m.ids = host_array(ids, media::SampleType::U8, kW, kH);
  m.colors[1] = media::Color8{220, 0, 0, 255};
  m.opacity = 1.0f;
  f.layers.push_back(m);
  f.add_box(16, 10, 48, 40);  // no label, no class: a white outline
  const RgbaImage img = show(f);
  const std::array<std::uint8_t, 3> white{255, 255, 255}, red{220, 0, 0};
  expect_box_edge(img, 16, 25, true, white, red, "the box's left edge over the layer");
  expect_box_edge(img, 47, 25, true, white, red, "its right edge");
  expect_box_edge(img, 32, 10, false, white, red, "its top edge");
  expect_box_edge(img, 32, 39, false, white, red, "its bottom edge");
}

TEST_P(LayersView, ValuesOutsideAFixedRangeClamp) {
  std::vector<double> v(4 * 4);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = i < 8 ? -100.0 : 100.0;  // top half below, bottom above
  media::OverlayFrame f;
  media::ScalarMap s;
  s.values = host_array(v, media::SampleType::F64, 4, 4);
  s.colormap = media::Colormap::Gray;
  s.range = std::array{-1.0, 1.0};
  s.opacity = 1.0f;
  f.layers.push_back(s);
  const RgbaImage img = show(f);
  expect_rgb_near(img, 32, 2, {0, 0, 0}, 1, "below the range");
  expect_rgb_near(img, 32, 45, {255, 255, 255}, 1, "above the range");
}

TEST_P(LayersView, ALayerOverATargetRectangleNearestForIds) {
  // A 2 x 2 map over frame pixels (16, 8) .. (48, 40): four 16 x 16 squares.
  std::vector<std::uint32_t> ids = {1, 2, 3, 4};
  media::OverlayFrame f;
  media::ClassMap m;
  m.ids = host_array(ids, media::SampleType::U32, 2, 2);
  m.opacity = 1.0f;
  m.target = media::RectF{16, 8, 32, 32};
  for (std::int64_t id = 1; id <= 4; ++id) m.colors[id] = media::Color8{std::uint8_t(id * 60), 0, 0, 255};
  f.layers.push_back(m);
  const RgbaImage img = show(f);
  expect_rgb_near(img, 4, 4, image_, 1, "outside the target");
  expect_rgb_near(img, 60, 44, image_, 1, "outside the target");
  expect_rgb_near(img, 17, 9, {60, 0, 0}, 1, "id 1 (top-left)");
  expect_rgb_near(img, 47, 9, {120, 0, 0}, 1, "id 2 (top-right)");
  expect_rgb_near(img, 17, 39, {180, 0, 0}, 1, "id 3 (bottom-left)");
  expect_rgb_near(img, 47, 39, {240, 0, 0}, 1, "id 4 (bottom-right)");
  expect_rgb_near(img, 31, 23, {60, 0, 0}, 1, "nearest, not blended, at the squares' corner");
}

TEST_P(LayersView, InstanceMasksInTheirDetectionsColourWithAnOutline) {
  // Two boxes of classes 1 and 2 (rows 8..40); inside each, its mask: x 12..27
  // and 44..59 (widths 16), rows 28..43 (below the captions drawn at the boxes' tops).
  std::vector<std::uint8_t> masks(2 * kW * kH, 0);
  for (std::uint32_t y = 28; y < 44; ++y)
    for (std::uint32_t x = 0; x < 16; ++x) {
      masks[y * kW + 12 + x] = 255;                 // 0 / 255 and 0 / 1 masks both count at 0.5
      masks[kW * kH + y * kW + 44 + x] = 1;
    }
  media::OverlayFrame f;
  f.add_box(4, 8, 32, 46, "cat", 0.9f, 1);
  f.add_box(36, 8, 63, 46, "dog", 0.8f, 2);
  f.objects[1].has_color = true;  // a colour of its own wins over the class colour, as for its box
  f.objects[1].color = media::Color8{20, 200, 240, 255};
  media::InstanceMasks im;
  im.masks = host_array(masks, media::SampleType::U8, kW, kH, 2);
  im.opacity = 0.5f;
  f.layers.push_back(im);
  const RgbaImage img = show(f);
  const media::Color8 c0 = media::object_color(f.objects[0]);
  const media::Color8 c1 = f.objects[1].color;
  expect_rgb_near(img, 20, 36, blend(c0, 0.5f), 2, "mask 0 inside");
  expect_rgb_near(img, 52, 36, blend(c1, 0.5f), 2, "mask 1 inside");
  expect_rgb_near(img, 34, 36, image_, 1, "between the boxes");
  expect_rgb_near(img, 12, 36, {c0.r, c0.g, c0.b}, 1, "mask 0's outline (its left column)");
  expect_rgb_near(img, 59, 36, {c1.r, c1.g, c1.b}, 1, "mask 1's outline (its right column)");
  expect_rgb_near(img, 11, 36, image_, 1, "just outside mask 0");
}

TEST_P(LayersView, LayersChangeSizeTypeAndKindFromFrameToFrame) {
  // The textures are kept while a layer's format and size stay, and remade when they change.
  std::vector<std::uint8_t> small(4 * 4, 1);
  std::vector<std::uint16_t> large(kW * kH, 2);
  std::vector<float> values(8 * 8, 1.0f);
  const media::Color8 red{255, 0, 0, 255}, blue{0, 0, 255, 255};
  for (int round = 0; round < 2; ++round) {
    media::OverlayFrame a;
    media::ClassMap m;
    m.ids = host_array(small, media::SampleType::U8, 4, 4);
    m.colors = {{1, red}, {2, blue}};
    m.opacity = 1.0f;
    a.layers.push_back(m);
    expect_rgb_near(show(a), 30, 30, {255, 0, 0}, 1, "a 4 x 4 u8 map");
    media::OverlayFrame b;
    m.ids = host_array(large, media::SampleType::U16, kW, kH);
    b.layers.push_back(m);
    expect_rgb_near(show(b), 30, 30, {0, 0, 255}, 1, "a full-size u16 map");
    media::OverlayFrame c;  // the same index, now a scalar map
    media::ScalarMap s;
    s.values = host_array(values, media::SampleType::F32, 8, 8);
    s.colormap = media::Colormap::Gray;
    s.range = std::array{0.0, 1.0};
    s.opacity = 1.0f;
    c.layers.push_back(s);
    expect_rgb_near(show(c), 30, 30, {255, 255, 255}, 1, "a scalar map at the top of its range");
  }
}

TEST_P(LayersView, TheCallersArraysAreFreeWhenShowReturns) {
  std::vector<std::uint8_t> ids(kW * kH, 5);
  media::OverlayFrame f;
  media::ClassMap m;
  m.ids = host_array(ids, media::SampleType::U8, kW, kH);
  m.colors[5] = media::Color8{0, 255, 0, 255};
  m.colors[6] = media::Color8{255, 0, 255, 255};
  m.opacity = 1.0f;
  f.layers.push_back(m);
  viewer_->show(solid_frame(PixelFormat::NV12, kW, kH, kGrey, ++index_), f);
  std::fill(ids.begin(), ids.end(), 6);  // the producer's next result, in the same memory
  ids.clear();
  ids.shrink_to_fit();
  const RgbaImage img = viewer_->snapshot();
  expect_rgb_near(img, 30, 30, {0, 255, 0}, 1, "the ids as they were at show()");
}

TEST_P(LayersView, BadLayersAreRefusedNamingTheFieldAndTheViewerGoesOn) {
  std::vector<float> floats(kW * kH, 1.0f);
  media::OverlayFrame f;
  media::ClassMap m;
  m.ids = host_array(floats, media::SampleType::F32, kW, kH);
  f.layers.push_back(m);
  try {
    viewer_->show(solid_frame(PixelFormat::NV12, kW, kH, kGrey, ++index_), f);
    FAIL() << "float class ids accepted";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "layers[0].ids.type");
  }
  media::OverlayFrame masks;  // masks without boxes
  std::vector<std::uint8_t> one(kW * kH);
  media::InstanceMasks im;
  im.masks = host_array(one, media::SampleType::U8, kW, kH, 1);
  masks.layers.push_back(im);
  try {
    viewer_->show(solid_frame(PixelFormat::NV12, kW, kH, kGrey, ++index_), masks);
    FAIL() << "a mask without a box accepted";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "layers[0].masks.count");
  }
  EXPECT_TRUE(viewer_->is_open());
  const RgbaImage img = show(media::OverlayFrame{});
  expect_rgb_near(img, 30, 30, image_, 1, "the next frame");
}

// A frame has at most media::kMaxLayers (64) layers, in show() and in
// acquire() + present() alike (the limit a publisher and a recording have):
// a 65th is an InvalidFrame naming "layers" and the limit; 64 are drawn.
TEST_P(LayersView, AFrameHasAtMost64Layers) {
  std::vector<float> values(4, 0.5f);
  media::ScalarMap s;
  s.values = host_array(values, media::SampleType::F32, 2, 2);
  s.opacity = 0.01f;
  media::OverlayFrame many;
  many.layers.assign(media::kMaxLayers + 1, s);
  const auto refused = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const InvalidFrame& e) {
      EXPECT_EQ(e.field(), "layers");
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused([&] { viewer_->show(solid_frame(PixelFormat::NV12, kW, kH, kGrey, ++index_), many); })
                .find("65 layers; a frame has at most 64"),
            std::string::npos);
  EXPECT_NE(refused([&] { viewer_->present(viewer_->acquire(PixelFormat::NV12, kW, kH), many); })
                .find("65 layers; a frame has at most 64"),
            std::string::npos);
  many.layers.pop_back();
  viewer_->present(viewer_->acquire(PixelFormat::NV12, kW, kH), many);
  viewer_->show(solid_frame(PixelFormat::NV12, kW, kH, kGrey, ++index_), many);
  EXPECT_TRUE(viewer_->is_open());
  EXPECT_EQ(viewer_->stats().submitted, 2u);
}

// A 320 x 240 view, no panel, GL debug output on, on the colour path `convert`.
ViewerOptions path_options(const std::string& title, ViewerConvert convert) {
  ViewerOptions o = test_view_options(title);
  o.show_ui = false;
  o.convert = convert;
  return o;
}

// The same frame and layers (every kind, a target rectangle, NaN holes,
// default colours, an outline) drawn by both colour paths, at the frame's
// size and scaled into a 320 x 240 view: the CPU composite matches the layer
// shaders within 2 codes. A scalar map's colormap index can round the other
// way where the two bilinear filters differ in the last bits (llvmpipe
// filters in its own precision): at most 1 pixel in 200 may then be off by
// one colormap step (under 10 codes for viridis).
class LayersPaths : public ViewerDisplayTest {
 protected:
  RgbaImage draw(ViewerConvert convert, SnapshotKind kind) {
    Viewer v(path_options("layer paths", convert));
    constexpr std::uint32_t w = 96, h = 72;
    Frame frame = solid_frame(PixelFormat::NV12, w, h, Yuv{90, 110, 150}, 1);
    std::vector<std::uint8_t> ids(w * h);
    for (std::uint32_t y = 0; y < h; ++y)
      for (std::uint32_t x = 0; x < w; ++x) ids[y * w + x] = std::uint8_t((x / 7 + y / 5) % 6);
    std::vector<std::int16_t> wide(24 * 18);
    for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = std::int16_t(i % 5 == 0 ? 300 : i % 5 == 1 ? -7 : 2);
    std::vector<float> values(40 * 30);
    for (std::uint32_t y = 0; y < 30; ++y)
      for (std::uint32_t x = 0; x < 40; ++x)
        values[y * 40 + x] = (x >= 4 && x < 8 && y >= 4 && y < 8) ? std::numeric_limits<float>::quiet_NaN()
                                                                 : float(x) / 40.0f + 0.3f * float(y) / 30.0f;
    std::vector<std::uint8_t> masks(2 * w * h, 0);
    for (std::uint32_t y = 40; y < 64; ++y)
      for (std::uint32_t x = 10; x < 40; ++x) masks[y * w + x] = 1, masks[w * h + y * w + x + 40] = 1;
    media::OverlayFrame f;
    f.add_box(5, 30, 45, 70, "", 0.9f, 1);
    f.add_box(45, 30, 90, 70, "", 0.8f, 2);
    media::ClassMap m;
    m.ids = host_array(ids, media::SampleType::U8, w, h);
    m.colors[1] = media::Color8{250, 120, 10, 255};
    m.transparent = {0};
    m.opacity = 0.6f;
    f.layers.push_back(m);
    media::ScalarMap s;
    s.values = host_array(values, media::SampleType::F32, 40, 30);
    s.range = std::array{0.0, 1.3};
    s.opacity = 0.5f;
    f.layers.push_back(s);
    media::ClassMap t;  // over a target rectangle, default colours, signed
    t.ids = host_array(wide, media::SampleType::I16, 24, 18);
    t.target = media::RectF{30.5f, 10.25f, 40, 21};
    t.opacity = 0.7f;
    f.layers.push_back(t);
    media::InstanceMasks im;
    im.masks = host_array(masks, media::SampleType::U8, w, h, 2);
    im.opacity = 0.5f;
    f.layers.push_back(im);
    v.show(frame, f);
    // The frame snapshot first, as ViewerApi.BothColourPathsShowTheSameView
    // does: without it, 2 window runs in about 10 under load read a view that
    // differed from the other path's nearly everywhere, by a gradient (drawn
    // at another scale, it seems; the cause was not pinned down).
    const RgbaImage shown = v.snapshot();
    return kind == SnapshotKind::Frame ? shown : v.snapshot(kind);
  }
};

TEST_F(LayersPaths, CpuCompositeMatchesTheLayerShaders) {
  for (SnapshotKind kind : {SnapshotKind::Frame, SnapshotKind::View}) {
    const RgbaImage cpu = draw(ViewerConvert::Cpu, kind), gpu = draw(ViewerConvert::Gpu, kind);
    ASSERT_EQ(cpu.width(), gpu.width());
    ASSERT_EQ(cpu.height(), gpu.height());
    std::size_t off = 0, far = 0;
    for (std::uint32_t y = 0; y < cpu.height(); ++y)
      for (std::uint32_t x = 0; x < cpu.width(); ++x) {
        int d = 0;
        for (int k = 0; k < 3; ++k) d = std::max(d, std::abs(int(cpu.pixel(x, y)[k]) - int(gpu.pixel(x, y)[k])));
        if (d > 2) ++off;
        if (d > 10) {
          if (far++ < 5) ADD_FAILURE() << "pixel (" << x << ", " << y << ") differs by " << d;
        }
      }
    const std::size_t total = std::size_t(cpu.width()) * cpu.height();
    EXPECT_EQ(far, 0u);
    EXPECT_LE(off * 200, total) << off << " of " << total << " pixels differ by more than 2 codes";
  }
}

// Nearest ids pick the same texel on both paths everywhere, exact ties
// included: a 16 x 12 class map over a 37 x 21 frame has pixel centres on
// texel edges in rows 3, 10 and 17 ((y + 0.5) * 12 / 21 whole), where exact
// arithmetic takes the texel after the edge (checked at the frame's size
// against the rule in integers); a 128 x 96 map over a 64 x 48 frame has
// every centre on an edge. Instance masks (the same shader, with outlines
// that read the neighbours' texels) likewise. Both at the frame's size and
// scaled into the 320 x 240 view.
TEST_F(LayersPaths, NearestTexelsAreTheSameOnBothPaths) {
  struct Case {
    std::uint32_t fw, fh, lw, lh;
  };
  for (const Case c : {Case{37, 21, 16, 12}, Case{64, 48, 128, 96}, Case{21, 37, 12, 16}}) {
    SCOPED_TRACE(std::to_string(c.lw) + "x" + std::to_string(c.lh) + " over " + std::to_string(c.fw) + "x" +
                 std::to_string(c.fh));
    std::vector<std::uint8_t> ids(c.lw * c.lh), masks(c.lw * c.lh);
    for (std::uint32_t y = 0; y < c.lh; ++y)
      for (std::uint32_t x = 0; x < c.lw; ++x) {
        ids[y * c.lw + x] = std::uint8_t((x * 7 + y * 29) % 251);  // differs from every neighbour
        masks[y * c.lw + x] = std::uint8_t((x + 2 * y) % 3 == 0);
      }
    const auto draw_ids = [&](ViewerConvert convert, SnapshotKind kind, bool as_masks) {
      Viewer v(path_options("nearest ties", convert));
      Frame frame = allocate_host_frame(PixelFormat::GRAY8, c.fw, c.fh);
      for (std::uint32_t y = 0; y < c.fh; ++y)
        std::memset(static_cast<std::uint8_t*>(frame.planes[0].data) + y * frame.planes[0].pitch, 0, c.fw);
      media::OverlayFrame f;
      if (as_masks) {
        f.add_box(0, 0, float(c.fw), float(c.fh), "", 0.9f, 3);
        media::InstanceMasks im;
        im.masks = host_array(masks, media::SampleType::U8, c.lw, c.lh);
        im.opacity = 1.0f;
        f.layers.push_back(im);
      } else {
        media::ClassMap m;
        m.ids = host_array(ids, media::SampleType::U8, c.lw, c.lh);
        for (int id = 0; id < 256; ++id)
          m.colors[id] = media::Color8{std::uint8_t(id), std::uint8_t(255 - id), std::uint8_t(id * 7), 255};
        m.opacity = 1.0f;
        f.layers.push_back(m);
      }
      v.show(frame, f);
      const RgbaImage shown = v.snapshot();
      return kind == SnapshotKind::Frame ? shown : v.snapshot(kind);
    };
    for (bool as_masks : {false, true})
      for (SnapshotKind kind : {SnapshotKind::Frame, SnapshotKind::View}) {
        SCOPED_TRACE(std::string(as_masks ? "masks" : "class map") +
                     (kind == SnapshotKind::Frame ? ", frame" : ", view"));
        const RgbaImage cpu = draw_ids(ViewerConvert::Cpu, kind, as_masks);
        const RgbaImage gpu = draw_ids(ViewerConvert::Gpu, kind, as_masks);
        ASSERT_EQ(cpu.width(), gpu.width());
        ASSERT_EQ(cpu.height(), gpu.height());
        std::size_t off = 0;
        for (std::uint32_t y = 0; y < cpu.height(); ++y)
          for (std::uint32_t x = 0; x < cpu.width(); ++x) {
            int d = 0;
            for (int k = 0; k < 3; ++k) d = std::max(d, std::abs(int(cpu.pixel(x, y)[k]) - int(gpu.pixel(x, y)[k])));
            if (d > 0 && off++ < 5) ADD_FAILURE() << "pixel (" << x << ", " << y << ") differs by " << d;
          }
        EXPECT_EQ(off, 0u) << "pixels where the paths picked another texel";
        if (as_masks || kind != SnapshotKind::Frame) continue;
        // At the frame's size: texel floor((b + 0.5) * size / frame), in integers (ties upward).
        for (std::uint32_t y = 0; y < c.fh; ++y)
          for (std::uint32_t x = 0; x < c.fw; ++x) {
            const std::uint32_t tx = (2 * x + 1) * c.lw / (2 * c.fw), ty = (2 * y + 1) * c.lh / (2 * c.fh);
            ASSERT_EQ(int(cpu.pixel(x, y)[0]), int(ids[ty * c.lw + tx])) << "cpu at (" << x << ", " << y << ")";
            ASSERT_EQ(int(gpu.pixel(x, y)[0]), int(ids[ty * c.lw + tx])) << "gpu at (" << x << ", " << y << ")";
          }
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, LayersView, ::testing::Values(ViewerConvert::Cpu, ViewerConvert::Gpu),
                         [](const auto& info) { return std::string(info.param == ViewerConvert::Cpu ? "Cpu" : "Gpu"); });

}  // namespace
}  // namespace handoff::view::test
