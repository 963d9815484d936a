// GL state the viewer touches while it reads pixels back (the pixel
// inspector, the window screenshot) is left as the application had it, as the
// ImGui backend does for every state it changes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/media/color.hpp>

#include "frame_renderer.hpp"
#include "frame_target.hpp"
#include "gl_test_context.hpp"
#include "pixel_probe.hpp"
#include "test_frames.hpp"

namespace handoff::view::test {
namespace {

using GlState = GlTest;

GLint get_int(GLenum name) {
  GLint v = -1;
  glGetIntegerv(name, &v);
  return v;
}

TEST_F(GlState, PixelProbeRestoresPackAlignmentAndReadsTheCodes) {
  TestFrame tf(PixelFormat::P010, 6, 4);
  tf.set_y(3, 2, 700);
  tf.set_uv(1, 1, 300, 900);
  FrameRenderer r;
  const Colorimetry c{ColorMatrix::BT2020, ColorRange::Limited, ChromaSiting::Left};
  r.upload(tf.frame(c));
  glPixelStorei(GL_PACK_ALIGNMENT, 8);
  const PixelProbe p = probe_pixel(r, c, std::nullopt, 3.5, 2.5);
  EXPECT_EQ(get_int(GL_PACK_ALIGNMENT), 8);
  ASSERT_TRUE(p.valid);
  EXPECT_EQ(p.code_y, 700);
  EXPECT_EQ(p.code_cb, 300);
  EXPECT_EQ(p.code_cr, 900);
  EXPECT_EQ(p.rgb, media::yuv_to_rgb8(700, 300, 900, c.matrix, c.range, PixelFormat::P010));
}

// The viewer's own size limit is its GL's GL_MAX_TEXTURE_SIZE, named in the
// message; past the library's kMaxFrameDimension the library's message comes
// first. Refused before any GL call (no KHR_debug error).
TEST_F(GlState, FramesBeyondTheGlTextureLimitAreRefusedNamingIt) {
  const std::uint32_t max = gl_max_texture_size();
  ASSERT_GT(max, 0u);
  FrameRenderer r;
  auto message = [&](auto&& f) -> std::string {
    try {
      f();
    } catch (const UsageError& e) {
      return e.what();
    }
    return "accepted";
  };
  if (max < kMaxFrameDimension) {
    EXPECT_EQ(message([&] { r.configure(PixelFormat::NV12, max + 1, 2); }),
              "FrameRenderer::configure: " + std::to_string(max + 1) + "x2 exceeds this GL's GL_MAX_TEXTURE_SIZE of " +
                  std::to_string(max));
    FrameTarget t;
    EXPECT_THAT(message([&] { t.resize(2, int(max) + 1); }), ::testing::HasSubstr("GL_MAX_TEXTURE_SIZE"));
  }
  EXPECT_EQ(message([&] { r.configure(PixelFormat::NV12, kMaxFrameDimension + 1, 2); }),
            "width: " + dimension_problem("width", kMaxFrameDimension + 1));
  EXPECT_EQ(message([&] { r.use_external(PixelFormat::NV12, 2, kMaxFrameDimension + 1, 1, 2); }),
            "height: " + dimension_problem("height", kMaxFrameDimension + 1));
  EXPECT_NO_THROW(r.configure(PixelFormat::NV12, std::min(max, kMaxFrameDimension), 2));
}

// upload() checks a frame with the library's validate() (InvalidFrame naming
// the field) and takes Host or GlBuffer memory only, on either colour path; a
// refused frame leaves the one shown as it was.
TEST_F(GlState, UploadRefusesBadFramesNamingTheField) {
  for (ViewerConvert convert : {ViewerConvert::Gpu, ViewerConvert::Cpu}) {
    FrameRenderer r(convert);
    TestFrame tf(PixelFormat::P010, 6, 4);
    tf.set_y(1, 1, 700);
    const Frame good = tf.frame(Colorimetry{});
    r.upload(good);
    const auto field_of = [&](const Frame& f) -> std::string {
      try {
        r.upload(f);
      } catch (const InvalidFrame& e) {
        return e.field();
      }
      return "accepted";
    };
    Frame f = good;
    f.planes[1].pitch = 8;
    EXPECT_EQ(field_of(f), "planes[1] (chroma).pitch");
    f = good;
    f.planes[0].pitch = 13;
    EXPECT_EQ(field_of(f), "planes[0] (luma).pitch") << "not a whole number of 2-byte samples";
    f = good;
    f.planes[0].data = nullptr;
    EXPECT_EQ(field_of(f), "planes[0] (luma).data");
    f = good;
    f.planes[1].width = 2;
    EXPECT_EQ(field_of(f), "planes[1] (chroma).shape");
    f = good;
    f.memory = MemoryKind::Cuda;
    f.device = 0;
    try {
      r.upload(f);
      ADD_FAILURE() << "a CUDA frame was accepted";
    } catch (const UsageError& e) {
      EXPECT_STREQ(e.what(), "FrameRenderer::upload: frame memory must be Host or GlBuffer");
    }
    ASSERT_TRUE(r.has_frame());
    EXPECT_EQ(r.width(), 6u);
    std::uint16_t texel = 0;
    glGetTextureSubImage(r.luma_texture(), 0, 1, 1, 0, 1, 1, 1, GL_RED, GL_UNSIGNED_SHORT, 2, &texel);
    EXPECT_EQ(texel, 700 << 6) << "the frame shown before the refused ones";
  }
}

TEST_F(GlState, FramebufferReadBackRestoresPackStateAndReadBinding) {
  FrameTarget target;
  target.resize(5, 3);  // 20-byte rows: any pack alignment but 1 or 4 would pad them
  target.bind();
  glClearColor(1.0f, 0.0f, 0.0f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  FrameTarget::unbind();
  FrameTarget other;
  other.resize(2, 2);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, other.framebuffer());
  glPixelStorei(GL_PACK_ALIGNMENT, 8);
  std::vector<std::uint8_t> px;
  read_framebuffer_rgba(target.framebuffer(), GL_COLOR_ATTACHMENT0, 5, 3, px);
  EXPECT_EQ(get_int(GL_PACK_ALIGNMENT), 8);
  EXPECT_EQ(get_int(GL_READ_FRAMEBUFFER_BINDING), GLint(other.framebuffer()));
  ASSERT_EQ(px.size(), 5u * 3u * 4u);
  for (std::size_t i = 0; i < px.size(); i += 4) {
    EXPECT_EQ(px[i], 255);
    EXPECT_EQ(px[i + 1], 0);
  }
  glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
}

}  // namespace
}  // namespace handoff::view::test
