#pragma once
// The GPU side of CUDA layers: the ring copied a CUDA layer's samples, packed
// and unconverted, into a GL buffer (media::LayerArray memory GlBuffer); these
// compute shaders turn them into the textures the host path fills (the same
// formats and values as layer_copy.cpp's conversion), and read small samples
// of a texture back (the automatic range's subsample, the legend's ids, one
// texel for the pixel inspector). Nothing of the layer goes through host
// memory except those samples.
//
// Thread safety: construct, use and destroy on one thread, GL 4.5 core context current.
#include <glad/gl.h>

#include <array>
#include <cstdint>
#include <vector>

#include <handoff/gl_handles.hpp>
#include <handoff/media/overlay.hpp>

namespace handoff::view {

class LayerConverter {
 public:
  LayerConverter();  // throws handoff::Error on GL failure (a shader that does not build)
  LayerConverter(const LayerConverter&) = delete;
  LayerConverter& operator=(const LayerConverter&) = delete;

  // Fills `texture` (width x height, made with glTextureStorage2D in the
  // format the host path uses) from `a`'s GL buffer:
  //   ids: internal format R8UI / R16UI / R32UI by sample size (64-bit ids: R32UI, low 32 bits)
  //   scalars: R32F
  //   masks: R16UI, the 1-based index of the last mask above `threshold`, 0 none
  void ids(const media::LayerArray& a, GLuint texture, GLenum internal_format);
  void scalars(const media::LayerArray& a, GLuint texture);
  void masks(const media::LayerArray& a, float threshold, GLuint texture);

  // Texels 0, step, 2 * step, ... (row-major, `count` of them) of a width-wide
  // texture, read back: float bits of an R32F texture, or raw unsigned ids.
  std::vector<float> sample_floats(GLuint texture, std::size_t step, std::size_t count);
  std::vector<std::uint32_t> sample_ids(GLuint texture, std::size_t step, std::size_t count);
  // The same samples of a 64-bit class map's packed buffer (GL buffer `buffer`): the ids whole.
  std::vector<std::uint64_t> sample_wide_ids(GLuint buffer, std::size_t step, std::size_t count);

 private:
  void convert(GLuint program, const media::LayerArray& a, GLuint texture, GLenum image_format);
  void sample(GLuint program, GLuint texture, std::size_t step, std::size_t count, void* out,
              GLuint wide_buffer = 0);

  std::array<handoff::UniqueGlProgram, 3> ids_;  // R8UI, R16UI, R32UI
  handoff::UniqueGlProgram scalars_, masks_, sample_float_, sample_uint_, sample_wide_;
  handoff::UniqueGlBuffer samples_;  // read-back scratch, grown as needed
  std::size_t samples_size_ = 0;
};

// One texel of a texture, read back: an unsigned id (R8UI / R16UI / R32UI) or
// a float (R32F).
std::uint32_t read_id_texel(GLuint texture, std::uint32_t x, std::uint32_t y);
// Sample `index` of a packed buffer of 64-bit ids, read back.
std::uint64_t read_wide_id(GLuint buffer, std::size_t index);
float read_float_texel(GLuint texture, std::uint32_t x, std::uint32_t y);

}  // namespace handoff::view
