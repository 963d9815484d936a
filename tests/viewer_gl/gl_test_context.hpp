#pragma once
// A headless GL 4.5 core debug context (EGL surfaceless, Mesa llvmpipe here)
// made current on the test's thread, with KHR_debug output collected: the
// fixture fails the test on any GL_DEBUG_TYPE_ERROR message.
#include <glad/gl.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

namespace handoff::viewer::test {

class GlTestContext {
 public:
  GlTestContext() {
    auto get_platform_display =
        reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (!get_platform_display) { error_ = "eglGetPlatformDisplayEXT missing"; return; }
    display_ = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (display_ == EGL_NO_DISPLAY || !eglInitialize(display_, nullptr, nullptr)) {
      error_ = "no EGL surfaceless display";
      return;
    }
    eglBindAPI(EGL_OPENGL_API);
    const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 5,
                            EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                            EGL_CONTEXT_OPENGL_DEBUG, EGL_TRUE, EGL_NONE};
    context_ = eglCreateContext(display_, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs);
    if (context_ == EGL_NO_CONTEXT) { error_ = "eglCreateContext failed"; return; }
    if (!eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_)) {
      error_ = "eglMakeCurrent failed";
      return;
    }
    if (!gladLoadGL(reinterpret_cast<GLADloadfunc>(eglGetProcAddress))) {
      error_ = "gladLoadGL failed";
      return;
    }
    glEnable(GL_DEBUG_OUTPUT);
    glEnable(GL_DEBUG_OUTPUT_SYNCHRONOUS);
    glDebugMessageCallback(&GlTestContext::on_message, this);
  }
  ~GlTestContext() {
    if (context_ != EGL_NO_CONTEXT) {
      glDebugMessageCallback(nullptr, nullptr);
      eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext(display_, context_);
    }
    // The display stays initialised: other contexts in the process may use it.
  }
  const std::string& error() const { return error_; }
  std::vector<std::string> take_errors() {
    std::lock_guard lock(mutex_);
    return std::exchange(errors_, {});
  }

 private:
  static void GLAPIENTRY on_message(GLenum, GLenum type, GLuint, GLenum, GLsizei, const GLchar* text,
                                    const void* self) {
    if (type != GL_DEBUG_TYPE_ERROR) return;
    auto* me = const_cast<GlTestContext*>(static_cast<const GlTestContext*>(self));
    std::lock_guard lock(me->mutex_);
    me->errors_.emplace_back(text);
  }
  EGLDisplay display_ = EGL_NO_DISPLAY;
  EGLContext context_ = EGL_NO_CONTEXT;
  std::string error_;
  std::mutex mutex_;
  std::vector<std::string> errors_;
};

// Fixture: a current context for the whole test; KHR_debug errors fail it.
class GlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = std::make_unique<GlTestContext>();
    ASSERT_TRUE(ctx_->error().empty()) << "headless GL context: " << ctx_->error();
  }
  void TearDown() override {
    for (const auto& e : ctx_->take_errors()) ADD_FAILURE() << "KHR_debug error: " << e;
    ctx_.reset();
  }
  std::unique_ptr<GlTestContext> ctx_;
};

}  // namespace handoff::viewer::test
