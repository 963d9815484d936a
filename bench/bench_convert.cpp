// The viewer's two colour paths drawing one 1080p frame into a 1280x720 view
// (fitted: scale 2/3, bilinear), headless (EGL), waited for with glFinish:
//   BM_DrawFrame/convert:gpu  the fragment shader (two filtered fetches and the
//                             matrix per view pixel) — the baseline;
//   BM_DrawFrame/convert:cpu  ViewConverter on the CPU at view size, uploaded
//                             and blitted (ViewerConvert::Cpu, the default on
//                             software rasterisers).
// Each iteration uploads the frame and draws it, as a new frame does. Also
// ViewConverter alone on one thread and on every core, NV12 and BGR8
// (BM_ViewConvert), the four RGB formats down and up (BM_ViewConvertRgb),
// the CPU layer composite of two full-size layers
// (BM_LayerComposite), and a BGR8 frame converted with and without them,
// the layers in a second pass or fused into the conversion (BM_ConvertWithLayers).
//
//   build/default/bench/bench_convert --benchmark_min_time=2 --benchmark_repetitions=3
// Compare the ratio cpu / gpu within one run, on one machine.
#include <benchmark/benchmark.h>

#include <glad/gl.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <handoff/gl_context.hpp>
#include <handoff/host_frame.hpp>

#include "frame_renderer.hpp"
#include "layer_copy.hpp"
#include "layer_renderer.hpp"
#include "frame_target.hpp"
#include "view_convert.hpp"

namespace {

using namespace handoff;
using namespace handoff::media;
using namespace handoff::view;

constexpr std::uint32_t kW = 1920, kH = 1080;
constexpr int kViewW = 1280, kViewH = 720;

Frame frame_1080p(PixelFormat format) {
  Frame f = allocate_host_frame(format, kW, kH);
  fill_test_pattern(f, 3);
  return f;
}

void BM_DrawFrame(benchmark::State& state) {
  std::unique_ptr<GlContext> context;
  try {
    context = create_headless_context({});
    context->make_current();
    load_gl(*context);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  const PixelFormat format = state.range(1) ? PixelFormat::P010 : PixelFormat::NV12;
  const Frame f = frame_1080p(format);
  {
    FrameRenderer renderer(state.range(0) ? ViewerConvert::Cpu : ViewerConvert::Gpu);
    FrameTarget target;
    target.resize(kViewW, kViewH);
    DrawOptions o;
    o.view = fit_view(kW, kH, kViewW, kViewH);
    for (auto _ : state) {
      renderer.upload(f);
      target.bind();
      renderer.draw(o, kViewW, kViewH);
      glFinish();
    }
    FrameTarget::unbind();
    state.SetLabel(renderer.convert_text());
  }
  context->done_current();
}
BENCHMARK(BM_DrawFrame)
    ->ArgNames({"convert", "p010"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_ViewConvert(benchmark::State& state) {
  const Frame f = frame_1080p(state.range(1) ? PixelFormat::BGR8 : PixelFormat::NV12);
  const HostPlanes planes = host_planes(f);
  const unsigned threads = state.range(0) ? 0u : 1u;
  ViewConverter conv(threads);
  const ViewTransform view = fit_view(kW, kH, kViewW, kViewH);
  const PixelRect rect = covered_pixels(kW, kH, view, kViewW, kViewH);
  std::vector<std::uint8_t> out(std::size_t(rect.width()) * std::size_t(rect.height()) * 4);
  for (auto _ : state) {
    conv.convert(planes, Colorimetry{}, view, false, rect, ByteOrder::Bgra, out.data(), rect.width() * 4);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["threads"] = conv.threads();
  state.counters["ns_per_pixel"] = benchmark::Counter(double(rect.width()) * rect.height(),
                                                      benchmark::Counter::kIsIterationInvariantRate |
                                                          benchmark::Counter::kInvert);
}
BENCHMARK(BM_ViewConvert)
    ->ArgNames({"all_cores", "bgr8"})
    ->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();

// The four RGB formats through ViewConverter into a 1280x720 view, on one
// thread and on every core (CPU time of all of them, and wall time): a 1080p
// frame fitted down (view 0) and a 640x360 frame zoomed 2x (view 1), both
// bilinear, into BGRA (the CPU path's byte order).
void BM_ViewConvertRgb(benchmark::State& state) {
  constexpr PixelFormat formats[] = {PixelFormat::RGB8, PixelFormat::BGR8, PixelFormat::RGBA8, PixelFormat::BGRA8};
  const PixelFormat format = formats[state.range(0)];
  const bool up = state.range(1) != 0;
  const std::uint32_t w = up ? 640 : kW, h = up ? 360 : kH;
  const Frame f = allocate_host_frame(format, w, h);
  fill_test_pattern(f, 3);
  const HostPlanes planes = host_planes(f);
  ViewConverter conv(state.range(2) ? 0u : 1u);
  const ViewTransform view = fit_view(w, h, kViewW, kViewH);
  const PixelRect rect = covered_pixels(w, h, view, kViewW, kViewH);
  std::vector<std::uint8_t> out(std::size_t(rect.width()) * std::size_t(rect.height()) * 4);
  for (auto _ : state) {
    conv.convert(planes, Colorimetry{}, view, false, rect, ByteOrder::Bgra, out.data(), rect.width() * 4);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(std::string(to_string(format)) + (up ? " 640x360 up" : " 1080p down"));
  state.counters["threads"] = conv.threads();
}
BENCHMARK(BM_ViewConvertRgb)
    ->ArgNames({"format", "up", "all_cores"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

// The CPU path's layer composite (layer_canvas.cpp) of the opencv_compare
// "layers" scenario: a full-size int32 class map (12 ids, narrowed to 8 bits
// by show's copy) and a float32 heat map, both at opacity 0.5, blended into
// the 1280x720 converted image. CPU time of every thread (its bands run on a
// pool of one thread per core).
// The layers of the opencv_compare "layers" scenario, as show() copies them.
struct BenchLayers {
  std::vector<std::int32_t> ids = std::vector<std::int32_t>(std::size_t(kW) * kH);
  std::vector<float> heat = std::vector<float>(ids.size());
  media::OverlayFrame copied;
  BenchLayers() {
    for (std::uint32_t y = 0; y < kH; ++y)
      for (std::uint32_t x = 0; x < kW; ++x) {
        ids[y * kW + x] = std::int32_t((x / 160 + y / 120) % 12);
        const float dx = (float(x) - 400.0f) / 300.0f, dy = (float(y) - 300.0f) / 200.0f;
        heat[y * kW + x] = std::exp(-(dx * dx + dy * dy));
      }
    const auto array = [](const void* data, media::SampleType t) {
      media::LayerArray a;
      a.data = data;
      a.type = t;
      a.width = kW;
      a.height = kH;
      return a;
    };
    media::OverlayFrame f;
    media::ClassMap m;
    m.ids = array(ids.data(), media::SampleType::I32);
    m.opacity = 0.5f;
    f.layers.push_back(m);
    media::ScalarMap s;
    s.values = array(heat.data(), media::SampleType::F32);
    s.range = std::array<double, 2>{0.0, 1.0};
    s.opacity = 0.5f;
    f.layers.push_back(s);
    copied = copy_layers(f, 0);
  }
};

std::unique_ptr<GlContext> bench_context(benchmark::State& state) {
  try {
    auto context = create_headless_context({});
    context->make_current();
    load_gl(*context);
    return context;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return nullptr;
  }
}

void BM_LayerComposite(benchmark::State& state) {
  const std::unique_ptr<GlContext> context = bench_context(state);
  if (!context) return;
  {
    const BenchLayers layers;
    LayerRenderer r;
    r.set_layers(&layers.copied, kW, kH);
    const ViewTransform view = fit_view(kW, kH, kViewW, kViewH);
    const PixelRect rect = covered_pixels(kW, kH, view, kViewW, kViewH);
    std::vector<std::uint8_t> out(std::size_t(rect.width()) * std::size_t(rect.height()) * 4, 90);
    for (auto _ : state) {
      r.composite(view, rect, ByteOrder::Bgra, out.data(), rect.width() * 4);
      benchmark::DoNotOptimize(out.data());
    }
  }
  context->done_current();
}
BENCHMARK(BM_LayerComposite)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

// What the CPU path does for a new 1080p BGR frame with those layers, at
// 1280x720 on every core: the conversion and then the composite in a second
// pass over the image (fused 0), or the layers blended into each few rows as
// they are converted (fused 1, FrameRenderer's way); layers 0: the frame alone.
void BM_ConvertWithLayers(benchmark::State& state) {
  const std::unique_ptr<GlContext> context = bench_context(state);
  if (!context) return;
  {
    const BenchLayers layers;
    LayerRenderer r;
    r.set_layers(&layers.copied, kW, kH);
    const Frame f = frame_1080p(PixelFormat::BGR8);
    const HostPlanes planes = host_planes(f);
    ViewConverter conv;
    const ViewTransform view = fit_view(kW, kH, kViewW, kViewH);
    const PixelRect rect = covered_pixels(kW, kH, view, kViewW, kViewH);
    const std::ptrdiff_t pitch = rect.width() * 4;
    std::vector<std::uint8_t> out(std::size_t(rect.width()) * std::size_t(rect.height()) * 4);
    const bool with_layers = state.range(0) != 0, fused = state.range(1) != 0;
    const RowsDone rows = [&](int first, int last) { r.composite_rows(first, last, out.data(), pitch); };
    for (auto _ : state) {
      if (with_layers && fused) {
        r.prepare_composite(view, rect, ByteOrder::Bgra);
        conv.convert(planes, Colorimetry{}, view, false, rect, ByteOrder::Bgra, out.data(), pitch, {}, rows);
      } else {
        conv.convert(planes, Colorimetry{}, view, false, rect, ByteOrder::Bgra, out.data(), pitch);
        if (with_layers) r.composite(view, rect, ByteOrder::Bgra, out.data(), pitch);
      }
      benchmark::DoNotOptimize(out.data());
    }
  }
  context->done_current();
}
BENCHMARK(BM_ConvertWithLayers)
    ->ArgNames({"layers", "fused"})
    ->Args({0, 0})->Args({1, 0})->Args({1, 1})
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
