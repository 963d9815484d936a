#include <handoff/cuda_egl.hpp>
#include <handoff/log.hpp>

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <string>
#include <vector>

#include <handoff/cuda_abi.hpp>
#include <handoff/detail/cuda_handles.hpp>
#include <handoff/detail/egl_handles.hpp>
#include <handoff/cuda_check.hpp>
#include "gl/egl_util.hpp"

namespace handoff {
namespace abi = cuda::abi;

namespace {

std::string fourcc_text(std::uint32_t f) {
  std::string s;
  for (int i = 0; i < 4; ++i) {
    const char c = char((f >> (8 * i)) & 0xFF);
    s += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return s;
}

}  // namespace

std::string egl_route_unavailable(void* egl_display) {
  const cuda::Driver& d = cuda::driver();
  if (!d.usable()) return "CUDA unusable (see the CUDA line)";
  if (!d.api().cuGraphicsEGLRegisterImage || !d.api().cuGraphicsResourceGetMappedEglFrame)
    return "the CUDA driver lacks cuGraphicsEGLRegisterImage / cuGraphicsResourceGetMappedEglFrame";
  if (!egl_display) return "no EGL display";
  const char* ext = eglQueryString(egl_display, EGL_EXTENSIONS);
  if (!detail::has_word(ext, "EGL_EXT_image_dma_buf_import")) return "the EGL display lacks EGL_EXT_image_dma_buf_import";
  return {};
}

// --- EglDmaBufImage -------------------------------------------------------------

struct EglDmaBufImage::Owner {
  detail::UniqueEglImage image;
};

EglDmaBufImage::~EglDmaBufImage() = default;

EglDmaBufImage::EglDmaBufImage(void* display, const DmaBufPlane& p) {
  if (!display) throw UsageError("EglDmaBufImage: no EGLDisplay");
  if (p.fd < 0 || p.width == 0 || p.height == 0 || p.pitch == 0 || p.fourcc == 0)
    throw UsageError("EglDmaBufImage: the plane needs an fd, a size, a pitch and a fourcc");
  const char* ext = eglQueryString(display, EGL_EXTENSIONS);
  if (!ext) {
    const EGLint e = eglGetError();
    throw Error(Api::Egl, "eglQueryString(EGL_EXTENSIONS)", e, detail::egl_error_name(e),
                "the display is not initialised", HANDOFF_WHERE);
  }
  if (!detail::has_word(ext, "EGL_EXT_image_dma_buf_import"))
    throw Error(Api::Egl, "eglQueryString(EGL_EXTENSIONS)", 0, {},
                "the EGL display lacks EGL_EXT_image_dma_buf_import: it cannot make an EGLImage from a DMA-BUF",
                HANDOFF_WHERE);
  if (p.modifier && !detail::has_word(ext, "EGL_EXT_image_dma_buf_import_modifiers"))
    throw Error(Api::Egl, "eglQueryString(EGL_EXTENSIONS)", 0, {},
                "the plane has a DRM format modifier and the EGL display lacks "
                "EGL_EXT_image_dma_buf_import_modifiers",
                HANDOFF_WHERE);
  auto create = reinterpret_cast<PFNEGLCREATEIMAGEKHRPROC>(eglGetProcAddress("eglCreateImageKHR"));
  if (!create) throw Error(Api::Egl, "eglGetProcAddress(eglCreateImageKHR)", 0, {}, "not found", HANDOFF_WHERE);
  std::vector<EGLint> a = {EGL_WIDTH,
                           EGLint(p.width),
                           EGL_HEIGHT,
                           EGLint(p.height),
                           EGL_LINUX_DRM_FOURCC_EXT,
                           EGLint(p.fourcc),
                           EGL_DMA_BUF_PLANE0_FD_EXT,
                           p.fd,
                           EGL_DMA_BUF_PLANE0_OFFSET_EXT,
                           EGLint(p.offset),
                           EGL_DMA_BUF_PLANE0_PITCH_EXT,
                           EGLint(p.pitch)};
  if (p.modifier) {
    a.insert(a.end(), {EGL_DMA_BUF_PLANE0_MODIFIER_LO_EXT, EGLint(std::uint32_t(*p.modifier & 0xFFFFFFFFu)),
                       EGL_DMA_BUF_PLANE0_MODIFIER_HI_EXT, EGLint(std::uint32_t(*p.modifier >> 32))});
  }
  a.push_back(EGL_NONE);
  owner_ = std::make_unique<Owner>(Owner{detail::UniqueEglImage(
      create(display, EGL_NO_CONTEXT, EGL_LINUX_DMA_BUF_EXT, nullptr, a.data()), {display})});
  image_ = owner_->image.get();
  if (!image_) {
    const EGLint e = eglGetError();
    throw Error(Api::Egl, "eglCreateImageKHR", e, detail::egl_error_name(e),
                "DMA-BUF plane " + std::to_string(p.width) + "x" + std::to_string(p.height) + " " +
                    fourcc_text(p.fourcc) + ", pitch " + std::to_string(p.pitch) + ", offset " +
                    std::to_string(p.offset),
                HANDOFF_WHERE);
  }
}

namespace detail {
void EglImageDestroy::operator()(void* image) const noexcept {
  auto destroy = reinterpret_cast<PFNEGLDESTROYIMAGEKHRPROC>(eglGetProcAddress("eglDestroyImageKHR"));
  if (!destroy || !destroy(display, image))
    log(LogLevel::Error, "eglDestroyImageKHR failed with " + egl_error_name(eglGetError()));
}
}  // namespace detail

// --- CudaEglImage ------------------------------------------------------------------

namespace {

CudaEglPlane first_plane(const abi::CUeglFrame& f) {
  CudaEglPlane p;
  p.pitched = f.frameType == abi::CU_EGL_FRAME_TYPE_PITCH;
  if (p.pitched) p.device_pointer = reinterpret_cast<std::uint64_t>(f.frame.pPitch[0]);
  else p.array = f.frame.pArray[0];
  p.width = f.width;
  p.height = f.height;
  p.pitch = f.pitch;
  p.channels = f.numChannels;
  return p;
}

}  // namespace

struct CudaEglImage::Handles {
  // Released last to first: unmapped, then unregistered, then the context goes.
  cuda::detail::RetainedContext ctx;
  cuda::detail::UniqueGraphicsResource registration;
  cuda::detail::UniqueGraphicsMapping mapping;
};

CudaEglImage::~CudaEglImage() = default;

CudaEglImage::CudaEglImage(const cuda::PrimaryContext& ctx, void* egl_image, bool read_only)
    : handles_(std::make_unique<Handles>(Handles{cuda::detail::retain(ctx, "CudaEglImage"), {}, {}})) {
  if (!egl_image) throw UsageError("CudaEglImage: no EGLImage");
  const cuda::detail::RetainedContext& retained = handles_->ctx;
  const abi::DriverApi& api = retained->driver()->api();
  if (!api.cuGraphicsEGLRegisterImage || !api.cuGraphicsResourceGetMappedEglFrame)
    throw Error(Api::Cuda, "cuGetProcAddress", 0, {},
                "the CUDA driver lacks cuGraphicsEGLRegisterImage / cuGraphicsResourceGetMappedEglFrame: "
                "no EGLImage route",
                HANDOFF_WHERE);
  cuda::ScopedContext current(*retained);
  abi::CUgraphicsResource res = nullptr;
  HANDOFF_CU_CHECK(api.cuGraphicsEGLRegisterImage(&res, egl_image,
                                                  read_only ? abi::CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY
                                                            : abi::CU_GRAPHICS_REGISTER_FLAGS_NONE));
  handles_->registration = cuda::detail::UniqueGraphicsResource(res, {retained});
  HANDOFF_CU_CHECK(api.cuGraphicsMapResources(1, &res, nullptr), "EGL image");
  handles_->mapping = cuda::detail::UniqueGraphicsMapping(res, {retained});
  abi::CUeglFrame f{};
  HANDOFF_CU_CHECK(api.cuGraphicsResourceGetMappedEglFrame(&f, res, 0, 0));
  plane_ = first_plane(f);
}

}  // namespace handoff
