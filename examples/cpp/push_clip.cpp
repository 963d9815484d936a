// A producer thread pushing a clip into handoff::Viewer, with boxes from its
// own (toy) detector: the bright regions of each frame's luma.
//
//   push_clip clip.y4m [--headless] [--snapshot last.png]
//
// The producer reads the clip with the media library's Y4M reader into a host
// frame and calls show(); the viewer copies it and draws it on its own thread,
// so the producer runs at its own pace (frames the display could not keep up
// with are dropped, never queued). The main thread waits for the clip to end
// (or the window to close), then prints what the viewer counted.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include <handoff/host_frame.hpp>
#include <handoff/viewer.hpp>
#include <handoff/media/png.hpp>
#include <handoff/media/y4m_reader.hpp>

namespace {

using namespace handoff;

// The toy detector: one box round the pixels whose luma is in the top quarter
// of the range, on an 8x8 grid of cells (one box per bright cell).
void detect(const Frame& f, media::OverlayFrame& out) {
  out.clear();
  out.frame = f.index;
  const std::uint32_t cw = std::max(1u, f.width / 8), ch = std::max(1u, f.height / 8);
  const bool ten_bit = f.format == PixelFormat::P010;  // the clip's 4:2:0: i420 (8-bit) or p010; 4:2:2: yuyv
  const int bright = ten_bit ? 768 : 192;
  for (std::uint32_t gy = 0; gy < 8; ++gy)
    for (std::uint32_t gx = 0; gx < 8; ++gx) {
      const std::uint32_t x = std::min(f.width - 1, gx * cw + cw / 2), y = std::min(f.height - 1, gy * ch + ch / 2);
      const auto* row = static_cast<const std::uint8_t*>(f.planes[0].data) + std::size_t(y) * f.planes[0].pitch;
      int luma = f.format == PixelFormat::YUYV ? row[2 * x] : row[x];
      if (ten_bit) {
        std::uint16_t s = 0;
        std::memcpy(&s, row + 2 * x, 2);
        luma = s >> 6;
      }
      if (luma >= bright)
        out.add_box(float(gx * cw), float(gy * ch), float((gx + 1) * cw), float((gy + 1) * ch), "bright",
                    float(luma) / (ten_bit ? 1023.0f : 255.0f), 1);
    }
}

// Reads every frame of the clip into a host frame and shows it.
// --- README example begins ---
void produce(const std::string& path, Viewer& viewer, std::atomic<std::int64_t>& pushed) {
  auto source = media::open_y4m(path);
  const media::SourceInfo& info = source->info();
  HostFrameOptions o;
  o.colorimetry = info.colorimetry;
  Frame frame = allocate_host_frame(info.format, info.width, info.height, o);
  media::OverlayFrame boxes;
  while (viewer.is_open()) {
    frame.index = source->position();
    if (!source->read_into(media::write_target(frame))) break;
    detect(frame, boxes);
    viewer.show(frame, boxes);  // copied: `frame` is ours again at once
    ++pushed;
  }
}
// --- README example ends ---

}  // namespace

int main(int argc, char** argv) {
  std::string clip, snapshot;
  bool headless = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--headless") headless = true;
    else if (a == "--snapshot" && i + 1 < argc) snapshot = argv[++i];
    else if (clip.empty() && a[0] != '-') clip = a;
    else {
      std::fprintf(stderr, "usage: push_clip clip.y4m [--headless] [--snapshot last.png]\n");
      return 2;
    }
  }
  if (clip.empty()) {
    std::fprintf(stderr, "usage: push_clip clip.y4m [--headless] [--snapshot last.png]\n");
    return 2;
  }
  try {
    ViewerOptions o;
    o.title = "push_clip";
    o.display = headless ? ViewerDisplay::Headless : ViewerDisplay::Auto;
    Viewer viewer(o);
    std::atomic<std::int64_t> pushed{0};
    std::exception_ptr failure;
    std::thread producer([&] {
      try {
        produce(clip, viewer, pushed);
      } catch (const ViewerClosed&) {  // the user closed the window: done
      } catch (...) {
        failure = std::current_exception();
      }
    });
    producer.join();
    if (failure) std::rethrow_exception(failure);
    if (viewer.is_open() && !snapshot.empty()) {
      const RgbaImage img = viewer.snapshot();  // the last frame, once displayed
      media::Image8 png{img.width(), img.height(), 4, {img.data(), img.data() + img.stride() * img.height()}};
      media::write_png(snapshot, png);
    }
    if (viewer.windowed() && viewer.is_open()) viewer.wait_closed();  // a window stays until the user closes it
    const ViewerStats s = viewer.stats();
    std::printf("pushed %lld frames: %llu shown, %llu dropped; show-to-displayed p50 %.2f ms, p99 %.2f ms\n",
                static_cast<long long>(pushed.load()), static_cast<unsigned long long>(s.shown),
                static_cast<unsigned long long>(s.dropped), s.latency_p50_ms, s.latency_p99_ms);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "push_clip: %s\n", e.what());
    return 1;
  }
}
