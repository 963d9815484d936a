// DLPack export / import cost in C++ (no Python): export a plane and run its
// deleter, import two tensors as a frame and release it, validate a frame.
// Baseline in the same run: the floor of any export, one heap allocation of a
// managed tensor with its shape and strides, and its deletion.
//   build/default/bench/bench_dlpack
#include <handoff/dlpack.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>

#include <benchmark/benchmark.h>

namespace {

using namespace handoff;

const Frame& frame_1080p() {
  static const Frame f = allocate_host_frame(PixelFormat::NV12, 1920, 1080);
  return f;
}

struct Floor {
  DLManagedTensor managed{};
  std::int64_t shape[3]{};
  std::int64_t strides[3]{};
};

void BM_BaselineAllocateTensor(benchmark::State& state) {
  for (auto _ : state) {
    auto* t = new Floor;
    t->managed.dl_tensor.shape = t->shape;
    benchmark::DoNotOptimize(t);
    delete t;
  }
}
BENCHMARK(BM_BaselineAllocateTensor);

void BM_ExportLegacy(benchmark::State& state) {
  const Frame& f = frame_1080p();
  for (auto _ : state) {
    DLManagedTensor* t = export_dlpack(f, FramePart::Luma);
    benchmark::DoNotOptimize(t);
    t->deleter(t);
  }
}
BENCHMARK(BM_ExportLegacy);

void BM_ExportVersioned(benchmark::State& state) {
  const Frame& f = frame_1080p();
  for (auto _ : state) {
    DLManagedTensorVersioned* t = export_dlpack_versioned(f, FramePart::Chroma);
    benchmark::DoNotOptimize(t);
    t->deleter(t);
  }
}
BENCHMARK(BM_ExportVersioned);

void BM_ExportVersionedCachedLayout(benchmark::State& state) {
  const Frame& f = frame_1080p();
  const TensorLayout l = tensor_layout(f, FramePart::Chroma);
  for (auto _ : state) {
    DLManagedTensorVersioned* t = export_dlpack_versioned(f, l);
    benchmark::DoNotOptimize(t);
    t->deleter(t);
  }
}
BENCHMARK(BM_ExportVersionedCachedLayout);

void BM_ExportImportRoundTrip(benchmark::State& state) {
  const Frame& f = frame_1080p();
  for (auto _ : state) {
    ProducerTensor y(export_dlpack_versioned(f, FramePart::Luma));
    ProducerTensor c(export_dlpack_versioned(f, FramePart::Chroma));
    Frame g = import_dlpack(y, c, ImportOptions{});
    benchmark::DoNotOptimize(g.planes[0].data);
  }
}
BENCHMARK(BM_ExportImportRoundTrip);

void BM_Validate(benchmark::State& state) {
  const Frame& f = frame_1080p();
  for (auto _ : state) {
    validate(f);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_Validate);

}  // namespace
BENCHMARK_MAIN();
