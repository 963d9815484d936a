#pragma once
// Draws a frame's dense layers (OverlayFrame::layers, as copy_layers made
// them) over the frame, under the vector overlays, in the frame's place on
// the framebuffer (the view's zoom and pan), each with its opacity:
//  - class maps: the ids in an R8UI / R16UI / R32UI texture, nearest, and a
//    palette texture (the layer's colours, transparent and hidden ids);
//  - scalar maps: an R32F texture, bilinear, through a 256-entry colormap
//    texture over the layer's range, or an automatic one (media::ScalarRange);
//  - instance masks: composited into one R16UI texture of instance indices
//    (later masks on top), each in its detection's colour with an outline.
// Textures are filled once per frame, not per draw: host layers (layer_copy.cpp's
// copies) at the first draw() after set_layers (none when composite() draws
// them on the CPU instead); CUDA layers (a GL buffer the ring's CUDA copy
// wrote) in set_layers, by compute shaders on the GPU (layer_gpu.hpp) into the
// same textures; drawing is the same for both.
//
// Thread safety: construct, use and destroy on one thread, GL 4.5 core context current.
#include <glad/gl.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <handoff/gl_handles.hpp>
#include <handoff/media/band_pool.hpp>
#include <handoff/media/overlay.hpp>

#include "layer_gpu.hpp"
#include "view_convert.hpp"  // PixelRect, ByteOrder
#include "view_transform.hpp"

namespace handoff::view {

// The nearest-texel rule of class maps and instance masks, one for the
// shader (layer_ids_frag.glsl) and the CPU composite (layer_canvas.cpp), so
// that both pick the same texel everywhere: on one axis, the pixel with
// centre c (framebuffer pixels from the top-left, b + 0.5) takes texel
// floor((c - origin) * texels * (1 + 2^-21)), clamped to the layer, each
// step in float and rounded (no fused multiply-add), with origin (the
// target's edge on the framebuffer) and texels (layer texels per
// framebuffer pixel) rounded to float once, here. A centre on a texel edge
// (an exact tie, e.g. a 12-texel map over 21 pixels at pixel 3) takes the
// texel after the edge, as exact arithmetic does: the nudge is above the
// roundings' error (under 2^-22 of the value). An interpolated coordinate
// rounds either way there.
struct NearestAxis {
  float origin = 0.0f, texels = 1.0f;
};
inline NearestAxis nearest_axis(double edge, double extent, std::uint32_t size) {
  return NearestAxis{float(edge), float(double(size) / extent)};
}
inline constexpr float kNearestNudge = 1.0f + 0x1p-21f;
inline std::int32_t nearest_texel(int b, const NearestAxis& a, std::uint32_t size) {
  const float c = float(b) + 0.5f;
  const float d = c - a.origin;
  const float s = d * a.texels;
  const float p = std::floor(s * kNearestNudge);
  return std::int32_t(std::clamp(p, 0.0f, float(size - 1)));
}

// What the panel changes about layer i (kept across frames while the layer
// count and kinds stay).
struct LayerControl {
  bool visible = true;
  std::optional<float> opacity;        // the panel's; empty: the layer's own
  std::set<std::int64_t> hidden;       // class maps: ids the legend turned off
};

// What a layer shows at one frame position (the pixel inspector).
struct LayerProbe {
  std::string kind;   // media::layer_kind
  std::string text;   // "id 3 (car)", "value 2.53", "mask 1 (person)", "outside", "hole (NaN)"
};

class LayerRenderer {
 public:
  LayerRenderer();  // throws handoff::Error on GL failure
  LayerRenderer(const LayerRenderer&) = delete;
  LayerRenderer& operator=(const LayerRenderer&) = delete;

  // The layers of a new frame of frame_w x frame_h (nullptr: none): fills the
  // textures. `overlays` must stay valid until the next call (probe reads it).
  void set_layers(const media::OverlayFrame* overlays, std::uint32_t frame_w, std::uint32_t frame_h);
  // Draws the visible layers into the bound framebuffer (fb_w x fb_h, viewport set).
  void draw(const ViewTransform& view, int fb_w, int fb_h);
  // Palettes again after a change to controls() (hidden classes).
  void refresh_palettes();

  // The CPU path (layer_canvas.cpp), for software GLs: whether the visible
  // layers drawn with `view` fall inside the frame's pixels, so that
  // composite() can draw them all into the frame's converted image; and
  // then blends them into `rect` of it (covered_pixels' rectangle, row r at
  // out + r * pitch, 4 bytes a pixel in `order`), as draw() would.
  bool fits(const ViewTransform& view) const;
  void composite(const ViewTransform& view, const PixelRect& rect, ByteOrder order, std::uint8_t* out,
                 std::ptrdiff_t pitch);
  // composite() in two steps, so that the rows can be blended by whoever
  // writes them, while they are in the cache (the frame's conversion):
  // prepare_composite readies the visible layers for `rect` (false: none is
  // drawn); composite_rows then blends rows [first, last) of the rect (0:
  // its top row), row r at out + r * pitch.
  // Thread safety: prepare_composite on the renderer's thread; composite_rows
  // on any threads at once for disjoint rows, until the next call of another
  // member. Both keep what they can from the last frame (the taps of a layer
  // whose size and place stay, their buffers): no allocation at a steady stream.
  bool prepare_composite(const ViewTransform& view, const PixelRect& rect, ByteOrder order);
  void composite_rows(int first, int last, std::uint8_t* out, std::ptrdiff_t pitch) const;
  // Changes whenever what composite() draws changes: new layers, palettes,
  // or a layer's visibility or opacity in controls().
  std::uint64_t cpu_key() const;

  std::size_t size() const { return layers_.size(); }
  std::vector<LayerControl>& controls() { return controls_; }
  // The layer's range as drawn (scalar maps), else nullopt.
  std::optional<std::array<double, 2>> range(std::size_t i) const;
  // Ids the legend lists for class map i: named and coloured ids and those
  // seen in the map (a sample of its pixels), at most 256, ascending. Found
  // when first asked for after a frame (the panel asks; a hidden panel costs nothing).
  const std::vector<std::int64_t>& legend_ids(std::size_t i);
  const media::Layer& layer(std::size_t i) const { return overlays_->layers[i]; }
  LayerProbe probe(std::size_t i, double frame_x, double frame_y) const;

 private:
  // A texture kept from frame to frame while its format and size stay (no
  // allocation per frame at a steady stream).
  struct Texture {
    handoff::UniqueGlTexture name;
    GLenum format = 0;
    std::uint32_t width = 0, height = 0;
    // The texture for this format and size: kept, or made afresh.
    GLuint ensure(GLenum internal_format, std::uint32_t w, std::uint32_t h, GLenum filter);
  };
  struct Gpu {
    Texture data, palette;
    int bits = 8;
    bool is_signed = false;
    int palette_first = 0, palette_size = 0;  // palette_first: the low 32 bits of palette_lo (the shader's)
    std::int64_t palette_lo = 0;                // the id of palette entry 0 (as ClassMap keys it)
    std::vector<std::uint32_t> low_ids;         // 64-bit host ids as uploaded (low_ids())
    std::array<double, 2> range{0.0, 1.0};
    media::RectF target{};
    std::vector<std::int64_t> legend;
    bool legend_valid = false;
    std::vector<media::Color8> entries;      // the palette (class maps, masks), as in the texture
    std::vector<std::uint16_t> instances;    // instance masks: the top mask's index + 1 per texel (0: none)
  };
  void prepare(std::size_t i);         // the host side: target, range, palette (CUDA layers: their texture too)
  void upload(std::size_t i);          // the textures
  void make_palette(std::size_t i);
  const std::vector<std::uint32_t>& low_ids(std::size_t i);
  // CUDA layers (layer_gpu.cpp): the textures from the layer's GL buffer, and
  // what probe and the legend read back from them.
  void upload_from_buffer(std::size_t i);
  std::vector<std::int64_t> sampled_ids(std::size_t i, std::size_t step, std::size_t count);
  std::int64_t texel_id(std::size_t i, std::uint32_t x, std::uint32_t y) const;
  void upload_palette(std::size_t i);

  handoff::UniqueGlProgram ids_program_, scalar_program_;
  handoff::UniqueGlVertexArray vao_;  // empty: the vertex shader makes the corners
  std::array<handoff::UniqueGlTexture, 6> colormaps_;  // per media::Colormap
  const media::OverlayFrame* overlays_ = nullptr;
  std::uint32_t frame_w_ = 0, frame_h_ = 0;
  std::vector<Gpu> layers_;
  std::vector<LayerControl> controls_;
  std::vector<std::size_t> kinds_;                    // variant index per layer (controls reset on a change)
  std::vector<media::ScalarRange> auto_ranges_;       // per layer index
  std::uint64_t generation_ = 0;                      // counts set_layers and refresh_palettes
  bool textures_current_ = false;                     // the textures hold this frame's layers
  std::unique_ptr<media::BandPool> pool_;             // composite()'s threads, made on first use
  struct Canvas;  // layer_canvas.cpp: the visible layers' row painters (prepare_composite)
  struct CanvasDeleter {
    void operator()(Canvas* c) const;
  };
  std::unique_ptr<Canvas, CanvasDeleter> canvas_;
  std::unique_ptr<LayerConverter> converter_;         // made at the first CUDA layer
};

}  // namespace handoff::view
