#include "pixel_probe.hpp"

#include "color_fold.hpp"
#include "frame_target.hpp"
#include "value_range.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

#include <handoff/media/color.hpp>

namespace handoff::view {
namespace {

// Where the probe reads texels: the plane textures, or on the CPU path the
// frame's host copy (reading a texture there would first upload the whole
// frame, 4-5 ms for 1080p RGB on llvmpipe, at every new frame while the
// cursor is over the window). A texel of texture i is `bytes` at x * bytes
// of row y of plane i, but for yuyv / uyvy (texture 1: a pair a texel, of
// plane 0) and BGR frames (the textures hold R, G, B).
class Texels {
 public:
  explicit Texels(const FrameRenderer& r) : r_(r), host_(r.host_copy()) {}
  void read(int tex, int x, int y, GLenum format, GLenum type, std::size_t bytes, void* out) const {
    if (!host_) {
      glGetTextureSubImage(r_.texture(tex), 0, x, y, 0, 1, 1, 1, format, type, GLsizei(bytes), out);
      return;
    }
    const PixelFormat f = host_->format;
    const Plane& pl = host_->planes[f == PixelFormat::YUYV || f == PixelFormat::UYVY ? 0 : tex];
    const auto* at = static_cast<const std::uint8_t*>(pl.data) + std::size_t(y) * pl.pitch + std::size_t(x) * bytes;
    std::memcpy(out, at, bytes);
    if ((f == PixelFormat::BGR8 || f == PixelFormat::BGRA8) && bytes >= 3)
      std::swap(static_cast<std::uint8_t*>(out)[0], static_cast<std::uint8_t*>(out)[2]);
  }

 private:
  const FrameRenderer& r_;
  std::optional<Frame> host_;
};

void probe_yuv(const FrameRenderer& r, const Texels& t, PixelProbe& p) {
  const PixelFormat f = r.format();
  if (f == PixelFormat::P010) {
    std::uint16_t y = 0, c[2] = {};
    t.read(0, p.x, p.y, GL_RED, GL_UNSIGNED_SHORT, 2, &y);
    t.read(1, p.x / 2, p.y / 2, GL_RG, GL_UNSIGNED_SHORT, 4, c);
    p.code_y = y >> 6;
    p.code_cb = c[0] >> 6;
    p.code_cr = c[1] >> 6;
  } else if (f == PixelFormat::NV12) {
    std::uint8_t y = 0, c[2] = {};
    t.read(0, p.x, p.y, GL_RED, GL_UNSIGNED_BYTE, 1, &y);
    t.read(1, p.x / 2, p.y / 2, GL_RG, GL_UNSIGNED_BYTE, 2, c);
    p.code_y = y;
    p.code_cb = c[0];
    p.code_cr = c[1];
  } else if (f == PixelFormat::I420) {
    std::uint8_t y = 0, u = 0, v = 0;
    t.read(0, p.x, p.y, GL_RED, GL_UNSIGNED_BYTE, 1, &y);
    t.read(1, p.x / 2, p.y / 2, GL_RED, GL_UNSIGNED_BYTE, 1, &u);
    t.read(2, p.x / 2, p.y / 2, GL_RED, GL_UNSIGNED_BYTE, 1, &v);
    p.code_y = y;
    p.code_cb = u;
    p.code_cr = v;
  } else {  // yuyv / uyvy: the pixel's pair (texture 1 holds one pair a texel; the read ignores its swizzle)
    std::uint8_t b[4] = {};
    t.read(1, p.x / 2, p.y, GL_RGBA, GL_UNSIGNED_BYTE, 4, b);
    const bool yuyv = f == PixelFormat::YUYV, odd = (p.x & 1) != 0;
    p.code_y = yuyv ? b[odd ? 2 : 0] : b[odd ? 3 : 1];
    p.code_cb = yuyv ? b[1] : b[0];
    p.code_cr = yuyv ? b[3] : b[2];
  }
}

void probe_rgb(const FrameRenderer& r, const Texels& texels, PixelProbe& p) {
  const PixelFormat f = r.format();
  const bool alpha = f == PixelFormat::RGBA8 || f == PixelFormat::BGRA8;
  const bool bgr = f == PixelFormat::BGR8 || f == PixelFormat::BGRA8;
  std::uint8_t t[4] = {0, 0, 0, 255};  // the texture holds R, G, B (A) whatever the frame's order
  texels.read(0, p.x, p.y, alpha ? GL_RGBA : GL_RGB, GL_UNSIGNED_BYTE, alpha ? 4 : 3, t);
  p.code_count = alpha ? 4 : 3;
  p.codes = bgr ? std::array<int, 4>{t[2], t[1], t[0], t[3]} : std::array<int, 4>{t[0], t[1], t[2], t[3]};
  p.rgb = {t[0], t[1], t[2]};
}

void probe_gray(const FrameRenderer& r, const Texels& t, const std::optional<ValueRange>& user, PixelProbe& p) {
  const PixelFormat f = r.format();
  double v = 0.0;
  if (f == PixelFormat::GRAY32F) {
    float s = 0.0f;
    t.read(0, p.x, p.y, GL_RED, GL_FLOAT, 4, &s);
    p.value = v = s;
  } else if (f == PixelFormat::GRAY16) {
    std::uint16_t s = 0;
    t.read(0, p.x, p.y, GL_RED, GL_UNSIGNED_SHORT, 2, &s);
    p.codes[0] = s;
    p.code_count = 1;
    v = s;
  } else {
    std::uint8_t s = 0;
    t.read(0, p.x, p.y, GL_RED, GL_UNSIGNED_BYTE, 1, &s);
    p.codes[0] = s;
    p.code_count = 1;
    v = s;
  }
  std::uint8_t g = std::uint8_t(std::lround(kNonFiniteGray * 255.0f));
  if (std::isfinite(v)) {
    // The grey drawn: the range as the shader applies it (float_mapping: a
    // range too narrow for float widened, one too wide for hi - lo).
    const ValueRange range = r.gray_range(user).value_or(ValueRange{});
    const FloatMapping m = float_mapping(range.lo, range.hi);
    const double t = std::clamp((v * m.prescale - m.lo) * m.scale + m.offset, 0.0, 1.0);
    g = std::uint8_t(std::lround(t * 255.0));
  }
  p.rgb = {g, g, g};
}

}  // namespace

PixelProbe probe_pixel(const FrameRenderer& renderer, const Colorimetry& c, const std::optional<ValueRange>& user,
                       double fx, double fy) {
  PixelProbe p;
  if (!renderer.has_frame() || fx < 0 || fy < 0 || fx >= renderer.width() || fy >= renderer.height()) return p;
  p.valid = true;
  p.x = int(fx);
  p.y = int(fy);
  p.format = renderer.format();
  PackStateScope pack;
  const Texels texels(renderer);
  if (is_yuv(p.format)) {
    probe_yuv(renderer, texels, p);
    p.rgb = media::yuv_to_rgb8(p.code_y, p.code_cb, p.code_cr, c.matrix, c.range, yuv_code_format(p.format));
  } else if (is_rgb(p.format)) {
    probe_rgb(renderer, texels, p);
  } else {
    probe_gray(renderer, texels, user, p);
  }
  return p;
}

PixelProbe probe_view_pixel(const FrameRenderer& renderer, const Colorimetry& c,
                            const std::optional<ValueRange>& user, const ViewTransform& view, double bx, double by) {
  // The renderer draws each framebuffer pixel from its centre, b + 0.5 (the
  // shaders' fragment centres; ViewConverter's fill_axis): its frame point.
  return probe_pixel(renderer, c, user, view.to_frame_x(std::floor(bx) + 0.5), view.to_frame_y(std::floor(by) + 0.5));
}

std::string probe_text(const PixelProbe& p) {
  char text[96] = {};
  if (is_yuv(p.format)) {
    std::snprintf(text, sizeof text, "Y %d  Cb %d  Cr %d", p.code_y, p.code_cb, p.code_cr);
  } else if (is_rgb(p.format)) {
    const bool bgr = p.format == PixelFormat::BGR8 || p.format == PixelFormat::BGRA8;
    const char* n = bgr ? "BGRA" : "RGBA";
    int at = 0;
    for (int i = 0; i < p.code_count; ++i)
      at += std::snprintf(text + at, sizeof text - std::size_t(at), "%s%c %d", i ? "  " : "", n[i],
                          p.codes[std::size_t(i)]);
  } else if (p.format == PixelFormat::GRAY32F) {
    std::snprintf(text, sizeof text, "value %.7g", p.value);
  } else {
    std::snprintf(text, sizeof text, "gray %d", p.codes[0]);
  }
  return text;
}

}  // namespace handoff::view
