#pragma once
// MCAP, the container of ROS 2 bags and Foxglove recordings: its records, a
// writer (chunks compressed with zstd or lz4 or not at all, message and chunk
// indexes, statistics, summary, CRCs) and a reader that reaches any message
// through the summary's indexes, or, in a file without a summary (a recording
// cut short by a crash), by scanning it once, up to its last whole message.
// Written from the MCAP specification (major version 0); docs/recording.md
// says what is checked.
//
// Layout: magic, Header, data records (Schema, Channel, Chunk + its
// MessageIndex records, ...), DataEnd, summary records grouped by opcode,
// SummaryOffset records, Footer, magic. Integers are little-endian.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace handoff::media::mcap {

// The 8 bytes at both ends of a file: 0x89 "MCAP" '0' (major version) "\r\n".
inline constexpr std::array<std::uint8_t, 8> kMagic{0x89, 'M', 'C', 'A', 'P', '0', '\r', '\n'};

enum class Opcode : std::uint8_t {
  Header = 0x01,
  Footer = 0x02,
  Schema = 0x03,
  Channel = 0x04,
  Message = 0x05,
  Chunk = 0x06,
  MessageIndex = 0x07,
  ChunkIndex = 0x08,
  Attachment = 0x09,
  AttachmentIndex = 0x0A,
  Statistics = 0x0B,
  Metadata = 0x0C,
  MetadataIndex = 0x0D,
  SummaryOffset = 0x0E,
  DataEnd = 0x0F,
};

// "Chunk", "Message", ...; "record 0x42" for opcodes the specification does not define.
// Thread safety: any thread (as every free function here).
std::string record_name(std::uint8_t opcode);

enum class Compression : std::uint8_t { None, Zstd, Lz4 };

// The Chunk record's `compression` string: "" (none), "zstd", "lz4".
std::string_view compression_field(Compression c);
// The inverse; std::nullopt for any other string.
std::optional<Compression> compression_from_field(std::string_view field);
// For command lines: "none", "zstd", "lz4" (UsageError naming the value otherwise).
Compression parse_compression(std::string_view name);

// Channel and metadata maps keep the file's order.
using StringMap = std::vector<std::pair<std::string, std::string>>;

struct Header {
  std::string profile;
  std::string library;
};

struct Schema {
  std::uint16_t id = 0;
  std::string name;      // e.g. "foxglove.RawImage"
  std::string encoding;  // e.g. "protobuf" (data is then a FileDescriptorSet)
  std::vector<std::uint8_t> data;
  // Byte offset of the record it was read from (reader); for a record inside
  // a chunk, the chunk's offset.
  std::uint64_t offset = 0;
};

struct Channel {
  std::uint16_t id = 0;
  std::uint16_t schema_id = 0;  // 0: no schema
  std::string topic;
  std::string message_encoding;  // e.g. "protobuf"
  StringMap metadata;
  std::uint64_t offset = 0;  // as Schema::offset
};

struct Statistics {
  std::uint64_t message_count = 0;
  std::uint16_t schema_count = 0;
  std::uint32_t channel_count = 0;
  std::uint32_t attachment_count = 0;
  std::uint32_t metadata_count = 0;
  std::uint32_t chunk_count = 0;
  std::uint64_t message_start_time = 0;
  std::uint64_t message_end_time = 0;
  std::vector<std::pair<std::uint16_t, std::uint64_t>> channel_message_counts;
};

// --- Writing ---------------------------------------------------------------------

struct WriterOptions {
  Compression compression = Compression::Zstd;
  // zstd: its level (1 = fastest); lz4: LZ4F's compressionLevel (0 = fast mode).
  int compression_level = 1;
  // A chunk is closed once it holds this many bytes of records. 0: messages
  // are written outside chunks (nothing can then be indexed; readers scan).
  std::size_t chunk_size = std::size_t(4) << 20;
  // A chunk is also closed once the log times of its messages span this many
  // nanoseconds (default 1 s), so a process that dies while messages keep
  // coming loses about that much of the recording at most (the open chunk
  // is in memory until it is written). 0: chunks are bounded by size only.
  std::uint64_t chunk_duration_ns = 1'000'000'000;
  // Write the summary (schemas, channels, chunk indexes, statistics) and the
  // summary offsets. Without it the footer's offsets are 0 and readers scan.
  bool summary = true;
  // Compute the chunk, data section and summary CRCs (else they are written as 0).
  bool crc = true;
  // fdatasync() the file in close(), so close() returns once the bytes are on disk.
  bool sync_on_close = false;
  std::string profile;
  std::string library = "handoff";
};

// Writes an MCAP file. I/O errors throw handoff::Error naming the file;
// misuse (an unknown channel or schema id, use after close) throws UsageError.
// Thread safety: none; use one from one thread at a time (it may be handed
// between threads).
class Writer {
 public:
  // Creates (truncates) `path` and writes the magic and the Header record.
  explicit Writer(const std::filesystem::path& path, WriterOptions options = {});
  // Closes the file if close() was not called (an error is logged, not thrown).
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Registers a schema; returns its id (1, 2, ...). Its record is written
  // before the first message of a channel that uses it.
  std::uint16_t add_schema(std::string_view name, std::string_view encoding,
                           std::span<const std::uint8_t> data);
  // Registers a channel on `schema_id` (0: none); returns its id (0, 1, ...).
  std::uint16_t add_channel(std::uint16_t schema_id, std::string_view topic,
                            std::string_view message_encoding, const StringMap& metadata = {});
  // Appends a Message record (into the open chunk, which is written out once
  // it reaches chunk_size or its log times span chunk_duration_ns).
  void write(std::uint16_t channel, std::uint32_t sequence, std::uint64_t log_time,
             std::uint64_t publish_time, std::span<const std::uint8_t> data);
  // Writes the open chunk now (e.g. before a pause; the file stays readable
  // up to here if the process dies).
  void flush_chunk();
  // Writes the last chunk, DataEnd, the summary, the footer and the magic,
  // and closes the file. A second call does nothing.
  void close();

  std::uint64_t bytes_written() const;
  std::uint64_t message_count() const;
  // Messages of `channel` in whole records on the file (not those in the open
  // chunk, nor those of a write that failed and was taken back off the file).
  std::uint64_t messages_in_file(std::uint16_t channel) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// --- Reading ---------------------------------------------------------------------

// Where a message is: its log time, and either its offset inside the
// uncompressed records of chunk `chunk`, or (chunk == kNoChunk) the file
// offset of its record.
struct MessageRef {
  static constexpr std::uint32_t kNoChunk = 0xFFFFFFFFu;
  std::uint64_t log_time = 0;
  std::uint64_t offset = 0;
  std::uint32_t chunk = kNoChunk;
  std::uint16_t channel = 0;
};

// One message as read. `data` stays valid until the reader's next read().
struct MessageView {
  std::uint16_t channel = 0;
  std::uint32_t sequence = 0;
  std::uint64_t log_time = 0;
  std::uint64_t publish_time = 0;
  std::span<const std::uint8_t> data;
};

// The largest uncompressed chunk readers accept by default, and the most a
// handoff recording's chunk holds (media::RecordingOptions::max_chunk_bytes).
inline constexpr std::uint64_t kDefaultMaxChunkBytes = std::uint64_t(1) << 30;

struct ReaderOptions {
  // Largest uncompressed chunk accepted (a claim above it is an error, so a
  // hostile file cannot make the reader allocate without bound).
  std::uint64_t max_chunk_bytes = kDefaultMaxChunkBytes;
};

// Reads an MCAP file. open() reads the footer and the summary and loads the
// message indexes (one small read per chunk), so any message is then one
// positioned read (plus its chunk's decompression) away; without a usable
// summary it scans the file once. Malformed input throws ParseError naming
// the file, the record and its byte offset, and the field; a file cut short (a
// record running past the end) is read up to its last whole record with one
// warning (logged and kept in warnings()): of a chunk cut short, the messages
// wholly written are kept, or, when it is compressed, those wholly in what
// the zstd or lz4 blocks written decompress to (its CRC cannot be checked).
// Thread safety: none; use one from one thread at a time (it may be handed
// between threads).
class Reader {
 public:
  static std::unique_ptr<Reader> open(const std::filesystem::path& path, const ReaderOptions& options = {});
  // Same over bytes in memory (copied). `name` is used in messages. For tests and fuzzing.
  static std::unique_ptr<Reader> open_memory(std::span<const std::uint8_t> bytes, std::string name = "<memory>",
                                             const ReaderOptions& options = {});
  virtual ~Reader() = default;

  virtual const std::string& name() const = 0;
  virtual const Header& header() const = 0;
  // True when messages were found through the summary's indexes (no scan).
  virtual bool indexed() const = 0;
  virtual const std::map<std::uint16_t, Schema>& schemas() const = 0;
  virtual const std::map<std::uint16_t, Channel>& channels() const = 0;
  // The file's Statistics record, if it has one.
  virtual const std::optional<Statistics>& statistics() const = 0;
  // Messages of `channel` ordered by log time (file order among equal times);
  // empty for a channel without messages.
  virtual const std::vector<MessageRef>& messages(std::uint16_t channel) const = 0;
  // Reads the message at `ref` (checking its chunk's CRC the first time the
  // chunk is read). ParseError on damaged data.
  virtual MessageView read(const MessageRef& ref) = 0;
  // "<file>: <where>: ..." for each problem tolerated (a damaged tail).
  virtual const std::vector<std::string>& warnings() const = 0;
  // Where a message is, in words, for error messages ("Message in Chunk at
  // byte 4096, offset 120" or "Message at byte 77").
  virtual std::string describe(const MessageRef& ref) const = 0;
};

}  // namespace handoff::media::mcap
