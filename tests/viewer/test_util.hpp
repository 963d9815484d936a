#pragma once
// Helpers shared by the media library tests: a per-test temporary directory and
// file writing.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace handoff::media::test {

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "handoff-vc-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    if (info) name += std::string("-") + info->name();
    for (char& c : name) if (c == '/') c = '_';
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& f) const { return path_ / f; }

 private:
  std::filesystem::path path_;
};

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

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file(const std::filesystem::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << p;
}

// Runs f, expects it to throw E, returns the message ("" when it did not throw).
template <typename E, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return {};
}

}  // namespace handoff::media::test
