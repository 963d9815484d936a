// LayerRenderer white-box: what the panel's controls change (a layer turned
// off, its opacity, a class hidden from the legend), the legend's ids, the
// automatic range's readout, and the pixel inspector's text per layer kind.
#include <gtest/gtest.h>

#include <imgui.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include <handoff/host_frame.hpp>

#include "frame_target.hpp"
#include "imgui_offscreen.hpp"
#include "gl_test_context.hpp"
#include "layer_buffers.hpp"
#include "layer_copy.hpp"
#include "layer_renderer.hpp"
#include "ui.hpp"
#include "view_convert.hpp"

namespace handoff::view::test {
namespace {

using LayerRendererTest = GlTest;

constexpr int kW = 32, kH = 16;

// Draws `r`'s layers over a black kW x kH target at 1:1 and reads it back.
std::vector<std::uint8_t> render(LayerRenderer& r) {
  FrameTarget target;
  target.resize(kW, kH);
  target.bind();
  glViewport(0, 0, kW, kH);
  glClearColor(0, 0, 0, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  r.draw(ViewTransform{}, kW, kH);
  std::vector<std::uint8_t> px;
  target.read_rgba(px);
  FrameTarget::unbind();
  return px;
}

std::array<int, 3> at(const std::vector<std::uint8_t>& px, int x, int y) {
  const std::size_t i = (std::size_t(y) * kW + std::size_t(x)) * 4;
  return {px[i], px[i + 1], px[i + 2]};
}

// A frame whose layers are a class map (left half id 1 "road", right half
// id 2), a scalar map 0..10 left to right with one NaN, and one mask under one box.
struct Layers {
  std::vector<std::uint8_t> ids = std::vector<std::uint8_t>(kW * kH);
  std::vector<float> values = std::vector<float>(kW * kH);
  std::vector<std::uint8_t> mask = std::vector<std::uint8_t>(kW * kH, 0);
  media::OverlayFrame copied;
  Layers() {
    for (int y = 0; y < kH; ++y)
      for (int x = 0; x < kW; ++x) {
        ids[std::size_t(y * kW + x)] = x < kW / 2 ? 1 : 2;
        values[std::size_t(y * kW + x)] = float(x) * 10.0f / (kW - 1);
        if (x >= 4 && x < 12 && y >= 4 && y < 12) mask[std::size_t(y * kW + x)] = 1;
      }
    values[0] = std::numeric_limits<float>::quiet_NaN();
    media::OverlayFrame f;
    f.add_box(4, 4, 12, 12, "person", 0.9f, 3);
    media::ClassMap m;
    m.ids = array(ids.data(), media::SampleType::U8);
    m.colors = {{1, media::Color8{200, 0, 0, 255}}, {2, media::Color8{0, 0, 200, 255}}};
    m.names = {{1, "road"}};
    m.opacity = 1.0f;
    f.layers.push_back(m);
    media::ScalarMap s;
    s.values = array(values.data(), media::SampleType::F32);
    s.opacity = 0.0f;  // off unless a test turns it up
    f.layers.push_back(s);
    media::InstanceMasks im;
    im.masks = array(mask.data(), media::SampleType::U8);
    im.opacity = 0.0f;
    f.layers.push_back(im);
    copied = copy_layers(f, 0);
  }
  static media::LayerArray array(const void* data, media::SampleType t) {
    media::LayerArray a;
    a.data = data;
    a.type = t;
    a.width = kW;
    a.height = kH;
    return a;
  }
};

TEST_F(LayerRendererTest, PanelControlsTurnLayersAndClassesOff) {
  Layers l;
  LayerRenderer r;
  r.set_layers(&l.copied, kW, kH);
  ASSERT_EQ(r.size(), 3u);
  auto px = render(r);
  EXPECT_EQ(at(px, 4, 8), (std::array{200, 0, 0}));
  EXPECT_EQ(at(px, 28, 8), (std::array{0, 0, 200}));
  // The legend hides id 2: its pixels are not drawn.
  r.controls()[0].hidden.insert(2);
  r.refresh_palettes();
  px = render(r);
  EXPECT_EQ(at(px, 4, 8), (std::array{200, 0, 0}));
  EXPECT_EQ(at(px, 28, 8), (std::array{0, 0, 0}));
  // The panel's opacity wins over the layer's own.
  r.controls()[0].opacity = 0.5f;
  px = render(r);
  EXPECT_NEAR(at(px, 4, 8)[0], 100, 1);
  // Turned off: nothing.
  r.controls()[0].visible = false;
  px = render(r);
  EXPECT_EQ(at(px, 4, 8), (std::array{0, 0, 0}));
  // The controls stay across frames with the same layers.
  r.set_layers(&l.copied, kW, kH);
  EXPECT_FALSE(r.controls()[0].visible);
  EXPECT_EQ(r.controls()[0].hidden.count(2), 1u);
}

// The panel's widgets driven with the mouse through Dear ImGui's input
// state (as a window's backend sets it): the layer's toggle, its opacity
// slider, the legend's class toggles and "all classes" change what the
// renderer draws.
TEST_F(LayerRendererTest, ThePanelsWidgetsDriveTheControls) {
  Layers l;
  LayerRenderer r;
  r.set_layers(&l.copied, kW, kH);
  ImGuiOffscreen ui;
  ControlRects rects;
  auto frame = [&] {
    ui.begin(420, 700);
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImVec2(420, 700));
    ImGui::Begin("panel");
    rects.clear();
    draw_layer_controls(r, &rects);
    ImGui::End();
    ui.discard();
  };
  auto input = [&](auto&& queue) {
    ImGuiContext* previous = ImGui::GetCurrentContext();
    ImGui::SetCurrentContext(ui.context());
    queue(ImGui::GetIO());
    ImGui::SetCurrentContext(previous);
    frame();
  };
  // A click at `fx` of the control's width (its middle row): move, press, release.
  auto click = [&](const std::string& name, float fx = 0.5f) {
    ASSERT_EQ(rects.count(name), 1u) << name << " was not drawn";
    const auto [x0, y0, x1, y1] = rects.at(name);
    const float x = x0 + fx * (x1 - x0), y = 0.5f * (y0 + y1);
    // (Debian's Dear ImGui 1.86 reads io.MousePos / MouseDown each frame; no event queue yet.)
    input([&](ImGuiIO& io) { io.MousePos = ImVec2(x, y); });
    input([&](ImGuiIO& io) { io.MouseDown[ImGuiMouseButton_Left] = true; });
    input([&](ImGuiIO& io) { io.MouseDown[ImGuiMouseButton_Left] = false; });
    input([&](ImGuiIO& io) { io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX); });
  };
  frame();
  frame();
  ASSERT_EQ(rects.count("layer 0"), 1u);
  ASSERT_EQ(rects.count("layer 1 opacity"), 1u) << "a toggle and a slider for every layer";
  ASSERT_EQ(rects.count("layer 2 opacity"), 1u);
  EXPECT_EQ(rects.count("layer 0 id 1"), 0u) << "the legend starts closed";

  click("layer 0");
  EXPECT_FALSE(r.controls()[0].visible);
  EXPECT_EQ(at(render(r), 4, 8), (std::array{0, 0, 0})) << "the class map toggled off";
  click("layer 0");
  EXPECT_TRUE(r.controls()[0].visible);

  click("layer 0 opacity", 0.25f);
  ASSERT_TRUE(r.controls()[0].opacity.has_value());
  const float a = *r.controls()[0].opacity;
  EXPECT_NEAR(a, 0.25f, 0.08f) << "a quarter of the way along the slider";
  EXPECT_NEAR(at(render(r), 4, 8)[0], std::lround(200 * a), 1);
  click("layer 0 opacity", 1.0f - 1e-3f);
  EXPECT_NEAR(*r.controls()[0].opacity, 1.0f, 0.02f);

  click("layer 0 legend");
  ASSERT_EQ(rects.count("layer 0 id 2"), 1u) << "the legend opened: a toggle per class";
  ASSERT_EQ(rects.count("layer 0 id 1"), 1u);
  click("layer 0 id 2");
  EXPECT_EQ(r.controls()[0].hidden.count(2), 1u);
  auto px = render(r);
  EXPECT_EQ(at(px, 28, 8), (std::array{0, 0, 0})) << "class 2 hidden";
  EXPECT_EQ(at(px, 4, 8), (std::array{200, 0, 0})) << "class 1 still drawn";
  click("layer 0 all classes");
  EXPECT_TRUE(r.controls()[0].hidden.empty());
  EXPECT_EQ(at(render(r), 28, 8), (std::array{0, 0, 200}));
}

TEST_F(LayerRendererTest, LegendRangeAndInspector) {
  Layers l;
  LayerRenderer r;
  r.set_layers(&l.copied, kW, kH);
  EXPECT_EQ(r.legend_ids(0), (std::vector<std::int64_t>{1, 2}));
  const auto range = r.range(1);
  ASSERT_TRUE(range.has_value());
  // The 1st .. 99th percentile of 32 columns 0..10 (the NaN left out): the end columns.
  EXPECT_DOUBLE_EQ((*range)[0], 0.0);
  EXPECT_DOUBLE_EQ((*range)[1], 10.0);
  EXPECT_FALSE(r.range(0).has_value());
  EXPECT_EQ(r.probe(0, 3.5, 3.5).text, "id 1 (road)");
  EXPECT_EQ(r.probe(0, 30.5, 3.5).text, "id 2");
  EXPECT_EQ(r.probe(1, 31.5, 3.5).text, "value 10");
  EXPECT_EQ(r.probe(1, 0.5, 0.5).text, "hole (nan)");
  EXPECT_EQ(r.probe(2, 6.5, 6.5).text, "mask 0 (person)");
  EXPECT_EQ(r.probe(2, 20.5, 6.5).text, "no mask");
  EXPECT_EQ(r.probe(2, 40.5, 6.5).text, "outside");
  EXPECT_EQ(r.probe(0, 3.5, 3.5).kind, "class map");
}

// The CPU path's composite of `r`'s layers over a black kW x kH image at 1:1.
std::vector<std::uint8_t> composite(LayerRenderer& r) {
  std::vector<std::uint8_t> px(std::size_t(kW) * kH * 4, 0);
  for (std::size_t i = 3; i < px.size(); i += 4) px[i] = 255;
  r.composite(ViewTransform{}, PixelRect{0, 0, kW, kH}, ByteOrder::Rgba, px.data(), kW * 4);
  return px;
}

// A class map of `t` ids, left half `left`, right half `right`, each named, `left` red
// and `transparent` not drawn; copied as show() copies it.
template <typename T>
struct WideIds {
  std::vector<T> ids = std::vector<T>(kW * kH);
  media::OverlayFrame copied;
  WideIds(media::SampleType t, T left, T right, std::vector<std::int64_t> transparent = {}) {
    for (int y = 0; y < kH; ++y)
      for (int x = 0; x < kW; ++x) ids[std::size_t(y * kW + x)] = x < kW / 2 ? left : right;
    media::OverlayFrame f;
    media::ClassMap m;
    m.ids = Layers::array(ids.data(), t);
    m.colors = {{std::int64_t(left), media::Color8{250, 0, 0, 255}}};
    m.names = {{std::int64_t(left), "left"}, {std::int64_t(right), "right"}};
    m.transparent = std::move(transparent);
    m.opacity = 1.0f;
    f.layers.push_back(m);
    copied = copy_layers(f, 0);
  }
};

// Ids by their value everywhere: a uint32 id above 2^31, 64-bit ids above
// 2^32 (and one 2^40 from a coloured id, which takes its own default colour),
// uint64 ids above 2^63 (one transparent); in the inspector, the legend and
// both colour paths.
TEST_F(LayerRendererTest, ClassIdsAreTheirValuesForEveryWidth) {
  const std::int64_t c = 3000000000;
  WideIds<std::uint32_t> u32(media::SampleType::U32, 3000000000u, 3000000001u);
  WideIds<std::int64_t> i64(media::SampleType::I64, (std::int64_t{1} << 40) + 7, 7);  // the same low 32 bits
  WideIds<std::uint64_t> u64(media::SampleType::U64, ~std::uint64_t{0}, ~std::uint64_t{0} - 1, {-2});
  struct Case {
    const media::OverlayFrame* copied;
    std::string left, right;
    std::vector<std::int64_t> legend;
    std::int64_t right_id;
  };
  const std::int64_t big = (std::int64_t{1} << 40) + 7;
  const Case cases[] = {
      {&u32.copied, "id 3000000000 (left)", "id 3000000001 (right)", {c, c + 1}, c + 1},
      {&i64.copied, "id 1099511627783 (left)", "id 7 (right)", {7, big}, 7},
      {&u64.copied, "id 18446744073709551615 (left)", "id 18446744073709551614 (right)", {-2, -1}, -2},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.left);
    LayerRenderer r;
    r.set_layers(k.copied, kW, kH);
    EXPECT_EQ(r.probe(0, 3.5, 3.5).text, k.left);
    EXPECT_EQ(r.probe(0, 30.5, 3.5).text, k.right);
    EXPECT_EQ(r.legend_ids(0), k.legend);
    const auto drawn = render(r);
    const auto cpu = composite(r);
    EXPECT_EQ(at(drawn, 3, 3), (std::array<int, 3>{250, 0, 0}));
    EXPECT_EQ(at(cpu, 3, 3), (std::array<int, 3>{250, 0, 0}));
    const auto& m = std::get<media::ClassMap>(k.copied->layers[0]);
    if (m.transparent.empty()) {
      // The right half: its own default colour (not the red of the id 2^40 from it), on both paths.
      const media::Color8 d = media::default_class_color(k.right_id);
      for (const auto* px : {&drawn, &cpu}) {
        const auto got = at(*px, 30, 3);
        EXPECT_NEAR(got[0], d.r, 2);
        EXPECT_NEAR(got[1], d.g, 2);
        EXPECT_NEAR(got[2], d.b, 2);
      }
    } else {
      EXPECT_EQ(at(drawn, 30, 3), (std::array<int, 3>{0, 0, 0}));  // transparent: the black under it
      EXPECT_EQ(at(cpu, 30, 3), (std::array<int, 3>{0, 0, 0}));
    }
  }
}

TEST_F(LayerRendererTest, CpuCompositeFollowsThePanelControlsAndItsKeyChanges) {
  Layers l;
  LayerRenderer r;
  r.set_layers(&l.copied, kW, kH);
  EXPECT_TRUE(r.fits(ViewTransform{}));
  std::uint64_t key = r.cpu_key();
  auto px = composite(r);
  EXPECT_EQ(at(px, 4, 8), (std::array{200, 0, 0}));
  EXPECT_EQ(at(px, 28, 8), (std::array{0, 0, 200}));
  EXPECT_EQ(r.cpu_key(), key);  // nothing changed
  r.controls()[0].hidden.insert(2);
  r.refresh_palettes();
  EXPECT_NE(r.cpu_key(), key);
  key = r.cpu_key();
  px = composite(r);
  EXPECT_EQ(at(px, 4, 8), (std::array{200, 0, 0}));
  EXPECT_EQ(at(px, 28, 8), (std::array{0, 0, 0}));
  r.controls()[0].opacity = 0.5f;
  EXPECT_NE(r.cpu_key(), key);
  key = r.cpu_key();
  EXPECT_NEAR(at(composite(r), 4, 8)[0], 100, 1);
  r.controls()[0].visible = false;
  EXPECT_NE(r.cpu_key(), key);
  key = r.cpu_key();
  EXPECT_EQ(at(composite(r), 4, 8), (std::array{0, 0, 0}));
  r.set_layers(&l.copied, kW, kH);  // a new frame
  EXPECT_NE(r.cpu_key(), key);
}

TEST_F(LayerRendererTest, CpuCompositeMatchesTheShadersAtOneToOne) {
  Layers l;
  std::get<media::ScalarMap>(l.copied.layers[1]).opacity = 0.5f;
  LayerRenderer r;
  r.set_layers(&l.copied, kW, kH);
  const auto gl = render(r), cpu = composite(r);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x)
      for (int k = 0; k < 3; ++k)
        EXPECT_NEAR(at(cpu, x, y)[std::size_t(k)], at(gl, x, y)[std::size_t(k)], 2) << x << ", " << y << " channel " << k;
}

TEST_F(LayerRendererTest, ALayerOutsideTheFrameDoesNotFitTheCpuPath) {
  Layers l;
  std::get<media::ClassMap>(l.copied.layers[0]).target = media::RectF{16, 0, 32, 16};  // half past the right edge
  LayerRenderer r;
  r.set_layers(&l.copied, kW, kH);
  EXPECT_FALSE(r.fits(ViewTransform{}));
  r.controls()[0].visible = false;  // only visible layers count
  EXPECT_TRUE(r.fits(ViewTransform{}));
  // A layer in device memory (the CUDA layers to come) takes the shaders: not read on the host.
  Layers d;
  std::get<media::ClassMap>(d.copied.layers[0]).ids.memory = MemoryKind::Cuda;
  LayerRenderer device;
  device.set_layers(&d.copied, kW, kH);
  EXPECT_FALSE(device.fits(ViewTransform{}));
}

// Layers of every CPU kind at odd sizes for the fused composite: an 8-bit
// class map over the whole frame (the palette look-up), 16-bit ids over a
// target rectangle, a smaller scalar map with NaN holes, instance masks.
struct OddLayers {
  static constexpr std::uint32_t w = 101, h = 67;
  std::vector<std::uint8_t> ids = std::vector<std::uint8_t>(w * h);
  std::vector<std::int16_t> wide = std::vector<std::int16_t>(23 * 17);
  std::vector<float> values = std::vector<float>(37 * 29);
  std::vector<std::uint8_t> masks = std::vector<std::uint8_t>(w * h, 0);
  media::OverlayFrame copied;
  OddLayers() {
    for (std::uint32_t y = 0; y < h; ++y)
      for (std::uint32_t x = 0; x < w; ++x) {
        ids[y * w + x] = std::uint8_t((x / 3 + y / 4) % 7);
        if (x >= 20 && x < 61 && y >= 30 && y < 50) masks[y * w + x] = 1;
      }
    for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = std::int16_t(i % 5 == 0 ? 300 : i % 5 == 1 ? -7 : 2);
    for (std::uint32_t y = 0; y < 29; ++y)
      for (std::uint32_t x = 0; x < 37; ++x)
        values[y * 37 + x] = (x >= 5 && x < 9 && y >= 3 && y < 6) ? std::numeric_limits<float>::quiet_NaN()
                                                                 : float(x) / 37.0f + 0.4f * float(y) / 29.0f;
    const auto array = [](const void* data, media::SampleType t, std::uint32_t aw, std::uint32_t ah) {
      media::LayerArray a;
      a.data = data;
      a.type = t;
      a.width = aw;
      a.height = ah;
      return a;
    };
    media::OverlayFrame f;
    f.add_box(20, 30, 61, 50, "", 0.9f, 1);
    media::ClassMap m;
    m.ids = array(ids.data(), media::SampleType::U8, w, h);
    m.transparent = {0};
    m.opacity = 0.6f;
    f.layers.push_back(m);
    media::ScalarMap s;
    s.values = array(values.data(), media::SampleType::F32, 37, 29);
    s.range = std::array{0.0, 1.2};
    s.opacity = 0.5f;
    f.layers.push_back(s);
    media::ClassMap t;
    t.ids = array(wide.data(), media::SampleType::I16, 23, 17);
    t.target = media::RectF{30.5f, 10.25f, 40, 21};
    t.opacity = 0.7f;
    f.layers.push_back(t);
    media::InstanceMasks im;
    im.masks = array(masks.data(), media::SampleType::U8, w, h);
    im.masks.count = 1;
    im.opacity = 0.5f;
    f.layers.push_back(im);
    copied = copy_layers(f, 0);
  }
};

// The layers blended into the rows as the converter writes them (a few rows
// at a time, on its threads, FrameRenderer's way) give the same bytes as a
// conversion and then a composite over the whole image: at odd sizes,
// scaled down and up, written top-down and bottom-up, and again on a second
// frame with the same layout (the taps kept from the first).
TEST_F(LayerRendererTest, CpuCompositeFusedIntoTheConversionMatchesTwoPasses) {
  OddLayers l;
  Frame frame = allocate_host_frame(PixelFormat::BGR8, OddLayers::w, OddLayers::h);
  fill_test_pattern(frame, 5);
  const HostPlanes planes = host_planes(frame);
  for (const auto& [fb_w, fb_h] : {std::pair{77, 53}, std::pair{253, 171}}) {
    const ViewTransform view = fit_view(OddLayers::w, OddLayers::h, fb_w, fb_h);
    const PixelRect rect = covered_pixels(OddLayers::w, OddLayers::h, view, fb_w, fb_h);
    const std::size_t row = std::size_t(rect.width()) * 4, bytes = row * std::size_t(rect.height());
    for (const bool bottom_up : {false, true}) {
      const auto first = [&](std::vector<std::uint8_t>& px) { return bottom_up ? px.data() + bytes - row : px.data(); };
      const std::ptrdiff_t pitch = bottom_up ? -std::ptrdiff_t(row) : std::ptrdiff_t(row);
      ViewConverter conv(2);
      LayerRenderer two, fused;
      two.set_layers(&l.copied, OddLayers::w, OddLayers::h);
      fused.set_layers(&l.copied, OddLayers::w, OddLayers::h);
      ASSERT_TRUE(two.fits(view));
      std::vector<std::uint8_t> a(bytes), b(bytes);
      conv.convert(planes, Colorimetry{}, view, false, rect, ByteOrder::Bgra, first(a), pitch);
      two.composite(view, rect, ByteOrder::Bgra, first(a), pitch);
      for (int repeat = 0; repeat < 2; ++repeat) {
        std::fill(b.begin(), b.end(), std::uint8_t(0));
        ASSERT_TRUE(fused.prepare_composite(view, rect, ByteOrder::Bgra));
        std::uint8_t* out = first(b);
        conv.convert(planes, Colorimetry{}, view, false, rect, ByteOrder::Bgra, out, pitch, {},
                     [&](int r0, int r1) { fused.composite_rows(r0, r1, out, pitch); });
        ASSERT_EQ(a, b) << fb_w << "x" << fb_h << (bottom_up ? " bottom-up" : " top-down") << " frame " << repeat;
        fused.set_layers(&l.copied, OddLayers::w, OddLayers::h);  // the next frame, the same layout
      }
    }
  }
}

// The blend, checked against its own integer rule at every pixel of odd
// rows (the vector loop and its tail): an 8-bit class map at 1:1 over a
// grey ramp, every id coloured, c * a + d * (256 - a) + 128 >> 8 with
// a = round(opacity * 256), the alpha byte kept.
TEST_F(LayerRendererTest, CpuBlendIsTheIntegerRuleAtEveryPixel) {
  constexpr std::uint32_t w = 29, h = 5;
  std::vector<std::uint8_t> ids(w * h);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = std::uint8_t((i * 7) % 11);
  media::OverlayFrame f;
  media::ClassMap m;
  m.ids.data = ids.data();
  m.ids.type = media::SampleType::U8;
  m.ids.width = w;
  m.ids.height = h;
  for (std::int64_t id = 0; id < 11; ++id)
    m.colors[id] = media::Color8{std::uint8_t(23 * id), std::uint8_t(255 - 19 * id), std::uint8_t(9 * id + 100), 255};
  m.transparent = {3};  // not drawn
  f.layers.push_back(m);
  for (const float opacity : {0.3f, 0.5f, 0.77f, 1.0f}) {
    std::get<media::ClassMap>(f.layers[0]).opacity = opacity;
    const media::OverlayFrame copied = copy_layers(f, 0);
    LayerRenderer r;
    r.set_layers(&copied, w, h);
    std::vector<std::uint8_t> px(w * h * 4);
    for (std::size_t i = 0; i < px.size(); ++i) px[i] = std::uint8_t(i % 4 == 3 ? 77 : (i * 13) % 256);
    const std::vector<std::uint8_t> before = px;
    r.composite(ViewTransform{}, PixelRect{0, 0, int(w), int(h)}, ByteOrder::Rgba, px.data(), w * 4);
    const auto a = std::uint32_t(std::lround(double(opacity) * 256.0));
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const media::Color8 c = m.colors.at(ids[i]);
      const std::uint8_t layer[3] = {c.r, c.g, c.b};
      for (std::size_t k = 0; k < 4; ++k) {
        const std::uint32_t d = before[4 * i + k];
        const std::uint32_t want = k == 3 || ids[i] == 3 ? d : (layer[k] * a + d * (256 - a) + 128) >> 8;
        ASSERT_EQ(px[4 * i + k], want) << "pixel " << i << " byte " << k << " opacity " << opacity;
      }
    }
  }
}

media::ClassMap class_map(const void* ids, media::SampleType t, std::uint32_t w, std::uint32_t h) {
  media::ClassMap m;
  m.ids.data = ids;
  m.ids.type = t;
  m.ids.width = w;
  m.ids.height = h;
  return m;
}

TEST(LayerCopy, WideIdsThatFitEightBitsAreNarrowedAndOthersKept) {
  std::vector<std::int32_t> small = {0, 7, 255, 3, 1, 2};
  std::vector<std::int32_t> negative = {0, -1, 5, 3, 1, 2};
  std::vector<std::int32_t> large = {0, 256, 5, 3, 1, 2};
  std::vector<std::uint64_t> wide = {9, 8, 7, 6, 5, 4};
  std::vector<std::uint64_t> huge = {9, (1ull << 33) + 300, 7, 6, 5, 4};
  media::OverlayFrame f;
  f.layers.push_back(class_map(small.data(), media::SampleType::I32, 3, 2));
  f.layers.push_back(class_map(negative.data(), media::SampleType::I32, 3, 2));
  f.layers.push_back(class_map(large.data(), media::SampleType::I32, 3, 2));
  f.layers.push_back(class_map(wide.data(), media::SampleType::U64, 3, 2));
  f.layers.push_back(class_map(huge.data(), media::SampleType::U64, 3, 2));
  const media::OverlayFrame c = copy_layers(f, 0);
  const auto ids = [&](std::size_t i) { return std::get<media::ClassMap>(c.layers[i]).ids; };
  ASSERT_EQ(ids(0).type, media::SampleType::U8);
  const auto* u8 = static_cast<const std::uint8_t*>(ids(0).data);
  EXPECT_EQ(std::vector<int>(u8, u8 + 6), (std::vector<int>{0, 7, 255, 3, 1, 2}));
  ASSERT_EQ(ids(1).type, media::SampleType::I32);  // -1 does not fit
  EXPECT_EQ(static_cast<const std::int32_t*>(ids(1).data)[1], -1);
  ASSERT_EQ(ids(2).type, media::SampleType::I32);  // nor does 256
  EXPECT_EQ(static_cast<const std::int32_t*>(ids(2).data)[1], 256);
  ASSERT_EQ(ids(3).type, media::SampleType::U8);
  EXPECT_EQ(static_cast<const std::uint8_t*>(ids(3).data)[5], 4);
  ASSERT_EQ(ids(4).type, media::SampleType::U64);  // whole: the inspector and legend show them
  EXPECT_EQ(static_cast<const std::uint64_t*>(ids(4).data)[1], (1ull << 33) + 300);
}

TEST(LayerCopy, BuffersComeBackForTheNextFramesCopy) {
  // Counted in the pool, not by address (malloc may hand the same one back).
  const std::size_t bytes = 123457;  // a size no other test uses
  const std::size_t before = pooled_layer_buffers(bytes);
  {
    const auto a = layer_buffer(bytes);
    const auto b = layer_buffer(bytes);
    EXPECT_NE(a.get(), b.get());
    EXPECT_EQ(pooled_layer_buffers(bytes), before >= 2 ? before - 2 : 0);
  }
  EXPECT_EQ(pooled_layer_buffers(bytes), std::max<std::size_t>(before, 2));  // both went back
  const auto again = layer_buffer(bytes);
  EXPECT_EQ(pooled_layer_buffers(bytes), std::max<std::size_t>(before, 2) - 1);  // one taken from the pool
  // A full pool keeps the newest: nine other buffers (the pool keeps eight) push these out.
  {
    std::vector<std::shared_ptr<std::uint8_t[]>> others;
    for (int i = 0; i < 9; ++i) others.push_back(layer_buffer(1000 + std::size_t(i)));
  }
  EXPECT_EQ(pooled_layer_buffers(bytes), 0u);
  EXPECT_EQ(pooled_layer_buffers(1008), 1u);
}

}  // namespace
}  // namespace handoff::view::test
