#pragma once
// PNG writing with libspng, and a background encoder so frames are encoded off
// the render thread.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace handoff::media {

// 8-bit RGB or RGBA pixels, tightly packed rows (stride = width * channels).
struct Image8 {
  std::uint32_t width = 0, height = 0;
  std::uint32_t channels = 3;  // 3 (RGB) or 4 (RGBA)
  std::vector<std::uint8_t> pixels;
  std::size_t stride() const { return std::size_t(width) * channels; }
};

// How hard the encoder works. Small: zlib's default level, the best filter per
// row (files to keep: goldens). Fast: level 1, the Sub filter on every row
// (frames written while playing: several times faster, somewhat larger).
enum class PngSpeed { Small, Fast };

// Encodes to PNG bytes. UsageError on a malformed image, handoff::Error
// (call "spng_encode_image", the spng error name) on an encoder failure.
std::vector<std::uint8_t> encode_png(const Image8& image, PngSpeed speed = PngSpeed::Small);
// Encodes and writes `path` (handoff::Error naming the path on I/O failure).
void write_png(const std::filesystem::path& path, const Image8& image, PngSpeed speed = PngSpeed::Small);
// Decodes a PNG (8-bit RGB or RGBA out, `channels` chosen) — for tests and golden images.
Image8 read_png(const std::filesystem::path& path, std::uint32_t channels = 3);
Image8 decode_png(const std::uint8_t* data, std::size_t size, std::uint32_t channels = 3);

// Encodes and writes PNGs on threads of its own (`threads`; 0: one per core).
// submit() blocks while the queue holds `capacity` images (back-pressure,
// nothing dropped), bounded by handoff::wait_limit() (WaitTimeout), as is
// flush(). Failures are kept and returned by take_errors() (and logged once
// each); none is lost. All methods are thread-safe. The destructor finishes
// the queue and joins.
class PngEncoder {
 public:
  explicit PngEncoder(std::size_t capacity = 4, unsigned threads = 1, PngSpeed speed = PngSpeed::Small);
  ~PngEncoder();
  PngEncoder(const PngEncoder&) = delete;
  PngEncoder& operator=(const PngEncoder&) = delete;

  // Queues `image` for `path` (takes ownership of the pixels).
  void submit(std::filesystem::path path, Image8 image);
  // Waits until every submitted image is written (or failed).
  void flush();
  // Errors so far ("<path>: <reason>"), removed from the encoder.
  std::vector<std::string> take_errors();
  std::size_t written() const;  // images written successfully

 private:
  void run();
  struct Job {
    std::filesystem::path path;
    Image8 image;
  };
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::size_t capacity_;
  PngSpeed speed_;
  std::size_t busy_ = 0;
  std::size_t written_ = 0;
  bool stop_ = false;
  std::vector<std::string> errors_;
  std::vector<std::thread> threads_;  // last: started after the members above exist
};

}  // namespace handoff::media
