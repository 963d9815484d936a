// handoff::view and handoff::live from an installed handoff: a headless
// handoff::Viewer shows one frame and its snapshot has the frame's size and a
// white box where the overlay put it; a Publisher hands one frame to a
// Subscriber over a socket in a private temporary folder (host memfd slots),
// which receives it with its pixels.
#include <handoff/host_frame.hpp>
#include <handoff/publisher.hpp>
#include <handoff/subscriber.hpp>
#include <handoff/viewer.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

namespace {

using namespace handoff;
using namespace std::chrono_literals;

bool viewer_shows_a_frame() {
  Viewer viewer({.display = ViewerDisplay::Headless, .on_notice = [](std::string_view) {}});
  const Frame frame = allocate_host_frame(PixelFormat::NV12, 64, 48);
  fill_test_pattern(frame);
  media::OverlayFrame boxes;
  boxes.add_box(8, 8, 40, 30);  // no class: a white outline
  viewer.show(frame, boxes);
  const RgbaImage image = viewer.snapshot();
  viewer.close();
  const std::uint8_t* edge = image.empty() ? nullptr : image.pixel(24, 8);
  const bool ok = image.width() == 64 && image.height() == 48 && edge && edge[0] > 200 && edge[1] > 200;
  std::printf("consumer viewer: snapshot %ux%u, box edge %s\n", image.width(), image.height(), ok ? "white" : "missing");
  return ok;
}

bool publisher_reaches_subscriber(const std::filesystem::path& folder) {
  const std::filesystem::path socket = folder / "consumer.sock";
  Publisher publisher(socket.string());
  Subscriber subscriber(socket.string());
  if (!subscriber.wait_for(LinkState::Connected, 10s)) {
    std::printf("consumer live: no connection (%s)\n", subscriber.status().message.c_str());
    return false;
  }
  Frame frame = allocate_host_frame(PixelFormat::NV12, 32, 16);
  fill_test_pattern(frame, 5);
  frame.index = 7;
  LiveFrame got;
  // The publisher counts a subscriber once its handshake is done; until then a publish goes to nobody.
  for (int i = 0; i < 200 && !got; ++i) {
    publisher.publish(frame);
    got = subscriber.next(50ms);
  }
  const bool ok = got && got.frame.index == 7 && got.frame.width == 32 &&
                  std::memcmp(got.frame.planes[0].data, frame.planes[0].data, 32) == 0;
  std::printf("consumer live: %s\n", ok ? "frame 7 arrived" : "no frame arrived");
  return ok;
}

}  // namespace

int main() {
  char folder[] = "/tmp/handoff-consumer-XXXXXX";
  if (!mkdtemp(folder)) {  // mode 0700: the subscriber trusts only this user's folder
    std::perror("mkdtemp");
    return 1;
  }
  bool ok = false;
  try {
    ok = viewer_shows_a_frame() && publisher_reaches_subscriber(folder);
  } catch (const std::exception& e) {
    std::printf("consumer viewer / live: %s\n", e.what());
  }
  std::filesystem::remove_all(folder);
  return ok ? 0 : 1;
}
