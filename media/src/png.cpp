#include <handoff/error.hpp>
#include <handoff/log.hpp>
#include <handoff/media/png.hpp>
#include <handoff/wait.hpp>

#include <spng.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <utility>

namespace handoff::media {
namespace {

struct SpngCtx {
  spng_ctx* ctx;
  explicit SpngCtx(int flags) : ctx(spng_ctx_new(flags)) {
    if (!ctx) throw Error(Api::None, "spng_ctx_new", 0, "", "out of memory");
  }
  ~SpngCtx() { spng_ctx_free(ctx); }
  SpngCtx(const SpngCtx&) = delete;
  SpngCtx& operator=(const SpngCtx&) = delete;
};

void check(int rc, const char* call, const std::string& what = {}) {
  if (rc != 0) throw Error(Api::None, call, rc, spng_strerror(rc), what);
}

void validate(const Image8& img) {
  if (img.width == 0 || img.height == 0) throw UsageError("PNG image: width and height must be positive");
  if (img.channels != 3 && img.channels != 4) throw UsageError("PNG image: channels must be 3 or 4");
  if (img.pixels.size() != img.stride() * img.height) {
    throw UsageError("PNG image: " + std::to_string(img.pixels.size()) + " bytes of pixels, expected " +
                     std::to_string(img.stride() * img.height));
  }
}

}  // namespace

std::vector<std::uint8_t> encode_png(const Image8& img, PngSpeed speed) {
  validate(img);
  SpngCtx c(SPNG_CTX_ENCODER);
  check(spng_set_option(c.ctx, SPNG_ENCODE_TO_BUFFER, 1), "spng_set_option");
  if (speed == PngSpeed::Fast) {
    check(spng_set_option(c.ctx, SPNG_IMG_COMPRESSION_LEVEL, 1), "spng_set_option", "compression level");
    check(spng_set_option(c.ctx, SPNG_FILTER_CHOICE, SPNG_FILTER_CHOICE_SUB), "spng_set_option", "filter");
  }
  spng_ihdr ihdr{};
  ihdr.width = img.width;
  ihdr.height = img.height;
  ihdr.bit_depth = 8;
  ihdr.color_type = img.channels == 4 ? SPNG_COLOR_TYPE_TRUECOLOR_ALPHA : SPNG_COLOR_TYPE_TRUECOLOR;
  check(spng_set_ihdr(c.ctx, &ihdr), "spng_set_ihdr");
  check(spng_encode_image(c.ctx, img.pixels.data(), img.pixels.size(), SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE),
        "spng_encode_image");
  std::size_t len = 0;
  int err = 0;
  void* buf = spng_get_png_buffer(c.ctx, &len, &err);
  if (!buf) check(err ? err : SPNG_EINTERNAL, "spng_get_png_buffer");
  std::vector<std::uint8_t> out(static_cast<std::uint8_t*>(buf), static_cast<std::uint8_t*>(buf) + len);
  std::free(buf);  // spng hands the buffer over; it was allocated with malloc
  return out;
}

void write_png(const std::filesystem::path& path, const Image8& image, PngSpeed speed) {
  const std::vector<std::uint8_t> bytes = encode_png(image, speed);
  const std::string name = path.string();
  std::FILE* f = std::fopen(name.c_str(), "wb");
  if (!f) throw Error(Api::System, "fopen", errno, std::strerror(errno), name);
  // Each call's own errno: a short write's, else the flush at fclose's (a full
  // disk shows there; errno after a whole buffered fwrite means nothing).
  if (std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
    const int saved = errno;
    std::fclose(f);
    throw Error(Api::System, "fwrite", saved, std::strerror(saved), name);
  }
  if (std::fclose(f) != 0) throw Error(Api::System, "fclose", errno, std::strerror(errno), name);
}

Image8 decode_png(const std::uint8_t* data, std::size_t size, std::uint32_t channels) {
  if (channels != 3 && channels != 4) throw UsageError("decode_png: channels must be 3 or 4");
  SpngCtx c(0);
  check(spng_set_image_limits(c.ctx, 16384, 16384), "spng_set_image_limits");
  check(spng_set_png_buffer(c.ctx, data, size), "spng_set_png_buffer");
  spng_ihdr ihdr{};
  check(spng_get_ihdr(c.ctx, &ihdr), "spng_get_ihdr");
  const int fmt = channels == 4 ? SPNG_FMT_RGBA8 : SPNG_FMT_RGB8;
  std::size_t out_size = 0;
  check(spng_decoded_image_size(c.ctx, fmt, &out_size), "spng_decoded_image_size");
  Image8 img;
  img.width = ihdr.width;
  img.height = ihdr.height;
  img.channels = channels;
  img.pixels.resize(out_size);
  check(spng_decode_image(c.ctx, img.pixels.data(), out_size, fmt, SPNG_DECODE_TRNS), "spng_decode_image");
  return img;
}

Image8 read_png(const std::filesystem::path& path, std::uint32_t channels) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(Api::System, "open", errno, std::strerror(errno), path.string());
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return decode_png(bytes.data(), bytes.size(), channels);
  } catch (const Error& e) {
    throw Error(Api::None, e.call(), e.code(), e.code_name(), path.string());
  }
}

// --- PngEncoder ----------------------------------------------------------------------

PngEncoder::PngEncoder(std::size_t capacity, unsigned threads, PngSpeed speed)
    : capacity_(capacity ? capacity : 1), speed_(speed) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

PngEncoder::~PngEncoder() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void PngEncoder::submit(std::filesystem::path path, Image8 image) {
  validate(image);  // misuse is reported to the caller, not later
  std::unique_lock lock(mutex_);
  const auto limit = wait_limit();
  if (!cv_.wait_for(lock, limit, [&] { return queue_.size() < capacity_ || stop_; }))
    throw WaitTimeout("the PNG encoder's queue (" + std::to_string(capacity_) + " images waiting)", limit);
  if (stop_) throw UsageError("PngEncoder::submit during destruction");
  queue_.push_back(Job{std::move(path), std::move(image)});
  cv_.notify_all();
}

void PngEncoder::flush() {
  std::unique_lock lock(mutex_);
  const auto limit = wait_limit();
  if (!cv_.wait_for(lock, limit, [&] { return queue_.empty() && busy_ == 0; }))
    throw WaitTimeout("the PNG encoder (" + std::to_string(queue_.size() + busy_) + " images not written)", limit);
}

std::vector<std::string> PngEncoder::take_errors() {
  std::lock_guard lock(mutex_);
  return std::exchange(errors_, {});
}

std::size_t PngEncoder::written() const {
  std::lock_guard lock(mutex_);
  return written_;
}

void PngEncoder::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return !queue_.empty() || stop_; });
    if (queue_.empty()) return;  // stop_ and nothing left: done
    Job job = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    cv_.notify_all();  // room in the queue
    lock.unlock();
    std::string error;
    try {
      write_png(job.path, job.image, speed_);
    } catch (const std::exception& e) {
      error = job.path.string() + ": " + e.what();
      log(LogLevel::Error, "PngEncoder: " + error);
    }
    lock.lock();
    --busy_;
    if (error.empty()) ++written_;
    else errors_.push_back(std::move(error));
    cv_.notify_all();
  }
}

}  // namespace handoff::media
