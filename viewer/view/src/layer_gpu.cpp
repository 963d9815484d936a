#include "layer_gpu.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <handoff/error.hpp>
#include <handoff/gl_check.hpp>
#include <handoff/shaders.hpp>

namespace handoff::view {

namespace {

using handoff::UniqueGlProgram;
using handoff::UniqueGlShader;

// The compute shader `name` with `defines` put after its #version line.
UniqueGlProgram build_compute(const char* name, const std::string& defines) {
  const std::string_view src = shaders::glsl(name);
  const std::size_t eol = src.find('\n') + 1;
  const std::string text = std::string(src.substr(0, eol)) + defines + std::string(src.substr(eol));
  UniqueGlShader s(glCreateShader(GL_COMPUTE_SHADER));
  const char* p = text.c_str();
  glShaderSource(s.get(), 1, &p, nullptr);
  glCompileShader(s.get());
  GLint ok = 0;
  glGetShaderiv(s.get(), GL_COMPILE_STATUS, &ok);
  char log_text[2048] = {};
  if (!ok) {
    glGetShaderInfoLog(s.get(), sizeof log_text, nullptr, log_text);
    throw Error(Api::Gl, "glCompileShader", 0, "GL_COMPILE_STATUS",
                std::string("shader '") + name + "' (" + defines + "): " + log_text, HANDOFF_WHERE);
  }
  UniqueGlProgram program(glCreateProgram());
  glAttachShader(program.get(), s.get());
  glLinkProgram(program.get());
  glGetProgramiv(program.get(), GL_LINK_STATUS, &ok);
  if (!ok) {
    glGetProgramInfoLog(program.get(), sizeof log_text, nullptr, log_text);
    throw Error(Api::Gl, "glLinkProgram", 0, "GL_LINK_STATUS", std::string(name) + ": " + log_text, HANDOFF_WHERE);
  }
  return program;
}

UniqueGlProgram converter(int mode, const char* format) {
  return build_compute("layer_convert_comp",
                       "#define MODE " + std::to_string(mode) + "\n#define OUT_FORMAT " + format + "\n");
}

GLuint groups(std::uint32_t n, std::uint32_t size) { return GLuint((n + size - 1) / size); }

// One texel into client memory, whatever pack buffer was bound.
void read_texel(GLuint texture, std::uint32_t x, std::uint32_t y, GLenum format, GLenum type, void* out) {
  GLint pack_buffer = 0;
  glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &pack_buffer);
  glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
  HANDOFF_GL_CHECK(glGetTextureSubImage(texture, 0, GLint(x), GLint(y), 0, 1, 1, 1, format, type, 4, out),
                   "layer texel read-back");
  glBindBuffer(GL_PIXEL_PACK_BUFFER, GLuint(pack_buffer));
}

}  // namespace

LayerConverter::LayerConverter()
    : ids_{converter(0, "r8ui"), converter(0, "r16ui"), converter(0, "r32ui")},
      scalars_(converter(1, "r32f")),
      masks_(converter(2, "r16ui")),
      sample_float_(build_compute("layer_sample_comp", "#define FLOAT_TEXTURE 1\n")),
      sample_uint_(build_compute("layer_sample_comp", "#define FLOAT_TEXTURE 0\n")),
      sample_wide_(build_compute("layer_sample_comp", "#define FLOAT_TEXTURE 0\n#define WIDE_BUFFER 1\n")) {}

void LayerConverter::convert(GLuint program, const media::LayerArray& a, GLuint texture, GLenum image_format) {
  glUseProgram(program);
  glUniform2i(glGetUniformLocation(program, "u_size"), GLint(a.width), GLint(a.height));
  glUniform1i(glGetUniformLocation(program, "u_count"), GLint(a.count));
  glUniform1i(glGetUniformLocation(program, "u_type"), GLint(a.type));
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, a.gl_buffer);
  glBindImageTexture(0, texture, 0, GL_FALSE, 0, GL_WRITE_ONLY, image_format);
  glDispatchCompute(groups(a.width, 16), groups(a.height, 16), 1);
  // Later draws and read-backs see the texels.
  glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_TEXTURE_UPDATE_BARRIER_BIT);
  glBindImageTexture(0, 0, 0, GL_FALSE, 0, GL_WRITE_ONLY, image_format);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, 0);
  HANDOFF_GL_CHECK(glUseProgram(0), "CUDA layer conversion");
}

void LayerConverter::ids(const media::LayerArray& a, GLuint texture, GLenum internal_format) {
  const std::size_t k = internal_format == GL_R8UI ? 0 : internal_format == GL_R16UI ? 1 : 2;
  convert(ids_[k].get(), a, texture, internal_format);
}

void LayerConverter::scalars(const media::LayerArray& a, GLuint texture) {
  convert(scalars_.get(), a, texture, GL_R32F);
}

void LayerConverter::masks(const media::LayerArray& a, float threshold, GLuint texture) {
  glUseProgram(masks_.get());
  glUniform1d(glGetUniformLocation(masks_.get(), "u_threshold"), double(threshold));
  convert(masks_.get(), a, texture, GL_R16UI);
}

void LayerConverter::sample(GLuint program, GLuint texture, std::size_t step, std::size_t count, void* out,
                            GLuint wide_buffer) {
  if (count == 0) return;
  const std::size_t bytes = count * (wide_buffer ? 8 : 4);
  if (!samples_ || samples_size_ < bytes) {
    GLuint b = 0;
    glCreateBuffers(1, &b);
    samples_.reset(b);
    glNamedBufferStorage(b, GLsizeiptr(bytes), nullptr, 0);
    samples_size_ = bytes;
  }
  glUseProgram(program);
  glUniform1ui(glGetUniformLocation(program, "u_step"), GLuint(step));
  glUniform1ui(glGetUniformLocation(program, "u_samples"), GLuint(count));
  glBindTextureUnit(0, texture);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, samples_.get());
  if (wide_buffer) glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, wide_buffer);
  glDispatchCompute(groups(std::uint32_t(count), 64), 1, 1);
  glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, 0);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, 0);
  glBindTextureUnit(0, 0);
  glUseProgram(0);
  HANDOFF_GL_CHECK(glGetNamedBufferSubData(samples_.get(), 0, GLsizeiptr(bytes), out), "layer sample read-back");
}

std::vector<float> LayerConverter::sample_floats(GLuint texture, std::size_t step, std::size_t count) {
  std::vector<float> out(count);
  sample(sample_float_.get(), texture, step, count, out.data());
  return out;
}

std::vector<std::uint32_t> LayerConverter::sample_ids(GLuint texture, std::size_t step, std::size_t count) {
  std::vector<std::uint32_t> out(count);
  sample(sample_uint_.get(), texture, step, count, out.data());
  return out;
}

std::vector<std::uint64_t> LayerConverter::sample_wide_ids(GLuint buffer, std::size_t step, std::size_t count) {
  std::vector<std::uint64_t> out(count);  // (low, high) words: a little-endian 64-bit id each
  sample(sample_wide_.get(), 0, step, count, out.data(), buffer);
  return out;
}

std::uint64_t read_wide_id(GLuint buffer, std::size_t index) {
  std::uint64_t v = 0;
  HANDOFF_GL_CHECK(glGetNamedBufferSubData(buffer, GLintptr(index * 8), 8, &v), "layer id read-back");
  return v;
}

std::uint32_t read_id_texel(GLuint texture, std::uint32_t x, std::uint32_t y) {
  std::uint32_t v = 0;
  read_texel(texture, x, y, GL_RED_INTEGER, GL_UNSIGNED_INT, &v);
  return v;
}

float read_float_texel(GLuint texture, std::uint32_t x, std::uint32_t y) {
  float v = 0;
  read_texel(texture, x, y, GL_RED, GL_FLOAT, &v);
  return v;
}

}  // namespace handoff::view
