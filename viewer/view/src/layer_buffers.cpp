#include "layer_buffers.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

namespace handoff::view {

namespace {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  std::shared_ptr<std::uint8_t[]> take(std::size_t bytes) {
    std::unique_ptr<std::uint8_t[]> b;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->first == bytes) {
          b = std::move(it->second);
          kept_ -= bytes;
          free_.erase(it);
          break;
        }
    }
    if (!b) b.reset(new std::uint8_t[bytes]);
    // The deleter holds the pool: a buffer may outlive every other user of it.
    return std::shared_ptr<std::uint8_t[]>(b.release(), [pool = shared_from_this(), bytes](std::uint8_t* p) {
      pool->give(std::unique_ptr<std::uint8_t[]>(p), bytes);
    });
  }

  static constexpr std::size_t kMaxKept = std::size_t(128) << 20;
  static constexpr std::size_t kMaxBuffers = 8;

  std::size_t pooled(std::size_t bytes) {
    const std::lock_guard<std::mutex> lock(mutex_);
    return std::size_t(std::count_if(free_.begin(), free_.end(), [&](const auto& f) { return f.first == bytes; }));
  }

 private:
  // The newest buffers stay: when full, the oldest go (a stream whose layer
  // sizes changed no longer needs them). Freed outside the lock.
  void give(std::unique_ptr<std::uint8_t[]> b, std::size_t bytes) {
    if (bytes > kMaxKept) return;
    std::vector<std::unique_ptr<std::uint8_t[]>> evicted;
    const std::lock_guard<std::mutex> lock(mutex_);
    while (!free_.empty() && (kept_ + bytes > kMaxKept || free_.size() >= kMaxBuffers)) {
      kept_ -= free_.front().first;
      evicted.push_back(std::move(free_.front().second));
      free_.erase(free_.begin());
    }
    kept_ += bytes;
    free_.emplace_back(bytes, std::move(b));
  }

  std::mutex mutex_;
  std::vector<std::pair<std::size_t, std::unique_ptr<std::uint8_t[]>>> free_;
  std::size_t kept_ = 0;
};

// Every id's bits OR-ed together: one simple loop that vectorises (a
// negative id sets the high bits too). Unsigned `U` of the ids' width.
template <typename U>
bool narrow(const std::uint8_t* in, std::size_t count, std::uint8_t* out) {
  U seen = 0;
  for (std::size_t i = 0; i < count; ++i) {
    U v;
    std::memcpy(&v, in + i * sizeof(U), sizeof(U));
    seen |= v;
    out[i] = std::uint8_t(v);
  }
  return (seen & ~U(0xff)) == 0;
}

BufferPool& pool() {
  static const auto p = std::make_shared<BufferPool>();
  return *p;
}

}  // namespace

std::shared_ptr<std::uint8_t[]> layer_buffer(std::size_t bytes) { return pool().take(bytes); }

std::size_t pooled_layer_buffers(std::size_t bytes) { return pool().pooled(bytes); }

bool narrow_ids_to_u8(const std::uint8_t* in, std::size_t count, std::size_t source_bytes, std::uint8_t* out) {
  if (source_bytes == 4) return narrow<std::uint32_t>(in, count, out);
  if (source_bytes == 8) return narrow<std::uint64_t>(in, count, out);
  return false;
}

}  // namespace handoff::view
