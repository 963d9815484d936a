// The fake CUDA driver: CUDA's documented driver-API contract, implemented on
// the host, so handoff's routing and lifetime logic is tested without a GPU.
// See README.md beside this file. Declarations come from handoff's own
// handoff/cuda_abi.hpp (the toolkit is optional); the exported names are CUDA's.
#include <handoff/cuda_abi.hpp>
#include "fake_cuda_control.h"

#include <EGL/egl.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

using namespace handoff::cuda::abi;

// --- opaque objects (the fake's definitions of CUDA's handle types) --------
// Every object records the context that was current when it was made: when
// that (primary) context is reset, the object goes with it.
struct handoff::cuda::abi::CUctx_st {
  int ordinal = 0;
  int refs = 0;
  int resets = 0;  // times the retain count fell to 0 (each one a reset)
  // Strict mode: a sticky error (CUDA_ERROR_ILLEGAL_ADDRESS ...) poisons the
  // context: every later call in it returns this, until the context is reset.
  int sticky = 0;
};
namespace handoff_fake {
struct Queue;
}
struct handoff::cuda::abi::CUstream_st {
  unsigned flags = 0;
  CUctx_st* ctx = nullptr;
  std::shared_ptr<handoff_fake::Queue> queue;  // its work (strict mode); outlives the handle while work is queued
};
struct handoff::cuda::abi::CUgraphicsResource_st {
  CUctx_st* ctx = nullptr;
  GLuint buffer = 0;
  unsigned register_flags = 0;
  unsigned map_flags = 0;
  bool mapped = false;
  bool shadow = false;    // mapped through a host copy (storage not mappable by GL)
  bool borrowed = false;  // the application's own persistent GL mapping (written back through it at unmap)
  void* ptr = nullptr;      // the CUDA pointer while mapped: device memory (PROT_NONE to the host)
  char* alias = nullptr;    // the fake's read-write view of it
  void* gl_ptr = nullptr;   // GL's host mapping the device memory is copied from / back to (not shadow)
  std::size_t size = 0;
  std::size_t mem_length = 0;  // the device memory of a GL mapping (see DeviceMemory)
  // cuGraphicsEGLRegisterImage: one pitched plane of device memory stands for
  // the image (allocated at registration, freed at unregistration).
  bool egl = false;
  void* egl_memory = nullptr;
  char* egl_alias = nullptr;
  std::size_t egl_length = 0;
  CUarray_st* egl_array = nullptr;  // set: the driver keeps the image as a CUDA array (no pointer)
  unsigned egl_width = 0, egl_height = 0, egl_pitch = 0, egl_channels = 0, egl_bytes = 1;
};
struct handoff::cuda::abi::CUextMemory_st {
  CUctx_st* ctx = nullptr;
  int fd = -1;
  void* base = nullptr;     // the device address: PROT_NONE to the host
  char* alias = nullptr;    // the fake's read-write view of the same pages
  std::size_t size = 0;
  std::size_t length = 0;   // of each of the two mappings
  bool mmapped = false;  // false: fresh memory stands in (the fd was not mmap-able)
  // The memory object behind the fd (its inode), and whether the import said
  // it was a dedicated allocation: every import of one object must agree.
  dev_t object_dev = 0;
  ino_t object_ino = 0;
  bool dedicated = false;
};
// A CUDA array (an EGL image the driver keeps tiled): no linear address.
struct handoff::cuda::abi::CUarray_st {
  unsigned width = 0, height = 0;
};
struct handoff::cuda::abi::CUextSemaphore_st {
  CUctx_st* ctx = nullptr;
  int fd = -1;
  CUexternalSemaphoreHandleType type{};
};

namespace {

// --- GL, reached through EGL on the calling thread's current context --------
using GLboolean = unsigned char;
using GLint64 = std::int64_t;
using GLsizeiptr = std::ptrdiff_t;
using GLintptr = std::ptrdiff_t;
using GLbitfield = unsigned int;
using GLint = int;
constexpr GLenum kGlBufferSize = 0x8764;
constexpr GLenum kGlBufferMapped = 0x88BC;
constexpr GLenum kGlBufferImmutableStorage = 0x821F;
constexpr GLenum kGlBufferStorageFlags = 0x8220;
constexpr GLbitfield kGlMapRead = 0x0001;
constexpr GLbitfield kGlMapWrite = 0x0002;
constexpr GLbitfield kGlMapInvalidateBuffer = 0x0008;
constexpr GLbitfield kGlMapPersistent = 0x0040;
constexpr GLenum kGlBufferAccessFlags = 0x911F;
constexpr GLenum kGlBufferMapLength = 0x9120;
constexpr GLenum kGlBufferMapOffset = 0x9121;
constexpr GLenum kGlBufferMapPointer = 0x88BD;

struct Gl {
  GLboolean (*IsBuffer)(GLuint) = nullptr;
  void (*GetNamedBufferParameteri64v)(GLuint, GLenum, GLint64*) = nullptr;
  void (*GetNamedBufferParameteriv)(GLuint, GLenum, GLint*) = nullptr;
  void* (*MapNamedBufferRange)(GLuint, GLintptr, GLsizeiptr, GLbitfield) = nullptr;
  GLboolean (*UnmapNamedBuffer)(GLuint) = nullptr;
  void (*GetNamedBufferSubData)(GLuint, GLintptr, GLsizeiptr, void*) = nullptr;
  void (*NamedBufferSubData)(GLuint, GLintptr, GLsizeiptr, const void*) = nullptr;
  void (*GetNamedBufferPointerv)(GLuint, GLenum, void**) = nullptr;
  bool ok = false;
};

const Gl& gl() {
  static Gl g;
  static std::once_flag once;
  std::call_once(once, [] {
    auto get = [](const char* n) { return reinterpret_cast<void*>(eglGetProcAddress(n)); };
    g.IsBuffer = reinterpret_cast<decltype(g.IsBuffer)>(get("glIsBuffer"));
    g.GetNamedBufferParameteri64v =
        reinterpret_cast<decltype(g.GetNamedBufferParameteri64v)>(get("glGetNamedBufferParameteri64v"));
    g.GetNamedBufferParameteriv =
        reinterpret_cast<decltype(g.GetNamedBufferParameteriv)>(get("glGetNamedBufferParameteriv"));
    g.MapNamedBufferRange = reinterpret_cast<decltype(g.MapNamedBufferRange)>(get("glMapNamedBufferRange"));
    g.UnmapNamedBuffer = reinterpret_cast<decltype(g.UnmapNamedBuffer)>(get("glUnmapNamedBuffer"));
    g.GetNamedBufferSubData = reinterpret_cast<decltype(g.GetNamedBufferSubData)>(get("glGetNamedBufferSubData"));
    g.NamedBufferSubData = reinterpret_cast<decltype(g.NamedBufferSubData)>(get("glNamedBufferSubData"));
    g.GetNamedBufferPointerv =
        reinterpret_cast<decltype(g.GetNamedBufferPointerv)>(get("glGetNamedBufferPointerv"));
    g.ok = g.IsBuffer && g.GetNamedBufferParameteri64v && g.GetNamedBufferParameteriv && g.MapNamedBufferRange &&
           g.UnmapNamedBuffer && g.GetNamedBufferSubData && g.NamedBufferSubData && g.GetNamedBufferPointerv;
  });
  return g;
}

bool gl_context_current() { return eglGetCurrentContext() != EGL_NO_CONTEXT; }

// --- configuration (environment, read at cuInit) -----------------------------
constexpr int kMaxDevices = 16;

struct Config {
  int devices = 1;
  int version = 13000;
  int init_error = 0;
  unsigned char uuid[16] = {0x48, 0x41, 0x4e, 0x44, 0x4f, 0x46, 0x46, 0x2d,
                            0x46, 0x41, 0x4b, 0x45, 0x2d, 0x47, 0x50, 0x55};  // "HANDOFF-FAKE-GPU"
  int cc_major = 9;
  int cc_minor = 0;
  bool proc_address = true;
};

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 0);
  return (end && *end == '\0') ? static_cast<int>(n) : fallback;
}

bool parse_uuid(const char* text, unsigned char out[16]) {
  unsigned char tmp[16];
  int n = 0;
  int half = -1;
  for (const char* p = text; *p; ++p) {
    if (*p == '-') continue;
    int d;
    if (*p >= '0' && *p <= '9') d = *p - '0';
    else if (*p >= 'a' && *p <= 'f') d = *p - 'a' + 10;
    else if (*p >= 'A' && *p <= 'F') d = *p - 'A' + 10;
    else return false;
    if (half < 0) {
      half = d;
    } else {
      if (n >= 16) return false;
      tmp[n++] = static_cast<unsigned char>(half << 4 | d);
      half = -1;
    }
  }
  if (n != 16 || half >= 0) return false;
  std::memcpy(out, tmp, 16);
  return true;
}

Config read_config() {
  Config c;
  c.devices = env_int("HANDOFF_FAKE_CUDA_DEVICES", 1);
  if (c.devices < 0) c.devices = 0;
  if (c.devices > kMaxDevices) c.devices = kMaxDevices;
  c.version = env_int("HANDOFF_FAKE_CUDA_DRIVER_VERSION", 13000);
  c.init_error = env_int("HANDOFF_FAKE_CUDA_INIT_ERROR", 0);
  if (const char* u = std::getenv("HANDOFF_FAKE_CUDA_UUID"); u && *u) parse_uuid(u, c.uuid);
  c.cc_major = env_int("HANDOFF_FAKE_CUDA_CC_MAJOR", 9);
  c.cc_minor = env_int("HANDOFF_FAKE_CUDA_CC_MINOR", 0);
  c.proc_address = env_int("HANDOFF_FAKE_CUDA_NO_PROC_ADDRESS", 0) == 0;
  return c;
}

// --- state ------------------------------------------------------------------
struct EntryLog {
  int calls = 0;        // every call, failed ones included
  int successes = 0;    // calls that got past fault injection
  unsigned long long last_thread = 0;
  std::map<unsigned long long, int> by_thread;
};

struct FaultRule {
  int code = 0;
  int after = 0;
};

struct Region {  // a range of fake "device" memory
  std::size_t size = 0;
  enum Kind { Alloc, ExternalBuffer, VirtualMapping /* interprocess block */ } kind = Alloc;
  CUextMemory_st* owner = nullptr;  // ExternalBuffer
  CUctx_st* ctx = nullptr;          // the context it belongs to
  char* alias = nullptr;            // the fake's read-write view of the region's first byte
  std::size_t length = 0;           // Alloc: the length of its two mappings (DeviceMemory)
};

// --- device memory the host cannot touch -------------------------------------
// Every CUdeviceptr the fake hands out is the address of a PROT_NONE shared
// mapping: a host dereference of it faults, as it would on a GPU. The fake
// itself reads and writes the same pages through a second, read-write mapping
// of the same file (the alias); copies and memsets translate device addresses
// to aliases. No protection is ever changed at run time (mprotect is
// process-wide and would race with the strict-mode worker).
struct DeviceMemory {
  void* device = nullptr;  // PROT_NONE: the CUdeviceptr
  char* alias = nullptr;   // PROT_READ | PROT_WRITE: the fake's view
  std::size_t length = 0;  // of each mapping
};

std::size_t page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// Maps [offset, offset + size) of `fd` twice (offset page-aligned).
bool map_twice(int fd, std::size_t size, off_t offset, DeviceMemory* out) {
  void* device = ::mmap(nullptr, size, PROT_NONE, MAP_SHARED, fd, offset);
  if (device == MAP_FAILED) return false;
  void* alias = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
  if (alias == MAP_FAILED) {
    ::munmap(device, size);
    return false;
  }
  *out = DeviceMemory{device, static_cast<char*>(alias), size};
  return true;
}

// Fresh zeroed device memory of at least `size` bytes (whole pages, so
// page-aligned: more than the 256 bytes CUDA promises). The memfd is closed at
// once: the two mappings keep its pages.
bool new_device_memory(std::size_t size, DeviceMemory* out) {
  const std::size_t page = page_size();
  if (size > SIZE_MAX - page) return false;
  const std::size_t length = (std::max<std::size_t>(size, 1) + page - 1) / page * page;
  const int fd = ::memfd_create("handoff-fake-cuda-device", MFD_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::ftruncate(fd, static_cast<off_t>(length)) == 0 && map_twice(fd, length, 0, out);
  ::close(fd);
  return ok;
}

void free_device_memory(void* device, char* alias, std::size_t length) {
  if (device) ::munmap(device, length);
  if (alias) ::munmap(alias, length);
}

}  // namespace
namespace handoff_fake {
// --- strict mode: streams as queues run by a worker of the fake --------------
// Every op runs on the worker thread under the state mutex, in its stream's
// order, no sooner than kStrictDelay after it was queued (so a poll right
// after queuing sees CUDA_ERROR_NOT_READY), and only once what it waits for
// (a legacy-null-stream dependency, an event of cuStreamWaitEvent) is done.
struct EventCounters {  // an event's recordings: the newest queued one, the newest completed one
  std::atomic<std::uint64_t> recorded{0};
  std::atomic<std::uint64_t> completed{0};
};
// An exported interprocess event keeps its counters in POSIX shared memory
// named after the exporting process and the event, so an importer in another
// process sees when the exporter's work is done (and its stream waits and
// queries answer accordingly).
struct EventSync {
  EventCounters local;
  EventCounters* shared = nullptr;  // mapped: an interprocess event exported or opened
  std::string shm_name;             // set in the exporting process: unlinked with the last reference
  EventCounters& c() { return shared ? *shared : local; }
  EventSync() = default;
  EventSync(const EventSync&) = delete;
  EventSync& operator=(const EventSync&) = delete;
  ~EventSync() {
    if (shared) ::munmap(shared, sizeof(EventCounters));
    if (!shm_name.empty()) ::shm_unlink(shm_name.c_str());
  }
};
struct Op {
  std::function<void(bool skipped)> run;  // skipped: the context was poisoned, do no work (but mark events)
  std::chrono::steady_clock::time_point not_before;
  std::vector<std::pair<std::shared_ptr<Queue>, std::uint64_t>> after;  // other queues' completed counts
  std::shared_ptr<EventSync> wait_event;                                  // cuStreamWaitEvent
  std::uint64_t wait_generation = 0;
  int sticky = 0;  // fake_cuda_fail_sticky: poison the context when this op runs, instead of running it
  const char* entry = "";
};
struct Queue {
  handoff::cuda::abi::CUctx_st* ctx = nullptr;
  bool blocking = true;      // not CU_STREAM_NON_BLOCKING: synchronises with the legacy null stream
  bool null_stream = false;  // the context's legacy default stream
  std::deque<Op> ops;
  std::uint64_t enqueued = 0;
  std::uint64_t completed = 0;
  bool idle() const { return completed == enqueued; }
};
}  // namespace handoff_fake
namespace {
using handoff_fake::EventCounters;
using handoff_fake::EventSync;
using handoff_fake::Op;
using handoff_fake::Queue;
constexpr auto kStrictDelay = std::chrono::microseconds(200);

struct State {
  std::mutex mutex;
  // Strict mode (HANDOFF_FAKE_CUDA_STRICT=1 at cuInit, or fake_cuda_set_strict).
  bool strict = false;
  int strict_override = -1;  // -1: the environment's say
  std::vector<std::shared_ptr<Queue>> queues;                 // every queue with work or a stream
  std::map<CUctx_st*, std::shared_ptr<Queue>> null_queues;     // legacy default stream, per context
  std::condition_variable work_changed;                        // wakes the worker
  std::condition_variable work_done;                           // wakes callers that wait for work
  bool worker_running = false;
  bool paused = false;  // fake_cuda_pause_work: the worker runs nothing meanwhile
  std::map<std::string, FaultRule> sticky_faults;             // fake_cuda_fail_sticky
  int arm_sticky = 0;                                         // the current call's work poisons its context
  bool initialized = false;
  Config config;
  // fake_cuda_set_uuid: device 0's UUID instead of config.uuid (the
  // environment's at cuInit) until reset or set_uuid(NULL); cuInit keeps it.
  bool uuid_override_set = false;
  unsigned char uuid_override[16] = {};
  CUctx_st contexts[kMaxDevices];
  std::map<std::string, EntryLog> log;
  std::map<std::string, FaultRule> faults;
  std::set<CUgraphicsResource_st*> resources;
  std::map<CUdeviceptr, Region> regions;  // start address -> region (allocations and mapped external buffers)
  std::set<CUextMemory_st*> ext_memories;
  std::set<CUextSemaphore_st*> semaphores;
  std::set<CUstream_st*> streams;
  std::set<CUctx_st*> created_contexts;  // cuCtxCreate, alive until cuCtxDestroy
  std::set<void*> host_allocations;      // cuMemAllocHost
  int leaked_external_buffers = 0;
  int host_copies = 0;  // copies from or to host memory (fake_cuda_host_copies)
  // What context resets destroyed: later use of these handles and pointers is
  // CUDA_ERROR_CONTEXT_IS_DESTROYED. Handles are never freed, so their addresses
  // are never reused; a dead range is forgotten once live memory takes its place.
  std::set<const void*> dead_handles;
  std::map<CUdeviceptr, std::size_t> dead_ranges;
  int objects_lost_to_resets = 0;
  bool semaphores_supported = false;
  // EGL images: NOT_SUPPORTED until a test says what an image looks like.
  unsigned egl_width = 0, egl_height = 0, egl_channels = 0, egl_bytes = 1;
  bool egl_arrays = false;  // fake_cuda_set_egl_arrays: images are CUDA arrays, not pitched planes
  // Memory objects (inodes) a test declared to stand for DMA-BUFs
  // (fake_cuda_declare_dmabuf): nothing here can make a real one.
  std::set<std::pair<dev_t, ino_t>> dmabuf_stand_ins;
};

// CU_DEVICE_ATTRIBUTE_MAX_PITCH: what NVIDIA GPUs report (2^31 - 1); a 2D
// copy with a larger pitch is refused, as the docs of cuMemcpy2D say.
constexpr std::size_t kMaxPitch = 2147483647;

State& state() {
  static State* s = new State;  // never destroyed: the fake may be called from static destructors
  return *s;
}

// Per-thread state (the calling thread's id and its CUDA context stack) lives in
// a map keyed by std::thread::id rather than in thread_local variables: a
// dlopen'd library's dynamic TLS made GCC 12's LeakSanitizer tracer crash at
// the exit of asan test processes, and static (initial-exec) TLS cannot be
// loaded into Python (no room left in the static TLS block).
struct ThreadState {
  unsigned long long id = 0;
  std::vector<CUctx_st*> context_stack;
};

ThreadState& this_thread_state() {
  static std::mutex* m = new std::mutex;  // never destroyed, like state()
  static auto* threads = new std::unordered_map<std::thread::id, ThreadState>;
  static unsigned long long next_id = 1;
  std::lock_guard lock(*m);
  // Node-based map: the reference stays valid while other threads insert, and
  // only the owning thread touches its entry.
  ThreadState& t = (*threads)[std::this_thread::get_id()];
  if (t.id == 0) t.id = next_id++;
  return t;
}

unsigned long long this_thread_id() { return this_thread_state().id; }

std::vector<CUctx_st*>& context_stack() { return this_thread_state().context_stack; }

// Held entry points (fake_cuda_hold): a call waits here, before it takes the
// state lock, so the rest of the fake keeps working while it waits.
struct Holds {
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, int> max_wait_ms;  // entry -> bound of one wait, while held
  std::map<std::string, int> waiting;      // entry -> calls waiting now
  std::atomic<int> count{0};               // entries held (a fast path for the usual none)
};

Holds& holds() {
  static Holds* h = new Holds;  // never destroyed, like state()
  return *h;
}

void wait_if_held(const char* entry) {
  Holds& h = holds();
  if (h.count.load(std::memory_order_acquire) == 0) return;
  std::unique_lock lock(h.mutex);
  auto it = h.max_wait_ms.find(entry);
  if (it == h.max_wait_ms.end()) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(it->second);
  ++h.waiting[entry];
  h.changed.wait_until(lock, until, [&] { return h.max_wait_ms.count(entry) == 0; });
  --h.waiting[entry];
}

// Records the call and applies fault injection. Call with the lock held.
bool is_async_entry(const std::string& entry) {
  static const std::set<std::string> async{"cuMemcpy2DAsync", "cuEventRecord", "cuStreamWaitEvent",
                                           "cuSignalExternalSemaphoresAsync", "cuWaitExternalSemaphoresAsync",
                                           "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync", "cuMemcpyAsync",
                                           "cuMemsetD8Async"};
  return async.count(entry) != 0;
}

std::vector<CUctx_st*>& context_stack();

CUresult enter(State& s, const char* entry) {
  s.arm_sticky = 0;
  EntryLog& e = s.log[entry];
  const unsigned long long t = this_thread_id();
  ++e.calls;
  e.last_thread = t;
  ++e.by_thread[t];
  if (auto it = s.faults.find(entry); it != s.faults.end()) {
    if (e.successes >= it->second.after) return static_cast<CUresult>(it->second.code);
  }
  if (auto it = s.sticky_faults.find(entry); it != s.sticky_faults.end() && e.successes >= it->second.after) {
    // A sticky fault fires once: queued work poisons its context when it
    // runs (the call itself succeeds, as an asynchronous launch does on a
    // GPU); a synchronous call poisons the current context and fails.
    const int code = it->second.code;
    s.sticky_faults.erase(it);
    if (is_async_entry(entry)) {
      s.arm_sticky = code;
    } else {
      if (!context_stack().empty()) context_stack().back()->sticky = code;
      return static_cast<CUresult>(code);
    }
  }
  ++e.successes;
  return CUDA_SUCCESS;
}

#define FAKE_ENTER(name)                          \
  wait_if_held(name);                             \
  State& s = state();                             \
  std::unique_lock lock(s.mutex);                 \
  if (CUresult r_ = enter(s, name); r_ != CUDA_SUCCESS) return r_

#define FAKE_REQUIRE_INIT() \
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED

// A current context that is still alive: a primary context whose last retain
// was released (reset) is CUDA_ERROR_CONTEXT_IS_DESTROYED until retained again.
#define FAKE_REQUIRE_CONTEXT()                                          \
  FAKE_REQUIRE_INIT();                                                  \
  if (context_stack().empty()) return CUDA_ERROR_INVALID_CONTEXT;       \
  if (context_stack().back()->refs <= 0) return CUDA_ERROR_CONTEXT_IS_DESTROYED; \
  if (context_stack().back()->sticky) return static_cast<CUresult>(context_stack().back()->sticky)

CUctx_st* current_context() { return context_stack().back(); }

// The region holding [p, p + n), or nullptr; *alias: the fake's read-write
// view of p (device memory itself is PROT_NONE to the host).
const Region* find_region(State& s, CUdeviceptr p, std::size_t n, CUdeviceptr* start = nullptr,
                          char** alias = nullptr) {
  auto it = s.regions.upper_bound(p);
  if (it != s.regions.begin()) {
    --it;
    if (p >= it->first && p - it->first <= it->second.size && n <= it->second.size - (p - it->first)) {
      if (start) *start = it->first;
      if (alias) *alias = it->second.alias + (p - it->first);
      return &it->second;
    }
  }
  // Mapped graphics resources are device memory too.
  for (CUgraphicsResource_st* r : s.resources) {
    auto base = reinterpret_cast<CUdeviceptr>(r->ptr);
    if (r->mapped && r->ptr && p >= base && p - base <= r->size && n <= r->size - (p - base)) {
      static const Region graphics{};
      if (start) *start = base;
      if (alias) *alias = r->alias + (p - base);
      return &graphics;
    }
  }
  return nullptr;
}

// The fake's read-write view of device memory [p, p + n) (checked before).
char* alias_of(State& s, CUdeviceptr p, std::size_t n) {
  char* a = nullptr;
  return find_region(s, p, n, nullptr, &a) ? a : nullptr;
}

bool in_dead_range(const State& s, CUdeviceptr p) {
  auto it = s.dead_ranges.upper_bound(p);
  if (it == s.dead_ranges.begin()) return false;
  --it;
  return p - it->first < it->second;
}

// [p, p + n) as device memory: CUDA_SUCCESS, CONTEXT_IS_DESTROYED (its context
// was reset), or INVALID_VALUE (not device memory, or not all of it).
CUresult device_range(State& s, CUdeviceptr p, std::size_t n) {
  if (find_region(s, p, n)) return CUDA_SUCCESS;
  return in_dead_range(s, p) ? CUDA_ERROR_CONTEXT_IS_DESTROYED : CUDA_ERROR_INVALID_VALUE;
}

// New live memory at [p, p + n): dead ranges it overlaps are forgotten.
void forget_dead(State& s, CUdeviceptr p, std::size_t n) {
  for (auto it = s.dead_ranges.begin(); it != s.dead_ranges.end();) {
    if (it->first < p + n && p < it->first + it->second) it = s.dead_ranges.erase(it);
    else ++it;
  }
}

// A handle in `live`: CUDA_SUCCESS; destroyed with its context:
// CONTEXT_IS_DESTROYED; anything else: INVALID_HANDLE.
template <typename Set, typename H>
CUresult handle_status(const State& s, const Set& live, H h) {
  if (h && live.count(h)) return CUDA_SUCCESS;
  if (h && s.dead_handles.count(static_cast<const void*>(h))) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  return CUDA_ERROR_INVALID_HANDLE;
}

#define FAKE_CHECK(expr) \
  if (CUresult r_ = (expr); r_ != CUDA_SUCCESS) return r_

// nullptr is the default stream.
CUresult stream_status(const State& s, CUstream h) { return h ? handle_status(s, s.streams, h) : CUDA_SUCCESS; }

// A stream given work (a copy, a map or unmap, a semaphore signal or wait)
// must belong to the current context. The docs say so only of cuEventRecord
// (event and stream "from the same context otherwise CUDA_ERROR_INVALID_HANDLE");
// for the others they are silent, and the fake answers the same
// CUDA_ERROR_INVALID_HANDLE (tests/cuda's ParityStreamOfAnotherContext asks a
// real driver). Synchronising, querying or destroying a stream, and
// cuStreamWaitEvent (the docs: "hEvent may be from a different context"),
// work from any context.
CUresult work_stream_status(const State& s, CUstream h) {
  FAKE_CHECK(stream_status(s, h));
  if (h && !context_stack().empty() && h->ctx != context_stack().back()) return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}

// --- strict mode: queues, the worker, waits -----------------------------------
using Targets = std::vector<std::pair<std::shared_ptr<Queue>, std::uint64_t>>;

std::shared_ptr<Queue> null_queue(State& s, CUctx_st* ctx) {
  std::shared_ptr<Queue>& q = s.null_queues[ctx];
  if (!q) {
    q = std::make_shared<Queue>();
    q->ctx = ctx;
    q->null_stream = true;
    s.queues.push_back(q);
  }
  return q;
}

// The queue work given `stream` goes to: the stream's, or the current context's legacy null stream.
std::shared_ptr<Queue> queue_of(State& s, CUstream stream) {
  return stream ? stream->queue : null_queue(s, current_context());
}

void add_target(Targets& t, const std::shared_ptr<Queue>& q) {
  if (q && !q->idle()) t.emplace_back(q, q->enqueued);
}

// All queued work of `ctx` (cuCtxSynchronize; what a free or a reset waits for).
Targets context_work(State& s, CUctx_st* ctx) {
  Targets t;
  for (const auto& q : s.queues)
    if (q->ctx == ctx) add_target(t, q);
  return t;
}

// What the legacy null stream of `ctx` is ordered after: its own work and
// every blocking stream's (CU_STREAM_NON_BLOCKING streams are not waited for).
// Synchronous calls (cuMemcpy2D, cuMemcpyHtoD/DtoH, cuMemsetD8) run there.
Targets null_stream_work(State& s, CUctx_st* ctx) {
  Targets t;
  for (const auto& q : s.queues)
    if (q->ctx == ctx && (q->null_stream || q->blocking)) add_target(t, q);
  return t;
}

// What waiting on `stream` means: its queue; for the null stream, also the blocking streams.
Targets stream_work(State& s, CUstream stream, CUctx_st* ctx) {
  if (!stream) return null_stream_work(s, ctx);
  Targets t;
  add_target(t, stream->queue);
  return t;
}

bool targets_done(const Targets& t) {
  for (const auto& [q, n] : t)
    if (q->completed < n) return false;
  return true;
}

// Blocks the caller (the state lock released meanwhile) until `t` has run.
void wait_for(State& s, std::unique_lock<std::mutex>& lock, const Targets& t) {
  if (t.empty()) return;
  s.work_done.wait(lock, [&] { return targets_done(t); });
}

CUresult sticky_of(const CUctx_st* ctx) { return static_cast<CUresult>(ctx ? ctx->sticky : 0); }

// Runs one op: now (lenient mode) or at its turn on the worker (strict mode).
void execute(Queue& q, Op& op) {
  if (op.sticky && q.ctx && !q.ctx->sticky) q.ctx->sticky = op.sticky;
  op.run(q.ctx && q.ctx->sticky != 0);
}

void worker_main() {
  State& s = state();
  std::unique_lock lock(s.mutex);
  for (;;) {
    bool progressed = false;
    const auto now = std::chrono::steady_clock::now();
    auto next = std::chrono::steady_clock::time_point::max();
    if (s.paused) {
      s.work_changed.wait(lock);
      continue;
    }
    {
      const std::vector<std::shared_ptr<Queue>> queues = s.queues;
      for (const auto& q : queues) {
        while (!q->ops.empty()) {
          Op& op = q->ops.front();
          if (!(q->ctx && q->ctx->sticky)) {  // a poisoned context's work is dropped at once
            if (op.not_before > now) {
              next = std::min(next, op.not_before);
              break;
            }
            bool ready = !op.wait_event || op.wait_event->c().completed.load() >= op.wait_generation;
            if (!ready && op.wait_event->shared)  // another process's work: look again soon
              next = std::min(next, now + std::chrono::microseconds(50));
            for (const auto& [dep, n] : op.after) ready = ready && dep->completed >= n;
            if (!ready) break;
          }
          Op mine = std::move(op);
          q->ops.pop_front();
          execute(*q, mine);
          ++q->completed;
          progressed = true;
        }
      }
    }
    // Queues of destroyed streams are forgotten once their work has run.
    s.queues.erase(std::remove_if(s.queues.begin(), s.queues.end(),
                                  [](const std::shared_ptr<Queue>& q) { return q.use_count() == 1 && q->ops.empty(); }),
                   s.queues.end());
    if (progressed) {
      s.work_done.notify_all();
      continue;
    }
    if (next == std::chrono::steady_clock::time_point::max()) s.work_changed.wait(lock);
    else s.work_changed.wait_until(lock, next);
  }
}

// The worker is detached and never stops: the library is never unloaded
// (-z nodelete) and its state is never destroyed, so it may idle through exit.
// A child of fork() has no worker: the next queued work starts one.
void start_worker(State& s) {
  if (s.worker_running) return;
  static std::once_flag at_fork;
  std::call_once(at_fork, [] {
    ::pthread_atfork([] { state().mutex.lock(); }, [] { state().mutex.unlock(); },
                     [] {
                       state().worker_running = false;
                       state().mutex.unlock();
                     });
  });
  s.worker_running = true;
  std::thread(worker_main).detach();
}

// Queues `run` on `q` (strict mode), or runs it now. An armed sticky fault
// (fake_cuda_fail_sticky) goes with it: its context is poisoned when it runs.
void enqueue(State& s, const std::shared_ptr<Queue>& q, std::function<void(bool)> run, const char* entry,
             std::shared_ptr<EventSync> wait_event = nullptr, std::uint64_t wait_generation = 0) {
  Op op;
  op.run = std::move(run);
  op.sticky = s.arm_sticky;
  op.entry = entry;
  s.arm_sticky = 0;
  if (!s.strict) {
    execute(*q, op);
    return;
  }
  op.wait_event = std::move(wait_event);
  op.wait_generation = wait_generation;
  op.not_before = std::chrono::steady_clock::now() + kStrictDelay;
  if (q->null_stream) {  // the legacy null stream waits for the blocking streams' earlier work
    for (const auto& other : s.queues)
      if (other != q && other->ctx == q->ctx && other->blocking && !other->null_stream) add_target(op.after, other);
  } else if (q->blocking) {  // and they for its earlier work
    if (auto it = s.null_queues.find(q->ctx); it != s.null_queues.end()) add_target(op.after, it->second);
  }
  q->ops.push_back(std::move(op));
  ++q->enqueued;
  start_worker(s);
  s.work_changed.notify_all();
}

// A GL buffer's mapping ends: its device memory is forgotten.
void release_gl_mapping(CUgraphicsResource_st* r) {
  free_device_memory(r->ptr, r->alias, r->mem_length);
  r->mapped = r->shadow = r->borrowed = false;
  r->ptr = r->gl_ptr = nullptr;
  r->alias = nullptr;
  r->mem_length = 0;
}

CUresult unmap_one(CUgraphicsResource_st* r) {
  if (r->egl) {
    r->mapped = false;
    r->ptr = nullptr;
    r->alias = nullptr;
    return CUDA_SUCCESS;
  }
  const Gl& g = gl();
  bool ok = true;
  const bool write_back = !(r->map_flags & CU_GRAPHICS_MAP_RESOURCE_FLAGS_READ_ONLY);
  if (r->borrowed) {
    // The application's persistent mapping stays; the device memory goes back
    // through it, while GL still has it mapped where it was.
    void* p = nullptr;
    g.GetNamedBufferPointerv(r->buffer, kGlBufferMapPointer, &p);
    if (write_back && p == r->gl_ptr) std::memcpy(r->gl_ptr, r->alias, r->size);
  } else if (r->shadow) {
    if (write_back) g.NamedBufferSubData(r->buffer, 0, static_cast<GLsizeiptr>(r->size), r->alias);
  } else {
    if (write_back) std::memcpy(r->gl_ptr, r->alias, r->size);
    ok = g.UnmapNamedBuffer(r->buffer) != 0;
  }
  release_gl_mapping(r);
  return ok ? CUDA_SUCCESS : CUDA_ERROR_UNMAP_FAILED;
}

CUresult map_one(CUgraphicsResource_st* r) {
  if (r->egl) {  // the plane's memory is device memory while mapped; an array's has no address
    r->ptr = r->egl_array ? nullptr : r->egl_memory;
    r->alias = r->egl_array ? nullptr : r->egl_alias;
    r->size = r->egl_array ? 0 : std::size_t(r->egl_pitch) * r->egl_height;
    r->mapped = true;
    return CUDA_SUCCESS;
  }
  const Gl& g = gl();
  if (!g.IsBuffer(r->buffer)) return CUDA_ERROR_MAP_FAILED;  // deleted by GL while registered
  GLint64 size = 0;
  g.GetNamedBufferParameteri64v(r->buffer, kGlBufferSize, &size);
  GLint gl_mapped = 0;
  g.GetNamedBufferParameteriv(r->buffer, kGlBufferMapped, &gl_mapped);
  if (size <= 0) return CUDA_ERROR_MAP_FAILED;
  if (gl_mapped) {
    // Mapped by GL itself: only a persistent mapping of the whole buffer can
    // be shared (CUDA maps persistently mapped buffers; the same host memory
    // stands for the device memory here). Anything else is refused.
    GLint access = 0;
    GLint64 offset = -1, length = -1;
    g.GetNamedBufferParameteriv(r->buffer, kGlBufferAccessFlags, &access);
    g.GetNamedBufferParameteri64v(r->buffer, kGlBufferMapOffset, &offset);
    g.GetNamedBufferParameteri64v(r->buffer, kGlBufferMapLength, &length);
    void* p = nullptr;
    g.GetNamedBufferPointerv(r->buffer, kGlBufferMapPointer, &p);
    if (!(static_cast<GLbitfield>(access) & kGlMapPersistent) || offset != 0 || length != size || !p)
      return CUDA_ERROR_MAP_FAILED;
    DeviceMemory m;
    if (!new_device_memory(static_cast<std::size_t>(size), &m)) return CUDA_ERROR_OUT_OF_MEMORY;
    r->size = static_cast<std::size_t>(size);
    if (!(r->map_flags & CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD)) std::memcpy(m.alias, p, r->size);
    r->ptr = m.device;
    r->alias = m.alias;
    r->mem_length = m.length;
    r->gl_ptr = p;
    r->borrowed = true;
    r->mapped = true;
    return CUDA_SUCCESS;
  }
  GLbitfield access = kGlMapRead | kGlMapWrite;
  if (r->map_flags & CU_GRAPHICS_MAP_RESOURCE_FLAGS_READ_ONLY) access = kGlMapRead;
  if (r->map_flags & CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD) access = kGlMapWrite | kGlMapInvalidateBuffer;
  GLint immutable = 0, storage_flags = 0;
  g.GetNamedBufferParameteriv(r->buffer, kGlBufferImmutableStorage, &immutable);
  if (immutable) g.GetNamedBufferParameteriv(r->buffer, kGlBufferStorageFlags, &storage_flags);
  const GLbitfield needed = access & (kGlMapRead | kGlMapWrite);
  // The CUDA pointer is device memory of the fake's own (PROT_NONE to the
  // host), never GL's host mapping: it is filled from the buffer at map and
  // written back at unmap (unless READ_ONLY), while GL keeps the buffer
  // mapped meanwhile as before (so GL's view of its state is unchanged).
  DeviceMemory m;
  if (!new_device_memory(static_cast<std::size_t>(size), &m)) return CUDA_ERROR_OUT_OF_MEMORY;
  r->size = static_cast<std::size_t>(size);
  const bool fill = !(r->map_flags & CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD);
  if (!immutable || (static_cast<GLbitfield>(storage_flags) & needed) == needed) {
    void* p = g.MapNamedBufferRange(r->buffer, 0, size, access);
    if (!p) {
      free_device_memory(m.device, m.alias, m.length);
      return CUDA_ERROR_MAP_FAILED;
    }
    if (fill) std::memcpy(m.alias, p, r->size);
    r->gl_ptr = p;
    r->shadow = false;
  } else {
    // Immutable storage GL cannot map for this access: read and written back
    // with glGet/NamedBufferSubData (the real driver maps such buffers directly).
    if (fill) g.GetNamedBufferSubData(r->buffer, 0, size, m.alias);
    r->shadow = true;
  }
  r->ptr = m.device;
  r->alias = m.alias;
  r->mem_length = m.length;
  r->mapped = true;
  return CUDA_SUCCESS;
}

}  // namespace

// ============================================================================
// CUDA entry points (C linkage, CUDA's exported names). Helpers stay outside
// extern "C": functions with C language linkage share one name across namespaces.
// ============================================================================
#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {
void install_segv_note();  // below, after the interprocess block
}

FAKE_API CUresult cuInit(unsigned int flags) {
  FAKE_ENTER("cuInit");
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  install_segv_note();
  s.config = read_config();
  s.strict = s.strict_override >= 0 ? s.strict_override != 0 : env_int("HANDOFF_FAKE_CUDA_STRICT", 0) != 0;
  if (s.config.init_error != 0) return static_cast<CUresult>(s.config.init_error);
  if (s.config.devices == 0) return CUDA_ERROR_NO_DEVICE;  // what the real driver says with no GPU
  for (int i = 0; i < kMaxDevices; ++i) s.contexts[i].ordinal = i;
  s.initialized = true;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDriverGetVersion(int* version) {
  FAKE_ENTER("cuDriverGetVersion");
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  // Works before cuInit, as the real one does.
  *version = s.initialized ? s.config.version : read_config().version;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGetErrorName(CUresult error, const char** str) {
  FAKE_ENTER("cuGetErrorName");
  if (!str) return CUDA_ERROR_INVALID_VALUE;
  *str = result_name(error);
  return *str ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuGetErrorString(CUresult error, const char** str) {
  FAKE_ENTER("cuGetErrorString");
  if (!str) return CUDA_ERROR_INVALID_VALUE;
  const char* n = result_name(error);
  *str = n ? "reported by the fake CUDA driver (handoff tests)" : nullptr;
  return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuDeviceGetCount(int* count) {
  FAKE_ENTER("cuDeviceGetCount");
  FAKE_REQUIRE_INIT();
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  *count = s.config.devices;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  FAKE_ENTER("cuDeviceGet");
  FAKE_REQUIRE_INIT();
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  if (ordinal < 0 || ordinal >= s.config.devices) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

#define FAKE_CHECK_DEVICE(dev) \
  if ((dev) < 0 || (dev) >= s.config.devices) return CUDA_ERROR_INVALID_DEVICE

FAKE_API CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  FAKE_ENTER("cuDeviceGetName");
  FAKE_REQUIRE_INIT();
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  FAKE_CHECK_DEVICE(dev);
  std::string n = "Handoff Fake CUDA Device " + std::to_string(dev);
  std::size_t k = std::min<std::size_t>(n.size(), static_cast<std::size_t>(len) - 1);
  std::memcpy(name, n.data(), k);
  name[k] = '\0';
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  FAKE_ENTER("cuDeviceGetUuid");
  FAKE_REQUIRE_INIT();
  if (!uuid) return CUDA_ERROR_INVALID_VALUE;
  FAKE_CHECK_DEVICE(dev);
  const unsigned char* base = s.uuid_override_set ? s.uuid_override : s.config.uuid;
  std::memcpy(uuid->bytes, base, 16);
  uuid->bytes[15] = static_cast<char>(base[15] + dev);  // device 0 has the configured UUID
  return CUDA_SUCCESS;
}

namespace {
CUresult share_device_attribute(CUdevice_attribute attrib, int* pi);  // interprocess block
}  // namespace

FAKE_API CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  FAKE_ENTER("cuDeviceGetAttribute");
  FAKE_REQUIRE_INIT();
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  FAKE_CHECK_DEVICE(dev);
  switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = s.config.cc_major; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = s.config.cc_minor; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 2; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: *pi = 0; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *pi = 1; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *pi = dev + 1; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *pi = 0; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *pi = 0; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: *pi = static_cast<int>(kMaxPitch); return CUDA_SUCCESS;
    default: break;
  }
  // CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT (14; GStreamer's CUDA library asks): what NVIDIA GPUs report.
  if (static_cast<int>(attrib) == 14) {
    *pi = 512;
    return CUDA_SUCCESS;
  }
  return share_device_attribute(attrib, pi);  // interprocess block
}

FAKE_API CUresult cuDeviceTotalMem_v2(std::size_t* bytes, CUdevice dev) {
  FAKE_ENTER("cuDeviceTotalMem");
  FAKE_REQUIRE_INIT();
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  FAKE_CHECK_DEVICE(dev);
  *bytes = std::size_t{8} << 30;
  return CUDA_SUCCESS;
}

// --- contexts ----------------------------------------------------------------
namespace {
void mark_dead(State& s, const void* handle) {
  s.dead_handles.insert(handle);
  ++s.objects_lost_to_resets;
}

// A mapped resource's memory at a reset: GL can only be asked to unmap on a
// thread where a GL context is current; elsewhere GL keeps its mapping.
void drop_mapping_at_reset(State& s, CUgraphicsResource_st* r) {
  if (!r->mapped) return;
  if (r->ptr) s.dead_ranges[reinterpret_cast<CUdeviceptr>(r->ptr)] = r->size;
  if (r->egl) {
    r->mapped = false;
    r->ptr = nullptr;
    r->alias = nullptr;
    return;
  }
  // The device memory is never written back.
  if (!r->shadow && !r->borrowed && gl_context_current() && gl().IsBuffer(r->buffer))  // GL may have deleted it
    gl().UnmapNamedBuffer(r->buffer);
  release_gl_mapping(r);
}

// Destroys every object of `live` made in `ctx` (`destroy` frees what it
// holds); its handle stays known as destroyed.
template <typename Set, typename Destroy>
void destroy_made_in(State& s, Set& live, CUctx_st* ctx, Destroy destroy) {
  for (auto it = live.begin(); it != live.end();) {
    if ((*it)->ctx != ctx) {
      ++it;
      continue;
    }
    destroy(*it);
    mark_dead(s, *it);
    it = live.erase(it);
  }
}

// The primary context's last retain was released: the driver destroys
// everything made in it (allocations, graphics registrations and mappings,
// external memories and their buffers, external semaphores, streams). Later
// use of any of them is CUDA_ERROR_CONTEXT_IS_DESTROYED.
void reset_context(State& s, CUctx_st* ctx) {
  ++ctx->resets;
  ctx->sticky = 0;  // a reset context starts clean (the way out of a sticky error)
  s.null_queues.erase(ctx);
  for (auto it = s.regions.begin(); it != s.regions.end();) {
    // Virtual memory (interprocess block) belongs to no context here.
    const bool mine = it->second.kind == Region::Alloc            ? it->second.ctx == ctx
                      : it->second.kind == Region::ExternalBuffer ? it->second.owner->ctx == ctx
                                                                  : false;
    if (!mine) {
      ++it;
      continue;
    }
    s.dead_ranges[it->first] = it->second.size;
    if (it->second.kind == Region::Alloc)
      free_device_memory(reinterpret_cast<void*>(it->first), it->second.alias, it->second.length);
    ++s.objects_lost_to_resets;
    it = s.regions.erase(it);
  }
  destroy_made_in(s, s.resources, ctx, [&](CUgraphicsResource_st* r) {
    drop_mapping_at_reset(s, r);
    free_device_memory(r->egl_memory, r->egl_alias, r->egl_length);
    r->egl_memory = nullptr;
    r->egl_alias = nullptr;
    delete r->egl_array;
    r->egl_array = nullptr;
  });
  destroy_made_in(s, s.ext_memories, ctx, [](CUextMemory_st* m) {
    free_device_memory(m->base, m->alias, m->length);
    ::close(m->fd);
  });
  destroy_made_in(s, s.semaphores, ctx, [](CUextSemaphore_st* sem) { ::close(sem->fd); });
  destroy_made_in(s, s.streams, ctx, [](CUstream_st*) {});
}
}  // namespace

FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  FAKE_ENTER("cuDevicePrimaryCtxRetain");
  FAKE_REQUIRE_INIT();
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  FAKE_CHECK_DEVICE(dev);
  ++s.contexts[dev].refs;
  *pctx = &s.contexts[dev];
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  FAKE_ENTER("cuDevicePrimaryCtxRelease");
  FAKE_REQUIRE_INIT();
  FAKE_CHECK_DEVICE(dev);
  if (s.contexts[dev].refs <= 0) return CUDA_ERROR_INVALID_CONTEXT;  // released more often than retained
  if (s.contexts[dev].refs == 1) wait_for(s, lock, context_work(s, &s.contexts[dev]));  // the reset waits for its work
  if (--s.contexts[dev].refs == 0) reset_context(s, &s.contexts[dev]);
  return CUDA_SUCCESS;
}

namespace {
bool valid_context(State& s, CUcontext ctx) {
  for (int i = 0; i < s.config.devices; ++i)
    if (ctx == &s.contexts[i]) return ctx->refs > 0;
  return s.created_contexts.count(ctx) != 0;
}
}  // namespace

// CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, CUDA_ERROR_PEER_ACCESS_NOT_ENABLED:
// codes only these fake entry points return (handoff itself never sees them).
constexpr CUresult kPeerAccessUnsupported = static_cast<CUresult>(217);
constexpr CUresult kPeerAccessNotEnabled = static_cast<CUresult>(705);

// Contexts of their own (GStreamer's CUDA library makes them): alive from
// cuCtxCreate, current on the creating thread, until cuCtxDestroy, which
// destroys what was made in them as a primary context's reset does.
FAKE_API CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  FAKE_ENTER("cuCtxCreate");
  FAKE_REQUIRE_INIT();
  if (!pctx || flags > 0x1f) return CUDA_ERROR_INVALID_VALUE;
  FAKE_CHECK_DEVICE(dev);
  auto* ctx = new CUctx_st{dev, 1, 0};  // never freed: a destroyed handle stays known as such
  s.created_contexts.insert(ctx);
  context_stack().push_back(ctx);
  *pctx = ctx;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxDestroy_v2(CUcontext ctx) {
  FAKE_ENTER("cuCtxDestroy");
  FAKE_REQUIRE_INIT();
  if (!ctx || s.created_contexts.count(ctx) == 0) return CUDA_ERROR_INVALID_CONTEXT;  // primary ones are released
  wait_for(s, lock, context_work(s, ctx));
  if (s.created_contexts.erase(ctx) == 0) return CUDA_ERROR_INVALID_CONTEXT;
  reset_context(s, ctx);
  ctx->refs = 0;
  s.dead_handles.insert(ctx);  // known as destroyed (not an object lost: it was destroyed on purpose)
  auto& stack = context_stack();
  stack.erase(std::remove(stack.begin(), stack.end(), ctx), stack.end());
  return CUDA_SUCCESS;
}

// The fake's devices are separate GPUs that cannot reach each other's memory.
FAKE_API CUresult cuDeviceCanAccessPeer(int* can, CUdevice dev, CUdevice peer) {
  FAKE_ENTER("cuDeviceCanAccessPeer");
  FAKE_REQUIRE_INIT();
  if (!can) return CUDA_ERROR_INVALID_VALUE;
  FAKE_CHECK_DEVICE(dev);
  FAKE_CHECK_DEVICE(peer);
  *can = 0;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
  FAKE_ENTER("cuCtxEnablePeerAccess");
  FAKE_REQUIRE_CONTEXT();
  if (flags != 0 || !valid_context(s, peer)) return CUDA_ERROR_INVALID_VALUE;
  return kPeerAccessUnsupported;
}

FAKE_API CUresult cuCtxDisablePeerAccess(CUcontext peer) {
  FAKE_ENTER("cuCtxDisablePeerAccess");
  FAKE_REQUIRE_CONTEXT();
  return valid_context(s, peer) ? kPeerAccessNotEnabled : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  FAKE_ENTER("cuCtxPushCurrent");
  FAKE_REQUIRE_INIT();
  if (!valid_context(s, ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  context_stack().push_back(ctx);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxPopCurrent_v2(CUcontext* pctx) {
  FAKE_ENTER("cuCtxPopCurrent");
  FAKE_REQUIRE_INIT();
  if (context_stack().empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx) *pctx = context_stack().back();
  context_stack().pop_back();
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxSetCurrent(CUcontext ctx) {
  FAKE_ENTER("cuCtxSetCurrent");
  FAKE_REQUIRE_INIT();
  if (!ctx) {
    if (!context_stack().empty()) context_stack().pop_back();
    return CUDA_SUCCESS;
  }
  if (!valid_context(s, ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  if (context_stack().empty()) context_stack().push_back(ctx);
  else context_stack().back() = ctx;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxGetCurrent(CUcontext* pctx) {
  FAKE_ENTER("cuCtxGetCurrent");
  FAKE_REQUIRE_INIT();
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  *pctx = context_stack().empty() ? nullptr : context_stack().back();
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxSynchronize() {
  FAKE_ENTER("cuCtxSynchronize");
  FAKE_REQUIRE_CONTEXT();
  CUctx_st* ctx = current_context();
  wait_for(s, lock, context_work(s, ctx));
  return sticky_of(ctx);  // an error of queued work surfaces here
}

// CUDA 13's cuCtxSynchronize_v2 takes the context; exported only through
// cuGetProcAddress with cudaVersion >= 13000, as the real driver does.
namespace {
CUresult fake_cuCtxSynchronize_v13000(CUcontext ctx) {
  FAKE_ENTER("cuCtxSynchronize");
  FAKE_REQUIRE_INIT();
  if (ctx && !valid_context(s, ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!ctx && context_stack().empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (!ctx) ctx = current_context();
  if (ctx->refs <= 0 && !s.created_contexts.count(ctx)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  wait_for(s, lock, context_work(s, ctx));
  return sticky_of(ctx);
}
}  // namespace

// --- memory ------------------------------------------------------------------
namespace {
CUresult alloc_region(State& s, CUdeviceptr* dptr, std::size_t bytes) {
  DeviceMemory m;  // page-aligned, so 256-byte aligned as CUDA promises
  if (!new_device_memory(bytes, &m)) return CUDA_ERROR_OUT_OF_MEMORY;
  *dptr = reinterpret_cast<CUdeviceptr>(m.device);
  forget_dead(s, *dptr, bytes);
  s.regions[*dptr] = Region{bytes, Region::Alloc, nullptr, current_context(), m.alias, m.length};
  return CUDA_SUCCESS;
}
}  // namespace

FAKE_API CUresult cuMemAlloc_v2(CUdeviceptr* dptr, std::size_t bytesize) {
  FAKE_ENTER("cuMemAlloc");
  FAKE_REQUIRE_CONTEXT();
  if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  return alloc_region(s, dptr, bytesize);
}

FAKE_API CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, std::size_t* pitch, std::size_t width, std::size_t height,
                            unsigned int element_size) {
  FAKE_ENTER("cuMemAllocPitch");
  FAKE_REQUIRE_CONTEXT();
  if (!dptr || !pitch || width == 0 || height == 0) return CUDA_ERROR_INVALID_VALUE;
  if (element_size != 4 && element_size != 8 && element_size != 16) return CUDA_ERROR_INVALID_VALUE;
  const std::size_t p = (width + 511) / 512 * 512;
  if (height > SIZE_MAX / p) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = alloc_region(s, dptr, p * height);
  if (r == CUDA_SUCCESS) *pitch = p;
  return r;
}

// Page-locked host memory: ordinary host memory here (work is synchronous).
FAKE_API CUresult cuMemAllocHost_v2(void** pp, std::size_t bytesize) {
  FAKE_ENTER("cuMemAllocHost");
  FAKE_REQUIRE_CONTEXT();
  if (!pp || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  void* p = std::aligned_alloc(4096, (bytesize + 4095) / 4096 * 4096);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  s.host_allocations.insert(p);
  *pp = p;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemFreeHost(void* p) {
  FAKE_ENTER("cuMemFreeHost");
  FAKE_REQUIRE_INIT();
  if (s.host_allocations.erase(p) == 0) return CUDA_ERROR_INVALID_VALUE;
  std::free(p);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemFree_v2(CUdeviceptr dptr) {
  FAKE_ENTER("cuMemFree");
  FAKE_REQUIRE_CONTEXT();
  wait_for(s, lock, context_work(s, current_context()));  // as on a GPU, freeing waits for the work queued before
  auto it = s.regions.find(dptr);
  if (it == s.regions.end())
    return s.dead_ranges.count(dptr) ? CUDA_ERROR_CONTEXT_IS_DESTROYED : CUDA_ERROR_INVALID_VALUE;
  if (it->second.kind == Region::VirtualMapping) return CUDA_ERROR_INVALID_VALUE;  // interprocess block: cuMemUnmap
  if (it->second.kind == Region::Alloc)
    free_device_memory(reinterpret_cast<void*>(dptr), it->second.alias, it->second.length);
  s.regions.erase(it);  // an external buffer's memory belongs to its CUexternalMemory
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, std::size_t bytes) {
  FAKE_ENTER("cuMemcpyHtoD");
  FAKE_REQUIRE_CONTEXT();
  ++s.host_copies;
  if (bytes == 0) return CUDA_SUCCESS;
  if (!src) return CUDA_ERROR_INVALID_VALUE;
  FAKE_CHECK(device_range(s, dst, bytes));
  wait_for(s, lock, null_stream_work(s, current_context()));  // synchronous: after the null stream's work
  FAKE_CHECK(sticky_of(current_context()));
  FAKE_CHECK(device_range(s, dst, bytes));
  std::memcpy(alias_of(s, dst, bytes), src, bytes);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, std::size_t bytes) {
  FAKE_ENTER("cuMemcpyDtoH");
  FAKE_REQUIRE_CONTEXT();
  ++s.host_copies;
  if (bytes == 0) return CUDA_SUCCESS;
  if (!dst) return CUDA_ERROR_INVALID_VALUE;
  FAKE_CHECK(device_range(s, src, bytes));
  wait_for(s, lock, null_stream_work(s, current_context()));  // synchronous: after the null stream's work
  FAKE_CHECK(sticky_of(current_context()));
  FAKE_CHECK(device_range(s, src, bytes));
  std::memcpy(dst, alias_of(s, src, bytes), bytes);
  return CUDA_SUCCESS;
}

namespace {
// Resolves one side of a 2D copy to a host address, checking device ranges.
CUresult side(State& s, CUmemorytype type, const void* host, CUdeviceptr device, CUarray array, std::size_t x,
              std::size_t y, std::size_t pitch, std::size_t width, std::size_t height, const char** out) {
  if (array) return CUDA_ERROR_NOT_SUPPORTED;
  if (height == 0 || width == 0) {
    *out = nullptr;
    return CUDA_SUCCESS;
  }
  // The docs of cuMemcpy2D: a pitch is at least WidthInBytes + XInBytes (one
  // row or many), and no pitch is above CU_DEVICE_ATTRIBUTE_MAX_PITCH.
  if (pitch < x + width || pitch > kMaxPitch) return CUDA_ERROR_INVALID_VALUE;
  const std::size_t span = (height - 1) * pitch + x + width;
  switch (type) {
    case CU_MEMORYTYPE_HOST:
      if (!host) return CUDA_ERROR_INVALID_VALUE;
      *out = static_cast<const char*>(host) + y * pitch + x;
      return CUDA_SUCCESS;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
      if (!device) return CUDA_ERROR_INVALID_VALUE;
      FAKE_CHECK(device_range(s, device + y * pitch, span));
      *out = alias_of(s, device + y * pitch, span) + x;  // the fake's view of the device memory
      return CUDA_SUCCESS;
    case CU_MEMORYTYPE_ARRAY: return CUDA_ERROR_NOT_SUPPORTED;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

// Whether a 2D copy reads or writes host memory (fake_cuda_host_copies).
bool touches_host(const CUDA_MEMCPY2D* c) {
  return c && (c->srcMemoryType == CU_MEMORYTYPE_HOST || c->dstMemoryType == CU_MEMORYTYPE_HOST);
}

CUresult copy2d(State& s, const CUDA_MEMCPY2D* c, bool copy = true) {
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  const char* src = nullptr;
  const char* dst = nullptr;
  CUresult r = side(s, c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcXInBytes, c->srcY,
                    c->srcPitch, c->WidthInBytes, c->Height, &src);
  if (r != CUDA_SUCCESS) return r;
  r = side(s, c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstXInBytes, c->dstY, c->dstPitch,
           c->WidthInBytes, c->Height, &dst);
  if (r != CUDA_SUCCESS) return r;
  for (std::size_t row = 0; copy && src && dst && row < c->Height; ++row)
    std::memmove(const_cast<char*>(dst) + row * c->dstPitch, src + row * c->srcPitch, c->WidthInBytes);
  return CUDA_SUCCESS;
}
}  // namespace

FAKE_API CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D* copy) {
  FAKE_ENTER("cuMemcpy2D");
  FAKE_REQUIRE_CONTEXT();
  if (touches_host(copy)) ++s.host_copies;
  FAKE_CHECK(copy2d(s, copy, false));
  wait_for(s, lock, null_stream_work(s, current_context()));  // synchronous: after the null stream's work
  FAKE_CHECK(sticky_of(current_context()));
  return copy2d(s, copy);
}

// Checked now (a bad argument fails the call); copied when the stream gets to
// it (strict mode), reading the host source then. Memory gone by then (freed,
// unmapped) is an illegal address: the context is poisoned.
FAKE_API CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* copy, CUstream stream) {
  FAKE_ENTER("cuMemcpy2DAsync");
  FAKE_REQUIRE_CONTEXT();
  if (touches_host(copy)) ++s.host_copies;
  FAKE_CHECK(work_stream_status(s, stream));
  FAKE_CHECK(copy2d(s, copy, false));
  CUctx_st* ctx = current_context();
  enqueue(s, queue_of(s, stream), [&s, c = *copy, ctx](bool skipped) {
    if (skipped) return;
    if (copy2d(s, &c) != CUDA_SUCCESS) ctx->sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
  }, "cuMemcpy2DAsync");
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, std::size_t n) {
  FAKE_ENTER("cuMemsetD8");
  FAKE_REQUIRE_CONTEXT();
  if (n == 0) return CUDA_SUCCESS;
  FAKE_CHECK(device_range(s, dst, n));
  wait_for(s, lock, null_stream_work(s, current_context()));  // after the null stream's work
  FAKE_CHECK(sticky_of(current_context()));
  FAKE_CHECK(device_range(s, dst, n));
  std::memset(alias_of(s, dst, n), value, n);
  return CUDA_SUCCESS;
}

// --- streams -----------------------------------------------------------------
FAKE_API CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
  FAKE_ENTER("cuStreamCreate");
  FAKE_REQUIRE_CONTEXT();
  if (!stream || flags > CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
  auto* st = new CUstream_st{flags, current_context(), std::make_shared<Queue>()};
  st->queue->ctx = st->ctx;
  st->queue->blocking = (flags & CU_STREAM_NON_BLOCKING) == 0;
  s.queues.push_back(st->queue);
  s.streams.insert(st);
  *stream = st;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamDestroy_v2(CUstream stream) {
  FAKE_ENTER("cuStreamDestroy");
  FAKE_REQUIRE_CONTEXT();
  if (!stream) return CUDA_ERROR_INVALID_HANDLE;
  FAKE_CHECK(handle_status(s, s.streams, stream));
  s.streams.erase(stream);
  delete stream;
  return CUDA_SUCCESS;
}

// The unversioned symbol of cuStreamDestroy (what older callers dlsym).
FAKE_API CUresult cuStreamDestroy(CUstream stream) { return cuStreamDestroy_v2(stream); }

FAKE_API CUresult cuStreamSynchronize(CUstream stream) {
  FAKE_ENTER("cuStreamSynchronize");
  FAKE_REQUIRE_CONTEXT();
  FAKE_CHECK(stream_status(s, stream));
  CUctx_st* ctx = stream ? stream->ctx : current_context();
  wait_for(s, lock, stream_work(s, stream, ctx));
  return sticky_of(ctx);  // an error of queued work surfaces here
}

// CUDA_ERROR_NOT_READY while work queued on the stream (strict mode) has not run.
FAKE_API CUresult cuStreamQuery(CUstream stream) {
  FAKE_ENTER("cuStreamQuery");
  FAKE_REQUIRE_CONTEXT();
  FAKE_CHECK(stream_status(s, stream));
  CUctx_st* ctx = stream ? stream->ctx : current_context();
  FAKE_CHECK(sticky_of(ctx));
  return targets_done(stream_work(s, stream, ctx)) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

// --- modules: the fake cannot run PTX or cubin -------------------------------
FAKE_API CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  FAKE_ENTER("cuModuleLoadData");
  FAKE_REQUIRE_CONTEXT();
  if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_NOT_SUPPORTED;
}

FAKE_API CUresult cuModuleUnload(CUmodule) {
  FAKE_ENTER("cuModuleUnload");
  FAKE_REQUIRE_CONTEXT();
  return CUDA_ERROR_INVALID_HANDLE;  // no module can exist
}

FAKE_API CUresult cuModuleGetFunction(CUfunction* f, CUmodule, const char*) {
  FAKE_ENTER("cuModuleGetFunction");
  FAKE_REQUIRE_CONTEXT();
  if (!f) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_INVALID_HANDLE;
}

FAKE_API CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        CUstream, void**, void**) {
  FAKE_ENTER("cuLaunchKernel");
  FAKE_REQUIRE_CONTEXT();
  return CUDA_ERROR_INVALID_HANDLE;
}

// --- OpenGL interop ------------------------------------------------------------
#ifndef HANDOFF_FAKE_CUDA_WITHOUT_GL_REGISTER
FAKE_API CUresult cuGraphicsGLRegisterBuffer(CUgraphicsResource* resource, GLuint buffer, unsigned int flags) {
  FAKE_ENTER("cuGraphicsGLRegisterBuffer");
  FAKE_REQUIRE_CONTEXT();
  if (!resource) return CUDA_ERROR_INVALID_VALUE;
  if (!gl_context_current()) return CUDA_ERROR_INVALID_GRAPHICS_CONTEXT;
  if (!gl().ok) return CUDA_ERROR_INVALID_GRAPHICS_CONTEXT;
  if (flags & ~unsigned(CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY | CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD))
    return CUDA_ERROR_INVALID_VALUE;  // SURFACE_LDST / TEXTURE_GATHER are for images
  if (buffer == 0 || !gl().IsBuffer(buffer)) return CUDA_ERROR_INVALID_VALUE;
  auto* r = new CUgraphicsResource_st;
  r->ctx = current_context();
  r->buffer = buffer;
  r->register_flags = flags;
  r->map_flags = flags;  // register flags are the initial map flags
  s.resources.insert(r);
  *resource = r;
  return CUDA_SUCCESS;
}
#endif

// The CUDA devices of the current GL context: the fake's GL is device 0's.
FAKE_API CUresult cuGLGetDevices_v2(unsigned int* count, CUdevice* devices, unsigned int max, int /*CUGLDeviceList*/) {
  FAKE_ENTER("cuGLGetDevices");
  FAKE_REQUIRE_INIT();
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  if (!gl_context_current()) return CUDA_ERROR_INVALID_GRAPHICS_CONTEXT;
  *count = 1;
  if (devices && max > 0) devices[0] = 0;
  return CUDA_SUCCESS;
}

// Not emulated: GL textures, CUDA arrays and texture objects (the fake's
// device memory is linear host memory). Code that has another path takes it.
FAKE_API CUresult cuGraphicsGLRegisterImage(CUgraphicsResource* resource, GLuint, GLenum, unsigned int) {
  FAKE_ENTER("cuGraphicsGLRegisterImage");
  FAKE_REQUIRE_CONTEXT();
  if (!resource) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_NOT_SUPPORTED;
}

FAKE_API CUresult cuGraphicsSubResourceGetMappedArray(CUarray* array, CUgraphicsResource, unsigned int, unsigned int) {
  FAKE_ENTER("cuGraphicsSubResourceGetMappedArray");
  FAKE_REQUIRE_CONTEXT();
  if (!array) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_NOT_SUPPORTED;
}

FAKE_API CUresult cuTexObjectCreate(unsigned long long* tex, const void* res, const void*, const void*) {
  FAKE_ENTER("cuTexObjectCreate");
  FAKE_REQUIRE_CONTEXT();
  if (!tex || !res) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_NOT_SUPPORTED;
}

FAKE_API CUresult cuTexObjectDestroy(unsigned long long) {
  FAKE_ENTER("cuTexObjectDestroy");
  FAKE_REQUIRE_CONTEXT();
  return CUDA_ERROR_INVALID_VALUE;  // none was ever made
}

FAKE_API CUresult cuGraphicsUnregisterResource(CUgraphicsResource resource) {
  FAKE_ENTER("cuGraphicsUnregisterResource");
  FAKE_REQUIRE_CONTEXT();
  FAKE_CHECK(handle_status(s, s.resources, resource));
  if (!resource->egl && !gl_context_current()) return CUDA_ERROR_INVALID_GRAPHICS_CONTEXT;
  wait_for(s, lock, context_work(s, current_context()));
  if (s.resources.count(resource) == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (resource->mapped) unmap_one(resource);  // the lenient reading: the driver API docs do not say
  s.resources.erase(resource);
  free_device_memory(resource->egl_memory, resource->egl_alias, resource->egl_length);
  delete resource->egl_array;
  delete resource;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphicsResourceSetMapFlags_v2(CUgraphicsResource resource, unsigned int flags) {
  FAKE_ENTER("cuGraphicsResourceSetMapFlags");
  FAKE_REQUIRE_CONTEXT();
  FAKE_CHECK(handle_status(s, s.resources, resource));
  if (flags > CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD) return CUDA_ERROR_INVALID_VALUE;
  if (resource->mapped) return CUDA_ERROR_ALREADY_MAPPED;
  resource->map_flags = flags;
  return CUDA_SUCCESS;
}

// What map and unmap check first, in this order: the list, the stream (of the
// current context), the GL context (GL buffers need it current; EGL images do
// not), every handle, duplicates (the docs of both calls: a resource listed
// twice is CUDA_ERROR_INVALID_HANDLE; nothing is mapped or unmapped then).
static CUresult check_resource_list(State& s, unsigned count, CUgraphicsResource* resources, CUstream stream) {
  if (count == 0 || !resources) return CUDA_ERROR_INVALID_VALUE;
  FAKE_CHECK(work_stream_status(s, stream));
  for (unsigned i = 0; i < count; ++i)
    if (resources[i] && s.resources.count(resources[i]) && !resources[i]->egl && !gl_context_current())
      return CUDA_ERROR_INVALID_GRAPHICS_CONTEXT;
  for (unsigned i = 0; i < count; ++i) FAKE_CHECK(handle_status(s, s.resources, resources[i]));
  const std::set<CUgraphicsResource> distinct(resources, resources + count);
  if (distinct.size() != count) return CUDA_ERROR_INVALID_HANDLE;  // listed twice
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphicsMapResources(unsigned int count, CUgraphicsResource* resources, CUstream stream) {
  FAKE_ENTER("cuGraphicsMapResources");
  FAKE_REQUIRE_CONTEXT();
  if (CUresult r = check_resource_list(s, count, resources, stream); r != CUDA_SUCCESS) return r;
  for (unsigned i = 0; i < count; ++i)
    if (resources[i]->mapped) return CUDA_ERROR_ALREADY_MAPPED;
  for (unsigned i = 0; i < count; ++i) {
    if (CUresult r = map_one(resources[i]); r != CUDA_SUCCESS) {
      for (unsigned j = 0; j < i; ++j) unmap_one(resources[j]);  // all or nothing
      return r;
    }
  }
  for (unsigned i = 0; i < count; ++i)
    forget_dead(s, reinterpret_cast<CUdeviceptr>(resources[i]->ptr), resources[i]->size);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphicsUnmapResources(unsigned int count, CUgraphicsResource* resources, CUstream stream) {
  FAKE_ENTER("cuGraphicsUnmapResources");
  FAKE_REQUIRE_CONTEXT();
  if (CUresult r = check_resource_list(s, count, resources, stream); r != CUDA_SUCCESS) return r;
  for (unsigned i = 0; i < count; ++i) {
    if (!resources[i]->mapped) return CUDA_ERROR_NOT_MAPPED;
  }
  // The docs: work issued in `stream` before the unmap completes before any
  // graphics work issued after it begins. (Work on other streams is not
  // waited for: memory it reaches after the unmap is an illegal address.)
  wait_for(s, lock, stream_work(s, stream, current_context()));
  CUresult result = CUDA_SUCCESS;
  for (unsigned i = 0; i < count; ++i)
    if (CUresult r = unmap_one(resources[i]); r != CUDA_SUCCESS) result = r;
  return result;
}

FAKE_API CUresult cuGraphicsResourceGetMappedPointer_v2(CUdeviceptr* ptr, std::size_t* size, CUgraphicsResource resource) {
  FAKE_ENTER("cuGraphicsResourceGetMappedPointer");
  FAKE_REQUIRE_CONTEXT();
  FAKE_CHECK(handle_status(s, s.resources, resource));
  if (!resource->mapped) return CUDA_ERROR_NOT_MAPPED;
  if (resource->egl_array) return CUDA_ERROR_NOT_MAPPED_AS_POINTER;  // the docs: not a buffer, no pointer
  if (ptr) *ptr = reinterpret_cast<CUdeviceptr>(resource->ptr);
  if (size) *size = resource->size;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphicsEGLRegisterImage(CUgraphicsResource* resource, EGLImageKHR image, unsigned int flags) {
  FAKE_ENTER("cuGraphicsEGLRegisterImage");
  FAKE_REQUIRE_CONTEXT();
  if (!resource || !image) return CUDA_ERROR_INVALID_VALUE;
  if (flags & ~unsigned(CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY | CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD))
    return CUDA_ERROR_INVALID_VALUE;
  if (s.egl_width == 0) return CUDA_ERROR_NOT_SUPPORTED;  // fake_cuda_set_egl_images() not called
  const unsigned row = s.egl_width * s.egl_channels * s.egl_bytes;
  const unsigned pitch = (row + 255u) / 256u * 256u;
  DeviceMemory memory;  // zeroed
  if (!new_device_memory(std::size_t(pitch) * s.egl_height, &memory)) return CUDA_ERROR_OUT_OF_MEMORY;
  auto* r = new CUgraphicsResource_st;
  r->ctx = current_context();
  r->egl = true;
  r->egl_memory = memory.device;
  r->egl_alias = memory.alias;
  r->egl_length = memory.length;
  r->egl_width = s.egl_width;
  r->egl_height = s.egl_height;
  r->egl_pitch = pitch;
  r->egl_channels = s.egl_channels;
  r->egl_bytes = s.egl_bytes;
  if (s.egl_arrays) r->egl_array = new CUarray_st{s.egl_width, s.egl_height};
  r->register_flags = r->map_flags = flags;
  s.resources.insert(r);
  *resource = r;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphicsResourceGetMappedEglFrame(CUeglFrame* frame, CUgraphicsResource resource, unsigned int index,
                                                     unsigned int mip_level) {
  FAKE_ENTER("cuGraphicsResourceGetMappedEglFrame");
  FAKE_REQUIRE_CONTEXT();
  if (!frame) return CUDA_ERROR_INVALID_VALUE;
  FAKE_CHECK(handle_status(s, s.resources, resource));
  if (!resource->egl) return CUDA_ERROR_INVALID_VALUE;  // a GL buffer: cuGraphicsResourceGetMappedPointer
  if (!resource->mapped) return CUDA_ERROR_NOT_MAPPED;
  if (index != 0 || mip_level != 0) return CUDA_ERROR_INVALID_VALUE;
  *frame = CUeglFrame{};
  if (resource->egl_array) {
    frame->frame.pArray[0] = resource->egl_array;
    frame->frameType = CU_EGL_FRAME_TYPE_ARRAY;  // an array has no pitch: 0
  } else {
    frame->frame.pPitch[0] = resource->egl_memory;
    frame->pitch = resource->egl_pitch;
    frame->frameType = CU_EGL_FRAME_TYPE_PITCH;
  }
  frame->width = resource->egl_width;
  frame->height = resource->egl_height;
  frame->depth = 1;
  frame->planeCount = 1;
  frame->numChannels = resource->egl_channels;
  frame->cuFormat = resource->egl_bytes == 2 ? 0x02 : 0x01;  // CU_AD_FORMAT_UNSIGNED_INT16 / INT8
  return CUDA_SUCCESS;
}

// --- external memory -----------------------------------------------------------
namespace {
// Mesa's OPAQUE_FD memory (lavapipe, llvmpipe) is a memfd that begins with a
// private header, {u64 file size, u64 data offset, 16-byte driver id}, and
// holds the allocation at that (page-aligned) offset; seen on Mesa 22.3,
// where the offset is 4096. Any other fd is mapped from offset 0.
std::size_t mesa_data_offset(int fd, const struct stat& st) {
  if (!S_ISREG(st.st_mode) || st.st_size < 32) return 0;
  std::uint64_t header[2] = {};
  if (::pread(fd, header, sizeof header, 0) != static_cast<ssize_t>(sizeof header)) return 0;
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  if (header[0] == static_cast<std::uint64_t>(st.st_size) && header[1] > 0 && header[1] % page == 0 &&
      header[1] < header[0])
    return static_cast<std::size_t>(header[1]);
  return 0;
}

// What /proc/self/fd says the descriptor is ("/memfd:NAME (deleted)", "pipe:[N]", a path ...).
std::string fd_target(int fd) {
  char link[256] = {};
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(path.c_str(), link, sizeof link - 1);
  return n > 0 ? std::string(link, static_cast<std::size_t>(n)) : std::string();
}

constexpr long kDmaBufMagic = 0x444d4142;  // DMA_BUF_MAGIC (linux/magic.h): the dma-buf filesystem

// Whether `fd` is memory of the declared handle type, as far as the fake can
// tell. OPAQUE_FD (the docs: "a valid file descriptor referencing a memory
// object"): a memfd. That is what Mesa's lavapipe / llvmpipe export (a memfd
// that starts with Mesa's header, mesa_data_offset above; checked on Mesa
// 22.3, where memfd_create is available) and what the fake's own cuMemCreate
// allocations are. A file on disk, a pipe, a socket or a device node is no
// memory object. DMABUF_FD (the docs: "a file descriptor referencing a
// dma_buf object"): a file of the dma-buf filesystem, or a memfd a test
// declared to stand for one (fake_cuda_declare_dmabuf; nothing here makes
// real DMA-BUFs). The docs name no code for a descriptor of the wrong kind;
// the fake answers CUDA_ERROR_INVALID_VALUE (tests/cuda's
// ParityImportRefusesWhatIsNotMemory asks a real driver).
bool is_memory_of_type(const State& s, int fd, const struct stat& st, CUexternalMemoryHandleType type) {
  const bool memfd = fd_target(fd).rfind("/memfd:", 0) == 0;
  if (type == CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD) return memfd;
  struct statfs fs {};
  if (::fstatfs(fd, &fs) == 0 && static_cast<long>(fs.f_type) == kDmaBufMagic) return true;
  return memfd && s.dmabuf_stand_ins.count({st.st_dev, st.st_ino}) != 0;
}

// Whether the DEDICATED flag can be right for this memory object. The docs:
// a DMA-BUF import's flags "must be zero"; a dedicated allocation must be
// imported with the flag (Vulkan's rule). The fake cannot see how lavapipe allocated, so it checks what it
// can know: a cuMemCreate allocation (the fake's own memfd) is no dedicated
// resource, and every live import of one memory object must say the same
// (dedicated-ness belongs to the allocation, not to an import). Both are the
// fake's choices: tests/cuda's ParityDedicatedFlagOfAVmmAllocation asks a real driver.
bool dedicated_flag_fits(const State& s, int fd, const struct stat& st, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC& d) {
  const bool dedicated = (d.flags & kCudaExternalMemoryDedicated) != 0;
  if (d.type == CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD) return !dedicated;
  if (dedicated && fd_target(fd).rfind("/memfd:handoff-fake-cuda-vmm", 0) == 0) return false;
  for (const CUextMemory_st* m : s.ext_memories)
    if (m->object_dev == st.st_dev && m->object_ino == st.st_ino && m->dedicated != dedicated) return false;
  return true;
}

// cuExternalMemoryGetMappedBuffer: the docs want the offset and size "suitably
// aligned to match the requirements of the external API" and say no more.
// The fake's choice: the offset a multiple of 256 bytes (the alignment every
// CUDA device pointer has, so the mapped pointer is one CUDA could hand out);
// any size (the mapping covers whole pages of the object whatever its size).
// tests/cuda's ParityMappedBufferAlignment asks a real driver.
constexpr std::size_t kMappedBufferOffsetAlignment = 256;
}  // namespace

FAKE_API CUresult cuImportExternalMemory(CUexternalMemory* out, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC* desc) {
  FAKE_ENTER("cuImportExternalMemory");
  FAKE_REQUIRE_CONTEXT();
  if (!out || !desc || desc->size == 0) return CUDA_ERROR_INVALID_VALUE;
  if (desc->type != CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD &&
      desc->type != CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD)
    return CUDA_ERROR_NOT_SUPPORTED;
  if (desc->flags & ~kCudaExternalMemoryDedicated) return CUDA_ERROR_INVALID_VALUE;
  const int fd = desc->handle.fd;
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!is_memory_of_type(s, fd, st, desc->type)) return CUDA_ERROR_INVALID_VALUE;
  if (!dedicated_flag_fits(s, fd, st, *desc)) return CUDA_ERROR_INVALID_VALUE;
  const auto size = static_cast<std::size_t>(desc->size);
  const std::size_t offset = mesa_data_offset(fd, st);
  if (S_ISREG(st.st_mode) && static_cast<unsigned long long>(st.st_size) - offset < desc->size)
    return CUDA_ERROR_INVALID_VALUE;  // larger than the exported allocation
  // The object's pages, mapped twice: PROT_NONE at the device address, read-write for the fake.
  DeviceMemory dm;
  const bool mmapped = map_twice(fd, size, static_cast<off_t>(offset), &dm);
  // Not mmap-able: fresh memory stands in, so writes are not seen by the exporter.
  if (!mmapped && !new_device_memory(size, &dm)) return CUDA_ERROR_OUT_OF_MEMORY;
  auto* m = new CUextMemory_st;
  m->size = size;
  m->length = dm.length;
  m->base = dm.device;
  m->alias = dm.alias;
  m->mmapped = mmapped;
  m->ctx = current_context();
  m->object_dev = st.st_dev;
  m->object_ino = st.st_ino;
  m->dedicated = (desc->flags & kCudaExternalMemoryDedicated) != 0;
  m->fd = fd;  // success: the fake owns the fd now and closes it in cuDestroyExternalMemory
  s.ext_memories.insert(m);
  *out = m;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuExternalMemoryGetMappedBuffer(CUdeviceptr* ptr, CUexternalMemory mem,
                                         const CUDA_EXTERNAL_MEMORY_BUFFER_DESC* desc) {
  FAKE_ENTER("cuExternalMemoryGetMappedBuffer");
  FAKE_REQUIRE_CONTEXT();
  FAKE_CHECK(handle_status(s, s.ext_memories, mem));
  if (!ptr || !desc || desc->size == 0 || desc->flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (desc->offset > mem->size || desc->size > mem->size - desc->offset) return CUDA_ERROR_INVALID_VALUE;
  if (desc->offset % kMappedBufferOffsetAlignment != 0) return CUDA_ERROR_INVALID_VALUE;
  const CUdeviceptr p = reinterpret_cast<CUdeviceptr>(mem->base) + desc->offset;
  if (s.regions.count(p)) return CUDA_ERROR_INVALID_VALUE;  // the fake keys buffers by address: one per offset
  forget_dead(s, p, static_cast<std::size_t>(desc->size));
  s.regions[p] = Region{static_cast<std::size_t>(desc->size), Region::ExternalBuffer, mem, mem->ctx,
                        mem->alias + desc->offset};
  *ptr = p;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDestroyExternalMemory(CUexternalMemory mem) {
  FAKE_ENTER("cuDestroyExternalMemory");
  FAKE_REQUIRE_CONTEXT();
  FAKE_CHECK(handle_status(s, s.ext_memories, mem));
  wait_for(s, lock, context_work(s, current_context()));
  FAKE_CHECK(handle_status(s, s.ext_memories, mem));
  for (auto it = s.regions.begin(); it != s.regions.end();) {
    if (it->second.kind == Region::ExternalBuffer && it->second.owner == mem) {
      ++s.leaked_external_buffers;  // the docs: cuMemFree every mapped buffer first
      it = s.regions.erase(it);
    } else {
      ++it;
    }
  }
  free_device_memory(mem->base, mem->alias, mem->length);
  ::close(mem->fd);
  s.ext_memories.erase(mem);
  delete mem;
  return CUDA_SUCCESS;
}

// --- external semaphores ---------------------------------------------------------
FAKE_API CUresult cuImportExternalSemaphore(CUexternalSemaphore* out, const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC* desc) {
  FAKE_ENTER("cuImportExternalSemaphore");
  FAKE_REQUIRE_CONTEXT();
  if (!out || !desc) return CUDA_ERROR_INVALID_VALUE;
  if (!s.semaphores_supported) return CUDA_ERROR_NOT_SUPPORTED;
  if (desc->type != CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD &&
      desc->type != CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD)
    return CUDA_ERROR_NOT_SUPPORTED;
  struct stat st {};
  if (desc->handle.fd < 0 || ::fstat(desc->handle.fd, &st) != 0) return CUDA_ERROR_INVALID_VALUE;
  auto* sem = new CUextSemaphore_st{current_context(), desc->handle.fd, desc->type};  // owns the fd from here
  s.semaphores.insert(sem);
  *out = sem;
  return CUDA_SUCCESS;
}

namespace {
CUresult check_semaphores(State& s, const CUexternalSemaphore* sems, const void* params, unsigned n,
                          CUstream stream) {
  if (!s.semaphores_supported) return CUDA_ERROR_NOT_SUPPORTED;
  if (!sems || !params || n == 0) return CUDA_ERROR_INVALID_VALUE;
  FAKE_CHECK(work_stream_status(s, stream));
  for (unsigned i = 0; i < n; ++i) FAKE_CHECK(handle_status(s, s.semaphores, sems[i]));
  return CUDA_SUCCESS;
}
}  // namespace

FAKE_API CUresult cuSignalExternalSemaphoresAsync(const CUexternalSemaphore* sems,
                                         const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS* params, unsigned int n,
                                         CUstream stream) {
  FAKE_ENTER("cuSignalExternalSemaphoresAsync");
  FAKE_REQUIRE_CONTEXT();
  FAKE_CHECK(check_semaphores(s, sems, params, n, stream));
  enqueue(s, queue_of(s, stream), [](bool) {}, "cuSignalExternalSemaphoresAsync");  // in stream order
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuWaitExternalSemaphoresAsync(const CUexternalSemaphore* sems,
                                       const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS* params, unsigned int n,
                                       CUstream stream) {
  FAKE_ENTER("cuWaitExternalSemaphoresAsync");
  FAKE_REQUIRE_CONTEXT();
  FAKE_CHECK(check_semaphores(s, sems, params, n, stream));
  enqueue(s, queue_of(s, stream), [](bool) {}, "cuWaitExternalSemaphoresAsync");  // host-side: signalled already
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDestroyExternalSemaphore(CUexternalSemaphore sem) {
  FAKE_ENTER("cuDestroyExternalSemaphore");
  FAKE_REQUIRE_CONTEXT();
  FAKE_CHECK(handle_status(s, s.semaphores, sem));
  s.semaphores.erase(sem);
  ::close(sem->fd);
  delete sem;
  return CUDA_SUCCESS;
}

// ============================================================================
// Interprocess sharing (handoff::live): virtual memory (cuMemCreate and
// friends, exported as POSIX file descriptors), interprocess events and
// legacy IPC memory handles. One self-contained block; the hooks outside it
// are marked "interprocess block". See README.md ("Interprocess sharing").
//
// "Device memory" is host memory here, so an allocation is a memfd: the
// exported descriptor is a real fd that another process imports and maps, and
// both see the same bytes. Every call runs under the state mutex (FAKE_ENTER).
// ============================================================================
struct handoff::cuda::abi::CUevent_st {
  unsigned flags = 0;
  bool imported = false;  // from cuIpcOpenEventHandle
  std::uint64_t id = 0;
  CUctx_st* ctx = nullptr;  // current at creation (or at the handle's opening)
  bool exported = false;    // cuIpcGetEventHandle was called: its counters are in shared memory
  // Its recordings (strict mode). An event opened in the exporting process
  // shares the exporter's; one from another process has its own (never recorded).
  std::shared_ptr<EventSync> sync = std::make_shared<EventSync>();
};

namespace {

constexpr std::size_t kVmmGranularity = std::size_t{2} << 20;  // what current GPUs report
constexpr char kVmmMemfdName[] = "handoff-fake-cuda-vmm";
constexpr char kEventHandleMagic[4] = {'H', 'O', 'F', 'E'};

struct VmmAllocation {  // what a CUmemGenericAllocationHandle points at
  int fd = -1;          // the memfd holding the bytes
  std::size_t size = 0;
  bool exportable = false;  // CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR requested (or imported from one)
  bool released = false;    // cuMemRelease'd: freed when its last mapping goes
  int mappings = 0;
};

struct VmmMapping {
  std::size_t size = 0;
  VmmAllocation* allocation = nullptr;
  bool accessible = false;  // cuMemSetAccess gave it access
  char* alias = nullptr;    // the fake's read-write view (the mapping itself stays PROT_NONE)
};

struct VmmReservation {
  std::size_t size = 0;
  std::map<CUdeviceptr, VmmMapping> mappings;  // start -> mapping
};

struct ShareState {
  int vmm_override = -1;  // -1: HANDOFF_FAKE_CUDA_VMM (default 1)
  int ipc_events_override = -1;  // -1: HANDOFF_FAKE_CUDA_IPC_EVENTS (default 1)
  std::set<VmmAllocation*> allocations;
  std::map<CUdeviceptr, VmmReservation> reservations;  // start -> reservation
  std::set<CUevent_st*> events;
  std::uint64_t next_event_id = 1;
};

ShareState& share() {
  static ShareState* st = new ShareState;  // never destroyed, like state()
  return *st;
}

bool vmm_supported() {
  const int o = share().vmm_override;
  return o >= 0 ? o != 0 : env_int("HANDOFF_FAKE_CUDA_VMM", 1) != 0;
}

bool ipc_events_supported() {
  const int o = share().ipc_events_override;
  return o >= 0 ? o != 0 : env_int("HANDOFF_FAKE_CUDA_IPC_EVENTS", 1) != 0;
}

// Hook of cuDeviceGetAttribute for the attributes this block answers.
CUresult share_device_attribute(CUdevice_attribute attrib, int* pi) {
  if (attrib == CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED ||
      attrib == CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) {
    *pi = vmm_supported() ? 1 : 0;
    return CUDA_SUCCESS;
  }
  if (attrib == CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED) {
    *pi = ipc_events_supported() ? 1 : 0;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

// The properties handoff may pass: pinned device memory, no handle or a POSIX fd.
CUresult check_prop(const State& s, const CUmemAllocationProp* prop) {
  if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
      prop->win32HandleMetaData != nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (prop->location.id < 0 || prop->location.id >= s.config.devices) return CUDA_ERROR_INVALID_DEVICE;
  if (prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE &&
      prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    return CUDA_ERROR_NOT_SUPPORTED;
  return CUDA_SUCCESS;
}

VmmAllocation* find_allocation(CUmemGenericAllocationHandle h) {
  auto* a = reinterpret_cast<VmmAllocation*>(static_cast<std::uintptr_t>(h));
  return share().allocations.count(a) ? a : nullptr;
}

void free_if_done(VmmAllocation* a) {
  if (!a->released || a->mappings > 0) return;
  ::close(a->fd);
  share().allocations.erase(a);
  delete a;
}

// The reservation holding [p, p + n), or nullptr.
VmmReservation* find_reservation(CUdeviceptr p, std::size_t n) {
  auto& rs = share().reservations;
  auto it = rs.upper_bound(p);
  if (it == rs.begin()) return nullptr;
  --it;
  if (p - it->first > it->second.size || n > it->second.size - (p - it->first)) return nullptr;
  return &it->second;
}

// The mappings that exactly tile [p, p + n) (none when they do not).
std::vector<std::map<CUdeviceptr, VmmMapping>::iterator> tiling(VmmReservation& r, CUdeviceptr p, std::size_t n) {
  std::vector<std::map<CUdeviceptr, VmmMapping>::iterator> out;
  CUdeviceptr at = p;
  for (auto it = r.mappings.find(p); it != r.mappings.end() && at < p + n; ++it) {
    if (it->first != at) return {};
    out.push_back(it);
    at += it->second.size;
  }
  if (at != p + n) return {};
  return out;
}

bool is_fake_vmm_fd(int fd) {
  char link[256] = {};
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(path.c_str(), link, sizeof link - 1);
  const std::string want = std::string("/memfd:") + kVmmMemfdName;
  return n > 0 && std::string(link, static_cast<std::size_t>(n)).rfind(want, 0) == 0;
}

void share_reset() {
  share().vmm_override = -1;
  share().ipc_events_override = -1;
}

}  // namespace

FAKE_API CUresult cuMemGetAllocationGranularity(std::size_t* granularity, const CUmemAllocationProp* prop,
                                                CUmemAllocationGranularity_flags option) {
  FAKE_ENTER("cuMemGetAllocationGranularity");
  FAKE_REQUIRE_INIT();
  if (!granularity || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
    return CUDA_ERROR_INVALID_VALUE;
  if (!vmm_supported()) return CUDA_ERROR_NOT_SUPPORTED;
  if (CUresult r = check_prop(s, prop); r != CUDA_SUCCESS) return r;
  *granularity = kVmmGranularity;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, std::size_t size, const CUmemAllocationProp* prop,
                              unsigned long long flags) {
  FAKE_ENTER("cuMemCreate");
  FAKE_REQUIRE_INIT();
  if (!handle || flags != 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
  if (!vmm_supported()) return CUDA_ERROR_NOT_SUPPORTED;
  if (CUresult r = check_prop(s, prop); r != CUDA_SUCCESS) return r;
  if (size % kVmmGranularity != 0) return CUDA_ERROR_INVALID_VALUE;  // the docs: a multiple of the granularity
  const int fd = ::memfd_create(kVmmMemfdName, MFD_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    ::close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  auto* a = new VmmAllocation{fd, size, prop->requestedHandleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR};
  share().allocations.insert(a);
  *handle = reinterpret_cast<std::uintptr_t>(a);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  FAKE_ENTER("cuMemRelease");
  FAKE_REQUIRE_INIT();
  VmmAllocation* a = find_allocation(handle);
  if (!a || a->released) return CUDA_ERROR_INVALID_VALUE;  // the docs: undefined; the fake says so
  a->released = true;  // the docs: memory stays while mappings of it remain
  free_if_done(a);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemExportToShareableHandle(void* out, CUmemGenericAllocationHandle handle,
                                               CUmemAllocationHandleType type, unsigned long long flags) {
  FAKE_ENTER("cuMemExportToShareableHandle");
  FAKE_REQUIRE_INIT();
  VmmAllocation* a = find_allocation(handle);
  if (!out || flags != 0 || !a || a->released) return CUDA_ERROR_INVALID_VALUE;
  // Only the handle type requested at cuMemCreate can be exported.
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || !a->exportable) return CUDA_ERROR_INVALID_VALUE;
  const int fd = ::fcntl(a->fd, F_DUPFD_CLOEXEC, 0);  // a new descriptor, the caller's
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *static_cast<int*>(out) = fd;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* os_handle,
                                                 CUmemAllocationHandleType type) {
  FAKE_ENTER("cuMemImportFromShareableHandle");
  FAKE_REQUIRE_INIT();
  if (!handle) return CUDA_ERROR_INVALID_VALUE;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
  if (!vmm_supported()) return CUDA_ERROR_NOT_SUPPORTED;
  const int fd = static_cast<int>(reinterpret_cast<std::intptr_t>(os_handle));  // the docs: the fd, as the pointer
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !is_fake_vmm_fd(fd)) return CUDA_ERROR_INVALID_VALUE;
  if (st.st_size <= 0 || static_cast<std::size_t>(st.st_size) % kVmmGranularity != 0) return CUDA_ERROR_INVALID_VALUE;
  // The importer keeps its descriptor (closing it is its business): the fake holds its own.
  const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  auto* a = new VmmAllocation{own, static_cast<std::size_t>(st.st_size), true};
  share().allocations.insert(a);
  *handle = reinterpret_cast<std::uintptr_t>(a);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemAddressReserve(CUdeviceptr* ptr, std::size_t size, std::size_t alignment, CUdeviceptr addr,
                                      unsigned long long flags) {
  FAKE_ENTER("cuMemAddressReserve");
  FAKE_REQUIRE_INIT();
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  if (!ptr || flags != 0 || size == 0 || size % page != 0 || addr % page != 0) return CUDA_ERROR_INVALID_VALUE;
  if (alignment & (alignment - 1)) return CUDA_ERROR_INVALID_VALUE;  // a power of two, or 0
  const std::size_t align = std::max(alignment, kVmmGranularity);
  void* raw = ::mmap(nullptr, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  const auto r = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t base = (r + align - 1) / align * align;
  if (base > r) ::munmap(raw, base - r);
  ::munmap(reinterpret_cast<void*>(base + size), r + align - base);  // the tail past the aligned range
  share().reservations[base] = VmmReservation{size, {}};
  *ptr = base;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemAddressFree(CUdeviceptr ptr, std::size_t size) {
  FAKE_ENTER("cuMemAddressFree");
  FAKE_REQUIRE_INIT();
  auto it = share().reservations.find(ptr);
  if (it == share().reservations.end() || it->second.size != size) return CUDA_ERROR_INVALID_VALUE;
  // Strict: a range still mapped is not freed (unmap first; the docs give no other order).
  if (!it->second.mappings.empty()) return CUDA_ERROR_INVALID_VALUE;
  ::munmap(reinterpret_cast<void*>(ptr), size);
  share().reservations.erase(it);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemMap(CUdeviceptr ptr, std::size_t size, std::size_t offset, CUmemGenericAllocationHandle handle,
                           unsigned long long flags) {
  FAKE_ENTER("cuMemMap");
  FAKE_REQUIRE_INIT();
  VmmAllocation* a = find_allocation(handle);
  if (flags != 0 || offset != 0 || !a || a->released || size == 0) return CUDA_ERROR_INVALID_VALUE;
  if (ptr % kVmmGranularity != 0 || size % kVmmGranularity != 0 || size > a->size) return CUDA_ERROR_INVALID_VALUE;
  VmmReservation* r = find_reservation(ptr, size);
  if (!r) return CUDA_ERROR_INVALID_VALUE;  // not inside one reservation
  for (const auto& [start, m] : r->mappings)
    if (start < ptr + size && ptr < start + m.size) return CUDA_ERROR_INVALID_VALUE;  // already mapped
  // No access until cuMemSetAccess, as on the real driver; and never host
  // access: the address stays PROT_NONE, the fake copies through its alias.
  void* alias = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
  if (alias == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  if (::mmap(reinterpret_cast<void*>(ptr), size, PROT_NONE, MAP_SHARED | MAP_FIXED, a->fd, 0) == MAP_FAILED) {
    ::munmap(alias, size);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  r->mappings[ptr] = VmmMapping{size, a, false, static_cast<char*>(alias)};
  ++a->mappings;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemSetAccess(CUdeviceptr ptr, std::size_t size, const CUmemAccessDesc* desc, std::size_t count) {
  FAKE_ENTER("cuMemSetAccess");
  FAKE_REQUIRE_INIT();
  if (!desc || count == 0) return CUDA_ERROR_INVALID_VALUE;
  int prot = PROT_NONE;
  for (std::size_t i = 0; i < count; ++i) {
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
    if (desc[i].location.id < 0 || desc[i].location.id >= s.config.devices) return CUDA_ERROR_INVALID_DEVICE;
    switch (desc[i].flags) {
      case CU_MEM_ACCESS_FLAGS_PROT_NONE: break;
      case CU_MEM_ACCESS_FLAGS_PROT_READ: prot |= PROT_READ; break;
      case CU_MEM_ACCESS_FLAGS_PROT_READWRITE: prot |= PROT_READ | PROT_WRITE; break;
      default: return CUDA_ERROR_INVALID_VALUE;
    }
  }
  VmmReservation* r = find_reservation(ptr, size);
  const auto tiles = r ? tiling(*r, ptr, size) : decltype(tiling(*r, ptr, size)){};
  if (tiles.empty()) return CUDA_ERROR_INVALID_VALUE;  // the docs: a fully mapped range (map before set-access)
  // Device access only: the host mapping stays PROT_NONE (copies go through the alias).
  for (auto it : tiles) {
    it->second.accessible = prot != PROT_NONE;
    if (it->second.accessible)
      s.regions[it->first] = Region{it->second.size, Region::VirtualMapping, nullptr, nullptr, it->second.alias};
    else
      s.regions.erase(it->first);
  }
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemUnmap(CUdeviceptr ptr, std::size_t size) {
  FAKE_ENTER("cuMemUnmap");
  FAKE_REQUIRE_INIT();
  {
    Targets all;  // synchronous: work queued before it has run
    for (const auto& q : s.queues) add_target(all, q);
    wait_for(s, lock, all);
  }
  VmmReservation* r = find_reservation(ptr, size);
  const auto tiles = r ? tiling(*r, ptr, size) : decltype(tiling(*r, ptr, size)){};
  if (tiles.empty()) return CUDA_ERROR_INVALID_VALUE;  // the docs: whole mapped ranges only
  // Back to a reservation: inaccessible, no pages.
  ::mmap(reinterpret_cast<void*>(ptr), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
         0);
  for (auto it : tiles) {
    s.regions.erase(it->first);
    ::munmap(it->second.alias, it->second.size);
    VmmAllocation* a = it->second.allocation;
    --a->mappings;
    r->mappings.erase(it);
    free_if_done(a);
  }
  return CUDA_SUCCESS;
}

// --- events ------------------------------------------------------------------------
namespace {
CUevent_st* find_event(CUevent e) { return e && share().events.count(e) ? e : nullptr; }

// A handle whose event is gone. The docs call operations on an imported event
// undefined once the exported one is destroyed, and say nothing of opening
// such a handle; the fake refuses it with CUDA_ERROR_INVALID_VALUE (its code
// for a handle it never issued) where it can tell: the exporting process has
// exited, or the exporter is this process and the event was destroyed. (An
// event destroyed in another process that still runs is beyond its sight.)
std::string event_shm_name(std::int32_t pid, std::uint64_t id) {
  return "/handoff-fake-cuda-event-" + std::to_string(pid) + "-" + std::to_string(id);
}

// Shared counters of processes that exited without destroying their events
// (a test killed its peer) are removed when this process exports its first.
void remove_dead_processes_event_counters() {
  static std::once_flag once;
  std::call_once(once, [] {
    DIR* d = ::opendir("/dev/shm");
    if (!d) return;
    const std::string prefix = "handoff-fake-cuda-event-";
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.rfind(prefix, 0) != 0) continue;
      const long pid = std::strtol(n.c_str() + prefix.size(), nullptr, 10);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) ::shm_unlink(("/" + n).c_str());
    }
    ::closedir(d);
  });
}

bool ipc_event_handle_is_stale(const CUipcEventHandle& handle) {
  std::int32_t pid = 0;
  std::uint64_t id = 0;
  std::memcpy(&pid, handle.reserved + 4, 4);
  std::memcpy(&id, handle.reserved + 8, 8);
  if (pid <= 0) return true;
  if (pid != ::getpid()) return ::kill(pid, 0) != 0 && errno == ESRCH;
  for (const CUevent_st* e : share().events)
    if (!e->imported && e->id == id && (e->flags & CU_EVENT_INTERPROCESS)) return false;
  return true;
}
}  // namespace

FAKE_API CUresult cuEventCreate(CUevent* event, unsigned int flags) {
  FAKE_ENTER("cuEventCreate");
  FAKE_REQUIRE_CONTEXT();
  if (!event || (flags & ~unsigned(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)))
    return CUDA_ERROR_INVALID_VALUE;
  // The docs: an interprocess event must have timing disabled.
  if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
  auto* e = new CUevent_st{flags, false, share().next_event_id++, current_context()};
  share().events.insert(e);
  *event = e;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventDestroy_v2(CUevent event) {
  FAKE_ENTER("cuEventDestroy");
  FAKE_REQUIRE_INIT();
  if (!find_event(event)) return CUDA_ERROR_INVALID_HANDLE;
  share().events.erase(event);
  delete event;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventRecord(CUevent event, CUstream stream) {
  FAKE_ENTER("cuEventRecord");
  FAKE_REQUIRE_CONTEXT();
  if (!find_event(event)) return CUDA_ERROR_INVALID_HANDLE;
  FAKE_CHECK(work_stream_status(s, stream));
  // The docs: the event and the stream "must be from the same context
  // otherwise CUDA_ERROR_INVALID_HANDLE is returned" (the default stream is the current context's).
  if ((stream ? stream->ctx : current_context()) != event->ctx) return CUDA_ERROR_INVALID_HANDLE;
  // Completes when the stream gets to it (strict mode).
  std::shared_ptr<EventSync> sync = event->sync;
  const std::uint64_t generation = ++sync->c().recorded;
  const std::shared_ptr<Queue> q = queue_of(s, stream);
  enqueue(s, q, [sync, generation](bool) {
    std::atomic<std::uint64_t>& done = sync->c().completed;
    if (done.load() < generation) done.store(generation);
  }, "cuEventRecord");
  return CUDA_SUCCESS;
}

// CUDA_ERROR_NOT_READY while its newest record is still queued (strict mode).
FAKE_API CUresult cuEventQuery(CUevent event) {
  FAKE_ENTER("cuEventQuery");
  FAKE_REQUIRE_INIT();
  if (!find_event(event)) return CUDA_ERROR_INVALID_HANDLE;
  FAKE_CHECK(sticky_of(event->ctx));
  EventCounters& c = event->sync->c();
  return c.completed.load() >= c.recorded.load() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FAKE_API CUresult cuEventSynchronize(CUevent event) {
  FAKE_ENTER("cuEventSynchronize");
  FAKE_REQUIRE_INIT();
  if (!find_event(event)) return CUDA_ERROR_INVALID_HANDLE;
  const std::shared_ptr<EventSync> sync = event->sync;
  const std::uint64_t generation = sync->c().recorded.load();
  CUctx_st* ctx = event->ctx;
  // Another process's work completes unseen by this worker: poll it.
  while (!(sync->c().completed.load() >= generation || (ctx && ctx->sticky)))
    s.work_done.wait_for(lock, std::chrono::microseconds(50));
  return sticky_of(ctx);
}

// The stream's later work waits for the event's newest record (strict mode).
FAKE_API CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  FAKE_ENTER("cuStreamWaitEvent");
  FAKE_REQUIRE_CONTEXT();
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!find_event(event)) return CUDA_ERROR_INVALID_HANDLE;
  FAKE_CHECK(stream_status(s, stream));
  enqueue(s, queue_of(s, stream), [](bool) {}, "cuStreamWaitEvent", event->sync, event->sync->c().recorded.load());
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuIpcGetEventHandle(CUipcEventHandle* handle, CUevent event) {
  FAKE_ENTER("cuIpcGetEventHandle");
  FAKE_REQUIRE_CONTEXT();
  if (!handle) return CUDA_ERROR_INVALID_VALUE;
  if (!find_event(event)) return CUDA_ERROR_INVALID_HANDLE;
  if (!ipc_events_supported()) return CUDA_ERROR_NOT_SUPPORTED;
  const unsigned need = CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING;
  if ((event->flags & need) != need) return CUDA_ERROR_INVALID_VALUE;
  *handle = CUipcEventHandle{};
  const std::int32_t pid = ::getpid();
  std::memcpy(handle->reserved, kEventHandleMagic, 4);
  std::memcpy(handle->reserved + 4, &pid, 4);
  std::memcpy(handle->reserved + 8, &event->id, 8);
  if (!event->exported) {
    event->exported = true;
    EventSync& sync = *event->sync;
    if (!sync.shared) {
      remove_dead_processes_event_counters();
      const std::string name = event_shm_name(pid, event->id);
      const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
      void* m = ::ftruncate(fd, sizeof(EventCounters)) == 0
                    ? ::mmap(nullptr, sizeof(EventCounters), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                    : MAP_FAILED;
      ::close(fd);
      if (m == MAP_FAILED) {
        ::shm_unlink(name.c_str());
        return CUDA_ERROR_OUT_OF_MEMORY;
      }
      auto* shared = new (m) EventCounters;
      shared->recorded.store(sync.local.recorded.load());
      shared->completed.store(sync.local.completed.load());
      sync.shared = shared;
      sync.shm_name = name;
    }
  }
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuIpcOpenEventHandle(CUevent* event, CUipcEventHandle handle) {
  FAKE_ENTER("cuIpcOpenEventHandle");
  FAKE_REQUIRE_CONTEXT();
  if (!event) return CUDA_ERROR_INVALID_VALUE;
  if (!ipc_events_supported()) return CUDA_ERROR_NOT_SUPPORTED;
  if (std::memcmp(handle.reserved, kEventHandleMagic, 4) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (ipc_event_handle_is_stale(handle)) return CUDA_ERROR_INVALID_VALUE;
  // The docs: it behaves like a local event with timing disabled.
  auto* e = new CUevent_st{CU_EVENT_DISABLE_TIMING, true, share().next_event_id++, current_context()};
  std::int32_t pid = 0;
  std::uint64_t id = 0;
  std::memcpy(&pid, handle.reserved + 4, 4);
  std::memcpy(&id, handle.reserved + 8, 8);
  if (pid == ::getpid()) {  // opened in the exporting process: the same event
    for (const CUevent_st* x : share().events)
      if (!x->imported && x->id == id) e->sync = x->sync;
  } else {  // another process's: its counters in shared memory
    const int fd = ::shm_open(event_shm_name(pid, id).c_str(), O_RDWR | O_CLOEXEC, 0);
    void* m = fd >= 0 ? ::mmap(nullptr, sizeof(EventCounters), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (fd >= 0) ::close(fd);
    if (m == MAP_FAILED) {
      delete e;
      return CUDA_ERROR_INVALID_VALUE;  // the exporter destroyed it (or never exported it so)
    }
    e->sync->shared = static_cast<EventCounters*>(m);
  }
  share().events.insert(e);
  *event = e;
  return CUDA_SUCCESS;
}

// Legacy IPC memory handles: the fake's cuMemAlloc memory is private to its
// process, so it issues none (as on Jetson / Tegra, where these are not
// supported). The legacy route is exercised on a real GPU only.
FAKE_API CUresult cuIpcGetMemHandle(CUipcMemHandle* handle, CUdeviceptr ptr) {
  FAKE_ENTER("cuIpcGetMemHandle");
  FAKE_REQUIRE_CONTEXT();
  if (!handle || !ptr) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_NOT_SUPPORTED;
}

FAKE_API CUresult cuIpcOpenMemHandle_v2(CUdeviceptr* ptr, CUipcMemHandle, unsigned int flags) {
  FAKE_ENTER("cuIpcOpenMemHandle");
  FAKE_REQUIRE_CONTEXT();
  if (!ptr || flags != CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_INVALID_VALUE;  // no handle this fake issued can exist
}

FAKE_API CUresult cuIpcCloseMemHandle(CUdeviceptr) {
  FAKE_ENTER("cuIpcCloseMemHandle");
  FAKE_REQUIRE_CONTEXT();
  return CUDA_ERROR_INVALID_VALUE;
}

// --- control ------------------------------------------------------------------------
FAKE_API void fake_cuda_set_vmm_supported(int supported) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  share().vmm_override = supported != 0;
}

FAKE_API void fake_cuda_set_ipc_events_supported(int supported) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  share().ipc_events_override = supported != 0;
}

FAKE_API int fake_cuda_live_vmm_allocations(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<int>(share().allocations.size());
}

FAKE_API int fake_cuda_live_vmm_mappings(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  int n = 0;
  for (const auto& [base, r] : share().reservations) n += static_cast<int>(r.mappings.size());
  return n;
}

FAKE_API int fake_cuda_live_vmm_reservations(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<int>(share().reservations.size());
}

FAKE_API int fake_cuda_live_events(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<int>(share().events.size());
}
// ============================================================================
// End of the interprocess sharing block.
// ============================================================================

// --- cuGetProcAddress ------------------------------------------------------------
namespace {
struct ProcEntry {
  const char* name;  // base name
  int version;       // the CUDA version this variant appeared in
  void* fn;
};

template <typename F>
void* as_void(F f) {
  return reinterpret_cast<void*>(f);
}

const std::vector<ProcEntry>& proc_table() {
  static const std::vector<ProcEntry> t = {
      {"cuInit", 2000, as_void(&cuInit)},
      {"cuDriverGetVersion", 2020, as_void(&cuDriverGetVersion)},
      {"cuGetErrorName", 6000, as_void(&cuGetErrorName)},
      {"cuGetErrorString", 6000, as_void(&cuGetErrorString)},
      {"cuDeviceGetCount", 2000, as_void(&cuDeviceGetCount)},
      {"cuDeviceGet", 2000, as_void(&cuDeviceGet)},
      {"cuDeviceGetName", 2000, as_void(&cuDeviceGetName)},
      {"cuDeviceGetUuid", 11040, as_void(&cuDeviceGetUuid_v2)},
      {"cuDeviceGetAttribute", 2000, as_void(&cuDeviceGetAttribute)},
      {"cuDeviceTotalMem", 3020, as_void(&cuDeviceTotalMem_v2)},
      {"cuDevicePrimaryCtxRetain", 7000, as_void(&cuDevicePrimaryCtxRetain)},
      {"cuDevicePrimaryCtxRelease", 11000, as_void(&cuDevicePrimaryCtxRelease_v2)},
      {"cuCtxPushCurrent", 4000, as_void(&cuCtxPushCurrent_v2)},
      {"cuCtxPopCurrent", 4000, as_void(&cuCtxPopCurrent_v2)},
      {"cuCtxSetCurrent", 4000, as_void(&cuCtxSetCurrent)},
      {"cuCtxGetCurrent", 4000, as_void(&cuCtxGetCurrent)},
      {"cuCtxSynchronize", 2000, as_void(&cuCtxSynchronize)},
      {"cuCtxSynchronize", 13000, as_void(&fake_cuCtxSynchronize_v13000)},
      {"cuMemAlloc", 3020, as_void(&cuMemAlloc_v2)},
      {"cuMemAllocPitch", 3020, as_void(&cuMemAllocPitch_v2)},
      {"cuMemFree", 3020, as_void(&cuMemFree_v2)},
      {"cuMemcpyHtoD", 3020, as_void(&cuMemcpyHtoD_v2)},
      {"cuMemcpyDtoH", 3020, as_void(&cuMemcpyDtoH_v2)},
      {"cuMemcpy2D", 3020, as_void(&cuMemcpy2D_v2)},
      {"cuMemcpy2DAsync", 3020, as_void(&cuMemcpy2DAsync_v2)},
      {"cuMemsetD8", 3020, as_void(&cuMemsetD8_v2)},
      {"cuStreamCreate", 2000, as_void(&cuStreamCreate)},
      {"cuStreamDestroy", 4000, as_void(&cuStreamDestroy_v2)},
      {"cuStreamSynchronize", 2000, as_void(&cuStreamSynchronize)},
      {"cuStreamQuery", 2000, as_void(&cuStreamQuery)},
      {"cuModuleLoadData", 2000, as_void(&cuModuleLoadData)},
      {"cuModuleUnload", 2000, as_void(&cuModuleUnload)},
      {"cuModuleGetFunction", 2000, as_void(&cuModuleGetFunction)},
      {"cuLaunchKernel", 4000, as_void(&cuLaunchKernel)},
#ifndef HANDOFF_FAKE_CUDA_WITHOUT_GL_REGISTER
      {"cuGraphicsGLRegisterBuffer", 3000, as_void(&cuGraphicsGLRegisterBuffer)},
#endif
      {"cuGraphicsUnregisterResource", 3000, as_void(&cuGraphicsUnregisterResource)},
      {"cuGraphicsResourceSetMapFlags", 6050, as_void(&cuGraphicsResourceSetMapFlags_v2)},
      {"cuGraphicsMapResources", 3000, as_void(&cuGraphicsMapResources)},
      {"cuGraphicsUnmapResources", 3000, as_void(&cuGraphicsUnmapResources)},
      {"cuGraphicsResourceGetMappedPointer", 3020, as_void(&cuGraphicsResourceGetMappedPointer_v2)},
      {"cuGraphicsEGLRegisterImage", 7000, as_void(&cuGraphicsEGLRegisterImage)},
      {"cuGraphicsResourceGetMappedEglFrame", 7000, as_void(&cuGraphicsResourceGetMappedEglFrame)},
      {"cuImportExternalMemory", 10000, as_void(&cuImportExternalMemory)},
      {"cuExternalMemoryGetMappedBuffer", 10000, as_void(&cuExternalMemoryGetMappedBuffer)},
      {"cuDestroyExternalMemory", 10000, as_void(&cuDestroyExternalMemory)},
      {"cuImportExternalSemaphore", 10000, as_void(&cuImportExternalSemaphore)},
      {"cuSignalExternalSemaphoresAsync", 10000, as_void(&cuSignalExternalSemaphoresAsync)},
      {"cuWaitExternalSemaphoresAsync", 10000, as_void(&cuWaitExternalSemaphoresAsync)},
      {"cuDestroyExternalSemaphore", 10000, as_void(&cuDestroyExternalSemaphore)},
      // interprocess block
      {"cuMemGetAllocationGranularity", 10020, as_void(&cuMemGetAllocationGranularity)},
      {"cuMemCreate", 10020, as_void(&cuMemCreate)},
      {"cuMemRelease", 10020, as_void(&cuMemRelease)},
      {"cuMemExportToShareableHandle", 10020, as_void(&cuMemExportToShareableHandle)},
      {"cuMemImportFromShareableHandle", 10020, as_void(&cuMemImportFromShareableHandle)},
      {"cuMemAddressReserve", 10020, as_void(&cuMemAddressReserve)},
      {"cuMemAddressFree", 10020, as_void(&cuMemAddressFree)},
      {"cuMemMap", 10020, as_void(&cuMemMap)},
      {"cuMemUnmap", 10020, as_void(&cuMemUnmap)},
      {"cuMemSetAccess", 10020, as_void(&cuMemSetAccess)},
      {"cuEventCreate", 2000, as_void(&cuEventCreate)},
      {"cuEventDestroy", 4000, as_void(&cuEventDestroy_v2)},
      {"cuEventRecord", 2000, as_void(&cuEventRecord)},
      {"cuEventQuery", 2000, as_void(&cuEventQuery)},
      {"cuEventSynchronize", 2000, as_void(&cuEventSynchronize)},
      {"cuStreamWaitEvent", 3020, as_void(&cuStreamWaitEvent)},
      {"cuIpcGetEventHandle", 4010, as_void(&cuIpcGetEventHandle)},
      {"cuIpcOpenEventHandle", 4010, as_void(&cuIpcOpenEventHandle)},
      {"cuIpcGetMemHandle", 4010, as_void(&cuIpcGetMemHandle)},
      {"cuIpcOpenMemHandle", 11000, as_void(&cuIpcOpenMemHandle_v2)},
      {"cuIpcCloseMemHandle", 4010, as_void(&cuIpcCloseMemHandle)},
  };
  return t;
}

// The newest variant of `symbol` that is not newer than `version`. As the docs
// say: an unknown symbol, or one too new for `version`, is CUDA_SUCCESS with a
// null pointer (the status tells which).
CUresult lookup(const char* symbol, void** pfn, int version, CUdriverProcAddressQueryResult* status) {
  const ProcEntry* best = nullptr;
  bool known = false;
  for (const ProcEntry& e : proc_table()) {
    if (std::strcmp(e.name, symbol) != 0) continue;
    known = true;
    if (e.version <= version && (!best || e.version > best->version)) best = &e;
  }
  if (status)
    *status = best    ? CU_GET_PROC_ADDRESS_SUCCESS
              : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                      : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  *pfn = best ? best->fn : nullptr;
  return CUDA_SUCCESS;
}
}  // namespace

FAKE_API CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  {
    FAKE_ENTER("cuGetProcAddress");
    if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
    if (flags > (CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
      return CUDA_ERROR_INVALID_VALUE;
    *pfn = nullptr;
    if (!s.config.proc_address) return CUDA_ERROR_NOT_SUPPORTED;  // HANDOFF_FAKE_CUDA_NO_PROC_ADDRESS: force dlsym
    const int driver_version = s.initialized ? s.config.version : read_config().version;
    if (version > driver_version) return CUDA_ERROR_INVALID_VALUE;  // newer than the driver (the docs)
  }
  return lookup(symbol, pfn, version, status);
}

// The CUDA 11.3 signature, exported under the plain name as the real driver does.
FAKE_API CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, nullptr);
}

// ============================================================================
// Control API (fake_cuda_control.h)
// ============================================================================
FAKE_API void fake_cuda_hold(const char* entry, int max_wait_ms) {
  if (!entry) return;
  Holds& h = holds();
  std::lock_guard lock(h.mutex);
  if (max_wait_ms > 0) h.max_wait_ms[entry] = max_wait_ms;
  else h.max_wait_ms.erase(entry);
  h.count.store(static_cast<int>(h.max_wait_ms.size()), std::memory_order_release);
  h.changed.notify_all();
}

FAKE_API int fake_cuda_held_calls(const char* entry) {
  if (!entry) return 0;
  Holds& h = holds();
  std::lock_guard lock(h.mutex);
  auto it = h.waiting.find(entry);
  return it == h.waiting.end() ? 0 : it->second;
}

FAKE_API void fake_cuda_reset(void) {
  {
    Holds& h = holds();
    std::lock_guard lock(h.mutex);
    h.max_wait_ms.clear();
    h.count.store(0, std::memory_order_release);
    h.changed.notify_all();
  }
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.faults.clear();
  s.log.clear();
  s.leaked_external_buffers = 0;
  s.host_copies = 0;
  s.objects_lost_to_resets = 0;
  s.semaphores_supported = false;
  s.egl_width = s.egl_height = s.egl_channels = 0;
  s.egl_bytes = 1;
  s.egl_arrays = false;
  s.dmabuf_stand_ins.clear();
  s.sticky_faults.clear();
  s.arm_sticky = 0;
  // A test harness's reset, not CUDA's: poisoned contexts start clean, so one
  // test's sticky error does not leak into the next (on a GPU only a reset of
  // the context clears it).
  for (CUctx_st& c : s.contexts) c.sticky = 0;
  for (CUctx_st* c : s.created_contexts) c->sticky = 0;
  s.strict_override = -1;
  s.strict = env_int("HANDOFF_FAKE_CUDA_STRICT", 0) != 0;
  s.uuid_override_set = false;  // back to the environment's say (HANDOFF_FAKE_CUDA_UUID at cuInit)
  s.paused = false;
  s.work_changed.notify_all();
  share_reset();  // interprocess block
}

FAKE_API void fake_cuda_fail_sticky(const char* entry, int code, int after_calls) {
  if (!entry) return;
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (code == 0) {
    s.sticky_faults.erase(entry);
    return;
  }
  s.sticky_faults[entry] = FaultRule{code, s.log[entry].successes + (after_calls < 0 ? 0 : after_calls)};
}

FAKE_API int fake_cuda_set_uuid(const char* hex) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!hex || !*hex) {
    s.uuid_override_set = false;
    return CUDA_SUCCESS;
  }
  unsigned char parsed[16];
  if (!parse_uuid(hex, parsed)) return CUDA_ERROR_INVALID_VALUE;  // nothing changes
  std::memcpy(s.uuid_override, parsed, 16);
  s.uuid_override_set = true;
  return CUDA_SUCCESS;
}

FAKE_API void fake_cuda_set_strict(int strict) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.strict_override = strict ? 1 : 0;
  s.strict = strict != 0;
}

FAKE_API void fake_cuda_pause_work(int paused) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.paused = paused != 0;
  s.work_changed.notify_all();
}

FAKE_API int fake_cuda_strict(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.strict ? 1 : 0;
}

FAKE_API int fake_cuda_sticky_error(int ordinal) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return ordinal >= 0 && ordinal < kMaxDevices ? s.contexts[ordinal].sticky : 0;
}

FAKE_API void fake_cuda_fail(const char* entry, int code, int after_calls) {
  if (!entry) return;
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (code == 0) {
    s.faults.erase(entry);
    return;
  }
  // Counted from now: successes so far plus after_calls more.
  s.faults[entry] = FaultRule{code, s.log[entry].successes + (after_calls < 0 ? 0 : after_calls)};
}

#define FAKE_COUNT(expr)          \
  State& s = state();             \
  std::lock_guard lock(s.mutex);  \
  return static_cast<int>(expr)

FAKE_API int fake_cuda_live_registrations(void) { FAKE_COUNT(s.resources.size()); }
FAKE_API int fake_cuda_live_mappings(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  int n = 0;
  for (auto* r : s.resources) n += r->mapped ? 1 : 0;
  return n;
}
FAKE_API int fake_cuda_live_allocations(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  int n = 0;
  for (auto& [p, r] : s.regions) n += r.kind == Region::Alloc ? 1 : 0;
  return n;
}
FAKE_API int fake_cuda_live_external_buffers(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  int n = 0;
  for (auto& [p, r] : s.regions) n += r.kind == Region::ExternalBuffer ? 1 : 0;
  return n;
}
FAKE_API int fake_cuda_live_external_memories(void) { FAKE_COUNT(s.ext_memories.size()); }
FAKE_API int fake_cuda_live_external_semaphores(void) { FAKE_COUNT(s.semaphores.size()); }
FAKE_API int fake_cuda_live_streams(void) { FAKE_COUNT(s.streams.size()); }
FAKE_API int fake_cuda_live_contexts(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  int n = 0;
  for (auto& c : s.contexts) n += c.refs > 0 ? 1 : 0;
  return n;
}
FAKE_API int fake_cuda_primary_context_refs(int ordinal) {
  if (ordinal < 0 || ordinal >= kMaxDevices) return -1;
  FAKE_COUNT(s.contexts[ordinal].refs);
}
FAKE_API int fake_cuda_leaked_external_buffers(void) { FAKE_COUNT(s.leaked_external_buffers); }
FAKE_API int fake_cuda_context_resets(int ordinal) {
  if (ordinal < 0 || ordinal >= kMaxDevices) return -1;
  FAKE_COUNT(s.contexts[ordinal].resets);
}
FAKE_API int fake_cuda_objects_lost_to_resets(void) { FAKE_COUNT(s.objects_lost_to_resets); }

FAKE_API int fake_cuda_host_copies(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.host_copies;
}

FAKE_API int fake_cuda_call_count(const char* entry) {
  if (!entry) return 0;
  State& s = state();
  std::lock_guard lock(s.mutex);
  auto it = s.log.find(entry);
  return it == s.log.end() ? 0 : it->second.calls;
}

FAKE_API unsigned long long fake_cuda_thread_id(void) { return this_thread_id(); }

FAKE_API unsigned long long fake_cuda_last_thread(const char* entry) {
  if (!entry) return 0;
  State& s = state();
  std::lock_guard lock(s.mutex);
  auto it = s.log.find(entry);
  return it == s.log.end() ? 0 : it->second.last_thread;
}

FAKE_API int fake_cuda_calls_off_thread(const char* entry, unsigned long long thread) {
  if (!entry) return 0;
  State& s = state();
  std::lock_guard lock(s.mutex);
  auto it = s.log.find(entry);
  if (it == s.log.end()) return 0;
  int n = 0;
  for (auto& [t, c] : it->second.by_thread)
    if (t != thread) n += c;
  return n;
}

// --- the host touching device memory -------------------------------------------
namespace {
bool is_device_address(State& s, CUdeviceptr p) {
  if (find_region(s, p, 1) || in_dead_range(s, p)) return true;
  for (const CUgraphicsResource_st* r : s.resources)  // an EGL image's plane, mapped or not
    if (r->egl_memory && p - reinterpret_cast<CUdeviceptr>(r->egl_memory) < r->egl_length) return true;
  for (const auto& [start, res] : share().reservations)  // reserved, mapped or not (interprocess block)
    if (p - start < res.size) return true;
  return false;
}

// A host access to device memory is a SIGSEGV (the address is PROT_NONE).
// The fake's handler says so on stderr, then puts the previous handler back
// and returns: the access faults again and that handler (the default one,
// ASan's, Python's faulthandler) reports it as it would have.
struct sigaction g_previous_segv {};

void write_err(const char* text) {
  const ssize_t ignored = ::write(2, text, std::strlen(text));
  (void)ignored;
}

void segv_note(int, siginfo_t* info, void*) {
  const auto addr = reinterpret_cast<CUdeviceptr>(info->si_addr);
  State& s = state();
  bool device = false;
  bool known = false;
  // Not async-signal-safe in the letter (the fault is fatal anyway): a try,
  // so a fault inside the fake (lock held) or the worker holding the lock
  // does not deadlock.
  for (int i = 0; i < 1000 && !known; ++i) {
    if (s.mutex.try_lock()) {
      device = is_device_address(s, addr);
      s.mutex.unlock();
      known = true;
    } else {
      sched_yield();
    }
  }
  if (device) {
    char hex[2 + 16 + 1] = "0x";
    for (int i = 0; i < 16; ++i) hex[2 + i] = "0123456789abcdef"[(addr >> (60 - 4 * i)) & 0xf];
    hex[18] = '\0';
    write_err("handoff fake CUDA driver: host access to fake device memory at ");
    write_err(hex);
    write_err(" (a CUdeviceptr dereferenced on the host; copy with cuMemcpy*, or in a test fake_cuda_read_device)\n");
  }
  ::sigaction(SIGSEGV, &g_previous_segv, nullptr);
}

void install_segv_note() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = segv_note;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGSEGV, &sa, &g_previous_segv);
  });
}

// Device memory through the fake's alias (fake_cuda_read_device / _write_device).
int device_access(CUdeviceptr p, void* host, std::size_t n, bool write) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (n == 0) return CUDA_SUCCESS;
  if (!host) return CUDA_ERROR_INVALID_VALUE;
  char* a = nullptr;
  if (!find_region(s, p, n, nullptr, &a))
    return in_dead_range(s, p) ? CUDA_ERROR_CONTEXT_IS_DESTROYED : CUDA_ERROR_INVALID_VALUE;
  if (write) std::memcpy(a, host, n);
  else std::memcpy(host, a, n);
  return CUDA_SUCCESS;
}
}  // namespace

FAKE_API int fake_cuda_read_device(unsigned long long device, void* dst, size_t bytes) {
  return device_access(device, dst, bytes, false);
}
FAKE_API int fake_cuda_write_device(unsigned long long device, const void* src, size_t bytes) {
  return device_access(device, const_cast<void*>(src), bytes, true);
}
FAKE_API int fake_cuda_is_device_address(const void* p) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return is_device_address(s, reinterpret_cast<CUdeviceptr>(p)) ? 1 : 0;
}

FAKE_API void fake_cuda_uninitialize(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.initialized = false;
}

FAKE_API void fake_cuda_set_semaphores_supported(int supported) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.semaphores_supported = supported != 0;
}

FAKE_API void fake_cuda_set_egl_images(unsigned width, unsigned height, unsigned channels, unsigned bytes_per_channel) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.egl_width = width;
  s.egl_height = height;
  s.egl_channels = channels;
  s.egl_bytes = bytes_per_channel == 2 ? 2 : 1;
}

FAKE_API void fake_cuda_set_egl_arrays(int arrays) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.egl_arrays = arrays != 0;
}

FAKE_API int fake_cuda_declare_dmabuf(int fd) {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || fd_target(fd).rfind("/memfd:", 0) != 0) return -1;
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.dmabuf_stand_ins.insert({st.st_dev, st.st_ino});
  return 0;
}
