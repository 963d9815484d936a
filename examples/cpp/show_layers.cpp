// Dense inference layers over frames from C++: a class map (a quarter-size
// int32 argmax, named, background transparent) and a depth map (float metres
// through turbo, NaN holes, automatic range) over each frame, under its boxes.
//
//   show_layers [--headless] [--frames N] [--snapshot last.png]
//
// show() copies the frame and the layers, so the producer reuses its arrays
// at once; the display draws them on its own thread.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <handoff/host_frame.hpp>
#include <handoff/viewer.hpp>
#include <handoff/media/png.hpp>

namespace {

using namespace handoff;

template <typename T>
media::LayerArray host_array(const std::vector<T>& v, media::SampleType type, std::uint32_t w, std::uint32_t h) {
  media::LayerArray a;
  a.data = v.data();
  a.type = type;
  a.width = w;
  a.height = h;
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  bool headless = false;
  int frames = 300;
  std::string snapshot;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--headless") headless = true;
    else if (a == "--frames" && i + 1 < argc) frames = std::atoi(argv[++i]);
    else if (a == "--snapshot" && i + 1 < argc) snapshot = argv[++i];
    else {
      std::fprintf(stderr, "usage: show_layers [--headless] [--frames N] [--snapshot last.png]\n");
      return 2;
    }
  }
  constexpr std::uint32_t kW = 320, kH = 240;
  try {
    ViewerOptions o;
    o.title = "layers";
    if (headless) o.display = ViewerDisplay::Headless;
    Viewer viewer(o);
    Frame frame = allocate_host_frame(PixelFormat::NV12, kW, kH);
    for (std::uint32_t y = 0; y < kH; ++y)
      std::memset(static_cast<std::uint8_t*>(frame.planes[0].data) + y * frame.planes[0].pitch, 110, kW);
    for (std::uint32_t y = 0; y < kH / 2; ++y)
      std::memset(static_cast<std::uint8_t*>(frame.planes[1].data) + y * frame.planes[1].pitch, 128, kW);

    std::vector<std::int32_t> ids(kW / 4 * (kH / 4));
    std::vector<float> depth(std::size_t(kW) * kH);
    int n = 0;
    for (; n < frames && viewer.is_open(); ++n) {
      // The "models": left half class 1 (road), a moving square class 2 (car), the rest 0.
      const std::uint32_t sx = std::uint32_t(4 + n) % (kW / 4 - 10);
      for (std::uint32_t y = 0; y < kH / 4; ++y)
        for (std::uint32_t x = 0; x < kW / 4; ++x)
          ids[y * (kW / 4) + x] = (x >= sx && x < sx + 10 && y >= 20 && y < 30) ? 2 : x < kW / 8 ? 1 : 0;
      for (std::uint32_t y = 0; y < kH; ++y)
        for (std::uint32_t x = 0; x < kW; ++x)
          depth[y * kW + x] = y < 20 && x >= kW - 20 ? std::numeric_limits<float>::quiet_NaN() : 1.0f + 9.0f * float(y) / kH;

      media::OverlayFrame overlays;
      overlays.add_box(float(sx * 4), 80, float(sx * 4 + 40), 120, "car", 0.9f, 2);
      media::ClassMap classes;
      classes.ids = host_array(ids, media::SampleType::I32, kW / 4, kH / 4);
      classes.names = {{1, "road"}, {2, "car"}};
      classes.colors = {{1, media::Color8{128, 64, 128, 255}}};
      classes.transparent = {0};
      media::ScalarMap distance;
      distance.values = host_array(depth, media::SampleType::F32, kW, kH);
      distance.colormap = media::Colormap::Turbo;
      distance.opacity = 0.3f;
      overlays.layers = {distance, classes};  // drawn in order: depth first, the classes over it
      frame.index = n;
      viewer.show(frame, overlays);  // `ids` and `depth` are free again when this returns
    }
    if (!snapshot.empty()) {
      const RgbaImage img = viewer.snapshot();
      media::Image8 out;
      out.width = img.width();
      out.height = img.height();
      out.channels = 4;
      out.pixels.assign(img.data(), img.data() + img.stride() * img.height());
      media::write_png(snapshot, out);
    }
    std::printf("%d frames shown with layers\n", n);
    if (viewer.windowed()) viewer.wait_closed();  // a window stays until the user closes it
  } catch (const std::exception& e) {
    std::fprintf(stderr, "show_layers: %s\n", e.what());
    return 1;
  }
  return 0;
}
