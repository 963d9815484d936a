// Writes the seed corpus of fuzz_live (tests/fuzz/corpus/live): one file per
// kind of message the protocol has, each a descriptor-count byte then the
// datagram, plus an overlay block. Run by hand after a protocol change:
//   build/default/tests/fuzz/make_live_seeds tests/fuzz/corpus/live
#include <handoff/live/protocol.hpp>
#include <handoff/media/overlay.hpp>

#include <cstdio>
#include <fstream>
#include <string>

using namespace handoff;
using namespace handoff::live;

namespace {

// Host samples kept for the run (the seeds are written before main returns).
template <typename T>
media::LayerArray array_of(std::vector<T>& v, media::SampleType type, std::uint32_t w, std::uint32_t h,
                           std::uint32_t count = 1) {
  media::LayerArray a;
  a.data = v.data();
  a.type = type;
  a.width = w;
  a.height = h;
  a.count = count;
  return a;
}

void write(const std::string& dir, const std::string& name, std::uint8_t fds, const std::vector<std::byte>& bytes) {
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out.put(static_cast<char>(fds));
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_live_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  media::OverlayFrame ov;
  ov.frame = 3;
  const auto o = ov.add_box(1, 2, 30, 40, "car", 0.5f, 2, 7);
  const media::Keypoint kps[] = {{1, 1, 1}, {2, 2, 0.5f}};
  const std::array<std::uint32_t, 2> edges[] = {{0, 1}};
  ov.set_keypoints(o, kps, 2, edges, 1);
  const media::Point2 pts[] = {{0, 0}, {5, 0}, {5, 5}};
  ov.add_shape(pts, 3, true, 0);
  ov.add_label_text(4, 5, "hi");
  std::vector<std::byte> overlay_bytes;
  encode_overlays(ov, overlay_bytes);

  write(dir, "hello.bin", 0, encode_message(Hello{7, 2, kAcceptsAll, "viewer"}));
  write(dir, "welcome.bin", 0, encode_message(Welcome{7, 4, 3, SlotMemory::Cuda, CudaSync::IpcEvent, "cam0", "CUDA VMM fd"}));
  write(dir, "reject.bin", 0, encode_message(Reject{"protocol version mismatch"}));
  write(dir, "goodbye.bin", 0, encode_message(Goodbye{"stopped"}));
  write(dir, "release.bin", 0, encode_message(Release{1, 2, 3}));
  write(dir, "leave.bin", 0, encode_message(Leave{{Release{1, 2, 3}, Release{3, 1, 8}}}));
  SlotAnnounce s;
  s.slot = 1;
  s.generation = 2;
  s.kind = SlotKind::CudaVmmFd;
  s.has_event = true;
  s.size = s.allocation_size = 2 << 20;
  write(dir, "slot.bin", 1, encode_message(s));
  FrameAnnounce f;
  f.slot = 1;
  f.generation = 2;
  f.sequence = 9;
  f.format = PixelFormat::P010;
  f.width = 33;
  f.height = 17;
  f.pitches = {256, 256};
  f.offsets = {0, 256 * 17};
  f.overlays = OverlayCarrier::Inline;
  f.inline_overlays = overlay_bytes;
  write(dir, "frame_inline_overlays.bin", 0, encode_message(f));
  f.overlays = OverlayCarrier::Memfd;
  f.inline_overlays.clear();
  f.overlay_bytes = 40000;
  write(dir, "frame_memfd_overlays.bin", 1, encode_message(f));
  // Issue 23's formats: three planes (i420) and one (rgb8, gray32f).
  f.overlays = OverlayCarrier::None;
  f.overlay_bytes = 0;
  f.format = PixelFormat::I420;
  f.pitches = {256, 256, 256};
  f.offsets = {0, 256 * 17, 256 * 26};
  write(dir, "frame_i420.bin", 0, encode_message(f));
  f.format = PixelFormat::RGB8;
  f.pitches = {256, 0, 0};
  f.offsets = {0, 0, 0};
  write(dir, "frame_rgb8.bin", 0, encode_message(f));
  f.format = PixelFormat::GRAY32F;
  write(dir, "frame_gray32f.bin", 0, encode_message(f));
  write(dir, "overlays.bin", 0, overlay_bytes);

  // Issue 23's layers: one of each kind (one mask: one box) in an overlay block.
  std::vector<std::uint8_t> ids = {0, 1, 2, 3, 1, 1, 2, 0, 255, 7, 7, 0};
  std::vector<float> values = {0.f, 0.5f, -1.f, 2.f, 1e30f, 3.f};
  std::vector<std::uint8_t> mask = {0, 1, 1, 0};
  media::ClassMap m;
  m.ids = array_of(ids, media::SampleType::U8, 4, 3);
  m.colors = {{1, {255, 0, 0, 255}}, {2, {0, 0, 255, 255}}};
  m.names = {{0, "bg"}, {1, "road"}};
  m.transparent = {0};
  m.target = media::RectF{1, 2, 20, 10};
  ov.layers.push_back(m);
  media::ScalarMap sm;
  sm.values = array_of(values, media::SampleType::F32, 3, 2);
  sm.colormap = media::Colormap::Viridis;
  sm.range = std::array<double, 2>{-1.0, 3.0};
  ov.layers.push_back(sm);
  media::InstanceMasks k;
  k.masks = array_of(mask, media::SampleType::U8, 2, 2);
  ov.layers.push_back(k);
  encode_overlays(ov, overlay_bytes);
  media::OverlayFrame back;
  decode_overlays(overlay_bytes, back);  // a seed the decoder accepts (throws otherwise)
  if (back.layers.size() != 3) return 1;
  write(dir, "overlays_layers.bin", 0, overlay_bytes);
  f.format = PixelFormat::P010;
  f.pitches = {256, 256};
  f.offsets = {0, 256 * 17};
  f.overlays = OverlayCarrier::Inline;
  f.inline_overlays = overlay_bytes;
  write(dir, "frame_inline_layers.bin", 0, encode_message(f));
  return 0;
}
