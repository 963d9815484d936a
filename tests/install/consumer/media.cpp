// The media library from an installed handoff: a PNG round trip (libspng) and
// one overlay line (simdjson), so the package's dependencies are exercised.
#include <handoff/media/overlay.hpp>
#include <handoff/media/png.hpp>

#include <cstdio>

int main() {
  using namespace handoff::media;
  Image8 image{2, 1, 3, {255, 0, 0, 0, 0, 255}};
  std::vector<std::uint8_t> png = encode_png(image);
  Image8 back = decode_png(png.data(), png.size());

  OverlayStore overlays;
  overlays.load_jsonl_text(R"({"frame": 3, "objects": [{"box": [1, 2, 3, 4], "label": "car"}]})", "consumer");
  const OverlayFrame* f = overlays.find(3);

  const bool ok = back.pixels == image.pixels && f && f->objects.size() == 1;
  std::printf("consumer media library: PNG of %zu bytes, %zu overlay frame(s): %s\n", png.size(), overlays.size(),
              ok ? "ok" : "unexpected result");
  return ok ? 0 : 1;
}
