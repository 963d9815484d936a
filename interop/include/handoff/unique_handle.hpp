#pragma once
// One RAII template for every handle type: the empty value is a
// parameter, so an fd's empty value is -1 and a GL name's is 0.
#include <utility>

namespace handoff {

template <typename T, typename Deleter, T Empty = T{}>
class UniqueHandle {
 public:
  UniqueHandle() noexcept = default;
  explicit UniqueHandle(T value, Deleter deleter = Deleter{}) noexcept
      : value_(value), deleter_(std::move(deleter)) {}
  UniqueHandle(UniqueHandle&& o) noexcept
      : value_(std::exchange(o.value_, Empty)), deleter_(std::move(o.deleter_)) {}
  UniqueHandle& operator=(UniqueHandle&& o) noexcept {
    if (this != &o) {
      reset();
      value_ = std::exchange(o.value_, Empty);
      deleter_ = std::move(o.deleter_);
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(); }

  T get() const noexcept { return value_; }
  explicit operator bool() const noexcept { return value_ != Empty; }
  // Gives up ownership: the caller (or an importer that consumed it) owns it now.
  [[nodiscard]] T release() noexcept { return std::exchange(value_, Empty); }
  void reset(T value = Empty) noexcept {
    T old = std::exchange(value_, value);
    if (old != Empty) deleter_(old);  // deleters never throw
  }
  Deleter& deleter() noexcept { return deleter_; }

 private:
  T value_ = Empty;
  Deleter deleter_{};
};

struct FdCloser {
  void operator()(int fd) const noexcept;
};
// A file descriptor; -1 is empty.
using UniqueFd = UniqueHandle<int, FdCloser, -1>;

}  // namespace handoff
