// LayerRenderer white-box: what the panel's controls change (a layer turned
// off, its opacity, a class hidden from the legend), the legend's ids, the
// automatic range's readout, and the pixel inspector's text per layer kind.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "frame_target.hpp"
#include "gl_test_context.hpp"
#include "layer_buffers.hpp"
#include "layer_copy.hpp"
#include "layer_renderer.hpp"

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
  ASSERT_EQ(ids(4).type, media::SampleType::U32);  // the low 32 bits, as before
  EXPECT_EQ(static_cast<const std::uint32_t*>(ids(4).data)[1], 300u);
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
