// memory:CUDAMemory into handoffsink against the fake CUDA driver. GStreamer's
// CUDA library loads "libcuda.so.1" by name: this tier's environment puts a
// link of that name to the fake first on LD_LIBRARY_PATH, and
// HANDOFF_CUDA_DRIVER names the same file, so GStreamer and handoff share one
// fake driver. (nvcodec's cudaupload cannot be used here: GStreamer 1.22
// registers it only where NVENC or NVDEC libraries load.) The test plays a
// CUDA producer: buffers from a GstCudaBufferPool, written through their
// device mapping, pushed by appsrc.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <handoff/media/color.hpp>

#include "fake_cuda_control.hpp"
#include "gst_cuda_abi.hpp"
#include "gst_fixture.hpp"
#include "wait_support.hpp"

namespace handoff::gst::test {
namespace {

using handoff::test::wait_until;

class GstFakeCuda : public GstTest {
 protected:
  void SetUp() override {
    GstTest::SetUp();
    if (!gst_cuda_load_library()) FAIL() << "GStreamer's CUDA library did not load the fake driver as libcuda.so.1";
    gst_cuda_memory_init_once();
  }
  handoff::test::FakeCuda fake_;
};

// The CUDA context the sink offers upstream (a "gst.cuda.context" query from appsrc's pad).
GstCudaContext* offered_context(GstElement* appsrc) {
  GstPad* pad = gst_element_get_static_pad(appsrc, "src");
  GstQuery* q = gst_query_new_context(abi::kCudaContextType);
  GstCudaContext* ctx = nullptr;
  if (gst_pad_peer_query(pad, q)) {
    GstContext* c = nullptr;
    gst_query_parse_context(q, &c);
    if (c) gst_structure_get(gst_context_get_structure(c), abi::kCudaContextType, gst_cuda_context_get_type(), &ctx,
                             nullptr);
  }
  gst_query_unref(q);
  gst_object_unref(pad);
  return ctx;  // transfer: full, or null
}

// A CUDA buffer of `info` from a pool of `ctx`, each row of each plane the
// bytes `row_of(plane)` gives, written at its device mapping's pointers
// through the fake (device memory is not host memory: a host write there
// faults), as a CUDA kernel would.
template <typename RowOf>
GstBuffer* cuda_buffer(const handoff::test::FakeCuda& fake, GstCudaContext* ctx, const GstVideoInfo& info,
                       RowOf row_of) {
  GstBufferPool* pool = gst_cuda_buffer_pool_new(ctx);
  GstStructure* config = gst_buffer_pool_get_config(pool);
  GstCaps* caps = gst_video_info_to_caps(&info);
  gst_buffer_pool_config_set_params(config, caps, guint(GST_VIDEO_INFO_SIZE(&info)), 1, 0);
  gst_caps_unref(caps);
  GstBuffer* buf = nullptr;
  if (gst_buffer_pool_set_config(pool, config) && gst_buffer_pool_set_active(pool, TRUE))
    gst_buffer_pool_acquire_buffer(pool, &buf, nullptr);
  if (buf) {
    GstVideoFrame vf;
    if (gst_video_frame_map(&vf, &info, buf, GstMapFlags(GST_MAP_WRITE | abi::kMapCuda))) {
      bool written = true;
      for (guint plane = 0; plane < GST_VIDEO_INFO_N_PLANES(&info); ++plane) {
        const std::vector<std::uint8_t> row = row_of(int(plane));
        const auto base = reinterpret_cast<unsigned long long>(GST_VIDEO_FRAME_PLANE_DATA(&vf, plane));
        const unsigned stride = unsigned(GST_VIDEO_FRAME_PLANE_STRIDE(&vf, plane));
        for (int r = 0; r < GST_VIDEO_FRAME_COMP_HEIGHT(&vf, plane); ++r)
          written &= fake.write_device(base + static_cast<unsigned long long>(r) * stride, row.data(), row.size()) == 0;
      }
      EXPECT_TRUE(written) << "the CUDA mapping's pointers are the fake's device memory";
      gst_video_frame_unmap(&vf);
    }
  }
  gst_buffer_pool_set_active(pool, FALSE);  // the buffer outlives the pool's activity; it returns when freed
  gst_object_unref(pool);
  return buf;
}

// An NV12 buffer: luma `y`, chroma (cb, cr).
GstBuffer* cuda_buffer(const handoff::test::FakeCuda& fake, GstCudaContext* ctx, const GstVideoInfo& info, int y,
                       int cb, int cr) {
  const std::size_t w = std::size_t(GST_VIDEO_INFO_WIDTH(&info));
  return cuda_buffer(fake, ctx, info, [&](int plane) {
    if (plane == 0) return std::vector<std::uint8_t>(w, std::uint8_t(y));
    std::vector<std::uint8_t> uv(2 * ((w + 1) / 2));
    for (std::size_t x = 0; x < uv.size(); x += 2) {
      uv[x] = std::uint8_t(cb);
      uv[x + 1] = std::uint8_t(cr);
    }
    return uv;
  });
}

struct CudaSinkPipeline {
  explicit CudaSinkPipeline(const char* format = "NV12")
      : p(std::string("appsrc name=src format=time caps=video/x-raw(memory:CUDAMemory),format=") + format +
          ",width=64,height=48,framerate=0/1 ! handoffsink name=sink headless=true sync=false") {
    gst_video_info_set_format(&info, gst_video_format_from_string(format), 64, 48);
    EXPECT_NE(p.set_state(GST_STATE_READY), GST_STATE_CHANGE_FAILURE);
    src = p.element("src");
    sink = p.element("sink");
  }
  // Pushes `buf` and waits until the viewer has it; the colour it then shows at (32, 24).
  const std::uint8_t* show(GstBuffer* buf, Rgba& img) {
    if (p.start() == GST_STATE_CHANGE_FAILURE) ADD_FAILURE() << "the pipeline did not start";
    EXPECT_EQ(gst_app_src_push_buffer(GST_APP_SRC(src.get()), buf), GST_FLOW_OK);
    auto v = testing::sink_viewer(sink.get());
    EXPECT_TRUE(v && wait_until([&] { return v->stats().submitted >= 1; }, "the CUDA buffer reaching the viewer"));
    img = snapshot(sink.get());
    return img.pixels.empty() ? nullptr : img.at(32, 24);
  }
  Pipeline p;
  GstVideoInfo info;
  ElementPtr src, sink;
};

void expect_colour(const std::uint8_t* px, int y, int cb, int cr) {
  ASSERT_NE(px, nullptr);
  const auto want = media::yuv_to_rgb8(y, cb, cr, ColorMatrix::BT601, ColorRange::Limited, PixelFormat::NV12);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(int(px[k]), int(want[std::size_t(k)]), 1) << "channel " << k;
}

TEST_F(GstFakeCuda, TheSinkOffersTheViewersContextAndItsMemoryGoesDeviceToDevice) {
  CudaSinkPipeline s;
  GstCudaContext* ctx = offered_context(s.src.get());
  ASSERT_NE(ctx, nullptr) << "handoffsink answers the gst.cuda.context query";
  const gpointer primary = gst_cuda_context_get_handle(ctx);
  EXPECT_NE(primary, nullptr);
  EXPECT_GE(fake_.primary_context_refs(0), 1) << "the offered context is device 0's primary context, retained";
  GstBuffer* buf = cuda_buffer(fake_, ctx, s.info, 150, 90, 170);
  ASSERT_NE(buf, nullptr);
  const int async = fake_.call_count("cuMemcpy2DAsync"), sync = fake_.call_count("cuMemcpy2D");
  Rgba img;
  expect_colour(s.show(buf, img), 150, 90, 170);
  EXPECT_EQ(fake_.call_count("cuMemcpy2DAsync"), async + 2) << "one copy per plane, on the viewer's stream";
  EXPECT_EQ(fake_.call_count("cuMemcpy2D"), sync) << "no download into system memory on the way";
  s.p.drain();
  EXPECT_EQ(s.p.find(GST_MESSAGE_INFO, "copied through system memory"), nullptr);
  gst_object_unref(ctx);
}

// Packed RGB in CUDA memory (RGBA, BGRx): one plane, one device-to-device
// copy, the sample's own codes on screen.
TEST_F(GstFakeCuda, PackedRgbCudaMemoryGoesDeviceToDeviceToo) {
  for (const char* format : {"RGBA", "BGRx"}) {
    SCOPED_TRACE(format);
    CudaSinkPipeline s(format);
    GstCudaContext* ctx = offered_context(s.src.get());
    ASSERT_NE(ctx, nullptr);
    const bool bgr = format[0] == 'B';
    GstBuffer* buf = cuda_buffer(fake_, ctx, s.info, [&](int) {
      std::vector<std::uint8_t> row;
      for (int x = 0; x < 64; ++x) {
        const std::uint8_t px[4] = {std::uint8_t(bgr ? 30 : 200), 120, std::uint8_t(bgr ? 200 : 30), 255};
        row.insert(row.end(), px, px + 4);
      }
      return row;
    });
    ASSERT_NE(buf, nullptr);
    const int async = fake_.call_count("cuMemcpy2DAsync"), sync = fake_.call_count("cuMemcpy2D");
    Rgba img;
    const std::uint8_t* px = s.show(buf, img);
    ASSERT_NE(px, nullptr);
    EXPECT_EQ(int(px[0]), 200);
    EXPECT_EQ(int(px[1]), 120);
    EXPECT_EQ(int(px[2]), 30);
    EXPECT_EQ(fake_.call_count("cuMemcpy2DAsync"), async + 1) << "one plane, one copy on the viewer's stream";
    EXPECT_EQ(fake_.call_count("cuMemcpy2D"), sync) << "no download into system memory on the way";
    s.p.drain();
    gst_object_unref(ctx);
  }
}

TEST_F(GstFakeCuda, MemoryOfAnotherContextIsCopiedThroughSystemMemoryAndSaysSo) {
  CudaSinkPipeline s;
  GstCudaContext* own = gst_cuda_context_new(0);  // a context of its own (cuCtxCreate), as decoders make
  ASSERT_NE(own, nullptr);
  GstBuffer* buf = cuda_buffer(fake_, own, s.info, 60, 200, 100);
  ASSERT_NE(buf, nullptr);
  const int sync = fake_.call_count("cuMemcpy2D");
  Rgba img;
  expect_colour(s.show(buf, img), 60, 200, 100);
  EXPECT_GT(fake_.call_count("cuMemcpy2D"), sync) << "GStreamer's CUDA memory downloaded itself";
  s.p.drain();
  EXPECT_NE(s.p.find(GST_MESSAGE_INFO, "memory:CUDAMemory buffers are copied through system memory"), nullptr);
  gst_object_unref(own);
}

// cuda-device naming a device the driver does not have: a warning on the bus
// naming it (it was a debug line only), the sink showing system memory as before.
TEST_F(GstFakeCuda, ACudaDeviceThatIsNotThereIsAWarning) {
  Pipeline p("videotestsrc num-buffers=2 ! video/x-raw,format=NV12,width=64,height=48 ! "
             "handoffsink name=sink headless=true sync=false cuda-device=7");
  ASSERT_NE(p.set_state(GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  EXPECT_EQ(p.wait_for().type, GST_MESSAGE_EOS);
  const BusMessage* m = p.find(GST_MESSAGE_WARNING, "cuda-device=7 gives no CUDA context");
  ASSERT_NE(m, nullptr);
  EXPECT_NE(m->text.find("CUDA memory is not offered"), std::string::npos) << m->text;
  Pipeline fine("videotestsrc num-buffers=1 ! video/x-raw,format=NV12,width=64,height=48 ! "
                "handoffsink headless=true sync=false");
  ASSERT_NE(fine.set_state(GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  EXPECT_EQ(fine.wait_for().type, GST_MESSAGE_EOS);
  EXPECT_EQ(fine.find(GST_MESSAGE_WARNING, "cuda-device"), nullptr) << "device 0 is there";
}

}  // namespace
}  // namespace handoff::gst::test
