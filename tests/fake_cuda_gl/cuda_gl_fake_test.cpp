// CudaGlBuffer against the fake CUDA driver (tests/fake_cuda) on llvmpipe:
// thread routing, batching, leaks over many cycles, fault injection on every
// entry point used, the same-GPU check.
#include <glad/gl.h>

#include <handoff/cuda.hpp>
#include <handoff/cuda_gl_buffer.hpp>
#include <handoff/gl_buffer.hpp>
#include <handoff/log.hpp>

#include <handoff/cuda_abi.hpp>
#include "fake_cuda_control.hpp"
#include "gl_fixture.hpp"
#include "interop_testing.hpp"
#include "log_capture.hpp"

#include <gtest/gtest.h>

#include <dirent.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace handoff {
namespace abi = cuda::abi;
namespace {

// Before anything loads the driver: give fake device 0 the GL device's UUID,
// so the same-GPU check sees one GPU (device 1's UUID differs in its last byte).
class GlUuidForTheFake : public ::testing::Environment {
 public:
  void SetUp() override {
    GlWorker probe;
    if (probe.info().device_uuid) {
      gl_uuid = to_string(*probe.info().device_uuid);
      setenv("HANDOFF_FAKE_CUDA_UUID", gl_uuid.c_str(), 1);
    }
  }
  static inline std::string gl_uuid;
};
const auto* const g_env = ::testing::AddGlobalTestEnvironment(new GlUuidForTheFake);

int open_fds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d)) ++n;
    closedir(d);
  }
  return n;
}

using test::LogCapture;


class FakeCudaGl : public test::GlWorkerFixture {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fake.ok()) << fake.error();
    fake.reset();
    ASSERT_TRUE(cuda::driver().usable()) << cuda::driver().describe();
    ASSERT_FALSE(GlUuidForTheFake::gl_uuid.empty()) << "llvmpipe reported no GL_DEVICE_UUID_EXT";
    GlWorkerFixture::SetUp();
    registrations0 = fake.live_registrations();
    mappings0 = fake.live_mappings();
  }
  void expect_nothing_left() {
    worker().run([] {});  // queued releases have run
    EXPECT_EQ(fake.live_registrations(), registrations0);
    EXPECT_EQ(fake.live_mappings(), mappings0);
    EXPECT_EQ(testing::live_resources(*worker().core()), 0u);
  }
  static CudaGlOptions cuda_options(CudaGlAccess a = CudaGlAccess::ReadWrite) {
    CudaGlOptions o;
    o.access = a;
    o.backend = MapBackend::Cuda;
    return o;
  }
  test::FakeCuda fake;
  int registrations0 = 0, mappings0 = 0;
};

TEST_F(FakeCudaGl, MapsToACudaPointerWhoseBytesReachTheGlBuffer) {
  GlBuffer b(worker(), 3000);
  CudaGlBuffer cb(worker(), b, cuda_options(CudaGlAccess::WriteDiscard));
  EXPECT_TRUE(cb.uses_cuda());
  EXPECT_EQ(fake.live_registrations(), registrations0 + 1);
  {
    Mapping m = cb.map();
    EXPECT_EQ(m.memory(), MemoryKind::Cuda);
    EXPECT_EQ(m[0].device, 0);
    EXPECT_NE(m[0].cuda_context, nullptr);
    EXPECT_EQ(m.size(), 3000u);
    EXPECT_EQ(fake.live_mappings(), mappings0 + 1);
    EXPECT_EQ(fake.is_device_address(m.data()), 1) << "a CUDA pointer, not GL's host mapping";
    // Device memory: the host writes it through the fake (a host memset would fault).
    const std::vector<unsigned char> bytes(m.size(), 0x5a);
    ASSERT_EQ(fake.write_device(reinterpret_cast<abi::CUdeviceptr>(m.data()), bytes.data(), bytes.size()), 0);
  }
  EXPECT_EQ(fake.live_mappings(), mappings0);
  std::vector<std::byte> back(3000);
  b.read(0, back);
  for (auto x : back) ASSERT_EQ(x, std::byte{0x5a});
  cb = CudaGlBuffer(worker(), b, cuda_options());  // move-assign: the first registration goes
  worker().run([] {});
  EXPECT_EQ(fake.live_registrations(), registrations0 + 1);
}

TEST_F(FakeCudaGl, EveryGraphicsCallReachesTheFakeOnTheWorkerThread) {
  const unsigned long long worker_thread = worker().run([&] { return fake.thread_id(); });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        GlBuffer a(worker(), 256), b(worker(), 128);
        CudaGlBuffer ca(worker(), a, cuda_options()), cb(worker(), b, cuda_options());
        Mapping m = CudaGlBuffer::map_all({&ca, &cb});
        const unsigned char one = 1;  // through the fake: no driver call on this thread
        EXPECT_EQ(fake.write_device(reinterpret_cast<abi::CUdeviceptr>(m[1].data) + 127, &one, 1), 0);
      }
    });
  }
  for (auto& th : threads) th.join();
  worker().run([] {});
  for (const char* entry : {"cuGraphicsGLRegisterBuffer", "cuGraphicsMapResources",
                            "cuGraphicsResourceGetMappedPointer", "cuGraphicsUnmapResources",
                            "cuGraphicsUnregisterResource", "cuCtxPushCurrent", "cuCtxPopCurrent"}) {
    EXPECT_GE(fake.call_count(entry), 100) << entry;
    EXPECT_EQ(fake.calls_off_thread(entry, worker_thread), 0) << entry << " was called off the GL worker";
    EXPECT_EQ(fake.last_thread(entry), worker_thread) << entry;
  }
  expect_nothing_left();
}

TEST_F(FakeCudaGl, MapAllIsOneDriverCallForBothPlanes) {
  GlBuffer luma(worker(), 64 * 48), chroma(worker(), 64 * 24);
  CudaGlBuffer l(worker(), luma, cuda_options()), c(worker(), chroma, cuda_options());
  const int maps = fake.call_count("cuGraphicsMapResources");
  const int unmaps = fake.call_count("cuGraphicsUnmapResources");
  {
    auto m = std::make_shared<Mapping>(CudaGlBuffer::map_all({&l, &c}));
    EXPECT_EQ(fake.call_count("cuGraphicsMapResources"), maps + 1);
    EXPECT_EQ(fake.live_mappings(), mappings0 + 2);
    Frame f = make_frame(m, FrameLayout::packed(PixelFormat::NV12, 64, 48));
    EXPECT_EQ(f.memory, MemoryKind::Cuda);
    EXPECT_EQ(f.device, 0);
    EXPECT_EQ(f.cuda_context, (*m)[0].cuda_context);
    EXPECT_EQ(f.chroma().data, (*m)[1].data);
  }
  EXPECT_EQ(fake.call_count("cuGraphicsUnmapResources"), unmaps + 1);
  EXPECT_EQ(fake.live_mappings(), mappings0);
}

TEST_F(FakeCudaGl, TenThousandCyclesLeaveNothingBehind) {
  {  // warm-up: the first cycle loads what stays loaded (driver, GL entry points)
    GlBuffer b(worker(), 4096);
    CudaGlBuffer cb(worker(), b, cuda_options());
    cb.map();
  }
  worker().run([] {});
  const int fds0 = open_fds();
  std::set<unsigned> names;
  for (int i = 0; i < 10000; ++i) {
    GlBuffer b(worker(), 4096);
    names.insert(b.name());
    CudaGlBuffer cb(worker(), std::move(b), cuda_options(CudaGlAccess::WriteDiscard));
    Mapping m = cb.map();
    const auto byte = static_cast<unsigned char>(i);
    ASSERT_EQ(fake.write_device(reinterpret_cast<abi::CUdeviceptr>(m.data()) + i % 4096, &byte, 1), 0);
  }
  expect_nothing_left();
  EXPECT_EQ(open_fds(), fds0);
  const int still_buffers = worker().run([&] {
    int n = 0;
    for (unsigned name : names) n += glIsBuffer(name) == GL_TRUE;
    return n;
  });
  EXPECT_EQ(still_buffers, 0) << "GL buffer objects left behind";
}

// Which phase calls an entry point, and so what failing it must do.
enum class Phase { Create, Map, Unmap, Release };
struct Injected {
  const char* entry;
  Phase phase;
};

// Every driver entry point a create / map / unmap / destroy cycle uses.
const Injected kInjected[] = {
    {"cuDeviceGet", Phase::Create},
    {"cuDeviceGetName", Phase::Create},
    {"cuDeviceGetUuid", Phase::Create},
    {"cuDeviceGetAttribute", Phase::Create},
    {"cuDeviceTotalMem", Phase::Create},
    {"cuDevicePrimaryCtxRetain", Phase::Create},
    {"cuCtxPushCurrent", Phase::Create},
    {"cuGraphicsGLRegisterBuffer", Phase::Create},
    {"cuGraphicsMapResources", Phase::Map},
    {"cuGraphicsResourceGetMappedPointer", Phase::Map},
    {"cuGraphicsUnmapResources", Phase::Unmap},
    {"cuGraphicsUnregisterResource", Phase::Release},
    {"cuCtxPopCurrent", Phase::Release},
    {"cuDevicePrimaryCtxRelease", Phase::Release},
};

const char* kAllEntries[] = {
#define HANDOFF_NAME_(name, ver, sym, req) #name,
    HANDOFF_CUDA_ENTRY_POINTS(HANDOFF_NAME_)
#undef HANDOFF_NAME_
};

TEST_F(FakeCudaGl, TheInjectedListCoversEveryEntryPointACycleUses) {
  fake.reset();
  {
    GlBuffer b(worker(), 256);
    CudaGlBuffer cb(worker(), b, cuda_options());
    Mapping m = cb.map();
  }
  worker().run([] {});
  std::set<std::string> used, listed;
  for (const char* e : kAllEntries)
    if (fake.call_count(e) > 0) used.insert(e);
  for (const auto& i : kInjected) listed.insert(i.entry);
  EXPECT_EQ(used, listed);
}

TEST_F(FakeCudaGl, EachEntryPointFailingGivesANamedErrorAndLeavesNothing) {
  constexpr int kCode = abi::CUDA_ERROR_DEVICE_UNAVAILABLE;
  for (const auto& inj : kInjected) {
    SCOPED_TRACE(inj.entry);
    fake.reset();
    LogCapture logs;
    auto b = std::make_optional<GlBuffer>(worker(), 512);
    auto expect_named = [&](const Error& e) {
      EXPECT_EQ(e.api(), Api::Cuda);
      EXPECT_EQ(e.call(), inj.entry);
      EXPECT_EQ(e.code(), kCode);
      EXPECT_EQ(e.code_name(), "CUDA_ERROR_DEVICE_UNAVAILABLE");
    };
    if (inj.phase == Phase::Create) fake.fail(inj.entry, kCode, 0);
    std::optional<CudaGlBuffer> cb;
    try {
      cb.emplace(worker(), *b, cuda_options());
      EXPECT_NE(inj.phase, Phase::Create) << "creation did not fail";
    } catch (const Error& e) {
      EXPECT_EQ(inj.phase, Phase::Create) << e.what();
      expect_named(e);
    }
    if (cb) {
      if (inj.phase == Phase::Map) fake.fail(inj.entry, kCode, 0);
      std::optional<Mapping> m;
      try {
        m.emplace(cb->map());
        EXPECT_NE(inj.phase, Phase::Map) << "map did not fail";
      } catch (const Error& e) {
        EXPECT_EQ(inj.phase, Phase::Map) << e.what();
        expect_named(e);
        EXPECT_FALSE(cb->mapped());
        EXPECT_EQ(fake.live_mappings(), mappings0);
      }
      if (m) {
        if (inj.phase == Phase::Unmap) {
          fake.fail(inj.entry, kCode, 0);
          try {
            m->unmap();
            ADD_FAILURE() << "unmap did not fail";
          } catch (const Error& e) {
            expect_named(e);
          }
          EXPECT_TRUE(cb->mapped());  // still held: the destructor tries again
          fake.fail(inj.entry, 0, 0);
        }
        m.reset();
        EXPECT_FALSE(cb->mapped());
      }
      if (inj.phase == Phase::Release) fake.fail(inj.entry, kCode, 0);
      cb.reset();  // destructor: never throws, logs
      worker().run([] {});
      if (inj.phase == Phase::Release && std::string(inj.entry) != "cuCtxPopCurrent") {
        EXPECT_NE(logs.text().find(inj.entry), std::string::npos) << logs.text();
      }
    }
    fake.fail(inj.entry, 0, 0);
    b.reset();
    if (std::string(inj.entry) == "cuGraphicsUnregisterResource") {
      // The refused unregister is retried at shutdown.
      EXPECT_EQ(fake.live_registrations(), registrations0 + 1);
      destroy_worker();
      EXPECT_EQ(fake.live_registrations(), registrations0);
      EXPECT_EQ(fake.live_mappings(), mappings0);
      return;  // the last entry of the list
    }
    expect_nothing_left();
  }
}

TEST_F(FakeCudaGl, ADifferentGpuIsRefusedNamingBothDevices) {
  ASSERT_GE(cuda::driver().device_count(), 2);
  const cuda::DeviceInfo other = cuda::driver().device(1);
  const cuda::DeviceInfo same = cuda::driver().device(0);
  EXPECT_EQ(to_string(same.uuid), GlUuidForTheFake::gl_uuid);
  ASSERT_NE(to_string(other.uuid), GlUuidForTheFake::gl_uuid);
  GlBuffer b(worker(), 64);
  CudaGlOptions o = cuda_options();
  o.cuda_device = 1;
  try {
    CudaGlBuffer cb(worker(), b, o);
    FAIL() << "a CUDA device that is not the GL device was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(to_string(other.uuid)), std::string::npos) << what;
    EXPECT_NE(what.find(GlUuidForTheFake::gl_uuid), std::string::npos) << what;
    EXPECT_NE(what.find(other.name), std::string::npos) << what;
    EXPECT_NE(what.find(worker().info().renderer), std::string::npos) << what;
  }
  EXPECT_EQ(fake.live_registrations(), registrations0);
  o.cuda_device = 0;  // the same GPU passes the check
  EXPECT_NO_THROW(CudaGlBuffer(worker(), b, o));
  o.cuda_device = 7;
  EXPECT_THROW(CudaGlBuffer(worker(), b, o), UsageError);
}

TEST_F(FakeCudaGl, ShutdownWhileMappedUnmapsAndUnregisters) {
  auto b = std::make_unique<GlBuffer>(worker(), 1024);
  auto cb = std::make_unique<CudaGlBuffer>(worker(), *b, cuda_options());
  auto m = std::make_unique<Mapping>(cb->map());
  EXPECT_EQ(fake.live_mappings(), mappings0 + 1);
  destroy_worker();
  EXPECT_EQ(fake.live_mappings(), mappings0);
  EXPECT_EQ(fake.live_registrations(), registrations0);
  EXPECT_NO_THROW(m->unmap());
  m.reset();
  cb.reset();
  b.reset();
  EXPECT_EQ(fake.live_registrations(), registrations0);
}

}  // namespace
}  // namespace handoff
