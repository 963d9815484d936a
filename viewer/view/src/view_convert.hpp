#pragma once
// The CPU twin of the YUV, RGB and grey frame shaders (shaders/gl/yuv_*frame_*.glsl,
// rgb_frame_*.glsl, gray_frame_*.glsl), for software rasterisers: host planes of any YUV format
// (nv12, p010, i420, yuyv, uyvy) converted to 8-bit R'G'B', RGB frames
// (rgb8, bgr8, rgba8, bgra8; alpha not drawn) resampled, and grey frames
// (gray8, gray16, gray32f) resampled and mapped over their range, at
// the size they are shown, sampled where the shaders sample (the same view
// transform, chroma siting, clamp to edge, bilinear or flat pixels) and
// converted with the same uniforms (fold_color); RGB rows in 16-bit fixed
// point (rgb_rows.hpp), the others in float. On llvmpipe each bilinear
// fetch of the shader costs ~9 ns of CPU per window pixel (BENCHMARKS.md);
// these loops cost a fraction of that, and the result reaches the framebuffer
// as a copy (FrameRenderer's CPU path).
//
// Thread safety: a converter is used by one thread at a time (it runs its
// bands on its own BandPool). covered_pixels is pure.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <handoff/frame.hpp>
#include <handoff/media/band_pool.hpp>

#include "view_transform.hpp"

namespace handoff::view {

// Framebuffer pixels, top-left origin, half-open: [x0, x1) x [y0, y1).
struct PixelRect {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  int width() const { return x1 - x0; }
  int height() const { return y1 - y0; }
  bool empty() const { return x1 <= x0 || y1 <= y0; }
  bool operator==(const PixelRect&) const = default;
};

// The pixels of an fb_w x fb_h framebuffer whose centres lie inside the
// frame's rectangle [offset, offset + size * scale) (the pixels the shaders'
// two triangles cover), clipped to the framebuffer.
PixelRect covered_pixels(std::uint32_t frame_w, std::uint32_t frame_h, const ViewTransform& view, int fb_w, int fb_h);

// What the converter reads: a YUV frame's planes in host memory (raw stored
// samples: bytes, or 16-bit words for P010, all 16 bits used as the shader's
// R16 textures do). nv12 / p010: luma and the chroma pairs; i420: luma,
// chroma (U) and v (V); yuyv / uyvy and the RGB formats: the one packed
// plane as luma (chroma unused).
struct HostPlanes {
  PixelFormat format = PixelFormat::NV12;
  std::uint32_t width = 0, height = 0;
  const std::uint8_t* luma = nullptr;
  std::size_t luma_pitch = 0;
  const std::uint8_t* chroma = nullptr;
  std::size_t chroma_pitch = 0;
  const std::uint8_t* v = nullptr;
  std::size_t v_pitch = 0;
};

// Where chroma sample (0, 0) sits, in luma samples right of and below luma
// sample (0, 0): the shaders' u_siting uniform. Left: co-sited horizontally,
// between the rows vertically; Center: between both; TopLeft: co-sited.
struct ChromaOffset {
  double x, y;
};
ChromaOffset chroma_offset(ChromaSiting siting);

// A host frame's planes as the converter reads them (frame.memory Host).
HostPlanes host_planes(const Frame& frame);

enum class ByteOrder : std::uint8_t { Rgba, Bgra };  // bytes of an output pixel; the fourth is 255

// A grey frame's mapping, as the grey shader's uniforms: a sample s (UNORM
// 0..1 for gray8 / gray16, the float itself for gray32f) is drawn as
// clamp((s * prescale - lo) * scale + offset, 0, 1) (float_mapping, value_range.hpp);
// NaN / +-inf samples (gray32f) as `non_finite` (0..1), with the shader's
// rule for their neighbours.
struct GrayMapping {
  float lo = 0.0f, scale = 1.0f;
  float non_finite = 0.5f;
  float prescale = 1.0f, offset = 0.0f;
};

// Called once rows [first, last) of the rect (0: its top row) are written,
// a few rows at a time while they are in the cache, on the converter's
// threads: disjoint rows at once.
using RowsDone = std::function<void(int first, int last)>;

class ViewConverter {
 public:
  // `threads` in all, the caller's included (0: one per core).
  explicit ViewConverter(unsigned threads = 0);

  // Writes the pixels of `rect` (framebuffer coordinates, as covered_pixels
  // gives) of the frame drawn with `view`: row r of the rect at
  // out + r * pitch (a negative pitch writes bottom-up), 4 bytes a pixel
  // (`out` and `pitch` 4-byte aligned).
  // `nearest`: each frame pixel flat (yuv_frame_nearest_frag), else bilinear.
  // `gray`: how grey frames map to grey (ignored for the other formats).
  // `done` (if set): told of the rows as they are written (the CPU layer
  // composite blends them then).
  // UsageError when the planes are missing or the rect is outside what the
  // frame covers.
  void convert(const HostPlanes& planes, const Colorimetry& colorimetry, const ViewTransform& view, bool nearest,
               const PixelRect& rect, ByteOrder order, std::uint8_t* out, std::ptrdiff_t pitch,
               const GrayMapping& gray = {}, const RowsDone& done = {});

  unsigned threads() const { return pool_.threads(); }

 private:
  // Where one axis of the output samples a plane: texels i0 and i1 (clamped
  // to the plane) mixed with weight w of i1.
  struct Axis {
    std::vector<std::int32_t> i0, i1;
    std::vector<float> w;
  };
  struct Scratch {
    std::vector<float> luma, chroma;  // one vertically filtered source row of each plane (+1 column)
    std::vector<float> a, b;          // i420's U and V rows, a packed 4:2:2 row, before they are interleaved / split
    std::vector<float> y, cb, cr;     // one output row before the matrix
    std::vector<std::int16_t> rgb;    // an RGB row mixed vertically (rgb_rows.hpp)
  };
  void vertical_pass(const HostPlanes& planes, std::size_t y, std::size_t lcols, std::size_t csamples,
                     Scratch& s) const;
  void convert_rows(const HostPlanes& planes, int first, int last, Scratch& s, const float* matrix,
                    const float* bias, ByteOrder order, std::uint8_t* out, std::ptrdiff_t pitch) const;
  void float_gray_rows(const HostPlanes& planes, int first, int last, const GrayMapping& gray, std::uint8_t* out,
                       std::ptrdiff_t pitch) const;

  media::BandPool pool_;
  Axis luma_x_, chroma_x_, luma_y_, chroma_y_;
  std::int32_t lbase_ = 0, cbase_ = 0;  // the first luma column / chroma pair a row uses
  std::vector<std::int16_t> rgb_taps_;  // RGB frames: luma_x_'s weights as the horizontal kernel's taps
  std::vector<Scratch> scratch_;
  PixelRect rect_;
};

}  // namespace handoff::view
