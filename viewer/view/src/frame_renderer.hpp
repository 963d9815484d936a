#pragma once
// Draws frames of every PixelFormat from one to three textures (see
// frame_textures): YUV through the frame's colorimetry, RGB codes as they
// are, grey over a range. YUV becomes R'G'B' by one of two colour paths,
// chosen once when the renderer is made (ViewerConvert):
//  - the shader path: one shader with the colorimetry folded into uniforms;
//  - the CPU path (the default on software rasterisers): converted on the CPU
//    at the size shown by ViewConverter, the shader's twin, and copied into
//    the framebuffer with glBlitFramebuffer. It keeps the frame's planes in
//    host memory and fills the textures only when something reads them
//    (luma_texture(), chroma_texture()) or the shader has to draw (a
//    multisampled framebuffer, external textures). It converts every YUV
//    format, resamples RGB and maps grey over its range (GrayMapping, the
//    grey shader's uniforms).
//
// Thread safety: every method needs the same current GL 4.5 core context (glad
// loaded) on the calling thread, the one the renderer was created on.
#include <glad/gl.h>

#include <cstdint>
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <handoff/gl_handles.hpp>
#include <handoff/frame.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/media/overlay.hpp>
#include <handoff/viewer.hpp>

#include "value_range.hpp"
#include "view_convert.hpp"  // PixelRect, ByteOrder
#include "view_transform.hpp"

namespace handoff::view {

struct DrawOptions {
  Colorimetry colorimetry{};     // how to read the codes (the frame's, or an override)
  // gray16 / gray32f: the values shown black .. white (ViewerOptions::value_range);
  // none: gray16's full 0..65535, gray32f's automatic range (FrameRenderer::auto_range).
  std::optional<ValueRange> value_range;
  ViewTransform view{};          // frame -> framebuffer
  bool nearest = false;          // flat frame pixels (use when scale > 1)
  float background[4] = {0.08f, 0.08f, 0.09f, 1.0f};
  // Drawn into the frame's converted pixels on the CPU path (the dense
  // layers on a software GL: LayerRenderer's composite): `prepare` is called
  // before each conversion with the rect (false: nothing to draw), then
  // `rows` as the conversion writes them (ViewConverter's RowsDone: on its
  // threads, disjoint rows at once), with where row 0 of the rect is; `key`
  // changes when what it draws changes (the image is converted again then).
  // The shader path ignores it: FrameRenderer::draw says whether it was drawn.
  struct CpuLayers {
    std::function<bool(const PixelRect&, ByteOrder)> prepare;
    std::function<void(int first, int last, std::uint8_t* out, std::ptrdiff_t pitch)> rows;
    std::uint64_t key = 0;
  };
  const CpuLayers* cpu_layers = nullptr;
};

// How one texture of a frame is made and filled: from plane `plane`, `width`
// x `height` texels of `texel_bytes` each, stored as `internal`, uploaded as
// `format` / `type`, sampled through `swizzle`. frame_textures() says which
// textures each format takes and why.
struct TextureSpec {
  int plane = 0;
  GLenum internal = GL_R8, format = GL_RED, type = GL_UNSIGNED_BYTE;
  std::uint32_t width = 0, height = 0;
  std::size_t texel_bytes = 1;
  std::array<GLint, 4> swizzle{GL_RED, GL_GREEN, GL_BLUE, GL_ALPHA};
};
struct TextureSpecs {
  int count = 0;
  std::array<TextureSpec, kMaxPlanes> spec{};
};
// The textures a frame of this format and size is drawn from ([0] luma, the
// RGB pixels or the grey values; [1] / [2] chroma). Pure; InvalidFrame for an
// unknown format.
TextureSpecs frame_textures(PixelFormat format, std::uint32_t width, std::uint32_t height);

// Where the chroma samples of a YUV format are, for the shaders and the probe:
// the chroma texture's size and luma samples per chroma sample (2 x 2 for
// 4:2:0, 2 x 1 for 4:2:2).
struct ChromaGrid {
  std::uint32_t width = 0, height = 0;
  std::uint32_t sub_x = 2, sub_y = 2;
};
ChromaGrid chroma_grid(PixelFormat format, std::uint32_t width, std::uint32_t height);

// The textures a frame is drawn from: the renderer's own (made by configure,
// filled by upload) or a caller's (use_external: NV12 / P010 only), never both.
// Plain machinery: FrameRenderer checks the sizes and names before calling.
class PlaneTextures {
 public:
  // Makes own textures of this format and size unless it has them already.
  void configure(PixelFormat format, std::uint32_t width, std::uint32_t height);
  // Samples the caller's textures from now on (never deleted here).
  void use_external(PixelFormat format, std::uint32_t width, std::uint32_t height, GLuint luma, GLuint chroma);
  // Copies every plane of a frame of the configured format and size: Host
  // pointers, or byte offsets in frame.gl_buffer (read GPU-side).
  void upload(const Frame& frame) const;

  bool empty() const { return width_ == 0; }
  bool external() const { return external_; }
  PixelFormat format() const { return format_; }
  std::uint32_t width() const { return width_; }
  std::uint32_t height() const { return height_; }
  int count() const { return count_; }
  GLuint texture(int i) const { return i >= 0 && i < count_ ? tex_[std::size_t(i)] : 0; }
  GLuint luma() const { return tex_[0]; }
  GLuint chroma() const { return count_ > 1 ? tex_[1] : 0; }

 private:
  void clear() noexcept;  // no frame: the own textures deleted, external ones let go

  std::array<handoff::UniqueGlTexture, kMaxPlanes> own_;  // empty while external
  std::array<GLuint, kMaxPlanes> tex_{};  // what is sampled: own_, or the caller's textures (external_)
  int count_ = 0;
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
  // Whether the last draw drew options.cpu_layers into the frame.
  virtual bool layers_drawn() const { return false; }
  // The last frame taken, in host memory, when the path keeps such a copy.
  virtual std::optional<Frame> host_copy() const { return std::nullopt; }
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
  // imported into GL, handoff::GlVkSource): NV12 / P010 only (InvalidFrame
  // naming the format otherwise), R8/RG8 or R16/RG16 of this size,
  // sampled in place (no upload, no copy). They are never deleted here; the
  // caller keeps them alive while the renderer uses them. A later configure()
  // with another format or size goes back to the renderer's own textures.
  void use_external(PixelFormat format, std::uint32_t width, std::uint32_t height, GLuint luma, GLuint chroma);
  bool external() const { return textures_.external(); }

  // Draws into the bound draw framebuffer of size fb_w x fb_h (viewport set
  // here). The CPU path draws the same pixels (to within rounding: see
  // tests/viewer_gl/convert_path_test.cpp) and leaves the bindings as it
  // found them; a multisampled framebuffer takes the shader. True when
  // options.cpu_layers were drawn into the frame (the CPU path converted it).
  bool draw(const DrawOptions& options, int fb_w, int fb_h);

  bool has_frame() const { return !textures_.empty(); }
  PixelFormat format() const { return textures_.format(); }
  std::uint32_t width() const { return textures_.width(); }
  std::uint32_t height() const { return textures_.height(); }
  // The plane textures, holding the current frame (filled from the host copy
  // first on the CPU path).
  GLuint luma_texture() const;
  GLuint chroma_texture() const;
  // Texture i of frame_textures(format()) (0 past the last), as luma_texture().
  GLuint texture(int i) const;
  // The current frame's host copy on the CPU path (valid until the next
  // upload), else nullopt: what reads a few samples (the pixel probe) reads
  // there instead of texture(), which would upload the whole frame first.
  std::optional<Frame> host_copy() const { return path_->host_copy(); }

  // The values a grey frame is shown over, in its samples' own units: gray8
  // 0..255; gray16 `user` or 0..65535; gray32f `user` or the automatic range
  // of the frames uploaded so far (media::ScalarRange, as scalar-map layers
  // use: robust to outliers, smoothed from frame to frame, taken at once on a
  // jump). Not a grey frame: nullopt.
  std::optional<ValueRange> gray_range(const std::optional<ValueRange>& user) const;
  // The automatic range of gray32f frames (nullopt before the first one).
  std::optional<ValueRange> auto_range() const {
    if (!auto_range_.valid()) return std::nullopt;
    return ValueRange{auto_range_.range()[0], auto_range_.range()[1]};
  }
  // Whether draw() converts on the CPU, and in words why.
  bool cpu_convert() const { return path_->converts_on_cpu(); }
  // This GL's GL_MAX_TEXTURE_SIZE, queried once by the constructor.
  std::uint32_t max_texture_size() const { return max_texture_size_; }
  const std::string& convert_text() const { return convert_text_; }

 private:
  void update_auto_range(const Frame& frame);  // gray32f: samples the frame's values

  PlaneTextures textures_;
  media::ScalarRange auto_range_;
  std::vector<float> range_samples_;
  std::unique_ptr<ColorPath> path_;  // chosen once, in the constructor
  std::string convert_text_;
  std::uint32_t max_texture_size_ = 0;
};

// The largest texture the current GL context makes (GL_MAX_TEXTURE_SIZE):
// the viewer's own limit on frame and framebuffer sizes, which may be below
// the library's kMaxFrameDimension (llvmpipe: 16384).
std::uint32_t gl_max_texture_size();
// Checks `width` x `height` against kMaxFrameDimension (validate_dimensions'
// InvalidFrame) and then against gl_max_texture_size(): UsageError naming
// `what`, the size and the GL limit. Needs a current context.
void check_texture_size(const char* what, std::uint32_t width, std::uint32_t height);
// A `width` x `height` frame that textures of at most `max` texels a side
// (GL_MAX_TEXTURE_SIZE, GlShare::max_texture_size) cannot hold: the
// InvalidFrame naming "width" or "height", the frame's size, `who` ("viewer
// 'x'") and the limit; nullopt when it fits or `max` is 0 (unknown). No GL call.
std::optional<InvalidFrame> texture_size_refusal(const std::string& who, std::uint32_t width, std::uint32_t height,
                                                 std::uint32_t max);

// Frames a display thread leaves out because its textures cannot hold them
// (arrived from a publisher, a file whose frames change size): each one
// goes to `report` (FeedContext::bad_frame: counted in ViewerDiagnostics'
// frame_errors, the first named there), the first is logged as a warning,
// and the display goes on. One per tile or feed; its thread only.
class RefusedFrames {
 public:
  explicit RefusedFrames(std::function<void(const std::string&)> report = {}) : report_(std::move(report)) {}
  void add(const std::string& what);
  std::uint64_t count() const { return count_; }

 private:
  std::function<void(const std::string&)> report_;
  std::uint64_t count_ = 0;
};

// A GL program from two embedded GLSL sources (handoff::shaders::glsl names);
// throws handoff::Error with the info log on failure.
handoff::UniqueGlProgram build_program(const char* vertex_name, const char* fragment_name);

}  // namespace handoff::view
