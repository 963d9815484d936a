#include "frame_renderer.hpp"

#include <string>

#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/gl_check.hpp>
#include <handoff/log.hpp>
#include <handoff/shaders.hpp>

#include "color_fold.hpp"

namespace handoff::viewer {
namespace {

using handoff::detail::UniqueGlProgram;
using handoff::detail::UniqueGlShader;

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

FrameRenderer::FrameRenderer() {
  const char* fragments[2] = {"yuv_frame_frag", "yuv_frame_nearest_frag"};
  for (int i = 0; i < 2; ++i) {
    Program& p = programs_[i];
    p.id = build_program("yuv_frame_vert", fragments[i]);
    const GLuint id = p.id.get();
    p.matrix = glGetUniformLocation(id, "u_rgb_from_yuv");
    p.bias = glGetUniformLocation(id, "u_bias");
    p.frame_size = glGetUniformLocation(id, "u_frame_size");
    p.chroma_size = glGetUniformLocation(id, "u_chroma_size");
    p.siting = glGetUniformLocation(id, "u_siting");
    p.scale = glGetUniformLocation(id, "u_view_scale");
    p.offset = glGetUniformLocation(id, "u_view_offset");
    p.fb_size = glGetUniformLocation(id, "u_fb_size");
  }
  GLuint vao = 0;
  HANDOFF_GL_CHECK(glCreateVertexArrays(1, &vao), "FrameRenderer setup");
  vao_.reset(vao);
}

void FrameRenderer::clear_textures() noexcept {
  own_luma_.reset();
  own_chroma_.reset();
  luma_ = chroma_ = 0;
  width_ = height_ = 0;
  external_ = false;
}

namespace {
// How the shaders sample both plane textures: bilinear, one level, clamped.
void set_plane_sampling(GLuint luma, GLuint chroma) {
  for (GLuint t : {luma, chroma}) {
    glTextureParameteri(t, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTextureParameteri(t, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTextureParameteri(t, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTextureParameteri(t, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  }
}
}  // namespace

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

void FrameRenderer::use_external(PixelFormat format, std::uint32_t width, std::uint32_t height, GLuint luma,
                                 GLuint chroma) {
  check_texture_size("FrameRenderer::use_external", width, height);
  if (!luma || !chroma) throw UsageError("FrameRenderer::use_external: no plane texture");
  if (external_ && luma == luma_ && chroma == chroma_ && format == format_ && width == width_ && height == height_)
    return;
  clear_textures();
  HANDOFF_GL_CHECK(set_plane_sampling(luma, chroma), "external plane textures");
  luma_ = luma;
  chroma_ = chroma;
  external_ = true;
  format_ = format;
  width_ = width;
  height_ = height;
}

void FrameRenderer::configure(PixelFormat format, std::uint32_t width, std::uint32_t height) {
  check_texture_size("FrameRenderer::configure", width, height);
  if (!external_ && format == format_ && width == width_ && height == height_) return;
  clear_textures();
  const bool p010 = format == PixelFormat::P010;
  GLuint names[2] = {};
  glCreateTextures(GL_TEXTURE_2D, 2, names);
  own_luma_.reset(names[0]);
  own_chroma_.reset(names[1]);
  luma_ = names[0];
  chroma_ = names[1];
  glTextureStorage2D(luma_, 1, p010 ? GL_R16 : GL_R8, static_cast<GLsizei>(width),
                     static_cast<GLsizei>(height));
  glTextureStorage2D(chroma_, 1, p010 ? GL_RG16 : GL_RG8, static_cast<GLsizei>(chroma_width(width)),
                     static_cast<GLsizei>(chroma_height(height)));
  HANDOFF_GL_CHECK(set_plane_sampling(luma_, chroma_), "plane textures");
  format_ = format;
  width_ = width;
  height_ = height;
}

void FrameRenderer::upload_plane(GLuint tex, const Frame& frame, int index, const void* base) {
  const Plane& pl = frame.planes[static_cast<std::size_t>(index)];
  const std::size_t bps = bytes_per_sample(frame.format);
  const std::size_t group = bps * pl.components;  // bytes per texel
  const std::uint32_t want_w = index == 0 ? frame.width : chroma_width(frame.width);
  const std::uint32_t want_h = index == 0 ? frame.height : chroma_height(frame.height);
  const char* plane_name = index == 0 ? "luma" : "chroma";
  if (pl.width != want_w || pl.height != want_h || pl.components != (index == 0 ? 1u : 2u))
    throw UsageError(std::string("FrameRenderer::upload: ") + plane_name + " plane is " +
                     std::to_string(pl.width) + "x" + std::to_string(pl.height) + "x" +
                     std::to_string(pl.components) + ", expected " + std::to_string(want_w) + "x" +
                     std::to_string(want_h));
  if (pl.pitch < group * pl.width)
    throw UsageError(std::string("FrameRenderer::upload: ") + plane_name + " pitch " +
                     std::to_string(pl.pitch) + " is below the packed row of " +
                     std::to_string(group * pl.width) + " bytes");
  const GLenum fmt = index == 0 ? GL_RED : GL_RG;
  const GLenum type = bps == 1 ? GL_UNSIGNED_BYTE : GL_UNSIGNED_SHORT;
  const char* start = static_cast<const char*>(base);
  if (pl.pitch % group == 0) {
    glPixelStorei(GL_UNPACK_ROW_LENGTH, static_cast<GLint>(pl.pitch / group));
    glTextureSubImage2D(tex, 0, 0, 0, static_cast<GLsizei>(pl.width), static_cast<GLsizei>(pl.height),
                        fmt, type, start);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  } else {  // a pitch GL cannot express as a row length: one row at a time
    for (std::uint32_t r = 0; r < pl.height; ++r)
      glTextureSubImage2D(tex, 0, 0, static_cast<GLint>(r), static_cast<GLsizei>(pl.width), 1, fmt,
                          type, start + static_cast<std::size_t>(r) * pl.pitch);
  }
}

void FrameRenderer::upload(const Frame& frame) {
  if (frame.memory != MemoryKind::Host && frame.memory != MemoryKind::GlBuffer)
    throw UsageError("FrameRenderer::upload: frame memory must be Host or GlBuffer");
  if (frame.memory == MemoryKind::Host && (!frame.planes[0].data || !frame.planes[1].data))
    throw UsageError("FrameRenderer::upload: a host plane pointer is null");
  configure(frame.format, frame.width, frame.height);
  const bool gpu = frame.memory == MemoryKind::GlBuffer;
  {
    const UnpackScope unpack(gpu ? frame.gl_buffer : 0);
    for (int i = 0; i < 2; ++i) {
      const Plane& pl = frame.planes[static_cast<std::size_t>(i)];
      const void* base = gpu ? reinterpret_cast<const void*>(static_cast<std::uintptr_t>(pl.offset)) : pl.data;
      upload_plane(i == 0 ? luma_ : chroma_, frame, i, base);
    }
  }
  HANDOFF_GL_CHECK(glPixelStorei(GL_UNPACK_ROW_LENGTH, 0), "plane upload");
}

void FrameRenderer::draw(const DrawOptions& o, int fb_w, int fb_h) {
  glViewport(0, 0, fb_w, fb_h);
  glDisable(GL_SCISSOR_TEST);
  glClearColor(o.background[0], o.background[1], o.background[2], o.background[3]);
  glClear(GL_COLOR_BUFFER_BIT);
  if (!has_frame()) return;
  const ShaderColor sc = fold_color(o.colorimetry, format_);
  const Program& p = programs_[o.nearest ? 1 : 0];
  glUseProgram(p.id.get());
  glUniformMatrix3fv(p.matrix, 1, GL_FALSE, sc.rgb_from_yuv.data());
  glUniform3fv(p.bias, 1, sc.bias.data());
  glUniform2f(p.frame_size, static_cast<float>(width_), static_cast<float>(height_));
  glUniform2f(p.chroma_size, static_cast<float>(chroma_width(width_)), static_cast<float>(chroma_height(height_)));
  float sx = 0.0f, sy = 0.5f;  // Left: co-sited horizontally, between rows vertically
  if (o.colorimetry.siting == ChromaSiting::Center) sx = 0.5f;
  if (o.colorimetry.siting == ChromaSiting::TopLeft) sy = 0.0f;
  glUniform2f(p.siting, sx, sy);
  glUniform2f(p.scale, static_cast<float>(o.view.scale), static_cast<float>(o.view.scale));
  glUniform2f(p.offset, static_cast<float>(o.view.offset_x), static_cast<float>(o.view.offset_y));
  glUniform2f(p.fb_size, static_cast<float>(fb_w), static_cast<float>(fb_h));
  glBindTextureUnit(0, luma_);
  glBindTextureUnit(1, chroma_);
  glBindVertexArray(vao_.get());
  glDisable(GL_BLEND);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_CULL_FACE);
  glDrawArrays(GL_TRIANGLES, 0, 6);
  glBindVertexArray(0);
  HANDOFF_GL_CHECK(glUseProgram(0), "frame");
}

}  // namespace handoff::viewer
