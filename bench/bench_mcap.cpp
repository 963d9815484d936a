// Recording benchmarks that need no viewer (issue 14, section 6):
// - BM_RecordWrite: RecordingWriter writing 1080p NV12 frames to a file,
//   uncompressed or zstd level 1, closed with fdatasync; BM_PlainWrite writes
//   the same frame bytes with write() + fdatasync (what dd does), the
//   in-program baseline. bench/mcap_bench.sh also runs dd itself.
// - BM_Seek: time to seek to a random frame and read it, in a 100-frame and a
//   10,000-frame recording (one frame per chunk, as 1080p recordings are);
//   BM_Open: opening them (summary + message indexes), and a 10,000-frame
//   recording without a summary (a full scan), for contrast.
// Files go to $HANDOFF_BENCH_DIR (default: the working directory).
#include <handoff/host_frame.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/media/scene.hpp>

#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>

namespace {

using namespace handoff;
using namespace handoff::media;

constexpr std::uint32_t kWidth = 1920, kHeight = 1080;
constexpr int kFramesPerRun = 120;

std::filesystem::path bench_dir() {
  const char* d = std::getenv("HANDOFF_BENCH_DIR");
  return d ? std::filesystem::path(d) : std::filesystem::current_path();
}

// Eight distinct frames: the synthetic scene (compresses well) or random bytes (does not).
const std::vector<Frame>& frames(bool noise) {
  static std::map<bool, std::vector<Frame>> cache;
  auto& v = cache[noise];
  if (!v.empty()) return v;
  std::mt19937_64 rng(7);
  SceneOptions so;
  so.width = kWidth;
  so.height = kHeight;
  for (int i = 0; i < 8; ++i) {
    Frame f = allocate_host_frame(PixelFormat::NV12, kWidth, kHeight);
    FrameWriteTarget t{static_cast<std::uint8_t*>(f.luma().data), f.luma().pitch,
                       static_cast<std::uint8_t*>(f.chroma().data), f.chroma().pitch};
    if (noise) {
      for (auto* plane : {&f.planes[0], &f.planes[1]}) {
        auto* p = static_cast<std::uint64_t*>(plane->data);
        for (std::size_t k = 0; k < plane->pitch * plane->height / 8; ++k) p[k] = rng();
      }
    } else {
      render_scene_cpu(scene_state(so, i * 10), t);
    }
    v.push_back(f);
  }
  return v;
}

void BM_RecordWrite(benchmark::State& state) {
  const bool zstd = state.range(0) != 0;
  const bool noise = state.range(1) != 0;
  const auto& src = frames(noise);
  const auto path = bench_dir() / "bench_record.mcap";
  const OverlayFrame none;
  std::uint64_t file_bytes = 0;
  for (auto _ : state) {
    RecordingOptions o;
    o.compression = zstd ? mcap::Compression::Zstd : mcap::Compression::None;
    o.compression_level = 1;
    o.sync_on_close = true;
    o.block_when_full = true;  // measure throughput: nothing dropped
    RecordingWriter w(path, o);
    for (int i = 0; i < kFramesPerRun; ++i) w.write(src[i % 8], none, "/camera", 1'000'000'000ull + 33'333'333ull * i);
    w.close();
    file_bytes = w.stats().bytes_written;
  }
  const double frame_bytes = double(packed_frame_bytes(PixelFormat::NV12, kWidth, kHeight)) * kFramesPerRun;
  state.counters["frame_MBps"] = benchmark::Counter(frame_bytes * double(state.iterations()) / 1e6, benchmark::Counter::kIsRate);
  state.counters["fps"] = benchmark::Counter(double(kFramesPerRun) * double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["file_vs_frames"] = double(file_bytes) / frame_bytes;
  std::filesystem::remove(path);
}
BENCHMARK(BM_RecordWrite)
    ->ArgNames({"zstd", "noise"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same frame bytes, packed, written with write() and flushed: dd's work.
void BM_PlainWrite(benchmark::State& state) {
  const auto path = bench_dir() / "bench_plain.bin";
  std::vector<std::uint8_t> packed(packed_frame_bytes(PixelFormat::NV12, kWidth, kHeight));
  for (std::size_t i = 0; i < packed.size(); ++i) packed[i] = std::uint8_t(i * 31);
  for (auto _ : state) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return state.SkipWithError("open failed");
    for (int i = 0; i < kFramesPerRun; ++i) {
      if (::write(fd, packed.data(), packed.size()) != ssize_t(packed.size())) return state.SkipWithError("write failed");
    }
    ::fdatasync(fd);
    ::close(fd);
  }
  state.counters["frame_MBps"] =
      benchmark::Counter(double(packed.size()) * kFramesPerRun * double(state.iterations()) / 1e6, benchmark::Counter::kIsRate);
  std::filesystem::remove(path);
}
BENCHMARK(BM_PlainWrite)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();

// A recording of n small frames, one per chunk (zstd 1), made once per run.
std::filesystem::path seek_file(int n, bool summary) {
  const auto path = bench_dir() / ("bench_seek_" + std::to_string(n) + (summary ? "" : "_nosummary") + ".mcap");
  static std::map<std::string, bool> made;
  if (made[path.string()]) return path;
  RecordingOptions o;
  o.chunk_size = 1;
  o.summary = summary;
  o.block_when_full = true;
  RecordingWriter w(path, o);
  Frame f = allocate_host_frame(PixelFormat::NV12, 160, 120);
  for (int i = 0; i < n; ++i) {
    fill_test_pattern(f, std::uint32_t(i));
    w.write(f, {}, "/camera", 1'000'000'000ull + 33'333'333ull * std::uint64_t(i));
  }
  w.close();
  made[path.string()] = true;
  return path;
}

void BM_Seek(benchmark::State& state) {
  const int n = int(state.range(0));
  auto src = open_recording(seek_file(n, true));
  HostFrame frame(PixelFormat::NV12, 160, 120);
  std::mt19937_64 rng(1);
  for (auto _ : state) {
    src->seek(std::int64_t(rng() % std::uint64_t(n)));
    benchmark::DoNotOptimize(src->read_into(frame.target()));
  }
}
BENCHMARK(BM_Seek)->Arg(100)->Arg(10000)->Unit(benchmark::kMicrosecond);

void BM_Open(benchmark::State& state) {
  const auto path = seek_file(int(state.range(0)), state.range(1) != 0);
  for (auto _ : state) benchmark::DoNotOptimize(open_recording(path));
}
BENCHMARK(BM_Open)->ArgNames({"frames", "summary"})->Args({100, 1})->Args({10000, 1})->Args({10000, 0})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
