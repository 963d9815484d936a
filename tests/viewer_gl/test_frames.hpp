#pragma once
// A host NV12 / P010 frame the tests fill sample by sample (10-bit codes for
// P010, stored << 6 as P010 does).
#include <cstdint>
#include <cstring>
#include <vector>

#include <handoff/frame.hpp>
#include <handoff/host_frame.hpp>

namespace handoff::view::test {

class TestFrame {
 public:
  TestFrame(PixelFormat f, std::uint32_t w, std::uint32_t h, std::size_t extra_pitch = 0)
      : format_(f), w_(w), h_(h) {
    const std::size_t bps = bytes_per_sample(f);
    luma_pitch_ = w * bps + extra_pitch;
    chroma_pitch_ = chroma_width(w) * 2 * bps + extra_pitch;
    luma_.assign(luma_pitch_ * h, 0);
    chroma_.assign(chroma_pitch_ * chroma_height(h), 0);
  }
  void set_y(std::uint32_t x, std::uint32_t y, int code) { put(luma_, y * luma_pitch_, x, code); }
  void set_uv(std::uint32_t cx, std::uint32_t cy, int cb, int cr) {
    put(chroma_, cy * chroma_pitch_, cx * 2, cb);
    put(chroma_, cy * chroma_pitch_, cx * 2 + 1, cr);
  }
  std::uint32_t width() const { return w_; }
  std::uint32_t height() const { return h_; }
  Frame frame(Colorimetry c) const {
    return host_planes_frame(format_, w_, h_, const_cast<std::uint8_t*>(luma_.data()), luma_pitch_,
                             const_cast<std::uint8_t*>(chroma_.data()), chroma_pitch_, c);
  }

 private:
  void put(std::vector<std::uint8_t>& v, std::size_t row, std::uint32_t sample, int code) {
    if (format_ == PixelFormat::NV12) {
      v[row + sample] = static_cast<std::uint8_t>(code);
    } else {
      const std::uint16_t s = static_cast<std::uint16_t>(code << 6);
      std::memcpy(&v[row + sample * 2], &s, 2);
    }
  }
  PixelFormat format_;
  std::uint32_t w_, h_;
  std::size_t luma_pitch_, chroma_pitch_;
  std::vector<std::uint8_t> luma_, chroma_;
};

}  // namespace handoff::view::test
