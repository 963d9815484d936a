#pragma once
// FileSizeLimit: a full disk, in tests, through RLIMIT_FSIZE (no mount):
// shared by the media, viewer and live tiers.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <csignal>

namespace handoff::test {

// Files this process writes are limited to `bytes` while it lives (a full
// disk, in tests): a write past it fails with EFBIG (SIGXFSZ ignored). Call
// apply() once the files the test needs whole are open; the old limit and
// signal action come back at the end of the scope.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) : bytes_(bytes) {
    if (::getrlimit(RLIMIT_FSIZE, &saved_) != 0) ADD_FAILURE() << "getrlimit(RLIMIT_FSIZE) failed";
    old_xfsz_ = std::signal(SIGXFSZ, SIG_IGN);
  }
  ~FileSizeLimit() { restore(); }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
  void apply() {
    struct rlimit small = saved_;
    small.rlim_cur = bytes_;
    if (::setrlimit(RLIMIT_FSIZE, &small) != 0) ADD_FAILURE() << "setrlimit(RLIMIT_FSIZE) failed";
  }
  void restore() {
    if (restored_) return;
    restored_ = true;
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_xfsz_);
  }

 private:
  rlim_t bytes_;
  struct rlimit saved_ {};
  void (*old_xfsz_)(int) = SIG_DFL;
  bool restored_ = false;
};

}  // namespace handoff::test
