#pragma once
// rosbag2 bag folders: the storage files their metadata.yaml names (one, or
// several for a split bag, in recording order), their storage and their
// compression, and the zstd decompression the compressed ones need.
#include <handoff/media/mcap.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace handoff::media {

// A path's extension in lower case (".mcap", ".db3"; "" when it has none).
std::string lower_extension(const std::filesystem::path& path);

// rosbag2's compression_mode: FILE compresses each storage file whole
// (<name>.mcap.zstd), MESSAGE each message's serialized data.
enum class BagCompression { None, File, Message };

struct RosbagFolder {
  std::string name;                          // the folder, for messages about the whole bag
  std::string metadata;                      // its metadata.yaml ("" for a lone storage file)
  std::vector<std::filesystem::path> files;  // the storage files in the folder, in recording order
  // The files metadata.yaml names that are not in the folder (or not files),
  // each as a problem ("<metadata.yaml>: relative_file_paths: names bag_1.db3,
  // which is not in the folder"): left out of `files`, played without
  // (open_bag_files).
  std::vector<std::string> missing;
  bool db3 = false;                          // sqlite3 storage (else mcap)
  BagCompression compression = BagCompression::None;
};

// The bag described by `folder`'s metadata.yaml. ParseError naming
// metadata.yaml and the key when it is missing or unreadable, names no file,
// mixes mcap and sqlite3 files, or names a compression other than zstd in
// file or message mode. Files named but not in the folder are in `missing`.
RosbagFolder read_rosbag_folder(const std::filesystem::path& folder);
// A .db3 file played on its own: a bag of that one file, named by it.
RosbagFolder lone_db3_file(const std::filesystem::path& path);

// Opens `bag`'s storage files one by one with `open(i)` (bag.files[i]), which throws ParseError
// for a file it cannot use (not the storage, cut short, damaged zstd, ...).
// Such a file, like one in bag.missing, is left out and the rest play: its
// problem, with "(file skipped; the rest of the bag plays)", is appended to
// `warnings` and logged as a warning (unless `log_skipped` is false: the bag
// was opened before, and its skipped files said then). ParseError naming
// metadata.yaml and each file's problem when no file opens. Other errors
// propagate, as every error does for a lone storage file (bag.metadata empty).
void open_bag_files(const RosbagFolder& bag, const std::function<void(std::size_t)>& open,
                    std::vector<std::string>& warnings, bool log_skipped = true);

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
// Files that do not open are skipped (open_bag_files): their problems come
// first in the reader's warnings().
std::unique_ptr<mcap::Reader> open_bag_mcap(const RosbagFolder& bag, const mcap::ReaderOptions& options);
// The same over readers already open (open_bag_memory); named `name` in
// messages; `skipped`: the problems of the files left out, kept as warnings.
std::unique_ptr<mcap::Reader> join_bag_mcap(std::string name, std::vector<std::unique_ptr<mcap::Reader>> parts,
                                            bool compressed_messages, const mcap::ReaderOptions& options,
                                            std::vector<std::string> skipped = {});
// Parts in memory, each opened as an MCAP file named `name`#i (skipped as
// files are when they do not open).
std::unique_ptr<mcap::Reader> open_bag_mcap_memory(const std::vector<std::span<const std::uint8_t>>& parts,
                                                   bool compressed_messages, const std::string& name,
                                                   const mcap::ReaderOptions& options);

}  // namespace handoff::media
