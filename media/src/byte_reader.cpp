#include "byte_reader.hpp"

#include <handoff/unique_handle.hpp>
#include <handoff/media/error.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace handoff::media::detail {
namespace {

class FileReader final : public ByteReader {
 public:
  FileReader(UniqueFd fd, std::uint64_t size, std::string name) : fd_(std::move(fd)), size_(size) {
    name_ = std::move(name);
  }
  std::uint64_t size() const override { return size_; }
  std::size_t read_at(std::uint64_t offset, void* dst, std::size_t n) override {
    std::size_t done = 0;
    auto* out = static_cast<std::uint8_t*>(dst);
    while (done < n) {
      const ssize_t r = ::pread(fd_.get(), out + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        throw Error(Api::System, "pread", errno, std::strerror(errno), name_);
      }
      if (r == 0) break;
      done += static_cast<std::size_t>(r);
    }
    return done;
  }

 private:
  UniqueFd fd_;
  std::uint64_t size_;
};

class MemoryReader final : public ByteReader {
 public:
  MemoryReader(std::span<const std::uint8_t> bytes, std::string name) : bytes_(bytes.begin(), bytes.end()) {
    name_ = std::move(name);
  }
  std::uint64_t size() const override { return bytes_.size(); }
  std::size_t read_at(std::uint64_t offset, void* dst, std::size_t n) override {
    if (offset >= bytes_.size()) return 0;
    const std::size_t avail = static_cast<std::size_t>(bytes_.size() - offset);
    const std::size_t k = n < avail ? n : avail;
    if (k) std::memcpy(dst, bytes_.data() + offset, k);
    return k;
  }

 private:
  std::vector<std::uint8_t> bytes_;
};

}  // namespace

std::unique_ptr<ByteReader> open_file_reader(const std::filesystem::path& path) {
  const std::string name = path.string();
  UniqueFd fd(::open(name.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw ParseError(name, "", "open", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw ParseError(name, "", "fstat", std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw ParseError(name, "", "open", "is a directory, not a file");
  if (!S_ISREG(st.st_mode)) throw ParseError(name, "", "open", "not a regular file");
  return std::make_unique<FileReader>(std::move(fd), static_cast<std::uint64_t>(st.st_size), name);
}

std::unique_ptr<ByteReader> open_memory_reader(std::span<const std::uint8_t> bytes, std::string name) {
  return std::make_unique<MemoryReader>(bytes, std::move(name));
}

}  // namespace handoff::media::detail
