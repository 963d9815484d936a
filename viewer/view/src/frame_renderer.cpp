#include "frame_renderer.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include <handoff/error.hpp>
#include <handoff/frame_copy.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/gl_check.hpp>
#include <handoff/gl_context.hpp>
#include <handoff/log.hpp>
#include <handoff/shaders.hpp>

#include "color_fold.hpp"
#include "page_buffer.hpp"
#include "view_convert.hpp"

namespace handoff::view {
namespace {

using handoff::UniqueGlProgram;
using handoff::UniqueGlShader;

UniqueGlShader compile(GLenum stage, const char* name) {
  const std::string_view src = shaders::glsl(name);
  UniqueGlShader s(glCreateShader(stage));
  const char* text = src.data();
  const GLint len = static_cast<GLint>(src.size());
  glShaderSource(s.get(), 1, &text, &len);
  glCompileShader(s.get());
  GLint ok = 0;
  glGetShaderiv(s.get(), GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log_text[2048] = {};
    glGetShaderInfoLog(s.get(), sizeof log_text, nullptr, log_text);
    throw Error(Api::Gl, "glCompileShader", 0, "GL_COMPILE_STATUS",
                std::string("shader '") + name + "': " + log_text, HANDOFF_WHERE);
  }
  return s;
}

// GL_UNPACK_ALIGNMENT 1 and `buffer` (0: none) bound to GL_PIXEL_UNPACK_BUFFER
// for its lifetime; the previous alignment and no unpack buffer after it.
class UnpackScope {
 public:
  explicit UnpackScope(GLuint buffer) : buffer_(buffer) {
    glGetIntegerv(GL_UNPACK_ALIGNMENT, &alignment_);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    if (buffer_) glBindBuffer(GL_PIXEL_UNPACK_BUFFER, buffer_);
  }
  ~UnpackScope() {
    if (buffer_) glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    glPixelStorei(GL_UNPACK_ALIGNMENT, alignment_);
  }
  UnpackScope(const UnpackScope&) = delete;
  UnpackScope& operator=(const UnpackScope&) = delete;

 private:
  GLuint buffer_;
  GLint alignment_ = 4;
};

}  // namespace

// The shaders are deleted on return: attached, they live as long as the program.
UniqueGlProgram build_program(const char* vertex_name, const char* fragment_name) {
  const UniqueGlShader vs = compile(GL_VERTEX_SHADER, vertex_name);
  const UniqueGlShader fs = compile(GL_FRAGMENT_SHADER, fragment_name);
  UniqueGlProgram p(glCreateProgram());
  glAttachShader(p.get(), vs.get());
  glAttachShader(p.get(), fs.get());
  glLinkProgram(p.get());
  GLint ok = 0;
  glGetProgramiv(p.get(), GL_LINK_STATUS, &ok);
  if (!ok) {
    char log_text[2048] = {};
    glGetProgramInfoLog(p.get(), sizeof log_text, nullptr, log_text);
    throw Error(Api::Gl, "glLinkProgram", 0, "GL_LINK_STATUS",
                std::string(vertex_name) + " + " + fragment_name + ": " + log_text, HANDOFF_WHERE);
  }
  return p;
}

std::uint32_t gl_max_texture_size() {
  GLint max = 0;
  HANDOFF_GL_CHECK(glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max), "GL_MAX_TEXTURE_SIZE");
  return max > 0 ? std::uint32_t(max) : 0u;
}

void check_texture_size(const char* what, std::uint32_t width, std::uint32_t height) {
  validate_dimensions(width, height);  // the library's limit and message first
  const std::uint32_t max = gl_max_texture_size();
  if (width > max || height > max)
    throw UsageError(std::string(what) + ": " + std::to_string(width) + "x" + std::to_string(height) +
                     " exceeds this GL's GL_MAX_TEXTURE_SIZE of " + std::to_string(max));
}

std::optional<InvalidFrame> texture_size_refusal(const std::string& who, std::uint32_t width, std::uint32_t height,
                                                 std::uint32_t max) {
  if (max == 0 || (width <= max && height <= max)) return std::nullopt;
  const bool wide = width > max;
  return InvalidFrame(wide ? "width" : "height",
                      "a " + std::to_string(width) + "x" + std::to_string(height) + " frame is " +
                          (wide ? "wider" : "taller") + " than " + who + " can show: its GL's GL_MAX_TEXTURE_SIZE is " +
                          std::to_string(max));
}

void RefusedFrames::add(const std::string& what) {
  if (count_++ == 0)
    log(LogLevel::Warning, what + " (left out; the display goes on, and counts such frames in its diagnostics)");
  if (report_) report_(what);
}

// ---------------------------------------------------------------------------
// PlaneTextures

// One texture per plane where GL has a format that holds the plane's element
// as it is stored, so that the upload is a plain copy and filtering mixes
// whole samples:
//  - nv12 / p010: R8 / R16 luma, RG8 / RG16 chroma pairs (half size);
//  - i420: three planes, Y in R8, U and V in R16 (yuv_planar_frame_frag);
//  - yuyv / uyvy: the one plane twice: as RG8 (Y, U-or-V per pixel: luma,
//    swizzled to .r for uyvy) and as RGBA16 (one texel per 4:2:2 pair:
//    Y0 U Y1 V / U Y0 V Y1, swizzled so that .r is U and .g is V), so that
//    bilinear filtering interpolates luma per pixel and chroma per pair, as
//    for the planar formats. The 8-bit chroma of both is uploaded into 16-bit
//    textures (GL converts the bytes on upload) because chroma is always
//    interpolated, and texture units that filter 8-bit texels return 8-bit
//    results (llvmpipe does): the mix of two chroma codes would be rounded
//    to a code before the matrix, up to 2 codes off in R'G'B'. nv12 keeps its
//    RG8 chroma (its CPU path converts in float);
//  - rgb8 / rgba8 as RGB8 / RGBA8, bgr8 / bgra8 uploaded as GL_BGR / GL_BGRA
//    into the same (GL reorders on upload: the shader reads R, G, B alike);
//  - gray8 / gray16 as R8 / R16 (UNORM: the shader maps 0..1), gray32f as
//    R32F (the floats themselves: ranges, NaN and inf survive; desktop GL
//    filters 32-bit float textures).
TextureSpecs frame_textures(PixelFormat f, std::uint32_t w, std::uint32_t h) {
  const std::uint32_t cw = chroma_width(w), ch = chroma_height(h);
  const auto one = [](int plane, GLenum internal, GLenum format, GLenum type, std::uint32_t tw, std::uint32_t th,
                      std::size_t bytes) {
    TextureSpec t;
    t.plane = plane;
    t.internal = internal;
    t.format = format;
    t.type = type;
    t.width = tw;
    t.height = th;
    t.texel_bytes = bytes;
    return t;
  };
  TextureSpecs s;
  const auto add = [&s](TextureSpec t) { s.spec[std::size_t(s.count++)] = t; };
  switch (f) {
    case PixelFormat::NV12:
      add(one(0, GL_R8, GL_RED, GL_UNSIGNED_BYTE, w, h, 1));
      add(one(1, GL_RG8, GL_RG, GL_UNSIGNED_BYTE, cw, ch, 2));
      break;
    case PixelFormat::P010:
      add(one(0, GL_R16, GL_RED, GL_UNSIGNED_SHORT, w, h, 2));
      add(one(1, GL_RG16, GL_RG, GL_UNSIGNED_SHORT, cw, ch, 4));
      break;
    case PixelFormat::I420: {
      add(one(0, GL_R8, GL_RED, GL_UNSIGNED_BYTE, w, h, 1));
      add(one(1, GL_R16, GL_RED, GL_UNSIGNED_BYTE, cw, ch, 1));
      add(one(2, GL_R16, GL_RED, GL_UNSIGNED_BYTE, cw, ch, 1));
      break;
    }
    case PixelFormat::YUYV:
    case PixelFormat::UYVY: {
      const bool yuyv = f == PixelFormat::YUYV;
      // Luma: the first W texels of each row (an odd width's padding sample is
      // not drawn, and the texture is the frame's width as the shaders expect).
      TextureSpec luma = one(0, GL_RG8, GL_RG, GL_UNSIGNED_BYTE, w, h, 2);
      if (!yuyv) luma.swizzle = {GL_GREEN, GL_RED, GL_ZERO, GL_ONE};
      TextureSpec pairs = one(0, GL_RGBA16, GL_RGBA, GL_UNSIGNED_BYTE, cw, h, 4);
      pairs.swizzle = yuyv ? std::array<GLint, 4>{GL_GREEN, GL_ALPHA, GL_ZERO, GL_ONE}
                           : std::array<GLint, 4>{GL_RED, GL_BLUE, GL_ZERO, GL_ONE};
      add(luma);
      add(pairs);
      break;
    }
    case PixelFormat::RGB8: add(one(0, GL_RGB8, GL_RGB, GL_UNSIGNED_BYTE, w, h, 3)); break;
    case PixelFormat::BGR8: add(one(0, GL_RGB8, GL_BGR, GL_UNSIGNED_BYTE, w, h, 3)); break;
    case PixelFormat::RGBA8: add(one(0, GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, w, h, 4)); break;
    case PixelFormat::BGRA8: add(one(0, GL_RGBA8, GL_BGRA, GL_UNSIGNED_BYTE, w, h, 4)); break;
    case PixelFormat::GRAY8: add(one(0, GL_R8, GL_RED, GL_UNSIGNED_BYTE, w, h, 1)); break;
    case PixelFormat::GRAY16: add(one(0, GL_R16, GL_RED, GL_UNSIGNED_SHORT, w, h, 2)); break;
    case PixelFormat::GRAY32F: add(one(0, GL_R32F, GL_RED, GL_FLOAT, w, h, 4)); break;
    default:
      throw InvalidFrame("format", "pixel format " + std::to_string(int(f)) + " is not one of " +
                                       spellings<PixelFormat>());
  }
  return s;
}

ChromaGrid chroma_grid(PixelFormat f, std::uint32_t w, std::uint32_t h) {
  const bool packed422 = f == PixelFormat::YUYV || f == PixelFormat::UYVY;
  return ChromaGrid{chroma_width(w), packed422 ? h : chroma_height(h), 2, packed422 ? 1u : 2u};
}

namespace {

// How the shaders sample a texture: bilinear, one level, clamped, through
// the spec's swizzle (identity for external textures).
void set_sampling(GLuint t, const std::array<GLint, 4>& swizzle) {
  glTextureParameteri(t, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTextureParameteri(t, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTextureParameteri(t, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTextureParameteri(t, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glTextureParameteriv(t, GL_TEXTURE_SWIZZLE_RGBA, swizzle.data());
}

// One texture of `frame` from its plane at `base` (a host pointer, or an
// offset in the bound GL_PIXEL_UNPACK_BUFFER).
void upload_texture(GLuint tex, const TextureSpec& t, const Frame& frame, const void* base) {
  const Plane& pl = frame.planes[std::size_t(t.plane)];
  const char* start = static_cast<const char*>(base);
  if (pl.pitch % t.texel_bytes == 0) {
    glPixelStorei(GL_UNPACK_ROW_LENGTH, static_cast<GLint>(pl.pitch / t.texel_bytes));
    glTextureSubImage2D(tex, 0, 0, 0, GLsizei(t.width), GLsizei(t.height), t.format, t.type, start);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  } else {  // a pitch GL cannot express as a row length: one row at a time
    for (std::uint32_t r = 0; r < t.height; ++r)
      glTextureSubImage2D(tex, 0, 0, GLint(r), GLsizei(t.width), 1, t.format, t.type,
                          start + std::size_t(r) * pl.pitch);
  }
}

}  // namespace

void PlaneTextures::clear() noexcept {
  for (auto& t : own_) t.reset();
  tex_ = {};
  count_ = 0;
  width_ = height_ = 0;
  external_ = false;
}

void PlaneTextures::use_external(PixelFormat format, std::uint32_t width, std::uint32_t height, GLuint luma,
                                 GLuint chroma) {
  if (external_ && luma == tex_[0] && chroma == tex_[1] && format == format_ && width == width_ &&
      height == height_)
    return;
  clear();
  constexpr std::array<GLint, 4> identity{GL_RED, GL_GREEN, GL_BLUE, GL_ALPHA};
  set_sampling(luma, identity);
  HANDOFF_GL_CHECK(set_sampling(chroma, identity), "external plane textures");
  tex_ = {luma, chroma, 0};
  count_ = 2;
  external_ = true;
  format_ = format;
  width_ = width;
  height_ = height;
}

void PlaneTextures::configure(PixelFormat format, std::uint32_t width, std::uint32_t height) {
  if (!external_ && count_ > 0 && format == format_ && width == width_ && height == height_) return;
  clear();
  const TextureSpecs specs = frame_textures(format, width, height);
  GLuint names[kMaxPlanes] = {};
  glCreateTextures(GL_TEXTURE_2D, specs.count, names);
  for (int i = 0; i < specs.count; ++i) {
    const TextureSpec& t = specs.spec[std::size_t(i)];
    own_[std::size_t(i)].reset(names[i]);
    tex_[std::size_t(i)] = names[i];
    glTextureStorage2D(names[i], 1, t.internal, GLsizei(t.width), GLsizei(t.height));
    set_sampling(names[i], t.swizzle);
  }
  count_ = specs.count;
  HANDOFF_GL_CHECK(glTextureParameteri(names[0], GL_TEXTURE_MAX_LEVEL, 0), "frame textures");
  format_ = format;
  width_ = width;
  height_ = height;
}

void PlaneTextures::upload(const Frame& frame) const {
  const bool gpu = frame.memory == MemoryKind::GlBuffer;
  const TextureSpecs specs = frame_textures(format_, width_, height_);
  {
    const UnpackScope unpack(gpu ? frame.gl_buffer : 0);
    for (int i = 0; i < specs.count; ++i) {
      const TextureSpec& t = specs.spec[std::size_t(i)];
      const Plane& pl = frame.planes[std::size_t(t.plane)];
      const void* base = gpu ? reinterpret_cast<const void*>(static_cast<std::uintptr_t>(pl.offset)) : pl.data;
      upload_texture(tex_[std::size_t(i)], t, frame, base);
    }
  }
  HANDOFF_GL_CHECK(glPixelStorei(GL_UNPACK_ROW_LENGTH, 0), "plane upload");
}

// ---------------------------------------------------------------------------
// The shader path

namespace {

// A grey frame's range as the grey shader's uniforms (and ViewConverter's
// GrayMapping): in the units the texture returns (UNORM 0..1 for gray8 /
// gray16, the float itself for gray32f); none: the format's full range.
// float_mapping: finite uniforms for any finite range, however wide, narrow
// or far out (a gray32f frame's data picks it: nothing it holds may stop the display).
GrayMapping gray_mapping(PixelFormat format, const std::optional<ValueRange>& range) {
  const double unit = format == PixelFormat::GRAY8 ? 255.0 : format == PixelFormat::GRAY16 ? 65535.0 : 1.0;
  const ValueRange r = range.value_or(ValueRange{0.0, unit});
  const FloatMapping m = float_mapping(r.lo / unit, r.hi / unit);
  return GrayMapping{m.lo, m.scale, kNonFiniteGray, m.prescale, m.offset};
}

class ShaderColorPath final : public ColorPath {
 public:
  ShaderColorPath();  // compiles both programs (handoff::Error on failure)

  void take(const Frame& frame, const PlaneTextures& textures) override { textures.upload(frame); }
  void sync(const PlaneTextures&) override {}  // the textures always hold the frame
  void draw(const DrawOptions& options, int fb_w, int fb_h, const PlaneTextures& textures) override;
  bool converts_on_cpu() const override { return false; }

 private:
  // How the codes become R'G'B': a program per kind and filter.
  enum Kind { kYuv, kYuvPlanar, kRgb, kGray, kKinds };
  static Kind kind_of(PixelFormat f) {
    return f == PixelFormat::I420 ? kYuvPlanar : is_yuv(f) ? kYuv : is_rgb(f) ? kRgb : kGray;
  }
  struct Program {
    UniqueGlProgram id;
    GLint matrix = -1, bias = -1, frame_size = -1, chroma_size = -1, siting = -1, subsample = -1, scale = -1,
          offset = -1, fb_size = -1, lo = -1, value_scale = -1, non_finite = -1, prescale = -1, value_offset = -1;
  };
  static void set_uniforms(const Program& p, const DrawOptions& o, int fb_w, int fb_h, const PlaneTextures& t);

  Program programs_[kKinds][2];  // [kind][0] linear, [kind][1] nearest
  handoff::UniqueGlVertexArray vao_;
};

ShaderColorPath::ShaderColorPath() {
  const char* fragments[kKinds][2] = {{"yuv_frame_frag", "yuv_frame_nearest_frag"},
                                      {"yuv_planar_frame_frag", "yuv_planar_frame_nearest_frag"},
                                      {"rgb_frame_frag", "rgb_frame_nearest_frag"},
                                      {"gray_frame_frag", "gray_frame_nearest_frag"}};
  for (int k = 0; k < kKinds; ++k)
    for (int i = 0; i < 2; ++i) {
      Program& p = programs_[k][i];
      p.id = build_program("yuv_frame_vert", fragments[k][i]);
      const GLuint id = p.id.get();
      p.matrix = glGetUniformLocation(id, "u_rgb_from_yuv");
      p.bias = glGetUniformLocation(id, "u_bias");
      p.frame_size = glGetUniformLocation(id, "u_frame_size");
      p.chroma_size = glGetUniformLocation(id, "u_chroma_size");
      p.siting = glGetUniformLocation(id, "u_siting");
      p.subsample = glGetUniformLocation(id, "u_subsample");
      p.scale = glGetUniformLocation(id, "u_view_scale");
      p.offset = glGetUniformLocation(id, "u_view_offset");
      p.fb_size = glGetUniformLocation(id, "u_fb_size");
      p.lo = glGetUniformLocation(id, "u_lo");
      p.value_scale = glGetUniformLocation(id, "u_scale");
      p.non_finite = glGetUniformLocation(id, "u_non_finite");
      p.prescale = glGetUniformLocation(id, "u_prescale");
      p.value_offset = glGetUniformLocation(id, "u_offset");
    }
  GLuint vao = 0;
  HANDOFF_GL_CHECK(glCreateVertexArrays(1, &vao), "FrameRenderer setup");
  vao_.reset(vao);
}

// The colorimetry folded into a matrix and bias, the grey mapping, the sizes
// the shaders sample by and the view transform (uniforms a program does not
// have are at location -1, which GL ignores).
void ShaderColorPath::set_uniforms(const Program& p, const DrawOptions& o, int fb_w, int fb_h,
                                   const PlaneTextures& t) {
  if (is_yuv(t.format())) {
    const ShaderColor sc = fold_color(o.colorimetry, t.format());
    glUniformMatrix3fv(p.matrix, 1, GL_FALSE, sc.rgb_from_yuv.data());
    glUniform3fv(p.bias, 1, sc.bias.data());
  }
  if (is_gray(t.format())) {
    const GrayMapping g = gray_mapping(t.format(), o.value_range);
    glUniform1f(p.lo, g.lo);
    glUniform1f(p.value_scale, g.scale);
    glUniform1f(p.prescale, g.prescale);
    glUniform1f(p.value_offset, g.offset);
    glUniform3f(p.non_finite, g.non_finite, g.non_finite, g.non_finite);
  }
  glUniform2f(p.frame_size, static_cast<float>(t.width()), static_cast<float>(t.height()));
  const ChromaGrid g = chroma_grid(t.format(), t.width(), t.height());
  glUniform2f(p.chroma_size, static_cast<float>(g.width), static_cast<float>(g.height));
  glUniform2f(p.subsample, static_cast<float>(g.sub_x), static_cast<float>(g.sub_y));
  const ChromaOffset siting = chroma_offset(o.colorimetry.siting);
  // 4:2:2 has a chroma sample on every row: only the horizontal siting applies.
  glUniform2f(p.siting, static_cast<float>(siting.x), g.sub_y == 1 ? 0.0f : static_cast<float>(siting.y));
  glUniform2f(p.scale, static_cast<float>(o.view.scale), static_cast<float>(o.view.scale));
  glUniform2f(p.offset, static_cast<float>(o.view.offset_x), static_cast<float>(o.view.offset_y));
  glUniform2f(p.fb_size, static_cast<float>(fb_w), static_cast<float>(fb_h));
}

void ShaderColorPath::draw(const DrawOptions& o, int fb_w, int fb_h, const PlaneTextures& t) {
  glClear(GL_COLOR_BUFFER_BIT);
  const Program& p = programs_[kind_of(t.format())][o.nearest ? 1 : 0];
  glUseProgram(p.id.get());
  set_uniforms(p, o, fb_w, fb_h, t);
  glBindTextureUnit(0, t.texture(0));
  glBindTextureUnit(1, t.texture(1));  // 0 (none) for RGB and grey
  if (t.count() > 2) glBindTextureUnit(2, t.texture(2));
  glBindVertexArray(vao_.get());
  glDisable(GL_BLEND);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_CULL_FACE);
  glDrawArrays(GL_TRIANGLES, 0, 6);
  glBindVertexArray(0);
  HANDOFF_GL_CHECK(glUseProgram(0), "frame");
}

// ---------------------------------------------------------------------------
// The CPU path

// The read framebuffer binding for a scope, restored after it.
class ReadFramebufferScope {
 public:
  ReadFramebufferScope() { glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &previous_); }
  ~ReadFramebufferScope() { glBindFramebuffer(GL_READ_FRAMEBUFFER, static_cast<GLuint>(previous_)); }
  ReadFramebufferScope(const ReadFramebufferScope&) = delete;
  ReadFramebufferScope& operator=(const ReadFramebufferScope&) = delete;

 private:
  GLint previous_ = 0;
};

// Clears the framebuffer but `r` (the blit covers it): on llvmpipe a full
// clear is a pass over every pixel before the copy.
void clear_outside(const PixelRect& r, int fb_w, int fb_h) {
  if (r.empty()) {
    glClear(GL_COLOR_BUFFER_BIT);
    return;
  }
  glEnable(GL_SCISSOR_TEST);
  const auto clear = [fb_h](int x0, int y0, int x1, int y1) {  // top-left origin; GL's boxes count from the bottom
    if (x1 <= x0 || y1 <= y0) return;
    glScissor(x0, fb_h - y1, x1 - x0, y1 - y0);
    glClear(GL_COLOR_BUFFER_BIT);
  };
  clear(0, 0, fb_w, r.y0);
  clear(0, r.y1, fb_w, fb_h);
  clear(0, r.y0, r.x0, r.y1);
  clear(r.x1, r.y0, fb_w, r.y1);
  glDisable(GL_SCISSOR_TEST);
}

// The converted rect reaches the framebuffer as a blit of a texture in the
// destination's own byte order and row order, so that Mesa copies it
// (util_try_blit_via_copy_region: same format, no scaling, no flip) instead of
// drawing it: window framebuffers store the top row first, FBOs the bottom one.
// Any GL draws the same pixels either way; only the cost differs.
class CpuColorPath final : public ColorPath {
 public:
  void take(const Frame& frame, const PlaneTextures& textures) override;
  void sync(const PlaneTextures& textures) override;
  void draw(const DrawOptions& options, int fb_w, int fb_h, const PlaneTextures& textures) override;
  bool converts_on_cpu() const override { return true; }
  bool layers_drawn() const override { return layers_drawn_; }
  std::optional<Frame> host_copy() const override {
    return host_.generation ? std::optional<Frame>(host_frame()) : std::nullopt;
  }

 private:
  // What view_texture_ holds: the frame, how it was shown and for which framebuffer.
  struct ConvertKey {
    std::uint64_t generation = 0;
    ViewTransform view{};
    bool nearest = false;
    Colorimetry colorimetry{};
    PixelRect rect{};
    ByteOrder order = ByteOrder::Rgba;
    bool top_down = false;
    bool with_layers = false;     // DrawOptions::cpu_layers drawn in
    std::uint64_t layers_key = 0;  // and its key
    std::optional<ValueRange> value_range;  // grey frames' range
    bool operator==(const ConvertKey&) const = default;
  };

  bool holds(const PlaneTextures& textures) const;  // the host copy is the textures' frame
  Frame host_frame() const;                         // the host copy as a host frame
  void copy_from_gl_buffer(const Frame& frame);     // a GlBuffer frame's planes, as they are pitched
  // False: this framebuffer takes the shader (multisampled).
  bool blit_converted(const DrawOptions& o, int fb_w, int fb_h);
  ConvertKey key_for(const DrawOptions& o, int fb_w, int fb_h, GLuint draw_fbo) const;
  void convert(const ConvertKey& key, const DrawOptions& o);  // into view_texture_
  void make_view_texture(const PixelRect& r, GLenum format);
  void blit(const ConvertKey& key, int fb_h) const;

  ShaderColorPath shader_;  // for what the blit cannot do: multisampled framebuffers, external textures
  struct HostCopy {
    FrameLayout layout;  // packed, one buffer per plane (layout.width 0: nothing taken)
    PageBuffer planes[kMaxPlanes];
    std::uint64_t generation = 0;  // counts uploads
  } host_;
  bool textures_behind_ = false;  // the textures hold an older frame than host_
  std::unique_ptr<ViewConverter> converter_;  // made on the first CPU draw (its threads with it)
  handoff::UniqueGlTexture view_texture_;  // the converted pixels: converted_.rect's size and order
  handoff::UniqueGlFramebuffer view_fbo_;  // view_texture_, the blit's source
  PageBuffer view_pixels_;
  ConvertKey converted_{};  // what view_texture_ holds (generation 0: nothing)
  bool layers_drawn_ = false;  // by the last draw
};

bool CpuColorPath::holds(const PlaneTextures& t) const {
  const FrameLayout& l = host_.layout;
  return host_.generation != 0 && l.format == t.format() && l.width == t.width() && l.height == t.height();
}

Frame CpuColorPath::host_frame() const {
  return host_.layout.describe(MemoryKind::Host, {const_cast<std::uint8_t*>(host_.planes[0].data()),
                                                  const_cast<std::uint8_t*>(host_.planes[1].data()),
                                                  const_cast<std::uint8_t*>(host_.planes[2].data())});
}

// Host planes are copied (copy_frame); a GL buffer's are read with
// glGetNamedBufferSubData (llvmpipe: a memcpy) straight into the host copy.
void CpuColorPath::take(const Frame& frame, const PlaneTextures& textures) {
  (void)textures;  // uploaded only when something samples them (sync())
  host_.layout = FrameLayout::packed(frame.format, frame.width, frame.height);
  // A GL buffer's planes keep their pitches: each is read in one piece
  // straight into the host copy (no staging copy as well).
  if (frame.memory == MemoryKind::GlBuffer)
    for (std::size_t i = 0; i < std::size_t(plane_count(frame.format)); ++i)
      host_.layout.planes[i].pitch = frame.planes[i].pitch;
  for (int i = 0; i < plane_count(frame.format); ++i)
    host_.planes[std::size_t(i)].resize(host_.layout.buffer_bytes(std::size_t(i)));
  if (frame.memory == MemoryKind::GlBuffer) copy_from_gl_buffer(frame);
  else copy_frame(frame, host_frame());
  ++host_.generation;
  textures_behind_ = true;
}

void CpuColorPath::copy_from_gl_buffer(const Frame& frame) {
  for (std::size_t i = 0; i < std::size_t(plane_count(frame.format)); ++i) {
    const std::size_t span = plane_span_bytes(host_.layout.pitch(int(i)), frame.planes[i].height,
                                              host_.layout.plane(int(i)).row_bytes);
    HANDOFF_GL_CHECK(glGetNamedBufferSubData(frame.gl_buffer, static_cast<GLintptr>(frame.planes[i].offset),
                                             static_cast<GLsizeiptr>(span), host_.planes[i].data()),
                     "frame planes to host memory");
  }
}

void CpuColorPath::sync(const PlaneTextures& textures) {
  if (!textures_behind_ || textures.external() || textures.empty() || !holds(textures)) return;
  textures_behind_ = false;
  textures.upload(host_frame());
}

void CpuColorPath::draw(const DrawOptions& o, int fb_w, int fb_h, const PlaneTextures& textures) {
  layers_drawn_ = false;
  if (!textures.external() && holds(textures) && blit_converted(o, fb_w, fb_h)) {  // it clears around the frame
    layers_drawn_ = o.cpu_layers != nullptr;
    return;
  }
  sync(textures);
  shader_.draw(o, fb_w, fb_h, textures);
}

bool CpuColorPath::blit_converted(const DrawOptions& o, int fb_w, int fb_h) {
  GLint draw_fbo = 0, sample_buffers = 0;
  glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &draw_fbo);
  glGetIntegerv(GL_SAMPLE_BUFFERS, &sample_buffers);
  if (sample_buffers > 0) return false;  // a blit into a multisampled framebuffer is an error
  const ReadFramebufferScope read_scope;
  const ConvertKey key = key_for(o, fb_w, fb_h, static_cast<GLuint>(draw_fbo));
  clear_outside(key.rect, fb_w, fb_h);
  if (key.rect.empty()) return true;  // the frame is outside the view: the background is all there is
  if (!(key == converted_)) convert(key, o);
  blit(key, fb_h);
  return true;
}

// The frame as shown into the draw framebuffer `draw_fbo` (bound for reading
// here, to learn its byte order).
CpuColorPath::ConvertKey CpuColorPath::key_for(const DrawOptions& o, int fb_w, int fb_h, GLuint draw_fbo) const {
  GLint read_format = GL_RGBA;
  glBindFramebuffer(GL_READ_FRAMEBUFFER, draw_fbo);
  GLint read_buffer = GL_NONE;
  glGetIntegerv(GL_READ_BUFFER, &read_buffer);
  if (read_buffer != GL_NONE) glGetIntegerv(GL_IMPLEMENTATION_COLOR_READ_FORMAT, &read_format);
  ConvertKey key;
  key.generation = host_.generation;
  key.view = o.view;
  key.nearest = o.nearest;
  key.colorimetry = o.colorimetry;
  key.rect = covered_pixels(host_.layout.width, host_.layout.height, o.view, fb_w, fb_h);
  // Window surfaces hold B, G, R, A/X bytes (X TrueColor visuals and Wayland's
  // ARGB8888 on little-endian machines); GL cannot say so (Mesa answers
  // GL_RGBA for B8G8R8X8), so the order of an FBO comes from its read format.
  key.order = draw_fbo == 0 || read_format == GL_BGRA ? ByteOrder::Bgra : ByteOrder::Rgba;
  key.top_down = draw_fbo == 0;
  key.with_layers = o.cpu_layers != nullptr;
  key.layers_key = o.cpu_layers ? o.cpu_layers->key : 0;
  key.value_range = o.value_range;
  return key;
}

void CpuColorPath::convert(const ConvertKey& key, const DrawOptions& o) {
  const PixelRect& r = key.rect;
  if (!converter_) converter_ = std::make_unique<ViewConverter>();
  const std::size_t row = std::size_t(r.width()) * 4;
  view_pixels_.resize(row * std::size_t(r.height()));
  std::uint8_t* first = key.top_down ? view_pixels_.data() : view_pixels_.data() + row * std::size_t(r.height() - 1);
  const std::ptrdiff_t pitch = key.top_down ? std::ptrdiff_t(row) : -std::ptrdiff_t(row);
  // The layers are blended into the rows as they are converted, while cached.
  RowsDone layer_rows;
  if (o.cpu_layers && o.cpu_layers->prepare(r, key.order))
    layer_rows = [&o, first, pitch](int a, int b) { o.cpu_layers->rows(a, b, first, pitch); };
  converter_->convert(host_planes(host_frame()), key.colorimetry, key.view, key.nearest, r, key.order, first, pitch,
                      gray_mapping(host_.layout.format, o.value_range), layer_rows);
  const GLenum format = key.order == ByteOrder::Bgra ? GL_BGRA : GL_RGBA;
  const PixelRect& had = converted_.rect;
  if (!view_texture_ || had.width() != r.width() || had.height() != r.height() || converted_.order != key.order)
    make_view_texture(r, format);
  {
    const UnpackScope unpack(0);
    glTextureSubImage2D(view_texture_.get(), 0, 0, 0, r.width(), r.height(), format, GL_UNSIGNED_BYTE,
                        view_pixels_.data());
  }
  converted_ = key;
}

void CpuColorPath::make_view_texture(const PixelRect& r, GLenum format) {
  view_fbo_.reset();
  view_texture_.reset();
  GLuint name = 0;
  glCreateTextures(GL_TEXTURE_2D, 1, &name);
  view_texture_.reset(name);
  // An unsized internal format: GL stores it in `format`'s own byte order.
  GLint bound = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &bound);
  glBindTexture(GL_TEXTURE_2D, name);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, r.width(), r.height(), 0, format, GL_UNSIGNED_BYTE, nullptr);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(bound));
  glTextureParameteri(name, GL_TEXTURE_MAX_LEVEL, 0);
  glCreateFramebuffers(1, &name);
  view_fbo_.reset(name);
  glNamedFramebufferTexture(name, GL_COLOR_ATTACHMENT0, view_texture_.get(), 0);
}

void CpuColorPath::blit(const ConvertKey& key, int fb_h) const {
  const PixelRect& r = key.rect;
  // GL's window coordinates count rows from the bottom.
  const int gl_y0 = fb_h - r.y1, gl_y1 = fb_h - r.y0;
  glBindFramebuffer(GL_READ_FRAMEBUFFER, view_fbo_.get());
  // dst Y0 is where the texture's row 0 lands: the rect's top row when the buffer was written top-down.
  const int dst_y0 = key.top_down ? gl_y1 : gl_y0, dst_y1 = key.top_down ? gl_y0 : gl_y1;
  HANDOFF_GL_CHECK(glBlitFramebuffer(0, 0, r.width(), r.height(), r.x0, dst_y0, r.x1, dst_y1, GL_COLOR_BUFFER_BIT,
                                     GL_NEAREST),
                   "frame (converted on the CPU)");
}

}  // namespace

// ---------------------------------------------------------------------------
// FrameRenderer

// The colour path is chosen here, once: what ViewerConvert asks for on this GL.
FrameRenderer::FrameRenderer(ViewerConvert convert) : max_texture_size_(gl_max_texture_size()) {
  const char* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  const std::string name = renderer ? renderer : "unknown";
  const bool software = is_software_renderer(name);
  if (convert == ViewerConvert::Cpu || (convert == ViewerConvert::Auto && software)) {
    path_ = std::make_unique<CpuColorPath>();
    convert_text_ = software ? "cpu, copied into the framebuffer (software rasteriser: " + name + ")"
                             : "cpu, copied into the framebuffer (asked for; GL: " + name + ")";
  } else {
    path_ = std::make_unique<ShaderColorPath>();
    convert_text_ = std::string("gpu shader (") + (convert == ViewerConvert::Gpu && software ? "asked for; " : "") +
                    "GL: " + name + ")";
  }
}

void FrameRenderer::configure(PixelFormat format, std::uint32_t width, std::uint32_t height) {
  check_texture_size("FrameRenderer::configure", width, height);
  // Another stream shape: the automatic range starts again from its first frame.
  if (format != textures_.format() || width != textures_.width() || height != textures_.height()) auto_range_.reset();
  textures_.configure(format, width, height);
}

void FrameRenderer::use_external(PixelFormat format, std::uint32_t width, std::uint32_t height, GLuint luma,
                                 GLuint chroma) {
  check_texture_size("FrameRenderer::use_external", width, height);
  require_format(format, {PixelFormat::NV12, PixelFormat::P010}, "FrameRenderer::use_external (two plane textures)");
  if (!luma || !chroma) throw UsageError("FrameRenderer::use_external: no plane texture");
  textures_.use_external(format, width, height, luma, chroma);
}

void FrameRenderer::upload(const Frame& frame) {
  if (frame.memory != MemoryKind::Host && frame.memory != MemoryKind::GlBuffer)
    throw UsageError("FrameRenderer::upload: frame memory must be Host or GlBuffer");
  validate(frame);  // the planes' shape, pitch, pointers or offsets, each named
  configure(frame.format, frame.width, frame.height);  // and this GL's texture size limit
  if (frame.format == PixelFormat::GRAY32F) update_auto_range(frame);
  path_->take(frame, textures_);
}

// Up to kRows rows evenly spread, up to kColumns values of each: enough for
// the percentiles, a small fixed cost at any frame size. A GL buffer's rows
// are read back (a sync with the GPU; the display thread's own upload).
void FrameRenderer::update_auto_range(const Frame& frame) {
  constexpr std::uint32_t kRows = 128, kColumns = 256;
  const Plane& pl = frame.planes[0];
  const std::uint32_t rows = std::min(kRows, pl.height), step_x = std::max(1u, pl.width / kColumns);
  range_samples_.clear();
  std::vector<float> row(pl.width);
  for (std::uint32_t k = 0; k < rows; ++k) {
    const std::uint32_t r = std::uint32_t(std::uint64_t(k) * pl.height / rows);
    const std::size_t at = std::size_t(r) * pl.pitch;
    if (frame.memory == MemoryKind::GlBuffer)
      HANDOFF_GL_CHECK(glGetNamedBufferSubData(frame.gl_buffer, GLintptr(pl.offset + at),
                                               GLsizeiptr(row.size() * sizeof(float)), row.data()),
                       "gray32f values for the automatic range");
    else
      std::memcpy(row.data(), static_cast<const char*>(pl.data) + at, row.size() * sizeof(float));
    for (std::uint32_t x = 0; x < pl.width; x += step_x) range_samples_.push_back(row[x]);
  }
  auto_range_.update(range_samples_.data(), range_samples_.size());
}

std::optional<ValueRange> FrameRenderer::gray_range(const std::optional<ValueRange>& user) const {
  if (!has_frame()) return std::nullopt;
  switch (format()) {
    case PixelFormat::GRAY8: return ValueRange{0.0, 255.0};
    case PixelFormat::GRAY16: return user.value_or(ValueRange{0.0, 65535.0});
    case PixelFormat::GRAY32F: return user ? user : auto_range().value_or(ValueRange{0.0, 1.0});
    default: return std::nullopt;
  }
}

GLuint FrameRenderer::texture(int i) const {
  path_->sync(textures_);
  return textures_.texture(i);
}

GLuint FrameRenderer::luma_texture() const {
  path_->sync(textures_);
  return textures_.luma();
}

GLuint FrameRenderer::chroma_texture() const {
  path_->sync(textures_);
  return textures_.chroma();
}

bool FrameRenderer::draw(const DrawOptions& o, int fb_w, int fb_h) {
  glViewport(0, 0, fb_w, fb_h);
  glDisable(GL_SCISSOR_TEST);
  glClearColor(o.background[0], o.background[1], o.background[2], o.background[3]);
  if (!has_frame()) {
    glClear(GL_COLOR_BUFFER_BIT);
    return false;
  }
  DrawOptions resolved = o;  // the grey range in the frame's units, whoever gave it
  resolved.value_range = gray_range(o.value_range);
  path_->draw(resolved, fb_w, fb_h, textures_);
  return path_->layers_drawn();
}

}  // namespace handoff::view
