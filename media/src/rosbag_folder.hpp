#pragma once
// rosbag2 bag folders: the storage files their metadata.yaml names (one, or
// several for a split bag, in recording order), their storage and their
// compression, and the zstd decompression the compressed ones need.
#include <handoff/media/mcap.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace handoff::media {

// rosbag2's compression_mode: FILE compresses each storage file whole
// (<name>.mcap.zstd), MESSAGE each message's serialized data.
enum class BagCompression { None, File, Message };

struct RosbagFolder {
  std::string name;                          // the folder, for messages about the whole bag
  std::vector<std::filesystem::path> files;  // the storage files, in recording order
  bool db3 = false;                          // sqlite3 storage (else mcap)
  BagCompression compression = BagCompression::None;
};

// The bag described by `folder`'s metadata.yaml. ParseError naming
// metadata.yaml and the key when it is missing or unreadable, names no file or
// a file not in the folder, mixes mcap and sqlite3 files, or names a
// compression other than zstd in file or message mode.
RosbagFolder read_rosbag_folder(const std::filesystem::path& folder);

// A private temporary file, removed when this is destroyed.
class TempFile {
 public:
  TempFile() = default;
  explicit TempFile(std::filesystem::path path) : path_(std::move(path)) {}
  TempFile(TempFile&& o) noexcept : path_(std::exchange(o.path_, {})) {}
  TempFile& operator=(TempFile&& o) noexcept;
  ~TempFile();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A zstd-compressed storage file (compression_mode file) decompressed to
// memory / to a private temporary file. ParseError naming the file when the
// stream is damaged or cut short.
std::vector<std::uint8_t> zstd_decompress_file(const std::filesystem::path& path);
TempFile zstd_decompress_to_temp(const std::filesystem::path& path);
// One message's zstd-compressed data (compression_mode message).
// ParseError(file, where, "data", ...) when it does not decompress or
// decompresses to more than `limit` bytes (the readers' max_chunk_bytes, so a
// hostile message cannot make them allocate without bound).
std::vector<std::uint8_t> zstd_decompress_message(std::span<const std::uint8_t> data, const std::string& file,
                                                  const std::string& where, std::uint64_t limit);

// The MCAP files of `bag` read as one recording (mcap::Reader): the channels
// of one topic in every file are one channel, its messages in log-time order
// (file order among equal times), each decompressed when read in message mode.
std::unique_ptr<mcap::Reader> open_bag_mcap(const RosbagFolder& bag, const mcap::ReaderOptions& options);
// The same over readers already open (open_bag_memory); named `name` in messages.
std::unique_ptr<mcap::Reader> join_bag_mcap(std::string name, std::vector<std::unique_ptr<mcap::Reader>> parts,
                                            bool compressed_messages, const mcap::ReaderOptions& options);
// Parts in memory, each opened as an MCAP file named `name`#i.
std::unique_ptr<mcap::Reader> open_bag_mcap_memory(const std::vector<std::span<const std::uint8_t>>& parts,
                                                   bool compressed_messages, const std::string& name,
                                                   const mcap::ReaderOptions& options);

}  // namespace handoff::media
