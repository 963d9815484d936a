// handoff::Viewer::show of a host 1080p NV12 frame against a plain memcpy of
// the same frame (issue 11's goal: show at most 1.5x the memcpy), and the
// latency from show() to displayed (p50 / p99, the viewer's own statistics).
// Headless (EGL): the display thread draws each frame it gets on the same CPUs
// (paused:0), or draws nothing (paused:1). Compare the ratio within one run.
//
//   build/default/bench/bench_viewer --benchmark_min_time=2 --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <vector>

#include <handoff/host_frame.hpp>
#include <handoff/viewer.hpp>

namespace {

using namespace handoff;

constexpr std::uint32_t kW = 1920, kH = 1080;

Frame frame_1080p() {
  Frame f = allocate_host_frame(PixelFormat::NV12, kW, kH);
  fill_test_pattern(f, 3);
  return f;
}

// The baseline: the bytes of the frame's planes into another buffer.
void BM_Memcpy1080pNv12(benchmark::State& state) {
  const Frame f = frame_1080p();
  const std::size_t luma = f.planes[0].pitch * f.planes[0].height;
  const std::size_t chroma = f.planes[1].pitch * f.planes[1].height;
  std::vector<std::uint8_t> dst(luma + chroma);
  for (auto _ : state) {
    std::memcpy(dst.data(), f.planes[0].data, luma);
    std::memcpy(dst.data() + luma, f.planes[1].data, chroma);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(luma + chroma));
}

// range(0) == 1: the display is paused (it draws nothing; the frames wait and
// are dropped), so the figure is show()'s own cost without a display thread and
// llvmpipe's rasteriser threads competing for the same CPUs.
void BM_Show1080pNv12(benchmark::State& state) {
  const bool paused = state.range(0) == 1;
  ViewerOptions o;
  o.title = "bench";
  o.display = ViewerDisplay::Headless;
  o.width = 1280;
  o.height = 720;
  Viewer v(o);
  Frame f = frame_1080p();
  for (int i = 0; i < 30; ++i) v.show(f);  // buffers and textures made
  (void)v.snapshot();
  if (paused) v.set_paused(true);
  const ViewerStats before = v.stats();
  std::int64_t n = 0;
  for (auto _ : state) {
    f.index = n++;
    v.show(f);
  }
  if (paused) v.set_paused(false);
  (void)v.snapshot();  // the last frame displayed
  const ViewerStats s = v.stats();
  const std::size_t bytes = f.planes[0].pitch * f.planes[0].height + f.planes[1].pitch * f.planes[1].height;
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(bytes));
  state.counters["shown"] = double(s.shown - before.shown);
  state.counters["dropped"] = double(s.dropped - before.dropped);
  state.counters["latency_p50_ms"] = s.latency_p50_ms;
  state.counters["latency_p99_ms"] = s.latency_p99_ms;
  state.counters["display_fps"] = s.display_fps;
}

BENCHMARK(BM_Memcpy1080pNv12)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Show1080pNv12)->ArgName("paused")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
