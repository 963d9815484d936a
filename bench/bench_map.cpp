// Per-frame cost of the interop path: map the two planes of a 1080p NV12 frame
// (two registered GL buffers), get their pointers, unmap, all through the GL
// worker. Batched (map_all: one driver call and one worker hop per map and per
// unmap) against per plane (one each per buffer), on the CUDA driver in use
// (the fake one with HANDOFF_CUDA_DRIVER=<libhandoff_fake_cuda.so>) and on the
// host-memory fallback (glMapNamedBufferRange).
//   HANDOFF_CUDA_DRIVER=build/<dir>/tests/fake_cuda/libhandoff_fake_cuda.so build/<dir>/bench/bench_map
#include <handoff/cuda.hpp>
#include <handoff/cuda_gl_buffer.hpp>
#include <handoff/gl_buffer.hpp>
#include <handoff/gl_worker.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr std::uint32_t kW = 1920, kH = 1080;

handoff::GlWorker& worker() {
  static handoff::GlWorker w;
  return w;
}

struct Planes {
  handoff::CudaGlBuffer luma, chroma;
};

std::unique_ptr<Planes> make_planes(handoff::MapBackend backend) {
  const auto layout = handoff::FrameLayout::packed(handoff::PixelFormat::NV12, kW, kH);
  handoff::CudaGlOptions o;
  o.access = handoff::CudaGlAccess::WriteDiscard;
  o.backend = backend;
  handoff::GlBuffer l(worker(), layout.buffer_bytes(0)), c(worker(), layout.buffer_bytes(1));
  return std::make_unique<Planes>(Planes{handoff::CudaGlBuffer(worker(), l, o), handoff::CudaGlBuffer(worker(), c, o)});
}

void percentile_counters(benchmark::State& state, std::vector<double>& ns) {
  if (ns.empty()) return;
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) { return ns[std::min(ns.size() - 1, static_cast<std::size_t>(q * double(ns.size())))]; };
  state.counters["p50_us"] = at(0.5) / 1000.0;
  state.counters["p99_us"] = at(0.99) / 1000.0;
}

template <typename MapOnce>
void frames(benchmark::State& state, MapOnce map_once) {
  std::vector<double> ns;
  ns.reserve(1 << 20);
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    map_once();
    auto t1 = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  percentile_counters(state, ns);
  state.SetItemsProcessed(state.iterations());
}

void run_backend(benchmark::State& state, handoff::MapBackend backend, bool batched) {
  if (backend == handoff::MapBackend::Cuda && !handoff::cuda::driver().usable()) {
    state.SkipWithError(handoff::cuda::driver().describe().c_str());
    return;
  }
  std::unique_ptr<Planes> p;
  try {
    p = make_planes(backend);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  if (batched) {
    frames(state, [&] {
      handoff::Mapping m = handoff::CudaGlBuffer::map_all({&p->luma, &p->chroma});
      benchmark::DoNotOptimize(m[0].data);
      benchmark::DoNotOptimize(m[1].data);
    });
  } else {
    frames(state, [&] {
      handoff::Mapping l = p->luma.map();
      handoff::Mapping c = p->chroma.map();
      benchmark::DoNotOptimize(l.data());
      benchmark::DoNotOptimize(c.data());
    });
  }
}

void BM_MapFrame_Cuda_MapAll(benchmark::State& s) { run_backend(s, handoff::MapBackend::Cuda, true); }
void BM_MapFrame_Cuda_PerPlane(benchmark::State& s) { run_backend(s, handoff::MapBackend::Cuda, false); }
void BM_MapFrame_Host_MapAll(benchmark::State& s) { run_backend(s, handoff::MapBackend::Host, true); }
void BM_MapFrame_Host_PerPlane(benchmark::State& s) { run_backend(s, handoff::MapBackend::Host, false); }

BENCHMARK(BM_MapFrame_Cuda_MapAll)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MapFrame_Cuda_PerPlane)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MapFrame_Host_MapAll)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MapFrame_Host_PerPlane)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // The fake driver takes its device UUID from the environment: give it the GL
  // device's, so the same-GPU check passes as it would on one real GPU. A real
  // driver ignores the variable.
  if (const auto& u = worker().info().device_uuid; u && std::getenv("HANDOFF_CUDA_DRIVER") &&
                                                    !std::getenv("HANDOFF_FAKE_CUDA_UUID"))
    setenv("HANDOFF_FAKE_CUDA_UUID", handoff::to_string(*u).c_str(), 1);
  std::printf("CUDA: %s\nGL: %s\n", handoff::cuda::driver().describe().c_str(), worker().info().renderer.c_str());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
