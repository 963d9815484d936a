// LayerRenderer's CUDA layers: the ring copied the layer's samples into a GL
// buffer (media::LayerArray memory GlBuffer, unconverted, packed); here they
// fill the same textures as the host path, on the GPU (LayerConverter), and
// probe / the legend / the automatic range read small samples back.
#include "layer_renderer.hpp"

#include <algorithm>

namespace handoff::view {

void LayerRenderer::upload_from_buffer(std::size_t i) {
  if (!converter_) converter_ = std::make_unique<LayerConverter>();
  const media::Layer& l = overlays_->layers[i];
  Gpu& g = layers_[i];
  if (const auto* s = std::get_if<media::ScalarMap>(&l)) {
    const media::LayerArray& a = s->values;
    const GLuint t = g.data.ensure(GL_R32F, a.width, a.height, GL_LINEAR);
    converter_->scalars(a, t);
    if (s->range) {
      g.range = *s->range;
      return;
    }
    // The host path's subsample (ScalarRange::kMaxSamples values at most,
    // every step-th), read back: the same range, from 256 KiB at most.
    const std::size_t n = std::size_t(a.width) * a.height;
    const std::size_t max = media::ScalarRange::kMaxSamples;
    const std::size_t step = n > max ? (n + max - 1) / max : 1;
    const std::vector<float> values = converter_->sample_floats(t, step, (n + step - 1) / step);
    g.range = auto_ranges_[i].update(values.data(), values.size());
  } else if (const auto* c = std::get_if<media::ClassMap>(&l)) {
    const media::LayerArray& a = c->ids;
    const std::size_t bytes = std::min<std::size_t>(media::sample_size(a.type), 4);  // 64-bit ids: the low 32 bits
    g.bits = int(bytes * 8);
    g.is_signed = a.type == media::SampleType::I8 || a.type == media::SampleType::I16 ||
                  a.type == media::SampleType::I32 || a.type == media::SampleType::I64;
    const GLenum internal = bytes == 1 ? GL_R8UI : bytes == 2 ? GL_R16UI : GL_R32UI;
    converter_->ids(a, g.data.ensure(internal, a.width, a.height, GL_NEAREST), internal);
    g.legend_valid = false;
  } else {
    const auto& m = std::get<media::InstanceMasks>(l);
    g.bits = 16;
    g.is_signed = false;
    converter_->masks(m.masks, m.threshold, g.data.ensure(GL_R16UI, m.masks.width, m.masks.height, GL_NEAREST));
  }
}

namespace {
// An id as the shader reads it (u_bits, u_signed) and the host path's id_at.
std::int64_t widen(std::uint32_t raw, int bits, bool is_signed) {
  if (!is_signed) return raw;
  if (bits == 32) return std::int32_t(raw);
  return bits == 8 ? std::int64_t(std::int8_t(raw)) : std::int64_t(std::int16_t(raw));
}
}  // namespace

std::vector<std::int64_t> LayerRenderer::sampled_ids(std::size_t i, std::size_t step, std::size_t count) {
  const Gpu& g = layers_[i];
  std::vector<std::int64_t> out;
  const media::LayerArray& a = std::get<media::ClassMap>(overlays_->layers[i]).ids;
  if (media::sample_size(a.type) == 8) {  // the texture has the low 32 bits: the ids whole from the buffer
    for (std::uint64_t id : converter_->sample_wide_ids(a.gl_buffer, step, count)) out.push_back(std::int64_t(id));
    return out;
  }
  for (std::uint32_t raw : converter_->sample_ids(g.data.name.get(), step, count))
    out.push_back(widen(raw, g.bits, g.is_signed));
  return out;
}

std::int64_t LayerRenderer::texel_id(std::size_t i, std::uint32_t x, std::uint32_t y) const {
  const Gpu& g = layers_[i];
  if (const auto* m = std::get_if<media::ClassMap>(&overlays_->layers[i]); m && media::sample_size(m->ids.type) == 8)
    return std::int64_t(read_wide_id(m->ids.gl_buffer, std::size_t(y) * m->ids.width + x));  // the id whole
  return widen(read_id_texel(g.data.name.get(), x, y), g.bits, g.is_signed);
}

}  // namespace handoff::view
