// Per-frame cost of sharing an NV12 frame with a subscriber in another process
// through handoff::live (host memfd slots), against sending the same frame's
// bytes over a Unix socket of the same kind of connection, in the same run.
//
//   publish (BM_Live_Publish):        Publisher::publish(frame): one copy into a
//                                     shared slot, then a ~150-byte message;
//   acquire (BM_Live_AcquirePresent): acquire() + present(): the producer writes
//                                     straight into the slot (that writing is
//                                     production, outside the timing), so only
//                                     the bookkeeping and the message;
//   socket  (BM_Live_SocketCopy):     the frame's bytes written to a Unix stream
//                                     socket and read by the receiver into its
//                                     own buffer (the baseline);
//   idle    (BM_Live_PublishNoSubscriber): publish() with nobody connected.
//
// Publish to visible (BM_LiveView_*): the receiver is a headless handoff::Viewer
// (EGL) that draws each frame it gets; the time runs from the start of the send
// until the receiving process sees the frame displayed (ViewerStats::shown):
//   view    (BM_LiveView_Publish):    Viewer::attach: the frame is uploaded
//                                     from the publisher's slot mapping;
//   socket  (BM_LiveView_SocketCopy): the bytes over a Unix stream socket, read
//                                     into a buffer, then Viewer::show (the
//                                     baseline); its row adds latency_ratio_view.
//
// One frame at a time: the sender waits (untimed) until the receiving process
// has the whole frame, noted in shared memory, before sending the next.
// The receiver is this program run again (--receiver).
//
//   build/<dir>/bench/bench_live --benchmark_counters_tabular=true
// Time column: the sender's time per frame (publish / present / write).
// Counters: send_us (the same), latency_us (start of the send to the receiver
// having the frame); the socket rows add send_ratio_publish, send_ratio_acquire,
// latency_ratio_publish and latency_ratio_acquire (live / socket: goal <= 0.1).
#include <benchmark/benchmark.h>

#include <handoff/host_frame.hpp>
#include <handoff/log.hpp>
#include <handoff/publisher.hpp>
#include <handoff/subscriber.hpp>
#include <handoff/viewer.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using namespace handoff;
using Clock = std::chrono::steady_clock;

// What the receiver tells the sender, in a shared memfd.
struct Shared {
  std::atomic<std::uint64_t> received{0};
  std::atomic<std::int64_t> received_ns{0};  // CLOCK_MONOTONIC (steady_clock) of the last frame
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

std::int64_t now_ns() { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(); }

// --- the receiving process ---------------------------------------------------------------
Shared* map_shared(int fd) {
  void* p = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) std::abort();
  return static_cast<Shared*>(p);
}

void mark(Shared* s) {
  s->received_ns.store(now_ns(), std::memory_order_relaxed);
  s->received.fetch_add(1, std::memory_order_release);
}

int receive_live(const char* name, Shared* s) {
  SubscriberOptions o;
  o.reconnect = false;
  Subscriber sub(name, o);
  for (;;) {
    LiveFrame f = sub.next(std::chrono::milliseconds(200));
    if (f) {
      mark(s);  // the frame is readable here (mapped); dropping it releases the slot
      continue;
    }
    const LinkState st = sub.status().state;
    if (st == LinkState::Stopped || st == LinkState::Failed) return 0;
  }
}

int receive_socket(int fd, Shared* s) {
  std::vector<char> buf;
  for (;;) {
    std::uint64_t n = 0;
    if (::read(fd, &n, sizeof n) != sizeof n) return 0;
    buf.resize(n);
    for (std::size_t got = 0; got < n;) {
      const ssize_t r = ::read(fd, buf.data() + got, n - got);
      if (r <= 0) return 0;
      got += static_cast<std::size_t>(r);
    }
    mark(s);
  }
}

// The viewing receivers: a headless viewer; a frame counts once it is displayed.
ViewerOptions bench_viewer_options() {
  ViewerOptions o;
  o.title = "bench-live-view";
  o.display = ViewerDisplay::Headless;
  o.vsync = false;
  o.show_ui = false;
  o.memory = ViewerMemory::Host;
  o.on_notice = [](std::string_view) {};
  return o;
}

// Marks each newly displayed frame until the viewer closes (the sender's SIGTERM ends the process).
void mark_displayed(const Viewer& v, Shared* s) {
  std::uint64_t seen = 0;
  while (v.is_open()) {
    const std::uint64_t shown = v.stats().shown;
    for (; seen < shown; ++seen) mark(s);
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

int receive_view_live(const char* name, Shared* s) {
  Viewer v(bench_viewer_options());
  v.attach(name);
  mark_displayed(v, s);
  return 0;
}

// "FD:W:H": packed NV12 frames of W x H on socket FD, each shown when it is complete.
int receive_view_socket(const char* arg, Shared* s) {
  int fd = -1;
  unsigned w = 0, h = 0;
  if (std::sscanf(arg, "%d:%u:%u", &fd, &w, &h) != 3) return 2;
  Viewer v(bench_viewer_options());
  std::thread reader([&] {
    Frame frame = allocate_host_frame(PixelFormat::NV12, w, h);
    std::vector<char> buf(std::size_t(w) * h * 3 / 2);
    for (;;) {
      std::uint64_t n = 0;
      if (::read(fd, &n, sizeof n) != sizeof n || n != buf.size()) break;
      for (std::size_t got = 0; got < n;) {
        const ssize_t r = ::read(fd, buf.data() + got, n - got);
        if (r <= 0) return v.close();
        got += static_cast<std::size_t>(r);
      }
      // Into the frame's pitched planes (the packed bytes are the luma rows, then the chroma rows).
      for (int p = 0; p < 2; ++p) {
        const std::uint32_t rows = p == 0 ? h : (h + 1) / 2;
        const char* src = buf.data() + (p == 0 ? 0 : std::size_t(w) * h);
        for (std::uint32_t y = 0; y < rows; ++y)
          std::memcpy(static_cast<char*>(frame.planes[p].data) + y * frame.planes[p].pitch, src + std::size_t(y) * w, w);
      }
      v.show(frame);
    }
    v.close();
  });
  mark_displayed(v, s);
  reader.join();
  return 0;
}

// --- the sending side -----------------------------------------------------------------------
class Receiver {
 public:
  // mode "live NAME" or "socket": spawns this program as the receiver.
  Receiver(const std::string& mode, const std::string& arg) {
    shm_ = ::memfd_create("bench-live-shared", 0);  // inherited by the receiver
    if (shm_ < 0 || ::ftruncate(shm_, sizeof(Shared)) != 0) std::abort();
    shared_ = map_shared(shm_);
    int child_end = -1;
    if (mode == "socket" || mode == "view-socket") {
      int sv[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) std::abort();
      sock_ = sv[0];
      ::fcntl(sock_, F_SETFD, FD_CLOEXEC);
      child_end = sv[1];
    }
    const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
    std::string last = arg;
    if (mode == "socket") last = std::to_string(child_end);
    if (mode == "view-socket") last = std::to_string(child_end) + ":" + arg;  // arg: "W:H"
    std::vector<std::string> args{exe, "--receiver", mode, std::to_string(shm_), last};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, exe.c_str(), nullptr, nullptr, argv.data(), environ) != 0) std::abort();
    if (child_end >= 0) ::close(child_end);
  }
  ~Receiver() {
    if (sock_ >= 0) ::close(sock_);  // the socket receiver ends at end of stream
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    ::munmap(shared_, sizeof(Shared));
    ::close(shm_);
  }
  std::uint64_t received() const { return shared_->received.load(std::memory_order_acquire); }
  std::int64_t received_ns() const { return shared_->received_ns.load(std::memory_order_relaxed); }
  // Waits (bounded) until the receiver has more than `count` frames.
  bool wait_past(std::uint64_t count, std::chrono::seconds limit = std::chrono::seconds(10)) const {
    const auto deadline = Clock::now() + limit;
    while (received() <= count) {
      if (Clock::now() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }
  int socket() const { return sock_; }

 private:
  pid_t pid_ = -1;
  int shm_ = -1;
  int sock_ = -1;
  Shared* shared_ = nullptr;
};

std::string label(std::int64_t w) { return w >= 3840 ? "4K" : "1080p"; }

// Per size: mean send and latency seconds of the live rows, for the socket row's ratios.
std::map<std::pair<std::string, std::int64_t>, std::pair<double, double>> g_results;

struct Totals {
  double send_s = 0, latency_s = 0;
  std::int64_t frames = 0;
  void add(Clock::time_point t0, Clock::time_point t1, std::int64_t received_ns) {
    send_s += std::chrono::duration<double>(t1 - t0).count();
    latency_s += double(received_ns - std::chrono::duration_cast<std::chrono::nanoseconds>(t0.time_since_epoch()).count()) * 1e-9;
    ++frames;
  }
  void report(benchmark::State& state, const std::string& row) const {
    const double n = double(std::max<std::int64_t>(frames, 1));
    state.counters["send_us"] = 1e6 * send_s / n;
    state.counters["latency_us"] = 1e6 * latency_s / n;
    g_results[{row, state.range(0)}] = {send_s / n, latency_s / n};
  }
};

// A publisher with a connected subscriber process.
struct LiveSetup {
  explicit LiveSetup(const std::string& name, const std::string& mode = "live")
      : pub(name, options()), rx(mode, name) {
    const auto deadline = Clock::now() + std::chrono::seconds(30);  // a viewer starts EGL first
    while (pub.stats().subscribers == 0 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  static PublisherOptions options() {
    PublisherOptions o;
    o.slots = 3;  // one frame in flight at a time (each release is awaited)
    return o;
  }
  Publisher pub;
  Receiver rx;
};

template <typename Send>
void run_live(benchmark::State& state, const std::string& row, Send send, const std::string& mode = "live") {
  const auto w = static_cast<std::uint32_t>(state.range(0)), h = static_cast<std::uint32_t>(state.range(1));
  LiveSetup live("bench-" + row + "-" + label(w), mode);
  if (live.pub.stats().subscribers == 0) return state.SkipWithError("the subscriber process did not connect");
  const Frame frame = allocate_host_frame(PixelFormat::NV12, w, h);
  fill_test_pattern(frame, 1);
  Totals t;
  for (auto _ : state) {
    const std::uint64_t before = live.rx.received();
    const auto t0 = Clock::now();
    const bool ok = send(live.pub, frame);
    const auto t1 = Clock::now();
    if (!ok || !live.rx.wait_past(before)) return state.SkipWithError("a frame did not arrive");
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    t.add(t0, t1, live.rx.received_ns());
    while (live.pub.stats().held_frames != 0) std::this_thread::yield();  // its release is in (untimed)
  }
  t.report(state, row);
}

void BM_Live_Publish(benchmark::State& state) {
  run_live(state, "publish", [](Publisher& pub, const Frame& f) { return pub.publish(f); });
}

void BM_Live_AcquirePresent(benchmark::State& state) {
  run_live(state, "acquire", [](Publisher& pub, const Frame& f) {
    PublishSlot s = pub.acquire(f.format, f.width, f.height);
    if (!s) return false;
    pub.present(std::move(s));
    return true;
  });
}

void BM_Live_SocketCopy(benchmark::State& state) {
  const auto w = static_cast<std::uint32_t>(state.range(0)), h = static_cast<std::uint32_t>(state.range(1));
  Receiver rx("socket", "");
  // The bytes a subscriber needs: both planes, packed rows.
  std::vector<char> bytes(std::size_t(w) * h * 3 / 2);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  Totals t;
  for (auto _ : state) {
    const std::uint64_t before = rx.received();
    const auto t0 = Clock::now();
    const std::uint64_t n = bytes.size();
    bool ok = ::write(rx.socket(), &n, sizeof n) == sizeof n;
    for (std::size_t sent = 0; ok && sent < bytes.size();) {
      const ssize_t r = ::write(rx.socket(), bytes.data() + sent, bytes.size() - sent);
      ok = r > 0;
      sent += ok ? static_cast<std::size_t>(r) : 0;
    }
    const auto t1 = Clock::now();
    if (!ok || !rx.wait_past(before)) return state.SkipWithError("the socket receiver did not get the frame");
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    t.add(t0, t1, rx.received_ns());
  }
  t.report(state, "socket");
  const double copy_send = t.send_s / double(std::max<std::int64_t>(t.frames, 1));
  const double copy_latency = t.latency_s / double(std::max<std::int64_t>(t.frames, 1));
  for (const char* row : {"publish", "acquire"}) {
    auto it = g_results.find({row, state.range(0)});
    if (it == g_results.end()) continue;
    state.counters[std::string("send_ratio_") + row] = it->second.first / copy_send;
    state.counters[std::string("latency_ratio_") + row] = it->second.second / copy_latency;
  }
}

void BM_LiveView_Publish(benchmark::State& state) {
  run_live(state, "view", [](Publisher& pub, const Frame& f) { return pub.publish(f); }, "view-live");
}

void BM_LiveView_SocketCopy(benchmark::State& state) {
  const auto w = static_cast<std::uint32_t>(state.range(0)), h = static_cast<std::uint32_t>(state.range(1));
  Receiver rx("view-socket", std::to_string(w) + ":" + std::to_string(h));
  std::vector<char> bytes(std::size_t(w) * h * 3 / 2);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  Totals t;
  for (auto _ : state) {
    const std::uint64_t before = rx.received();
    const auto t0 = Clock::now();
    const std::uint64_t n = bytes.size();
    bool ok = ::write(rx.socket(), &n, sizeof n) == sizeof n;
    for (std::size_t sent = 0; ok && sent < bytes.size();) {
      const ssize_t r = ::write(rx.socket(), bytes.data() + sent, bytes.size() - sent);
      ok = r > 0;
      sent += ok ? static_cast<std::size_t>(r) : 0;
    }
    const auto t1 = Clock::now();
    // The first frame waits for the viewer's EGL start too.
    if (!ok || !rx.wait_past(before, std::chrono::seconds(30)))
      return state.SkipWithError("the viewing socket receiver did not display the frame");
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    t.add(t0, t1, rx.received_ns());
  }
  t.report(state, "view-socket");
  auto it = g_results.find({"view", state.range(0)});
  if (it != g_results.end())
    state.counters["latency_ratio_view"] = it->second.second / (t.latency_s / double(std::max<std::int64_t>(t.frames, 1)));
}

void BM_Live_PublishNoSubscriber(benchmark::State& state) {
  const auto w = static_cast<std::uint32_t>(state.range(0)), h = static_cast<std::uint32_t>(state.range(1));
  Publisher pub("bench-idle-" + label(w));
  const Frame frame = allocate_host_frame(PixelFormat::NV12, w, h);
  for (auto _ : state) benchmark::DoNotOptimize(pub.publish(frame));
}

// Warm-up: every slot allocated and every page touched before the timing starts.
#define HANDOFF_LIVE_BENCH(W, H)                                                                      \
  BENCHMARK(BM_Live_Publish)->Args({W, H})->UseManualTime()->Unit(benchmark::kMicrosecond)            \
      ->MinTime(1.0)->MinWarmUpTime(0.5);                                                             \
  BENCHMARK(BM_Live_AcquirePresent)->Args({W, H})->UseManualTime()->Unit(benchmark::kMicrosecond)     \
      ->MinTime(1.0)->MinWarmUpTime(0.5);                                                             \
  BENCHMARK(BM_Live_SocketCopy)->Args({W, H})->UseManualTime()->Unit(benchmark::kMicrosecond)         \
      ->MinTime(1.0)->MinWarmUpTime(0.5);                                                             \
  BENCHMARK(BM_Live_PublishNoSubscriber)->Args({W, H})->Unit(benchmark::kMicrosecond)->MinTime(0.5); \
  BENCHMARK(BM_LiveView_Publish)->Args({W, H})->UseManualTime()->Unit(benchmark::kMicrosecond)        \
      ->MinTime(1.0)->MinWarmUpTime(0.5);                                                             \
  BENCHMARK(BM_LiveView_SocketCopy)->Args({W, H})->UseManualTime()->Unit(benchmark::kMicrosecond)     \
      ->MinTime(1.0)->MinWarmUpTime(0.5)
HANDOFF_LIVE_BENCH(1920, 1080);
HANDOFF_LIVE_BENCH(3840, 2160);

// A private socket folder for the run.
void use_private_runtime_dir() {
  static char dir[] = "/tmp/bench-live-XXXXXX";
  if (::mkdtemp(dir) == nullptr || ::chmod(dir, 0700) != 0) std::abort();
  ::setenv("XDG_RUNTIME_DIR", dir, 1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--receiver") {
    Shared* s = map_shared(std::atoi(argv[3]));
    const std::string mode = argv[2];
    if (mode == "view-live") return receive_view_live(argv[4], s);
    if (mode == "view-socket") return receive_view_socket(argv[4], s);
    return mode == "socket" ? receive_socket(std::atoi(argv[4]), s) : receive_live(argv[4], s);
  }
  set_log_level(LogLevel::Error);
  use_private_runtime_dir();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove_all(std::getenv("XDG_RUNTIME_DIR"));
  return 0;
}
