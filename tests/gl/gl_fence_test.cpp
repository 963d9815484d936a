// GL fences and the GL check: GlFence::wait and gl_finish_for_vulkan are
// bounded by handoff::wait_limit() and name what did not finish; the check
// macro wraps a call, yields its value and builds its detail only on failure.
//
// A GL fence that cannot signal until the test says so: a fragment shader
// spins on a flag in a persistently mapped buffer. llvmpipe (like a GPU)
// rasterises apart from the thread that issued the draw, so that thread goes
// on to the fence and its wait while the fragment spins.
#include <glad/gl.h>

#include <handoff/gl_check.hpp>
#include <handoff/gl_worker.hpp>
#include <handoff/wait.hpp>
#if HANDOFF_HAVE_VULKAN
#include <handoff/vk_gl.hpp>
#endif

#include "gl_fixture.hpp"
#include "wait_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace handoff {
namespace {

using namespace std::chrono_literals;
using test::GlWorkerFixture;

using test::ScopedWaitLimit;

GLuint compile(GLenum stage, const char* source) {
  GLuint s = glCreateShader(stage);
  glShaderSource(s, 1, &source, nullptr);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[1024] = {};
    glGetShaderInfoLog(s, sizeof log, nullptr, log);
    glDeleteShader(s);
    throw Error(std::string("shader: ") + log);
  }
  return s;
}

// The fragments of a draw that spin until the flag `open` is set. llvmpipe
// ends a shader's loops after 65535 iterations, so each iteration reads the
// flag 32 times (atomically: every read goes to memory), and the draw covers
// enough fragments that, never opened, it keeps the CPU busy for tens of
// seconds (it ends then: a safety net, not what the test waits for). Once
// opened, each fragment leaves at its next read.
constexpr int kSize = 64;
std::string fragment_source() {
  std::string reads = "atomicOr(open, 0u)";
  for (int i = 1; i < 32; ++i) reads += " | atomicOr(open, 0u)";
  return R"(#version 450
layout(std430, binding = 0) coherent buffer Gate { uint open; uint spins; };
layout(location = 0) out vec4 color;
void main() {
  uint n = 0u;
  for (uint i = 0u; i < 65535u; ++i, ++n)
    if (()" + reads + R"() != 0u) break;
  if (n > spins) spins = n;  // the loop has an effect: no compiler may drop it
  color = vec4(1.0);
}
)";
}

// The GL objects of such a draw. Draw and destroy on the worker; open() from
// any thread (the destructor opens too, so a failed test does not leave the
// worker's shutdown waiting for the draw).
class StuckDraw {
 public:
  StuckDraw() = default;
  StuckDraw(const StuckDraw&) = delete;
  StuckDraw& operator=(const StuckDraw&) = delete;
  ~StuckDraw() { open(); }

  void draw() {
    // One triangle covering the target.
    GLuint vs = compile(GL_VERTEX_SHADER, R"(#version 450
void main() { gl_Position = vec4(gl_VertexID == 1 ? 3.0 : -1.0, gl_VertexID == 2 ? 3.0 : -1.0, 0.0, 1.0); }
)");
    GLuint fs = compile(GL_FRAGMENT_SHADER, fragment_source().c_str());
    program_ = glCreateProgram();
    glAttachShader(program_, vs);
    glAttachShader(program_, fs);
    glLinkProgram(program_);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint linked = 0;
    glGetProgramiv(program_, GL_LINK_STATUS, &linked);
    if (!linked) throw Error("StuckDraw: the program did not link");

    const GLbitfield map = GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    const std::uint32_t closed[2] = {0, 0};  // open, spins
    HANDOFF_GL_CHECK(glCreateBuffers(1, &gate_));
    HANDOFF_GL_CHECK(glNamedBufferStorage(gate_, sizeof closed, closed, map));
    flag_ = static_cast<std::uint32_t*>(HANDOFF_GL_CHECK(glMapNamedBufferRange(gate_, 0, sizeof closed, map)));
    HANDOFF_GL_CHECK(glCreateTextures(GL_TEXTURE_2D, 1, &target_));
    HANDOFF_GL_CHECK(glTextureStorage2D(target_, 1, GL_RGBA8, kSize, kSize));
    HANDOFF_GL_CHECK(glCreateFramebuffers(1, &fbo_));
    HANDOFF_GL_CHECK(glNamedFramebufferTexture(fbo_, GL_COLOR_ATTACHMENT0, target_, 0));
    HANDOFF_GL_CHECK(glCreateVertexArrays(1, &vao_));

    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    glViewport(0, 0, kSize, kSize);
    glBindVertexArray(vao_);
    glUseProgram(program_);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, gate_);
    HANDOFF_GL_CHECK(glDrawArrays(GL_TRIANGLES, 0, 3));
    glFlush();  // the rasteriser starts on it, and spins
  }
  void open() {
    if (flag_) std::atomic_ref<std::uint32_t>(*flag_).store(1, std::memory_order_release);
  }
  // After open().
  void destroy() {
    glFinish();
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glBindVertexArray(0);
    glUseProgram(0);
    glUnmapNamedBuffer(gate_);
    flag_ = nullptr;
    glDeleteBuffers(1, &gate_);
    glDeleteTextures(1, &target_);
    glDeleteFramebuffers(1, &fbo_);
    glDeleteVertexArrays(1, &vao_);
    glDeleteProgram(program_);
  }

 private:
  GLuint program_ = 0, gate_ = 0, target_ = 0, fbo_ = 0, vao_ = 0;
  std::uint32_t* flag_ = nullptr;
};

void expect_timeout(const WaitTimeout& e, const std::string& what) {
  EXPECT_EQ(e.waited_for(), what);
  const std::string message = e.what();
  EXPECT_NE(message.find(what), std::string::npos) << message;
  EXPECT_NE(message.find("did not finish within 100 ms"), std::string::npos) << message;
}

TEST_F(GlWorkerFixture, FenceWaitIsBoundedAndNamesWhatDidNotFinish) {
  StuckDraw stuck;
  worker().run([&] {
    stuck.draw();
    GlFence fence = GlFence::insert();
    {
      ScopedWaitLimit limit(100ms);
      try {
        fence.wait("GL fence of the stuck draw");
        ADD_FAILURE() << "a fence behind a spinning draw signalled";
      } catch (const WaitTimeout& e) {
        expect_timeout(e, "GL fence of the stuck draw");
      }
      EXPECT_FALSE(fence.client_wait(0));
#if HANDOFF_HAVE_VULKAN
      try {
        gl_finish_for_vulkan();
        ADD_FAILURE() << "gl_finish_for_vulkan returned with a draw still spinning";
      } catch (const WaitTimeout& e) {
        expect_timeout(e, "GL commands issued before gl_finish_for_vulkan()");
      }
#endif
    }
    stuck.open();
    // The draw ends at its fragments' next read of the flag; the bound only
    // keeps a broken test from hanging on a machine that is busy elsewhere.
    ScopedWaitLimit generous(60s);
    fence.wait("GL fence after the draw was let go");
#if HANDOFF_HAVE_VULKAN
    gl_finish_for_vulkan();
#endif
    stuck.destroy();
  });
  EXPECT_THROW(GlFence{}.wait("an empty fence"), UsageError);
}

TEST_F(GlWorkerFixture, GlCheckYieldsTheValueAndBuildsTheDetailOnlyOnFailure) {
  int details = 0;
  auto detail = [&] {
    ++details;
    return std::string("the test's buffer");
  };
  worker().run([&] {
    GLuint b = 0;
    HANDOFF_GL_CHECK(glCreateBuffers(1, &b), detail());
    HANDOFF_GL_CHECK(glNamedBufferStorage(b, 16, nullptr, GL_MAP_READ_BIT), detail());
    void* p = HANDOFF_GL_CHECK(glMapNamedBufferRange(b, 0, 16, GL_MAP_READ_BIT), detail());
    EXPECT_NE(p, nullptr);
    EXPECT_EQ(HANDOFF_GL_CHECK(glUnmapNamedBuffer(b)), GL_TRUE);
    EXPECT_EQ(details, 0);
    try {
      // Mapping it for writing: its storage was made without GL_MAP_WRITE_BIT.
      (void)HANDOFF_GL_CHECK(glMapNamedBufferRange(b, 0, 16, GL_MAP_WRITE_BIT), detail());
      ADD_FAILURE() << "no exception";
    } catch (const Error& e) {
      EXPECT_EQ(e.call(), "glMapNamedBufferRange");
      EXPECT_EQ(e.code_name(), "GL_INVALID_OPERATION");
      EXPECT_NE(std::string(e.what()).find("the test's buffer"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("gl_fence_test.cpp"), std::string::npos) << e.what();
    }
    EXPECT_EQ(details, 1);
    glDeleteBuffers(1, &b);
  });
  // That error was on purpose: the fixture must not fail the test for it.
  EXPECT_FALSE(gl_errors().messages().empty());
  gl_errors().clear();
}

}  // namespace
}  // namespace handoff
