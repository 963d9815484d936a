#pragma once
// RAII owners of EGL handles (UniqueHandle aliases). Under detail/ because a
// public class (EglDmaBufImage, cuda_egl.hpp) holds one as a member; the
// library's headless contexts and the viewer's context pair use them too.
// Thread safety: released on any thread; one owner at a time.
#include <handoff/unique_handle.hpp>

namespace handoff::detail {

// eglDestroyImageKHR on the display the image was made on (an initialised
// EGLDisplay that must outlive the image). Never throws; a failure is logged.
struct EglImageDestroy {
  void* display = nullptr;  // EGLDisplay
  void operator()(void* image) const noexcept;
};
// An EGLImageKHR; EGL_NO_IMAGE_KHR (null) is empty.
using UniqueEglImage = UniqueHandle<void*, EglImageDestroy>;

// eglDestroyContext on the display the context was made on (an initialised
// EGLDisplay that must outlive it); a context current on the calling thread
// is made not current first. Never throws; a failure is logged.
struct EglContextDestroy {
  void* display = nullptr;  // EGLDisplay
  void operator()(void* context) const noexcept;
};
// An EGLContext; EGL_NO_CONTEXT (null) is empty.
using UniqueEglContext = UniqueHandle<void*, EglContextDestroy>;

}  // namespace handoff::detail
