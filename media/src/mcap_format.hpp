#pragma once
// MCAP serialization machinery shared by the writer and the reader: a record
// builder, a bounds-checked field cursor whose errors name the record, its
// offset and the field, CRC-32 and chunk (de)compression.
#include <handoff/media/mcap.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::media::mcap::detail {

// Opcode (1) + content length (8).
inline constexpr std::size_t kRecordHeaderBytes = 9;
// Footer content: summary_start, summary_offset_start, summary_crc.
inline constexpr std::size_t kFooterContentBytes = 8 + 8 + 4;
inline constexpr std::size_t kFooterRecordBytes = kRecordHeaderBytes + kFooterContentBytes;
// Message content before its data: channel_id, sequence, log_time, publish_time.
inline constexpr std::size_t kMessageFixedBytes = 2 + 4 + 8 + 8;

// CRC-32 (ISO-HDLC, the one zlib computes), continued from `crc`.
// Thread safety: any thread (as crc32_combine).
std::uint32_t crc32(std::uint32_t crc, std::span<const std::uint8_t> bytes);
// The CRC-32 of A followed by B, from crc(A), crc(B) and B's length.
std::uint32_t crc32_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t length_b);

// A google.protobuf.Timestamp message (seconds 1, nanos 2; other fields
// skipped) as nanoseconds since the epoch. On bad bytes `error` names the
// problem ("truncated timestamp", "malformed timestamp"); else it is left alone.
std::uint64_t protobuf_timestamp_ns(std::span<const std::uint8_t> bytes, const char*& error);
std::uint16_t load_u16(const std::uint8_t* p);
std::uint32_t load_u32(const std::uint8_t* p);
std::uint64_t load_u64(const std::uint8_t* p);

// Appends records to a byte vector.
class Builder {
 public:
  explicit Builder(std::vector<std::uint8_t>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v);
  void u32(std::uint32_t v);
  void u64(std::uint64_t v);
  void string(std::string_view s);  // uint32 length + bytes
  void raw(std::span<const std::uint8_t> bytes);
  void string_map(const StringMap& m);
  // Starts a record (opcode + a length placeholder); end_record() patches the length.
  std::size_t begin_record(Opcode op);
  void end_record(std::size_t begin);
  std::size_t size() const { return out_.size(); }

 private:
  std::vector<std::uint8_t>& out_;
};

// Where a record is, for error messages (the text is only built on failure):
// "Chunk at byte 4096", or for a record inside a chunk's records
// "Message at offset 120 of the Chunk at byte 4096".
struct RecordPlace {
  static constexpr std::uint64_t kNotInChunk = ~std::uint64_t(0);
  std::string_view file;
  std::uint8_t opcode = 0;
  std::uint64_t offset = 0;
  std::uint64_t chunk_start = kNotInChunk;
  std::string location() const;
};
inline RecordPlace place(std::string_view file, std::uint8_t opcode, std::uint64_t offset) {
  return {file, opcode, offset};
}

// Reads a record's fields in order; a field that runs past the record's end
// throws ParseError(file, location, field, "...").
class Cursor {
 public:
  Cursor(std::span<const std::uint8_t> content, const RecordPlace& where) : bytes_(content), where_(where) {}
  const RecordPlace& where() const { return where_; }
  std::uint8_t u8(const char* field);
  std::uint16_t u16(const char* field);
  std::uint32_t u32(const char* field);
  std::uint64_t u64(const char* field);
  std::string_view string(const char* field);
  std::span<const std::uint8_t> bytes(const char* field, std::uint64_t n);
  std::span<const std::uint8_t> prefixed32(const char* field);  // uint32 length + bytes
  std::span<const std::uint8_t> prefixed64(const char* field);  // uint64 length + bytes
  StringMap string_map(const char* field);
  std::span<const std::uint8_t> rest() const { return bytes_.subspan(pos_); }
  std::size_t position() const { return pos_; }
  [[noreturn]] void fail(const char* field, const std::string& detail) const;

 private:
  void need(const char* field, std::uint64_t n) const;
  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
  RecordPlace where_;
};

// Compresses `in` into `out` (replacing its contents). Reuses its context
// between calls. Throws handoff::Error on a compressor failure.
class Compressor {
 public:
  Compressor(Compression c, int level);
  ~Compressor();
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;
  void compress(std::span<const std::uint8_t> in, std::vector<std::uint8_t>& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Decompresses chunk records, keeping its contexts between calls.
class Decompressor {
 public:
  Decompressor();
  ~Decompressor();
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
  // Decompresses into exactly `out.size()` bytes; throws ParseError (at
  // `where`, field "records") when `in` is not a valid stream of that
  // algorithm or does not decompress to that size.
  void run(Compression c, std::span<const std::uint8_t> in, std::span<std::uint8_t> out, const RecordPlace& where);
  // Decompresses what can be of `in`, a compressed stream the end of the
  // file cut into: `out` is replaced by the bytes the blocks wholly present
  // decode to (zstd and lz4 frames are read block by block), at most
  // `limit` of them. `out` grows with what is decoded, so a large `limit`
  // allocates nothing that short input cannot fill. Bytes that stop being a
  // valid stream of that algorithm end the decoding: what was decoded before
  // them stays in `out` and the return value says what stopped it (empty:
  // nothing did), since the tail of a file cut short by a crash may hold
  // anything. Throws ParseError (at `where`, field "records") when the bytes
  // decode to more than `limit` bytes: the chunk's own header is wrong.
  std::string run_prefix(Compression c, std::span<const std::uint8_t> in, std::uint64_t limit,
                         std::vector<std::uint8_t>& out, const RecordPlace& where);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string hex32(std::uint32_t v);
// "\"text\"" (built by appending: GCC 12 warns falsely on "\"" + std::string).
std::string quoted(std::string_view text);

}  // namespace handoff::media::mcap::detail
