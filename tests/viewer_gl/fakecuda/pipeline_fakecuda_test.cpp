// The CUDA branch of the frame path, against the fake CUDA driver (host
// memory behind "device" pointers): the ring's buffers are registered with
// CUDA and mapped per frame, frames are copied in (copy_frame: cuMemcpy2DAsync) (the fake
// cannot run the scene kernel, so the scene takes the staging path), and every
// registration and mapping is gone when the pipeline is.
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>

#include <handoff/gl_context.hpp>
#include <handoff/media/scene.hpp>

#include "debug_messages.hpp"
#include "fake_cuda_control.hpp"
#include "frame_pipeline.hpp"
#include "frame_renderer.hpp"
#include "interop_testing.hpp"
#include "shared_contexts.hpp"

namespace handoff::view::test {
namespace {

TEST(PipelineFakeCuda, FramesGoThroughCudaMappedBuffers) {
  handoff::test::FakeCuda fake;
  ASSERT_TRUE(fake.ok()) << fake.error();
  fake.reset();
  SharedContexts c = make_headless_contexts(true);
  c.render->make_current();
  load_gl(*c.render);
  handoff::test::DebugMessages errors;
  std::function<void(const GlDebugMessage&)> sink = errors.gl_sink();
  enable_gl_debug_output(&sink);
  {
    GlWorkerOptions wo;
    wo.context_factory = std::move(c.worker_factory);
    wo.on_debug_message = sink;
    GlWorker worker(std::move(wo));
    ASSERT_TRUE(worker.info().device_uuid) << "GL reports no GL_DEVICE_UUID_EXT";
    ASSERT_EQ(fake.set_uuid(to_string(*worker.info().device_uuid).c_str()), 0);  // the fake is the GL device
    media::SceneOptions so;
    so.width = 64;
    so.height = 36;
    {
      FramePipeline p(worker, media::make_scene_source(so), {}, true, so);
      EXPECT_NE(p.memory_text().find("CUDA"), std::string::npos) << p.memory_text();
      EXPECT_EQ(fake.live_registrations(), 3);
      FrameRenderer r;
      media::HostFrame ref(so.format, so.width, so.height);
      std::vector<std::uint8_t> luma(std::size_t(so.width) * so.height);
      for (std::int64_t i = 0; i < 6; ++i) {
        FrameSlot* s = p.next(true);
        ASSERT_NE(s, nullptr);
        ASSERT_EQ(s->index, i);
        r.upload(p.frame_of(*s));
        p.release(s);
        media::render_scene_cpu(scene_state(so, i), ref.target());
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glGetTextureImage(r.luma_texture(), 0, GL_RED, GL_UNSIGNED_BYTE, GLsizei(luma.size()), luma.data());
        for (std::uint32_t y = 0; y < so.height; ++y)
          ASSERT_EQ(std::memcmp(&luma[std::size_t(y) * so.width], ref.luma() + y * ref.luma_pitch(), so.width), 0)
              << "frame " << i << " row " << y;
      }
      EXPECT_GE(fake.call_count("cuGraphicsMapResources"), 6);
      EXPECT_GE(fake.call_count("cuMemcpy2DAsync"), 12) << "luma and chroma of each frame";
      EXPECT_GE(fake.call_count("cuStreamSynchronize"), 6) << "each frame's copy waited for";
    }
    EXPECT_EQ(fake.live_mappings(), 0);
    worker.shutdown();
    EXPECT_EQ(fake.live_registrations(), 0);
  }
  disable_gl_debug_output();
  c.render->done_current();
  errors.fail_on_any("KHR_debug error");
}

}  // namespace
}  // namespace handoff::view::test
