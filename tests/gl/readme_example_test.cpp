// The C++ example of README.md ("The interop library"), compiled and run as a
// test so the README cannot drift from the API. Keep the two in step.
#include <handoff/cuda.hpp>
#include <handoff/cuda_gl_buffer.hpp>
#include <handoff/gl_buffer.hpp>
#include <handoff/gl_worker.hpp>

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace {

// --- README example begins ---
// Produce one 64x48 NV12 frame into two GL pixel-buffer objects, from any thread.
handoff::Frame produce_one_frame(handoff::GlWorker& worker, handoff::CudaGlBuffer& luma,
                                 handoff::CudaGlBuffer& chroma) {
  using namespace handoff;
  // One worker hop, one cuGraphicsMapResources call for both planes.
  auto mapping = std::make_shared<Mapping>(CudaGlBuffer::map_all({&luma, &chroma}));
  Frame frame = make_frame(mapping, FrameLayout::packed(PixelFormat::NV12, 64, 48));
  if (frame.memory == MemoryKind::Host) {
    // No usable CUDA here: the same buffers are mapped into host memory.
    std::memset(frame.planes[0].data, 235, frame.planes[0].pitch * frame.height);
    std::memset(frame.planes[1].data, 128, frame.planes[1].pitch * chroma_height(frame.height));
  } else {
    // frame.planes[i].data are CUDA device pointers in frame.cuda_context:
    // launch a kernel writing them, or hand them on through DLPack.
  }
  return frame;  // unmapped (one hop) when the last copy of `frame` goes
}
// --- README example ends ---

TEST(ReadmeExample, ProducesAFrameThroughTheWorker) {
  handoff::GlWorker worker;  // headless EGL context on its own thread
  const auto layout = handoff::FrameLayout::packed(handoff::PixelFormat::NV12, 64, 48);
  // The host backend, so the bytes can be checked on any machine (the example
  // itself works with either backend).
  handoff::CudaGlOptions host;
  host.backend = handoff::MapBackend::Host;
  handoff::CudaGlBuffer luma(worker, handoff::GlBuffer(worker, layout.buffer_bytes(0)), host);
  handoff::CudaGlBuffer chroma(worker, handoff::GlBuffer(worker, layout.buffer_bytes(1)), host);
  {
    handoff::Frame f = produce_one_frame(worker, luma, chroma);
    EXPECT_EQ(f.width, 64u);
    EXPECT_EQ(f.planes[1].components, 2u);
    ASSERT_EQ(f.memory, handoff::MemoryKind::Host);
  }
  // The bytes reached the GL buffers.
  std::vector<std::byte> y(layout.buffer_bytes(0)), uv(layout.buffer_bytes(1));
  luma.buffer().read(0, y);
  chroma.buffer().read(0, uv);
  EXPECT_EQ(y.front(), std::byte{235});
  EXPECT_EQ(y.back(), std::byte{235});
  EXPECT_EQ(uv.back(), std::byte{128});
}

}  // namespace
