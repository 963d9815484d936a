// memory:CUDAMemory on a real GPU (label cuda; scripts/gpu-check runs it):
// nvcodec's cudaupload into handoffsink. The sink offers the viewer's primary
// context upstream, so cudaupload allocates in it and the frames go device to
// device: no "copied through system memory" notice, and the same pixels as
// the same stream in system memory. Skips, saying why, without an NVIDIA GPU.
#include <gtest/gtest.h>

#include <handoff/cuda.hpp>

#include "cuda_gpu.hpp"
#include "gst_fixture.hpp"

namespace handoff::gst::test {
namespace {

class GstCudaGpu : public GstTest {
 protected:
  void SetUp() override {
    GstTest::SetUp();
    HANDOFF_REQUIRE_CUDA_GPU(cuda::driver());
    GstElementFactory* f = gst_element_factory_find("cudaupload");
    if (!f) GTEST_SKIP() << "no cudaupload element (gstreamer1.0-plugins-bad's nvcodec, with NVENC or NVDEC libraries)";
    gst_object_unref(f);
  }
};

TEST_F(GstCudaGpu, CudaUploadedFramesAreShownWithoutACopyThroughSystemMemory) {
  const std::string head = "videotestsrc num-buffers=3 pattern=smpte ! video/x-raw,format=NV12,width=320,height=240";
  const std::string tail = " ! handoffsink name=sink headless=true sync=false";
  Rgba want;
  {
    Pipeline sys(head + tail);
    ASSERT_NE(sys.set_state(GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
    ASSERT_EQ(sys.wait_for().type, GST_MESSAGE_EOS);
    want = snapshot(sys.element("sink").get());
  }
  Pipeline gpu(head + " ! cudaupload ! video/x-raw(memory:CUDAMemory),format=NV12" + tail);
  ASSERT_NE(gpu.set_state(GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  const BusMessage end = gpu.wait_for();
  ASSERT_EQ(end.type, GST_MESSAGE_EOS) << end.text << " / " << end.debug;
  const Rgba got = snapshot(gpu.element("sink").get());
  ASSERT_EQ(got.pixels.size(), want.pixels.size());
  for (std::size_t i = 0; i < got.pixels.size(); ++i) ASSERT_NEAR(int(got.pixels[i]), int(want.pixels[i]), 1) << i;
  gpu.drain();
  EXPECT_EQ(gpu.find(GST_MESSAGE_INFO, "copied through system memory"), nullptr)
      << "cudaupload took the sink's context: device to device";
}

}  // namespace
}  // namespace handoff::gst::test
