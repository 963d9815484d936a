#pragma once
// Positioned reads from a file (pread) or from memory: the readers' only I/O.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace handoff::media::detail {

class ByteReader {
 public:
  virtual ~ByteReader() = default;
  virtual std::uint64_t size() const = 0;
  // Reads up to n bytes at `offset`; fewer only at the end of the data.
  // Throws handoff::Error (naming the file) on an I/O error.
  virtual std::size_t read_at(std::uint64_t offset, void* dst, std::size_t n) = 0;
  const std::string& name() const { return name_; }

 protected:
  std::string name_;
};

// ParseError naming the file when it cannot be opened.
std::unique_ptr<ByteReader> open_file_reader(const std::filesystem::path& path);
std::unique_ptr<ByteReader> open_memory_reader(std::span<const std::uint8_t> bytes, std::string name);

}  // namespace handoff::media::detail
