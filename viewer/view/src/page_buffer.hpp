#pragma once
// Bytes in pages of their own (mmap), given back to the system when the
// buffer goes. The CPU colour path's frame- and view-sized buffers are made
// and freed with every renderer; from malloc they would stay in the arena of
// the display thread that made them, and resident memory would wander by
// megabytes over viewers' lifetimes (tests/gst's 100 state cycles saw it).
//
// Thread safety: none (one owner). Contents are not kept across a growing
// resize: every user overwrites what it asks for.
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

namespace handoff::view {

class PageBuffer {
 public:
  PageBuffer() = default;
  ~PageBuffer() { release(); }
  PageBuffer(PageBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)) {}
  PageBuffer& operator=(PageBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      capacity_ = std::exchange(o.capacity_, 0);
    }
    return *this;
  }
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;

  // `n` bytes (zero-filled when new pages are mapped); std::bad_alloc when the
  // system has none. Shrinking keeps the pages.
  void resize(std::size_t n) {
    if (n > capacity_) {
      void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      release();
      data_ = static_cast<std::uint8_t*>(p);
      capacity_ = n;
    }
    size_ = n;
  }
  std::uint8_t* data() { return data_; }
  const std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release() noexcept {
    if (data_) munmap(data_, capacity_);
    data_ = nullptr;
    size_ = capacity_ = 0;
  }
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
};

}  // namespace handoff::view
