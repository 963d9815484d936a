#pragma once
// Draws NV12 / P010 frames: luma and chroma textures (R8/RG8 or R16/RG16)
// converted to R'G'B' by one shader with the colorimetry folded into uniforms,
// or (ViewerConvert::Cpu, the default on software rasterisers) converted on
// the CPU at the size shown by ViewConverter, the shader's twin, and copied
// into the framebuffer with glBlitFramebuffer: then the frame's planes are
// kept in host memory and the textures are filled only when something reads
// them (luma_texture(), chroma_texture()).
//
// Thread safety: every method needs the same current GL 4.5 core context (glad
// loaded) on the calling thread, the one the renderer was created on.
#include <glad/gl.h>

#include <cstdint>
#include <memory>
#include <string>

#include <handoff/detail/gl_handles.hpp>
#include <handoff/frame.hpp>
#include <handoff/viewer.hpp>

#include "page_buffer.hpp"
#include "view_convert.hpp"
#include "view_transform.hpp"

namespace handoff::viewer {

struct DrawOptions {
  Colorimetry colorimetry{};     // how to read the codes (the frame's, or an override)
  ViewTransform view{};          // frame -> framebuffer
  bool nearest = false;          // flat frame pixels (use when scale > 1)
  float background[4] = {0.08f, 0.08f, 0.09f, 1.0f};
};

class FrameRenderer {
 public:
  // Compiles the shaders; throws handoff::Error on GL failure (nothing is
  // left behind). `convert` Auto: Cpu where GL_RENDERER is a software
  // rasteriser (is_software_renderer), else Gpu.
  explicit FrameRenderer(ViewerConvert convert = ViewerConvert::Auto);
  FrameRenderer(const FrameRenderer&) = delete;
  FrameRenderer& operator=(const FrameRenderer&) = delete;

  // (Re)allocates the textures when format or size change; otherwise nothing.
  void configure(PixelFormat format, std::uint32_t width, std::uint32_t height);

  // Copies a frame's planes into the textures. frame.memory must be Host
  // (pointers) or GlBuffer (byte offsets inside frame.gl_buffer, uploaded
  // GPU-side through GL_PIXEL_UNPACK_BUFFER). Calls configure() as needed.
  // UsageError on any other memory kind or on a plane that does not match.
  void upload(const Frame& frame);

  // Draws from two plane textures the renderer does not own (Vulkan memory
  // imported into GL, handoff::GlVkSource): R8/RG8 or R16/RG16 of this size,
  // sampled in place (no upload, no copy). They are never deleted here; the
  // caller keeps them alive while the renderer uses them. A later configure()
  // with another format or size goes back to the renderer's own textures.
  void use_external(PixelFormat format, std::uint32_t width, std::uint32_t height, GLuint luma, GLuint chroma);
  bool external() const { return external_; }

  // Draws into the bound draw framebuffer of size fb_w x fb_h (viewport set
  // here). The CPU path draws the same pixels (to within rounding: see
  // tests/viewer_gl/convert_path_test.cpp) and leaves the bindings as it
  // found them; a multisampled framebuffer takes the shader.
  void draw(const DrawOptions& options, int fb_w, int fb_h);

  bool has_frame() const { return width_ != 0; }
  PixelFormat format() const { return format_; }
  std::uint32_t width() const { return width_; }
  std::uint32_t height() const { return height_; }
  // The plane textures, holding the current frame (filled from the host copy
  // first on the CPU path).
  GLuint luma_texture() const;
  GLuint chroma_texture() const;
  // Whether draw() converts on the CPU, and in words why.
  bool cpu_convert() const { return cpu_; }
  const std::string& convert_text() const { return convert_text_; }

 private:
  void upload_plane(GLuint tex, const Frame& frame, int plane, const void* base) const;
  void clear_textures() noexcept;  // no frame: the own textures deleted, external ones let go
  void upload_planes(const Frame& frame) const;  // both planes into the textures (Host or GlBuffer frame)
  void keep_host_copy(const Frame& frame);  // CPU path: the planes into host_, packed
  Frame host_frame() const;                 // CPU path: host_ as a host frame
  void sync_textures() const;               // CPU path: host_ into the textures when they are behind
  bool draw_cpu(const DrawOptions& options, int fb_w, int fb_h);  // false: this framebuffer takes the shader

  // One program per filter: [0] linear, [1] nearest (yuv_frame_nearest_frag).
  struct Program {
    handoff::detail::UniqueGlProgram id;
    GLint matrix = -1, bias = -1, frame_size = -1, chroma_size = -1, siting = -1, scale = -1, offset = -1,
          fb_size = -1;
  };
  Program programs_[2];
  handoff::detail::UniqueGlVertexArray vao_;
  handoff::detail::UniqueGlTexture own_luma_, own_chroma_;  // the renderer's textures (empty while external)
  GLuint luma_ = 0;    // what draw() samples: own_luma_, or the caller's texture (external_)
  GLuint chroma_ = 0;
  PixelFormat format_ = PixelFormat::NV12;
  std::uint32_t width_ = 0;
  std::uint32_t height_ = 0;
  bool external_ = false;  // luma_ / chroma_ belong to someone else

  // The CPU path.
  bool cpu_ = false;
  std::string convert_text_;
  struct HostCopy {
    PageBuffer luma, chroma, staging;
    std::uint64_t generation = 0;  // counts uploads
  } host_;
  mutable bool textures_behind_ = false;  // the textures hold an older frame than host_
  std::unique_ptr<ViewConverter> converter_;  // made on the first CPU draw (its threads with it)
  handoff::detail::UniqueGlTexture view_texture_;  // the converted pixels: converted_.rect's size and order
  handoff::detail::UniqueGlFramebuffer view_fbo_;  // view_texture_, the blit's source
  PageBuffer view_pixels_;
  struct ConvertKey {
    std::uint64_t generation = 0;
    ViewTransform view{};
    bool nearest = false;
    Colorimetry colorimetry{};
    PixelRect rect{};
    ByteOrder order = ByteOrder::Rgba;
    bool top_down = false;
    bool operator==(const ConvertKey&) const = default;
  };
  ConvertKey converted_{};  // what view_texture_ holds (generation 0: nothing)
};

// The largest texture the current GL context makes (GL_MAX_TEXTURE_SIZE):
// the viewer's own limit on frame and framebuffer sizes, which may be below
// the library's kMaxFrameDimension (llvmpipe: 16384).
std::uint32_t gl_max_texture_size();
// Checks `width` x `height` against kMaxFrameDimension (validate_dimensions'
// InvalidFrame) and then against gl_max_texture_size(): UsageError naming
// `what`, the size and the GL limit. Needs a current context.
void check_texture_size(const char* what, std::uint32_t width, std::uint32_t height);

// A GL program from two embedded GLSL sources (handoff::shaders::glsl names);
// throws handoff::Error with the info log on failure.
handoff::detail::UniqueGlProgram build_program(const char* vertex_name, const char* fragment_name);

}  // namespace handoff::viewer
