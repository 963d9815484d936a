// handoff_live_peer: the other process of the live tests. It publishes or
// subscribes as told on its command line, reports on stdout one line per
// event, and takes commands on stdin (a test drives it; see peer_process.hpp).
//
//   publish NAME [--memory host|cuda|vulkan] [--format FORMAT (any PixelFormat)] [--size WxH] [--frames N]
//                [--interval-ms M] [--boxes B] [--acquire] [--slots S]
//       READY <path>; after N frames: DONE published=<n>; stdin: "publish K", "stats", "quit"
//   subscribe NAME [--frames N] [--boxes B [--overlay-every K]] [--max-held H] [--report-every K]
//                [--pause] [--keep-all] [--gl] [--no-wait] [--cuda-counters]
//       FRAME <seq> <index> ok | FAIL ...; DONE received=<n>; RES fds=<n> rss_kib=<n>;
//       stdin: "status", "drop" (let go of kept frames), "quit"
#include <handoff/cuda.hpp>
#include <handoff/log.hpp>
#include <handoff/publisher.hpp>
#include <handoff/subscriber.hpp>

#include <handoff/cuda_abi.hpp>
#include "live_support.hpp"

#if HANDOFF_LIVE_PEER_GL
#include <glad/gl.h>
#include <handoff/gl_worker.hpp>
#include <handoff/vk_gl.hpp>
#endif
#if HANDOFF_HAVE_VULKAN
#include <handoff/vk_context.hpp>
#include <handoff/vk_memory.hpp>
#include <handoff/cuda_check.hpp>
#endif
#include "fake_cuda_control.hpp"

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace handoff;
using namespace handoff::live::test;

namespace {

struct Args {
  std::string mode, name;
  std::map<std::string, std::string> opt;
  bool has(const std::string& k) const { return opt.count(k) != 0; }
  std::string get(const std::string& k, const std::string& d) const { return has(k) ? opt.at(k) : d; }
  long num(const std::string& k, long d) const { return has(k) ? std::stol(opt.at(k)) : d; }
};

Args parse(int argc, char** argv) {
  Args a;
  if (argc < 3) throw UsageError("usage: handoff_live_peer publish|subscribe NAME [options]");
  a.mode = argv[1];
  a.name = argv[2];
  for (int i = 3; i < argc; ++i) {
    std::string k = argv[i];
    if (k.rfind("--", 0) != 0) throw UsageError("unexpected argument " + k);
    const bool flag = i + 1 >= argc || std::string(argv[i + 1]).rfind("--", 0) == 0;
    a.opt[k.substr(2)] = flag ? "1" : argv[++i];
  }
  return a;
}

void say(const std::string& s) {
  static std::mutex m;  // the GL worker reports too
  std::lock_guard lock(m);
  std::cout << s << std::endl;  // flushed: the test reads line by line
}

// A line from stdin when one is there (never blocks); "quit" at end of input.
std::optional<std::string> poll_stdin() {
  static std::string buffer;
  if (auto n = buffer.find('\n'); n != std::string::npos) {
    std::string l = buffer.substr(0, n);
    buffer.erase(0, n + 1);
    return l;
  }
  pollfd p{0, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return std::nullopt;
  char chunk[256];
  const ssize_t r = ::read(0, chunk, sizeof chunk);
  if (r <= 0) return std::string("quit");
  buffer.append(chunk, static_cast<std::size_t>(r));
  return poll_stdin();
}

PixelFormat format_of(const Args& a) { return from_string<PixelFormat>(a.get("format", "nv12")); }

std::pair<std::uint32_t, std::uint32_t> size_of(const Args& a) {
  const std::string s = a.get("size", "64x48");
  const auto x = s.find('x');
  return {static_cast<std::uint32_t>(std::stoul(s.substr(0, x))), static_cast<std::uint32_t>(std::stoul(s.substr(x + 1)))};
}

// --- publishing ------------------------------------------------------------------------
struct CudaSource {  // a CUDA copy of a host frame (device memory from cuMemAlloc)
  cuda::PrimaryContext ctx{0};
  cuda::abi::CUdeviceptr ptr = 0;
  Frame frame;
  explicit CudaSource(const Frame& host) {
    const auto& d = cuda::driver();
    cuda::ScopedContext cur(ctx);
    const std::size_t bytes = host.planes[0].pitch * (host.height + chroma_height(host.height));
    HANDOFF_CU_CHECK(d.api().cuMemAlloc(&ptr, bytes));
    HANDOFF_CU_CHECK(d.api().cuMemcpyHtoD(ptr, host.planes[0].data, bytes));
    frame = host;
    frame.memory = MemoryKind::Cuda;
    frame.device = 0;
    frame.cuda_context = ctx.handle();
    frame.planes[0].data = reinterpret_cast<void*>(ptr);
    frame.planes[1].data = reinterpret_cast<void*>(ptr + (static_cast<const std::byte*>(host.planes[1].data) -
                                                          static_cast<const std::byte*>(host.planes[0].data)));
  }
  ~CudaSource() {
    cuda::ScopedContext cur(ctx);
    cuda::driver().api().cuMemFree(ptr);
  }
};

class PeerPublisher {
 public:
  explicit PeerPublisher(const Args& a) : args_(a), format_(format_of(a)) {
    std::tie(w_, h_) = size_of(a);
    PublisherOptions o;
    o.slots = static_cast<std::size_t>(a.num("slots", 4));
    const std::string m = a.get("memory", "host");
    if (m == "cuda") o.memory = SlotMemory::Cuda;
#if HANDOFF_HAVE_VULKAN
    if (m == "vulkan") {
      VkContextOptions vo;
      vo.validation = false;
      vk_ = std::make_unique<VkContext>(vo);
      o.vulkan = vk_.get();
      o.memory = SlotMemory::Vulkan;
    }
#endif
    pub_ = std::make_unique<Publisher>(a.name, o);
    say("READY " + pub_->socket_path().string() + " route=" + pub_->stats().route);
  }

  void publish_one() {
    const std::int64_t index = next_index_++;
    const Frame host = pattern_frame(format_, w_, h_, index);
    const auto boxes = static_cast<std::uint32_t>(args_.num("boxes", 0));
    const media::OverlayFrame overlays = boxes ? overlays_for(index, boxes) : media::OverlayFrame{};
    if (args_.has("acquire")) {
      PublishSlot s = pub_->acquire(format_, w_, h_);
      if (!s) return;
      copy_into(host, s.frame());
      s.frame().index = index;
      s.frame().timestamp = host.timestamp;
      pub_->present(std::move(s), overlays);
    } else if (args_.get("memory", "host") == "cuda" && args_.has("cuda-source")) {
      CudaSource src(host);
      pub_->publish(src.frame, overlays);
    } else {
      pub_->publish(host, overlays);
      if (args_.get("memory", "host") == "cuda") {
        // publish() queues the copy into a CUDA slot on the default stream and
        // returns before it ran: `host` must outlive that (Publisher::publish's
        // contract), so the stream is passed before it goes.
        cuda::PrimaryContext ctx{0};
        cuda::ScopedContext cur(ctx);
        HANDOFF_CU_CHECK(cuda::driver().api().cuStreamSynchronize(nullptr));
      }
    }
  }

  void run() {
    publish_batch(args_.num("frames", 0), args_.num("interval-ms", 0));
    for (;;) {
      auto l = poll_stdin();
      if (!l) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      if (*l == "quit") return;
      if (*l == "stats") say(stats_line());
      if (l->rfind("publish ", 0) == 0) publish_batch(std::stol(l->substr(8)), args_.num("interval-ms", 0));
    }
  }

 private:
  void copy_into(const Frame& src, const Frame& dst) {
    if (dst.memory == MemoryKind::Host) {
      for (int p = 0; p < plane_count(src.format); ++p) {
        const PlaneLayout l = plane_layout(src.format, src.width, src.height, p);
        for (std::uint32_t y = 0; y < l.height; ++y)
          std::memcpy(static_cast<char*>(dst.planes[p].data) + y * dst.planes[p].pitch,
                      static_cast<const char*>(src.planes[p].data) + y * src.planes[p].pitch, l.row_bytes);
      }
      return;
    }
    throw UsageError("--acquire is for host slots in this peer");
  }
  void publish_batch(long n, long interval_ms) {
    for (long i = 0; i < n; ++i) {
      publish_one();
      if (interval_ms) std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
    }
    if (n > 0) say("DONE " + stats_line());
  }
  std::string stats_line() const {
    const PublisherStats s = pub_->stats();
    return "STATS subscribers=" + std::to_string(s.subscribers) + " published=" + std::to_string(s.published) +
           " dropped=" + std::to_string(s.dropped_no_slot) + " skipped=" + std::to_string(s.skipped_sends) +
           " refused=" + std::to_string(s.peers_refused) + " dropped_peers=" + std::to_string(s.peers_dropped);
  }

  Args args_;
  PixelFormat format_;
  std::uint32_t w_ = 0, h_ = 0;
  std::int64_t next_index_ = 0;
#if HANDOFF_HAVE_VULKAN
  std::unique_ptr<VkContext> vk_;
#endif
  std::unique_ptr<Publisher> pub_;
};

// --- subscribing ------------------------------------------------------------------------
// KHR_debug errors of the peer's GL worker (reported on the worker thread).
struct GlErrors {
  std::mutex mutex;
  std::vector<std::string> seen;
  void push(std::string e) {
    std::lock_guard lock(mutex);
    seen.push_back(std::move(e));
  }
  std::string take() {
    std::lock_guard lock(mutex);
    std::string all;
    for (auto& e : seen) all += (all.empty() ? "" : "; ") + e;
    seen.clear();
    return all;
  }
};
GlErrors& gl_errors() {
  static GlErrors e;
  return e;
}

#if HANDOFF_LIVE_PEER_GL
// The frame's bytes through GL, as a viewer imports a Vulkan slot.
std::vector<unsigned char> read_through_gl(GlWorker& worker, const LiveFrame& f) {
  std::vector<unsigned char> bytes(f.slot.size);
  worker.run([&] {
    ExportedMemory m = f.vulkan_memory();
    GlVkBuffer b(m, static_cast<std::size_t>(f.slot.size));
    glGetNamedBufferSubData(b.name(), 0, static_cast<GLsizeiptr>(bytes.size()), bytes.data());
    if (glGetError() != GL_NO_ERROR) throw Error("glGetNamedBufferSubData failed");
  });
  if (const std::string e = gl_errors().take(); !e.empty()) throw Error("KHR_debug error: " + e);
  return bytes;
}
#endif

std::string verify(const LiveFrame& f, const Args& a, void* gl) {
  Frame host = f.frame;
  std::vector<unsigned char> copy;
  if (f.frame.memory == MemoryKind::Cuda) {
    const Frame dst = allocate_host_frame(f.frame.format, f.frame.width, f.frame.height);
    const auto& d = cuda::driver();
    cuda::ScopedContext cur(d, static_cast<cuda::abi::CUcontext>(f.frame.cuda_context));
    for (int p = 0; p < plane_count(f.frame.format); ++p) {
      const PlaneLayout l = plane_layout(f.frame.format, f.frame.width, f.frame.height, p);
      cuda::abi::CUDA_MEMCPY2D c{};
      c.srcMemoryType = cuda::abi::CU_MEMORYTYPE_DEVICE;
      c.srcDevice = reinterpret_cast<cuda::abi::CUdeviceptr>(f.frame.planes[p].data);
      c.srcPitch = f.frame.planes[p].pitch;
      c.dstMemoryType = cuda::abi::CU_MEMORYTYPE_HOST;
      c.dstHost = dst.planes[p].data;
      c.dstPitch = dst.planes[p].pitch;
      c.WidthInBytes = l.row_bytes;
      c.Height = l.height;
      HANDOFF_CU_CHECK(d.api().cuMemcpy2D(&c));
    }
    host = dst;
    host.index = f.frame.index;
  } else if (f.frame.memory == MemoryKind::Vulkan) {
#if HANDOFF_LIVE_PEER_GL
    copy = read_through_gl(*static_cast<GlWorker*>(gl), f);
    host.memory = MemoryKind::Host;
    for (int p = 0; p < 2; ++p) host.planes[p].data = copy.data() + f.frame.planes[p].offset;
#else
    (void)gl;
    return "a Vulkan frame, and this peer has no GL";
#endif
  }
  std::string why = check_pattern(host);
  const long every = a.num("overlay-every", 1);
  const auto boxes = static_cast<std::uint32_t>(f.frame.index % every == 0 ? a.num("boxes", 0) : 0);
  if (why.empty()) why = check_overlays(f.overlays.get(), f.frame.index, boxes);
  return why;
}

// "FRAME <seq> <index> ok", or "FAIL frame <seq>: <why>".
std::string check_line(const LiveFrame& f, const Args& a, void* gl) {
  std::string why;
  try {
    why = verify(f, a, gl);
  } catch (const std::exception& e) {
    why = e.what();
  }
  return why.empty() ? "FRAME " + std::to_string(f.sequence) + " " + std::to_string(f.frame.index) + " ok"
                     : "FAIL frame " + std::to_string(f.sequence) + ": " + why;
}

std::string status_line(const Subscriber& s) {
  const SubscriberStatus st = s.status();
  const SubscriberStats n = s.stats();
  return "STATUS " + std::string(to_string(st.state)) + " | " + st.message + " | received=" +
         std::to_string(n.received) + " connections=" + std::to_string(n.connections);
}

int subscribe(const Args& a) {
  SubscriberOptions o;
  o.max_held = static_cast<std::uint16_t>(a.num("max-held", 0));
  o.wait = !a.has("no-wait");
  o.client = "peer";
  std::unique_ptr<GlWorker> gl;
#if HANDOFF_LIVE_PEER_GL
  if (a.has("gl")) {
    GlWorkerOptions go;
    go.headless.debug = true;
    go.on_debug_message = [](const GlDebugMessage& m) {  // any KHR_debug error fails the frame it came with
      if (m.is_error()) gl_errors().push(m.describe());
    };
    gl = std::make_unique<GlWorker>(std::move(go));
  }
#endif
  auto sub = std::make_unique<Subscriber>(a.name, o);
  const long frames = a.num("frames", 0), every = a.num("report-every", 0);
  std::deque<LiveFrame> kept;
  long got = 0;
  bool done = false;
  LinkState last = LinkState::Waiting;
  for (;;) {
    if (auto l = poll_stdin()) {
      if (*l == "quit") break;
      if (*l == "status") say(status_line(*sub));
      if (*l == "drop") kept.clear();
    }
    if (const LinkState now = sub->status().state; now != last) {
      last = now;
      say(status_line(*sub));
    }
    if (a.has("pause")) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    LiveFrame f = sub->next(std::chrono::milliseconds(20));
    if (!f || done) continue;
    ++got;
    const std::string line = check_line(f, a, gl.get());
    if (a.has("keep-all")) kept.push_back(std::move(f));
    f = LiveFrame{};  // released before the line goes out
    say(line);
    if (every && got % every == 0)
      say("RES fds=" + std::to_string(open_descriptors()) + " rss_kib=" + std::to_string(resident_kib()) +
          " frame=" + std::to_string(got));
    if (frames && got >= frames) {
      done = true;
      say("DONE received=" + std::to_string(got));
    }
  }
  kept.clear();
  sub.reset();
  if (a.has("cuda-counters")) {
    test::FakeCuda fake;
    say("FAKE vmm_allocations=" + std::to_string(fake.live_vmm_allocations()) +
        " vmm_mappings=" + std::to_string(fake.live_vmm_mappings()) +
        " reservations=" + std::to_string(fake.live_vmm_reservations()) + " events=" + std::to_string(fake.live_events()));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    set_log_level(LogLevel::Error);
    const Args a = parse(argc, argv);
    if (a.mode == "publish") {
      PeerPublisher p(a);
      p.run();
      return 0;
    }
    if (a.mode == "subscribe") return subscribe(a);
    throw UsageError("unknown mode " + a.mode);
  } catch (const std::exception& e) {
    say(std::string("FAIL ") + e.what());
    return 1;
  }
}
