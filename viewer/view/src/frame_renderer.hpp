#pragma once
// Draws NV12 / P010 frames from two plane textures (R8/RG8 or R16/RG16),
// converted to R'G'B' by one of two colour paths, chosen once when the
// renderer is made (ViewerConvert):
//  - the shader path: one shader with the colorimetry folded into uniforms;
//  - the CPU path (the default on software rasterisers): converted on the CPU
//    at the size shown by ViewConverter, the shader's twin, and copied into
//    the framebuffer with glBlitFramebuffer. It keeps the frame's planes in
//    host memory and fills the textures only when something reads them
//    (luma_texture(), chroma_texture()) or the shader has to draw (a
//    multisampled framebuffer, external textures).
//
// Thread safety: every method needs the same current GL 4.5 core context (glad
// loaded) on the calling thread, the one the renderer was created on.
#include <glad/gl.h>

#include <cstdint>
#include <memory>
#include <string>

#include <handoff/gl_handles.hpp>
#include <handoff/frame.hpp>
#include <handoff/viewer.hpp>

#include "view_transform.hpp"

namespace handoff::view {

struct DrawOptions {
  Colorimetry colorimetry{};     // how to read the codes (the frame's, or an override)
  ViewTransform view{};          // frame -> framebuffer
  bool nearest = false;          // flat frame pixels (use when scale > 1)
  float background[4] = {0.08f, 0.08f, 0.09f, 1.0f};
};

// The two plane textures a frame is drawn from: the renderer's own (made by
// configure, filled by upload) or a caller's (use_external), never both.
// Plain machinery: FrameRenderer checks the sizes and names before calling.
class PlaneTextures {
 public:
  // Makes own textures of this format and size unless it has them already.
  void configure(PixelFormat format, std::uint32_t width, std::uint32_t height);
  // Samples the caller's textures from now on (never deleted here).
  void use_external(PixelFormat format, std::uint32_t width, std::uint32_t height, GLuint luma, GLuint chroma);
  // Copies both planes of a frame of the configured format and size: Host
  // pointers, or byte offsets in frame.gl_buffer (read GPU-side).
  void upload(const Frame& frame) const;

  bool empty() const { return width_ == 0; }
  bool external() const { return external_; }
  PixelFormat format() const { return format_; }
  std::uint32_t width() const { return width_; }
  std::uint32_t height() const { return height_; }
  GLuint luma() const { return luma_; }
  GLuint chroma() const { return chroma_; }

 private:
  void clear() noexcept;  // no frame: the own textures deleted, external ones let go

  handoff::UniqueGlTexture own_luma_, own_chroma_;  // empty while external
  GLuint luma_ = 0;  // what is sampled: own_luma_, or the caller's texture (external_)
  GLuint chroma_ = 0;
  PixelFormat format_ = PixelFormat::NV12;
  std::uint32_t width_ = 0;
  std::uint32_t height_ = 0;
  bool external_ = false;
};

// What varies between the two ways a frame becomes R'G'B' pixels: where an
// uploaded frame goes, and how it is drawn. Implemented in frame_renderer.cpp
// by ShaderColorPath and CpuColorPath.
class ColorPath {
 public:
  virtual ~ColorPath() = default;
  // Takes a checked frame the textures are configured for.
  virtual void take(const Frame& frame, const PlaneTextures& textures) = 0;
  // Brings the textures up to the last frame taken.
  virtual void sync(const PlaneTextures& textures) = 0;
  // Draws the textures' frame (not empty) into the bound draw framebuffer,
  // viewport and clear colour set, and clears the rest of it.
  virtual void draw(const DrawOptions& options, int fb_w, int fb_h, const PlaneTextures& textures) = 0;
  virtual bool converts_on_cpu() const = 0;
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
  // UsageError past kMaxFrameDimension (validate_dimensions') or this GL's
  // GL_MAX_TEXTURE_SIZE (check_texture_size).
  void configure(PixelFormat format, std::uint32_t width, std::uint32_t height);

  // Copies a frame's planes into the textures. frame.memory must be Host
  // (pointers) or GlBuffer (byte offsets inside frame.gl_buffer, uploaded
  // GPU-side through GL_PIXEL_UNPACK_BUFFER). Calls configure() as needed.
  // UsageError on any other memory kind; InvalidFrame (validate()) naming the
  // field of a frame that breaks the layout rules.
  void upload(const Frame& frame);

  // Draws from two plane textures the renderer does not own (Vulkan memory
  // imported into GL, handoff::GlVkSource): R8/RG8 or R16/RG16 of this size,
  // sampled in place (no upload, no copy). They are never deleted here; the
  // caller keeps them alive while the renderer uses them. A later configure()
  // with another format or size goes back to the renderer's own textures.
  void use_external(PixelFormat format, std::uint32_t width, std::uint32_t height, GLuint luma, GLuint chroma);
  bool external() const { return textures_.external(); }

  // Draws into the bound draw framebuffer of size fb_w x fb_h (viewport set
  // here). The CPU path draws the same pixels (to within rounding: see
  // tests/viewer_gl/convert_path_test.cpp) and leaves the bindings as it
  // found them; a multisampled framebuffer takes the shader.
  void draw(const DrawOptions& options, int fb_w, int fb_h);

  bool has_frame() const { return !textures_.empty(); }
  PixelFormat format() const { return textures_.format(); }
  std::uint32_t width() const { return textures_.width(); }
  std::uint32_t height() const { return textures_.height(); }
  // The plane textures, holding the current frame (filled from the host copy
  // first on the CPU path).
  GLuint luma_texture() const;
  GLuint chroma_texture() const;
  // Whether draw() converts on the CPU, and in words why.
  bool cpu_convert() const { return path_->converts_on_cpu(); }
  const std::string& convert_text() const { return convert_text_; }

 private:
  PlaneTextures textures_;
  std::unique_ptr<ColorPath> path_;  // chosen once, in the constructor
  std::string convert_text_;
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
handoff::UniqueGlProgram build_program(const char* vertex_name, const char* fragment_name);

}  // namespace handoff::view
