// GlBuffer and the host-memory path of CudaGlBuffer on llvmpipe.
#include <glad/gl.h>

#include <handoff/cuda.hpp>
#include <handoff/cuda_gl_buffer.hpp>
#include <handoff/dlpack.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/gl_buffer.hpp>

#include "gl_fixture.hpp"
#include "interop_testing.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

namespace handoff {
namespace {

using test::GlWorkerFixture;

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::byte((i * 131u + seed * 7u + (i >> 8)) & 0xff);
  return v;
}

bool is_buffer(GlWorker& w, unsigned name) {
  return w.run([name] { return glIsBuffer(name) == GL_TRUE; });
}

std::size_t live(GlWorker& w) { return testing::live_resources(*w.core()); }

TEST_F(GlWorkerFixture, BufferIsMadeAndDeletedOnTheWorker) {
  const std::size_t before = live(worker());
  GlBuffer b(worker(), 4096);
  const unsigned name = b.name();
  ASSERT_NE(name, 0u);
  EXPECT_EQ(b.size(), 4096u);
  EXPECT_TRUE(is_buffer(worker(), name));
  GLint64 size = worker().run([name] {
    GLint64 s = 0;
    glGetNamedBufferParameteri64v(name, GL_BUFFER_SIZE, &s);
    return s;
  });
  EXPECT_EQ(size, 4096);
  GLint immutable = worker().run([name] {
    GLint v = 0;
    glGetNamedBufferParameteriv(name, GL_BUFFER_IMMUTABLE_STORAGE, &v);
    return v;
  });
  EXPECT_EQ(immutable, GL_TRUE);
  EXPECT_EQ(live(worker()), before + 1);
  b.reset();  // the delete is queued; the next call runs after it
  EXPECT_FALSE(is_buffer(worker(), name));
  EXPECT_EQ(live(worker()), before);
}

TEST_F(GlWorkerFixture, BufferBadArgumentsAreRefused) {
  EXPECT_THROW(GlBuffer(worker(), 0), UsageError);
  GlBuffer b(worker(), 16);
  std::vector<std::byte> big(17);
  EXPECT_THROW(b.write(0, big), UsageError);
  EXPECT_THROW(b.read(8, std::span(big).first(9)), UsageError);
  EXPECT_THROW(GlBuffer{}.write(0, big), UsageError);
  auto data = pattern(16, 1);
  b.write(0, data);
  std::vector<std::byte> back(16);
  b.read(0, back);
  EXPECT_EQ(back, data);
}

TEST_F(GlWorkerFixture, BuffersDestroyedOnManyThreadsAreAllDeleted) {
  const std::size_t before = live(worker());
  std::vector<GlBuffer> buffers;
  std::vector<unsigned> names;
  for (int i = 0; i < 64; ++i) {
    buffers.emplace_back(worker(), 256);
    names.push_back(buffers.back().name());
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (std::size_t i = t; i < buffers.size(); i += 4) buffers[i].reset();
    });
  for (auto& th : threads) th.join();
  worker().run([] {});
  EXPECT_EQ(live(worker()), before);
  for (unsigned n : names) EXPECT_FALSE(is_buffer(worker(), n)) << n;
}

TEST_F(GlWorkerFixture, HostFallbackMapsWritesUnmapsAndTheBytesReachTheBuffer) {
  GlBuffer b(worker(), 64 * 1024 + 3);
  CudaGlBuffer cb(worker(), b, {.access = CudaGlAccess::WriteDiscard, .backend = MapBackend::Host});
  EXPECT_EQ(cb.memory(), MemoryKind::Host);
  EXPECT_FALSE(cb.fallback_reason().empty());
  auto data = pattern(b.size(), 3);
  {
    Mapping m = cb.map();
    ASSERT_TRUE(m);
    EXPECT_TRUE(cb.mapped());
    EXPECT_EQ(m.count(), 1u);
    EXPECT_EQ(m.memory(), MemoryKind::Host);
    EXPECT_EQ(m.size(), b.size());
    EXPECT_EQ(m[0].gl_buffer, b.name());
    ASSERT_NE(m.data(), nullptr);
    std::memcpy(m.data(), data.data(), data.size());  // the CPU producer writes here
    EXPECT_THROW(cb.map(), UsageError);                // already mapped
  }
  EXPECT_FALSE(cb.mapped());
  std::vector<std::byte> back(b.size());
  worker().run([&] {
    glGetNamedBufferSubData(b.name(), 0, static_cast<GLsizeiptr>(back.size()), back.data());
  });
  EXPECT_EQ(back, data);

  // Read access sees what is there.
  CudaGlBuffer reader(worker(), b, {.access = CudaGlAccess::ReadOnly, .backend = MapBackend::Host});
  Mapping r = reader.map();
  EXPECT_EQ(std::memcmp(r.data(), data.data(), data.size()), 0);
  r.unmap();
  EXPECT_FALSE(r);
  r.unmap();  // twice is fine
}

TEST_F(GlWorkerFixture, MapAllMapsTwoPlanesInOneHopAndMakesAFrame) {
  const FrameLayout layout = FrameLayout::packed(PixelFormat::NV12, 639, 359);
  GlBuffer luma(worker(), layout.buffer_bytes(0)), chroma(worker(), layout.buffer_bytes(1));
  CudaGlBuffer l(worker(), luma, {.access = CudaGlAccess::WriteDiscard, .backend = MapBackend::Host});
  CudaGlBuffer c(worker(), chroma, {.access = CudaGlAccess::WriteDiscard, .backend = MapBackend::Host});
  auto m = std::make_shared<Mapping>(CudaGlBuffer::map_all({&l, &c}));
  ASSERT_EQ(m->count(), 2u);
  EXPECT_TRUE(l.mapped());
  EXPECT_TRUE(c.mapped());
  Frame f = make_frame(m, layout);
  EXPECT_EQ(f.memory, MemoryKind::Host);
  EXPECT_EQ(f.width, 639u);
  EXPECT_EQ(f.luma().data, (*m)[0].data);
  EXPECT_EQ(f.chroma().data, (*m)[1].data);
  EXPECT_EQ(f.luma().pitch, 639u);
  EXPECT_EQ(f.chroma().pitch, 640u);
  EXPECT_EQ(f.chroma().width, 320u);
  EXPECT_EQ(f.chroma().height, 180u);
  EXPECT_EQ(f.chroma().components, 2u);
  std::memset(f.planes[0].data, 0x10, layout.buffer_bytes(0));
  std::memset(f.planes[1].data, 0x80, layout.buffer_bytes(1));
  m.reset();  // the frame holds the mapping now
  EXPECT_TRUE(l.mapped());
  f = Frame{};  // last holder: unmapped
  EXPECT_FALSE(l.mapped());
  EXPECT_FALSE(c.mapped());
  std::vector<std::byte> back(layout.buffer_bytes(1));
  chroma.read(0, back);
  for (auto b : back) ASSERT_EQ(b, std::byte{0x80});

  EXPECT_THROW(CudaGlBuffer::map_all({&l, &l}), UsageError);
  EXPECT_THROW(CudaGlBuffer::map_all({&l, nullptr}), UsageError);
  EXPECT_THROW(CudaGlBuffer::map_all(std::span<CudaGlBuffer* const>{}), UsageError);
  EXPECT_FALSE(l.mapped());  // refused calls map nothing
}

TEST_F(GlWorkerFixture, MakeFrameRefusesLayoutsThatDoNotFit) {
  GlBuffer luma(worker(), 100 * 10), chroma(worker(), 100 * 5);
  CudaGlBuffer l(worker(), luma, {.backend = MapBackend::Host});
  CudaGlBuffer c(worker(), chroma, {.backend = MapBackend::Host});
  auto m = std::make_shared<Mapping>(CudaGlBuffer::map_all({&l, &c}));
  EXPECT_NO_THROW(make_frame(m, FrameLayout::packed(PixelFormat::NV12, 100, 10)));
  auto expect_refused = [&](FrameLayout layout, const char* word) {
    try {
      make_frame(m, layout);
      ADD_FAILURE() << "accepted a layout that should fail on " << word;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  expect_refused(FrameLayout::packed(PixelFormat::P010, 100, 10), "luma plane");
  expect_refused(FrameLayout::packed(PixelFormat::NV12, 100, 11), "luma plane");
  FrameLayout narrow = FrameLayout::packed(PixelFormat::NV12, 100, 10);
  narrow.planes[0].pitch = 99;
  expect_refused(narrow, "planes[0] (luma).pitch: pitch 99 is below the packed row of 100 bytes");
  FrameLayout zero = FrameLayout::packed(PixelFormat::NV12, 0, 10);
  expect_refused(zero, "width");
  FrameLayout third = FrameLayout::packed(PixelFormat::NV12, 100, 10);
  third.planes[1].buffer = 2;
  expect_refused(third, "chroma plane's buffer 2 is not in the mapping (2 ranges)");
  FrameLayout shared = FrameLayout::packed(PixelFormat::NV12, 50, 10);  // both planes in range 0: 500 + 250 bytes
  shared.planes[1] = {50, 500, 0};
  EXPECT_EQ(make_frame(m, shared).chroma().data, static_cast<std::byte*>((*m)[0].data) + 500);
  shared.planes[1].offset = 800;
  expect_refused(shared, "the chroma plane (offset 800, 250 bytes) does not fit mapped range 0 of 1000 bytes");
  EXPECT_THROW(make_frame(nullptr, FrameLayout::packed(PixelFormat::NV12, 100, 10)), UsageError);
}

// One largest frame dimension: make_frame takes a frame kMaxFrameDimension wide
// and DLPack exports it (make_frame once took 65536 that export then refused);
// one more is refused with the message every other path gives.
TEST_F(GlWorkerFixture, MakeFrameAtTheLargestDimensionExportsThroughDLPack) {
  const FrameLayout layout = FrameLayout::packed(PixelFormat::NV12, kMaxFrameDimension, 2);
  GlBuffer luma(worker(), layout.buffer_bytes(0)), chroma(worker(), layout.buffer_bytes(1));
  CudaGlBuffer l(worker(), luma, {.backend = MapBackend::Host});
  CudaGlBuffer c(worker(), chroma, {.backend = MapBackend::Host});
  auto m = std::make_shared<Mapping>(CudaGlBuffer::map_all({&l, &c}));
  const Frame f = make_frame(m, layout);
  for (FramePart part : {FramePart::Luma, FramePart::Chroma}) {
    DLManagedTensor* t = export_dlpack(f, part);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->dl_tensor.shape[1], std::int64_t(part == FramePart::Luma ? kMaxFrameDimension : kMaxFrameDimension / 2));
    EXPECT_EQ(t->dl_tensor.data, f.planes[part == FramePart::Luma ? 0 : 1].data);
    t->deleter(t);
  }
  try {
    make_frame(m, FrameLayout::packed(PixelFormat::NV12, kMaxFrameDimension + 1, 1));
    ADD_FAILURE() << "make_frame took a frame wider than kMaxFrameDimension";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(std::string(e.what()), "width: " + dimension_problem("width", kMaxFrameDimension + 1));
  }
}

TEST_F(GlWorkerFixture, AutoBackendSaysWhichMemoryItUses) {
  GlBuffer b(worker(), 1024);
  CudaGlBuffer cb(worker(), b);
  if (cuda::driver().usable()) {
    EXPECT_EQ(cb.memory(), MemoryKind::Cuda);
    EXPECT_TRUE(cb.fallback_reason().empty());
  } else {
    EXPECT_EQ(cb.memory(), MemoryKind::Host);
    EXPECT_EQ(cb.fallback_reason(), cuda::driver().describe());
    EXPECT_THROW(CudaGlBuffer(worker(), b, {.backend = MapBackend::Cuda}), Error);
  }
  Mapping m = cb.map();
  EXPECT_EQ(m.memory(), cb.memory());
}

TEST_F(GlWorkerFixture, BufferFromAnotherWorkerIsRefused) {
  GlWorker other;
  GlBuffer b(other, 64);
  EXPECT_THROW(CudaGlBuffer(worker(), b, {.backend = MapBackend::Host}), UsageError);
  EXPECT_THROW(CudaGlBuffer(worker(), GlBuffer{}), UsageError);
}

TEST_F(GlWorkerFixture, ShutdownReleasesWhatIsStillAliveAndLaterDestructionIsHarmless) {
  auto b = std::make_unique<GlBuffer>(worker(), 1024);
  auto cb = std::make_unique<CudaGlBuffer>(worker(), *b, CudaGlOptions{.backend = MapBackend::Host});
  auto m = std::make_unique<Mapping>(cb->map());
  std::shared_ptr<detail::WorkerCore> core = worker().core();
  EXPECT_EQ(testing::live_resources(*core), 2u);
  destroy_worker();  // unmaps, unregisters, deletes the buffer, destroys the context
  EXPECT_EQ(testing::live_resources(*core), 0u);
  EXPECT_FALSE(cb->mapped());
  EXPECT_NO_THROW(m->unmap());
  m.reset();
  cb.reset();
  b.reset();
}

TEST_F(GlWorkerFixture, BuffersDestroyedDuringShutdownAreAllReleasedOnce) {
  std::vector<std::unique_ptr<GlBuffer>> buffers;
  std::vector<std::unique_ptr<CudaGlBuffer>> mapped;
  std::vector<Mapping> mappings;
  for (int i = 0; i < 120; ++i) {
    buffers.push_back(std::make_unique<GlBuffer>(worker(), 128));
    if (i % 3 == 0) {
      mapped.push_back(
          std::make_unique<CudaGlBuffer>(worker(), *buffers.back(), CudaGlOptions{.backend = MapBackend::Host}));
      mappings.push_back(mapped.back()->map());
    }
  }
  std::shared_ptr<detail::WorkerCore> core = worker().core();
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (std::size_t i = t; i < buffers.size(); i += 3) buffers[i].reset();
      for (std::size_t i = t; i < mapped.size(); i += 3) {
        mappings[i] = Mapping{};
        mapped[i].reset();
      }
    });
  }
  go = true;
  destroy_worker();  // races the destruction above: each release runs exactly once, on the worker
  for (auto& th : threads) th.join();
  EXPECT_EQ(testing::live_resources(*core), 0u);
}

TEST_F(GlWorkerFixture, ManyThreadsMapAndUnmapTheirOwnBuffers) {
  constexpr int kThreads = 4, kRounds = 200;
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      GlBuffer b(worker(), 512);
      CudaGlBuffer cb(worker(), b, {.backend = MapBackend::Host});
      for (int i = 0; i < kRounds; ++i) {
        Mapping m = cb.map();
        static_cast<unsigned char*>(m.data())[0] = static_cast<unsigned char>(t * 50 + i);
      }
      std::vector<std::byte> one(1);
      b.read(0, one);
      if (one[0] != std::byte(static_cast<unsigned char>(t * 50 + kRounds - 1))) bad++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace handoff
