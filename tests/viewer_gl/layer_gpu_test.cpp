// CUDA layers' display half (layer_gpu.cpp), without CUDA: a layer's raw
// samples in a GL buffer (media::LayerArray memory GlBuffer, what the ring's
// device-to-device copy leaves) give the same textures as the host path's
// conversion (layer_copy.cpp) for every sample type: the same drawn pixels,
// automatic range, legend ids and pixel-inspector text.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "frame_target.hpp"
#include "gl_test_context.hpp"
#include "layer_copy.hpp"
#include "layer_renderer.hpp"

namespace handoff::view::test {
namespace {

using LayerGpuTest = GlTest;
using media::SampleType;

constexpr int kW = 40, kH = 24;  // the frame and the view
constexpr std::uint32_t kLw = 37, kLh = 21;  // a layer width that is no multiple of 4 bytes

std::vector<std::uint8_t> render(LayerRenderer& r) {
  FrameTarget target;
  target.resize(kW, kH);
  target.bind();
  glViewport(0, 0, kW, kH);
  glClearColor(0.2f, 0.3f, 0.4f, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  r.draw(ViewTransform{}, kW, kH);
  std::vector<std::uint8_t> px;
  target.read_rgba(px);
  FrameTarget::unbind();
  return px;
}

// Raw samples of `type`, count images, from values (integers wrap as a cast does).
std::vector<std::uint8_t> raw(SampleType type, const std::vector<double>& v) {
  const std::size_t size = media::sample_size(type);
  std::vector<std::uint8_t> out(v.size() * size);
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::uint8_t* p = out.data() + i * size;
    auto put = [&](auto x) { std::memcpy(p, &x, sizeof x); };
    switch (type) {
      case SampleType::U8: case SampleType::Bool: put(std::uint8_t(std::int64_t(v[i]))); break;
      case SampleType::I8: put(std::int8_t(std::int64_t(v[i]))); break;
      case SampleType::U16: put(std::uint16_t(std::int64_t(v[i]))); break;
      case SampleType::I16: put(std::int16_t(std::int64_t(v[i]))); break;
      case SampleType::U32: put(std::uint32_t(std::int64_t(v[i]))); break;
      case SampleType::I32: put(std::int32_t(std::int64_t(v[i]))); break;
      case SampleType::U64: put(std::uint64_t(std::int64_t(v[i]))); break;
      case SampleType::I64: put(std::int64_t(v[i])); break;
      case SampleType::F32: put(float(v[i])); break;
      case SampleType::F64: put(v[i]); break;
      case SampleType::F16: {  // round to a half through float: enough for test values
        const float f = float(v[i]);
        std::uint16_t h;
        if (std::isnan(f)) h = 0x7e00;
        else if (std::isinf(f)) h = f > 0 ? 0x7c00 : 0xfc00;
        else {
          int e;
          const float m = std::frexp(std::fabs(f), &e);  // f = m * 2^e, m in [0.5, 1)
          if (f == 0) h = 0;
          else if (e < -13) h = std::uint16_t(std::lround(std::fabs(f) * 16777216.0f));  // subnormal
          else h = std::uint16_t(((e + 14) << 10) | (std::lround(m * 2048) - 1024));
          if (f < 0) h |= 0x8000;
        }
        put(h);
        break;
      }
    }
  }
  return out;
}

// One layer twice: from host memory (copied as show() copies) and from a GL buffer.
struct Twin {
  std::vector<std::uint8_t> bytes;
  UniqueGlBuffer buffer;
  media::LayerArray host, gpu;
  Twin(SampleType type, const std::vector<double>& v, std::uint32_t count = 1) : bytes(raw(type, v)) {
    GLuint b = 0;
    glCreateBuffers(1, &b);
    buffer.reset(b);
    glNamedBufferStorage(b, GLsizeiptr(bytes.size() + 64), nullptr, GL_DYNAMIC_STORAGE_BIT);
    glNamedBufferSubData(b, 0, GLsizeiptr(bytes.size()), bytes.data());
    host.data = bytes.data();
    host.type = type;
    host.width = kLw;
    host.height = kLh;
    host.count = count;
    gpu = host;
    gpu.data = nullptr;
    gpu.memory = MemoryKind::GlBuffer;
    gpu.gl_buffer = b;
  }
};

struct Pair {
  media::OverlayFrame host, gpu;
};

template <typename L>
Pair pair_of(L layer, media::LayerArray L::*field, const Twin& t, const media::OverlayFrame& base = {}) {
  Pair p{base, base};
  layer.*field = t.host;
  media::OverlayFrame h = base;
  h.layers.push_back(layer);
  p.host = copy_layers(h, -1);
  layer.*field = t.gpu;
  p.gpu.layers.push_back(layer);
  return p;
}

void expect_same(Pair& p, const std::string& what) {
  LayerRenderer a, b;
  a.set_layers(&p.host, kW, kH);
  b.set_layers(&p.gpu, kW, kH);
  EXPECT_EQ(render(a), render(b)) << what << ": drawn pixels";
  EXPECT_EQ(a.range(0), b.range(0)) << what << ": range";
  if (std::holds_alternative<media::ClassMap>(p.host.layers[0])) {
    EXPECT_EQ(a.legend_ids(0), b.legend_ids(0)) << what << ": legend";
  }
  for (double y = 0.5; y < kH; y += 3)
    for (double x = 0.5; x < kW; x += 2) {
      ASSERT_EQ(a.probe(0, x, y).text, b.probe(0, x, y).text) << what << ": probe at " << x << ", " << y;
    }
  EXPECT_EQ(glGetError(), GLenum(GL_NO_ERROR)) << what;
}

std::vector<double> values(std::size_t n, double lo, double hi, unsigned seed, bool integer) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = integer ? std::floor(d(rng)) : d(rng);
  return v;
}

constexpr std::size_t kN = std::size_t(kLw) * kLh;

TEST_F(LayerGpuTest, ClassMapsOfEveryIdTypeMatchTheHostPath) {
  struct Case { SampleType t; double lo, hi; };
  const Case cases[] = {{SampleType::U8, 0, 256},      {SampleType::I8, -128, 128},
                        {SampleType::U16, 0, 65536},   {SampleType::I16, -40000, 40000},
                        {SampleType::U32, 0, 5e9},     {SampleType::I32, -3e9, 3e9},
                        {SampleType::U64, 0, 1e15},    {SampleType::I64, -1e15, 1e15},
                        {SampleType::U8, 0, 6},        {SampleType::I64, -3, 4}};
  unsigned seed = 1;
  for (const Case& c : cases) {
    const Twin t(c.t, values(kN, c.lo, c.hi, seed++, true));
    media::ClassMap m;
    m.colors = {{1, media::Color8{200, 10, 10, 255}}};
    // -2 of the signed types (uint64 keys are bits: -2 is 2^64 - 2, too far from 1 for one palette).
    if (c.t != SampleType::U64) m.colors[-2] = media::Color8{10, 200, 10, 255};
    m.names = {{1, "one"}, {3, "three"}};
    m.transparent = {2};
    m.opacity = 0.8f;
    Pair p = pair_of(m, &media::ClassMap::ids, t);
    expect_same(p, "ids " + std::string(media::to_string(c.t)));
  }
}

TEST_F(LayerGpuTest, ScalarMapsOfEveryTypeMatchTheHostPathWithFixedAndAutomaticRanges) {
  const SampleType types[] = {SampleType::F32, SampleType::F64, SampleType::F16, SampleType::U8, SampleType::I16,
                              SampleType::U32, SampleType::I64, SampleType::U64};
  unsigned seed = 100;
  for (SampleType type : types) {
    const bool floating = media::is_floating(type);
    std::vector<double> v = values(kN, floating ? -50 : 0, floating ? 50 : 200, seed++, !floating);
    if (floating) {
      v[3] = std::numeric_limits<double>::quiet_NaN();
      v[40] = std::numeric_limits<double>::infinity();
      v[41] = -std::numeric_limits<double>::infinity();
      v[42] = 1e-6;  // a half subnormal
    }
    const Twin t(type, v);
    for (bool automatic : {false, true}) {
      media::ScalarMap s;
      if (!automatic) s.range = std::array<double, 2>{-20.0, 120.0};
      s.colormap = media::Colormap::Turbo;
      s.opacity = 0.9f;
      Pair p = pair_of(s, &media::ScalarMap::values, t);
      expect_same(p, "scalars " + std::string(media::to_string(type)) + (automatic ? " automatic" : " fixed"));
    }
  }
}

TEST_F(LayerGpuTest, InstanceMasksOfEveryTypeMatchTheHostPathLaterMasksOnTop) {
  const SampleType types[] = {SampleType::Bool, SampleType::U8, SampleType::F32, SampleType::F16, SampleType::F64};
  media::OverlayFrame base;
  base.add_box(2, 2, 20, 12, "person", 0.9f, 1);
  base.add_box(10, 5, 30, 20, "car", 0.8f, 2);
  base.add_box(0, 0, 40, 24, "dog", 0.7f, 3);
  unsigned seed = 200;
  for (SampleType type : types) {
    const bool floating = media::is_floating(type);
    const Twin t(type, values(3 * kN, 0, floating ? 1 : 2, seed++, !floating), 3);
    media::InstanceMasks m;
    m.threshold = floating ? 0.6f : 0.5f;
    m.opacity = 0.7f;
    Pair p = pair_of(m, &media::InstanceMasks::masks, t, base);
    expect_same(p, "masks " + std::string(media::to_string(type)));
  }
}

}  // namespace
}  // namespace handoff::view::test
