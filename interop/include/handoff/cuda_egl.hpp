#pragma once
// The EGLImage route into CUDA, for DMA-BUF planes a driver will not take as
// external memory: EGL_EXT_image_dma_buf_import turns the plane into an
// EGLImage, CUDA registers it (cuGraphicsEGLRegisterImage), maps it and
// describes it (cuGraphicsResourceGetMappedEglFrame): a pitched device
// pointer, or a CUDA array where the driver keeps the image tiled.
//
//   handoff::DmaBufPlane p{fd, 1920, 1080, handoff::kDrmFormatR8, 0, 2048};
//   handoff::EglDmaBufImage image(egl_display, p);      // fd stays the caller's
//   handoff::CudaEglImage cuda_image(ctx, image.image()); // registered and mapped
//   if (cuda_image.plane().pitched) use(cuda_image.plane().device_pointer);
//
// Errors name what is missing (the EGL extension, the driver entry point) or
// the failing call with its EGL / CUDA error; nothing is left behind.
// vk_cuda.hpp's import_dmabuf_plane() tries external memory first and this
// route second.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <handoff/cuda.hpp>

namespace handoff {

// DRM fourcc codes (drm_fourcc.h) of the single-plane formats NV12 / P010 planes use.
inline constexpr std::uint32_t drm_fourcc(char a, char b, char c, char d) {
  return std::uint32_t(std::uint8_t(a)) | (std::uint32_t(std::uint8_t(b)) << 8) |
         (std::uint32_t(std::uint8_t(c)) << 16) | (std::uint32_t(std::uint8_t(d)) << 24);
}
inline constexpr std::uint32_t kDrmFormatR8 = drm_fourcc('R', '8', ' ', ' ');     // NV12 luma
inline constexpr std::uint32_t kDrmFormatGR88 = drm_fourcc('G', 'R', '8', '8');   // NV12 chroma (Cb, Cr)
inline constexpr std::uint32_t kDrmFormatR16 = drm_fourcc('R', '1', '6', ' ');    // P010 luma
inline constexpr std::uint32_t kDrmFormatGR1616 = drm_fourcc('G', 'R', '3', '2'); // P010 chroma

// One plane of a DMA-BUF: the descriptor is borrowed (EGL takes its own
// reference; the caller still closes `fd`).
struct DmaBufPlane {
  int fd = -1;
  std::uint32_t width = 0, height = 0;
  std::uint32_t fourcc = 0;
  std::uint32_t offset = 0, pitch = 0;
  std::optional<std::uint64_t> modifier;  // needs EGL_EXT_image_dma_buf_import_modifiers
};

// Why the EGLImage route cannot be taken with this EGL display and the loaded
// CUDA driver ("" when it can): CUDA unusable (see driver().describe()), the driver's EGL entry points
// missing, or the display without EGL_EXT_image_dma_buf_import. For
// handoff-info and for callers choosing a route up front.
std::string egl_route_unavailable(void* egl_display);

// An EGLImage made from a DMA-BUF plane (eglCreateImageKHR, EGL_LINUX_DMA_BUF_EXT).
// Thread safety: any thread; destroy before the display is terminated.
// Ownership: owns the EGLImage (eglDestroyImageKHR when it goes).
class EglDmaBufImage {
 public:
  // `display`: an initialised EGLDisplay. Throws handoff::Error (Api::Egl)
  // naming the missing extension, or eglCreateImageKHR's EGL error.
  EglDmaBufImage(void* display, const DmaBufPlane& plane);
  ~EglDmaBufImage();
  EglDmaBufImage(const EglDmaBufImage&) = delete;
  EglDmaBufImage& operator=(const EglDmaBufImage&) = delete;
  void* image() const noexcept { return image_; }  // EGLImageKHR

 private:
  struct Owner;  // the EGLImage's owner (cuda_egl.cpp)
  std::unique_ptr<Owner> owner_;
  void* image_ = nullptr;
};

// A mapped EGL image as CUDA sees it (the first plane of the CUeglFrame).
struct CudaEglPlane {
  bool pitched = false;               // true: device_pointer / pitch; false: a CUDA array
  std::uint64_t device_pointer = 0;   // CUdeviceptr (pitched)
  void* array = nullptr;              // CUarray (not pitched)
  std::uint32_t width = 0, height = 0, pitch = 0, channels = 0;
};

// An EGLImage registered with CUDA and mapped for the object's lifetime.
// Thread safety: construct and destroy on any thread (the context is pushed
// for each call; no GL context is needed). Destruction never throws.
// Ownership: holds a retain of the primary context (the plane stays valid
// after the caller's PrimaryContext is gone), the registration and the
// mapping; the EGLImage stays the caller's and must outlive this object.
class CudaEglImage {
 public:
  // Throws handoff::Error: the driver lacks the EGL entry points
  // (MissingEntryPoint wording), or the failing call and CUDA error; on failure
  // nothing stays registered or mapped.
  CudaEglImage(const cuda::PrimaryContext& ctx, void* egl_image, bool read_only = true);
  ~CudaEglImage();
  CudaEglImage(const CudaEglImage&) = delete;
  CudaEglImage& operator=(const CudaEglImage&) = delete;
  const CudaEglPlane& plane() const noexcept { return plane_; }

 private:
  struct Handles;  // the context's retain, the registration and the mapping (cuda_egl.cpp)
  std::unique_ptr<Handles> handles_;
  CudaEglPlane plane_;
};

}  // namespace handoff
