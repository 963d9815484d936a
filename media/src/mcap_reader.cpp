// MCAP reader. open(): magic and Header, then the Footer; with a summary, its
// CRC, schemas, channels, chunk indexes and statistics, and each chunk's
// message indexes (so any message is one read away); without one (or when
// the summary does not index every message), one sequential scan of the data
// section, checking every chunk's CRC and the data section CRC. A file cut
// short (no footer) is scanned up to its last whole record, with one warning;
// of a chunk cut short, the messages wholly written (or, compressed, wholly
// decompressed from the blocks written) are kept.
#include "byte_reader.hpp"
#include "mcap_format.hpp"

#include <handoff/error.hpp>
#include <handoff/log.hpp>
#include <handoff/media/error.hpp>

#include <algorithm>
#include <cstring>
#include <limits>

namespace handoff::media::mcap {

using detail::Cursor;
using detail::load_u64;
using detail::RecordPlace;
using detail::kRecordHeaderBytes;

namespace {

struct ChunkInfo {
  std::uint64_t start = 0;   // file offset of the Chunk record
  std::uint64_t length = 0;  // the whole record
  std::uint64_t uncompressed_size = 0;
  Compression compression = Compression::None;
  // From the summary: the ChunkIndex record's offset, and the message index
  // records after the chunk (length 0: the chunk is not indexed).
  std::uint64_t index_at = 0;
  std::uint64_t message_index_length = 0;
  // Scanning a file cut short: only `length` bytes of this Chunk record
  // were written. Its records (decompressed as far as the blocks written
  // go) are read up to the last whole one; its CRC cannot be checked.
  bool cut_short = false;
};

struct Footer {
  std::uint64_t summary_start = 0, summary_offset_start = 0;
  std::uint32_t summary_crc = 0;
  std::uint64_t at = 0;  // file offset of the Footer record
};

// A decompressed chunk kept for the next reads.
struct ChunkSlot {
  std::uint32_t id = MessageRef::kNoChunk;
  std::vector<std::uint8_t> raw;           // the Chunk record as read
  std::vector<std::uint8_t> decompressed;  // its records, when compressed
  std::string damage;  // a chunk cut short: what ended the decoding of its bytes before their end, if anything
  std::span<const std::uint8_t> records;
  std::uint64_t used = 0;  // LRU stamp
};

// The uncompressed chunk records of one chunk, scanned for Schema, Channel
// and Message records.
struct ChunkRecords {
  std::span<const std::uint8_t> records;
  std::uint32_t id = 0;
  std::uint64_t start = 0;
  bool cut_short = false;  // the records end where the file does: a record not whole ends them
};

class ReaderImpl final : public Reader {
 public:
  ReaderImpl(std::unique_ptr<media::detail::ByteReader> in, const ReaderOptions& options)
      : in_(std::move(in)), options_(options), size_(in_->size()) {}

  void open();

  const std::string& name() const override { return in_->name(); }
  const Header& header() const override { return header_; }
  bool indexed() const override { return indexed_; }
  const std::map<std::uint16_t, Schema>& schemas() const override { return schemas_; }
  const std::map<std::uint16_t, Channel>& channels() const override { return channels_; }
  const std::optional<Statistics>& statistics() const override { return statistics_; }
  const std::vector<MessageRef>& messages(std::uint16_t channel) const override {
    auto it = messages_.find(channel);
    return it == messages_.end() ? empty_ : it->second;
  }
  const std::vector<std::string>& warnings() const override { return warnings_; }
  MessageView read(const MessageRef& ref) override;
  std::string describe(const MessageRef& ref) const override;

 private:
  [[noreturn]] void fail(const RecordPlace& at, const char* field, const std::string& detail) const {
    throw ParseError(name(), at.location(), field, detail);
  }
  RecordPlace place(std::uint8_t opcode, std::uint64_t offset) const {
    return detail::place(name(), opcode, offset);
  }
  void read_exact(std::uint64_t offset, std::uint64_t n, std::vector<std::uint8_t>& out) const;

  void read_magic_and_header();
  std::optional<Footer> read_footer();
  void read_summary(const Footer& f);
  void parse_summary_record(std::uint8_t op, std::uint64_t at, std::span<const std::uint8_t> content);
  void load_message_indexes();
  void scan(std::uint64_t begin, std::uint64_t end, bool has_footer);
  bool scan_record(std::uint64_t& pos, std::uint64_t end, bool has_footer, std::uint32_t& crc);
  void scan_chunk(std::uint64_t at, std::span<const std::uint8_t> content);
  std::string keep_cut_chunk(std::uint64_t at, std::uint64_t end);
  void index_chunk_records(const ChunkRecords& c);
  void add_message(const RecordPlace& at, Cursor& c, std::uint64_t offset, std::uint32_t chunk);
  void add_schema(const RecordPlace& at, Cursor& c, std::uint64_t offset);
  // `scanning`: its schema must have come before it (the summary is checked as a whole).
  void add_channel(const RecordPlace& at, Cursor& c, std::uint64_t offset, bool scanning);
  void add_chunk_index(const RecordPlace& at, Cursor& c);
  void order_chunks();
  void damaged_tail(const std::string& where, const std::string& what);
  ChunkSlot& load_chunk(std::uint32_t id);
  std::span<const std::uint8_t> chunk_records(const RecordPlace& at, Cursor& c, const ChunkInfo& info,
                                              ChunkSlot& slot);
  void check_records(const RecordPlace& at, const ChunkInfo& info, std::uint32_t crc,
                     std::span<const std::uint8_t> records) const;
  std::uint64_t message_total() const;

  std::unique_ptr<media::detail::ByteReader> in_;
  ReaderOptions options_;
  std::uint64_t size_ = 0;
  std::uint64_t header_end_ = 0;
  Header header_;
  bool indexed_ = false;
  std::map<std::uint16_t, Schema> schemas_;
  std::map<std::uint16_t, Channel> channels_;
  std::optional<Statistics> statistics_;
  std::map<std::uint16_t, std::vector<MessageRef>> messages_;
  std::vector<ChunkInfo> chunks_;
  std::vector<std::string> warnings_;
  bool skipped_chunks_ = false;  // scan(): a damaged chunk was left out (the data section CRC then differs too)
  std::vector<MessageRef> empty_;
  std::array<ChunkSlot, 2> slots_;
  std::uint64_t clock_ = 0;
  std::vector<std::uint8_t> scratch_;
  detail::Decompressor decompressor_;
};

void ReaderImpl::read_exact(std::uint64_t offset, std::uint64_t n, std::vector<std::uint8_t>& out) const {
  out.resize(std::size_t(n));
  const std::size_t got = in_->read_at(offset, out.data(), std::size_t(n));
  if (got != n) {
    throw ParseError(name(), "byte " + std::to_string(offset), "read",
                     "only " + std::to_string(got) + " of " + std::to_string(n) + " bytes could be read");
  }
}

void ReaderImpl::read_magic_and_header() {
  std::vector<std::uint8_t> b;
  const std::uint64_t n = std::min<std::uint64_t>(size_, kMagic.size());
  read_exact(0, n, b);
  if (n < kMagic.size() || !std::equal(kMagic.begin(), kMagic.begin() + 5, b.begin())) {
    throw ParseError(name(), "byte 0", "magic",
                     "not an MCAP file (it does not start with 0x89 \"MCAP0\\r\\n\"; file size " +
                         std::to_string(size_) + ")");
  }
  if (!std::equal(kMagic.begin(), kMagic.end(), b.begin())) {
    throw ParseError(name(), "byte 0", "magic",
                     "unsupported MCAP major version '" + std::string(1, char(b[5])) + "' (supported: '0')");
  }
  const RecordPlace at = place(std::uint8_t(Opcode::Header), kMagic.size());
  if (size_ < kMagic.size() + kRecordHeaderBytes) fail(at, "opcode", "the file ends before the Header record");
  read_exact(kMagic.size(), kRecordHeaderBytes, b);
  if (b[0] != std::uint8_t(Opcode::Header)) {
    fail(at, "opcode", "expected the Header record (0x01), found " + record_name(b[0]));
  }
  const std::uint64_t len = load_u64(b.data() + 1);
  if (len > size_ - kMagic.size() - kRecordHeaderBytes) {
    fail(at, "length", std::to_string(len) + " bytes run past the end of the file (size " + std::to_string(size_) + ")");
  }
  read_exact(kMagic.size() + kRecordHeaderBytes, len, b);
  Cursor c(b, at);
  header_.profile = c.string("profile");
  header_.library = c.string("library");
  header_end_ = kMagic.size() + kRecordHeaderBytes + len;
}

std::optional<Footer> ReaderImpl::read_footer() {
  const std::uint64_t tail = detail::kFooterRecordBytes + kMagic.size();
  if (size_ < header_end_ + tail) return std::nullopt;
  std::vector<std::uint8_t> b;
  read_exact(size_ - tail, tail, b);
  if (!std::equal(kMagic.begin(), kMagic.end(), b.begin() + detail::kFooterRecordBytes)) return std::nullopt;
  Footer f;
  f.at = size_ - tail;
  const RecordPlace at = place(std::uint8_t(Opcode::Footer), f.at);
  if (b[0] != std::uint8_t(Opcode::Footer)) {
    fail(at, "opcode", "expected the Footer record (0x02) before the closing magic, found " + record_name(b[0]));
  }
  if (load_u64(b.data() + 1) != detail::kFooterContentBytes) {
    fail(at, "length", "is " + std::to_string(load_u64(b.data() + 1)) + ", a Footer holds 20 bytes");
  }
  f.summary_start = load_u64(b.data() + 9);
  f.summary_offset_start = load_u64(b.data() + 17);
  f.summary_crc = detail::load_u32(b.data() + 25);
  return f;
}

void ReaderImpl::open() {
  read_magic_and_header();
  const std::optional<Footer> footer = read_footer();
  if (footer && footer->summary_start != 0) {
    read_summary(*footer);
    load_message_indexes();
  }
  if (!indexed_) {
    messages_.clear();
    chunks_.clear();
    for (ChunkSlot& slot : slots_) slot.id = MessageRef::kNoChunk;
    const std::uint64_t end = footer ? (footer->summary_start ? footer->summary_start : footer->at) : size_;
    scan(header_end_, end, footer.has_value());
  }
  for (auto& [channel, refs] : messages_) {
    std::stable_sort(refs.begin(), refs.end(),
                     [](const MessageRef& a, const MessageRef& b) { return a.log_time < b.log_time; });
  }
}

// --- Summary ----------------------------------------------------------------------------

void ReaderImpl::read_summary(const Footer& f) {
  const RecordPlace at = place(std::uint8_t(Opcode::Footer), f.at);
  if (f.summary_start < header_end_ || f.summary_start > f.at) {
    fail(at, "summary_start", std::to_string(f.summary_start) + " is outside the records (header ends at byte " +
                                  std::to_string(header_end_) + ", the footer starts at byte " + std::to_string(f.at) + ")");
  }
  if (f.summary_offset_start != 0 && (f.summary_offset_start < f.summary_start || f.summary_offset_start > f.at)) {
    fail(at, "summary_offset_start", std::to_string(f.summary_offset_start) + " is outside the summary (bytes " +
                                         std::to_string(f.summary_start) + ".." + std::to_string(f.at) + ")");
  }
  std::vector<std::uint8_t> b;
  read_exact(f.summary_start, f.at + kRecordHeaderBytes + 16 - f.summary_start, b);
  if (f.summary_crc != 0) {
    const std::uint32_t crc = detail::crc32(0, b);
    if (crc != f.summary_crc) {
      // The summary is damaged, not the data: it is left unread (one
      // warning) and open() scans the records instead, checking every chunk.
      const std::string msg = name() + ": " + at.location() + ": summary_crc: stored " + detail::hex32(f.summary_crc) +
                              ", computed " + detail::hex32(crc) + " over bytes " + std::to_string(f.summary_start) +
                              ".." + std::to_string(f.at + kRecordHeaderBytes + 16) +
                              "; the summary is not used: the file is read from its records";
      warnings_.push_back(msg);
      log(LogLevel::Warning, msg);
      return;
    }
  }
  const std::uint64_t end = (f.summary_offset_start ? f.summary_offset_start : f.at) - f.summary_start;
  for (std::uint64_t pos = 0; pos < end;) {
    const std::uint64_t offset = f.summary_start + pos;
    const RecordPlace rec = place(b[pos], offset);
    if (end - pos < kRecordHeaderBytes) fail(rec, "length", "the summary section ends inside the record header");
    const std::uint64_t len = load_u64(b.data() + pos + 1);
    if (len > end - pos - kRecordHeaderBytes) {
      fail(rec, "length", std::to_string(len) + " bytes run past the end of the summary section (byte " +
                              std::to_string(f.summary_start + end) + ")");
    }
    parse_summary_record(b[pos], offset, std::span(b).subspan(pos + kRecordHeaderBytes, len));
    pos += kRecordHeaderBytes + len;
  }
  for (const auto& [id, ch] : channels_) {
    if (ch.schema_id != 0 && !schemas_.count(ch.schema_id)) {
      fail(place(std::uint8_t(Opcode::Channel), ch.offset), "schema_id",
           "channel " + std::to_string(id) + " (" + ch.topic + ") names schema " + std::to_string(ch.schema_id) +
               ", which has no Schema record in the summary");
    }
  }
  indexed_ = !chunks_.empty();
}

void ReaderImpl::parse_summary_record(std::uint8_t op, std::uint64_t at, std::span<const std::uint8_t> content) {
  const RecordPlace where = place(op, at);
  Cursor c(content, where);
  switch (Opcode(op)) {
    case Opcode::Schema: return add_schema(where, c, at);
    case Opcode::Channel: return add_channel(where, c, at, false);
    case Opcode::ChunkIndex: return add_chunk_index(where, c);
    case Opcode::Statistics: {
      Statistics s;
      s.message_count = c.u64("message_count");
      s.schema_count = c.u16("schema_count");
      s.channel_count = c.u32("channel_count");
      s.attachment_count = c.u32("attachment_count");
      s.metadata_count = c.u32("metadata_count");
      s.chunk_count = c.u32("chunk_count");
      s.message_start_time = c.u64("message_start_time");
      s.message_end_time = c.u64("message_end_time");
      Cursor m(c.prefixed32("channel_message_counts"), where);
      while (!m.rest().empty()) {
        const std::uint16_t ch = m.u16("channel_message_counts");
        s.channel_message_counts.emplace_back(ch, m.u64("channel_message_counts"));
      }
      statistics_ = std::move(s);
      return;
    }
    default: return;  // attachment / metadata indexes and others: not needed
  }
}

void ReaderImpl::add_schema(const RecordPlace& at, Cursor& c, std::uint64_t offset) {
  Schema s;
  s.id = c.u16("id");
  s.name = c.string("name");
  s.encoding = c.string("encoding");
  auto data = c.prefixed32("data");
  s.data.assign(data.begin(), data.end());
  s.offset = offset;
  if (s.id == 0) return;  // the specification says readers ignore schema id 0
  auto [it, added] = schemas_.try_emplace(s.id, s);
  if (!added && (it->second.name != s.name || it->second.encoding != s.encoding || it->second.data != s.data)) {
    fail(at, "id", "schema " + std::to_string(s.id) + " differs from the Schema record with that id at byte " +
                       std::to_string(it->second.offset));
  }
}

void ReaderImpl::add_channel(const RecordPlace& at, Cursor& c, std::uint64_t offset, bool scanning) {
  Channel ch;
  ch.id = c.u16("id");
  ch.schema_id = c.u16("schema_id");
  ch.topic = c.string("topic");
  ch.message_encoding = c.string("message_encoding");
  ch.metadata = c.string_map("metadata");
  ch.offset = offset;
  if (scanning && ch.schema_id != 0 && !schemas_.count(ch.schema_id)) {
    fail(at, "schema_id", "channel " + std::to_string(ch.id) + " (" + ch.topic + ") names schema " +
                              std::to_string(ch.schema_id) + ", which has no Schema record before it");
  }
  auto [it, added] = channels_.try_emplace(ch.id, ch);
  if (!added && (it->second.topic != ch.topic || it->second.schema_id != ch.schema_id ||
                 it->second.message_encoding != ch.message_encoding || it->second.metadata != ch.metadata)) {
    fail(at, "id", "channel " + std::to_string(ch.id) + " differs from the Channel record with that id at byte " +
                       std::to_string(it->second.offset));
  }
}

void ReaderImpl::add_chunk_index(const RecordPlace& at, Cursor& c) {
  c.u64("message_start_time");
  c.u64("message_end_time");
  ChunkInfo info;
  info.start = c.u64("chunk_start_offset");
  info.length = c.u64("chunk_length");
  Cursor offsets(c.prefixed32("message_index_offsets"), at);
  const bool has_index = !offsets.rest().empty();
  const std::uint64_t mi_length = c.u64("message_index_length");
  const std::string_view comp = c.string("compression");
  c.u64("compressed_size");
  info.uncompressed_size = c.u64("uncompressed_size");
  const auto kind = compression_from_field(comp);
  if (!kind) fail(at, "compression", "unknown compression " + detail::quoted(comp) + " (supported: zstd, lz4, none)");
  info.compression = *kind;
  const std::uint64_t data_end = size_;  // refined below: chunks live before the summary
  if (info.start < header_end_ || info.start > data_end || info.length > data_end - info.start ||
      info.length < kRecordHeaderBytes) {
    fail(at, "chunk_length", "the chunk at byte " + std::to_string(info.start) + " with length " +
                                 std::to_string(info.length) + " runs past the end of the file (size " +
                                 std::to_string(size_) + ")");
  }
  if (mi_length > data_end - info.start - info.length) {
    fail(at, "message_index_length", std::to_string(mi_length) + " bytes after the chunk run past the end of the file");
  }
  if (info.uncompressed_size > options_.max_chunk_bytes) {
    fail(at, "uncompressed_size", std::to_string(info.uncompressed_size) + " bytes exceeds the reader's limit of " +
                                      std::to_string(options_.max_chunk_bytes));
  }
  info.index_at = at.offset;
  info.message_index_length = has_index ? mi_length : 0;
  chunks_.push_back(info);
}

// Chunks in file order, and no two overlapping (so the message indexes read
// at open add up to at most the file's size, whatever the summary claims).
void ReaderImpl::order_chunks() {
  std::sort(chunks_.begin(), chunks_.end(), [](const ChunkInfo& a, const ChunkInfo& b) { return a.start < b.start; });
  for (std::size_t i = 1; i < chunks_.size(); ++i) {
    const ChunkInfo& prev = chunks_[i - 1];
    if (chunks_[i].start < prev.start + prev.length + prev.message_index_length) {
      fail(place(std::uint8_t(Opcode::ChunkIndex), chunks_[i].index_at), "chunk_start_offset",
           "the chunk at byte " + std::to_string(chunks_[i].start) + " overlaps the chunk at byte " +
               std::to_string(prev.start) + " or its message indexes");
    }
  }
}

void ReaderImpl::load_message_indexes() {
  std::vector<std::uint8_t> b;
  order_chunks();
  for (std::uint32_t id = 0; id < chunks_.size(); ++id) {
    const std::uint64_t offset = chunks_[id].start + chunks_[id].length;
    const std::uint64_t length = chunks_[id].message_index_length;
    if (length == 0) {  // a chunk without message indexes: the summary does not index it
      indexed_ = false;
      return;
    }
    read_exact(offset, length, b);
    for (std::uint64_t pos = 0; pos < length;) {
      const RecordPlace at = place(b[pos], offset + pos);
      if (length - pos < kRecordHeaderBytes) fail(at, "length", "message_index_length ends inside a record header");
      if (b[pos] != std::uint8_t(Opcode::MessageIndex)) {
        fail(at, "opcode", "expected a MessageIndex record after the chunk at byte " + std::to_string(chunks_[id].start));
      }
      const std::uint64_t len = load_u64(b.data() + pos + 1);
      if (len > length - pos - kRecordHeaderBytes) fail(at, "length", "runs past message_index_length");
      Cursor c(std::span<const std::uint8_t>(b).subspan(pos + kRecordHeaderBytes, len), at);
      const std::uint16_t channel = c.u16("channel_id");
      if (!channels_.count(channel)) fail(at, "channel_id", "channel " + std::to_string(channel) + " is not in the summary");
      Cursor entries(c.prefixed32("records"), at);
      auto& refs = messages_[channel];
      while (!entries.rest().empty()) {
        MessageRef r;
        r.log_time = entries.u64("records");
        r.offset = entries.u64("records");
        r.chunk = id;
        r.channel = channel;
        if (r.offset >= chunks_[id].uncompressed_size) {
          fail(at, "records", "offset " + std::to_string(r.offset) + " is past the chunk's " +
                                  std::to_string(chunks_[id].uncompressed_size) + " bytes of records");
        }
        refs.push_back(r);
      }
      pos += kRecordHeaderBytes + len;
    }
  }
  // Messages outside chunks are not indexed: when the statistics count more, scan.
  if (statistics_ && statistics_->message_count != message_total()) indexed_ = false;
}

std::uint64_t ReaderImpl::message_total() const {
  std::uint64_t n = 0;
  for (const auto& [ch, refs] : messages_) n += refs.size();
  return n;
}

// --- Scanning (no summary, or one that does not index every message) ----------------

void ReaderImpl::damaged_tail(const std::string& where, const std::string& what) {
  const std::string msg = name() + ": damaged tail: " + where + ": " + what + "; reading stops there (" +
                          std::to_string(message_total()) + " messages are kept in all)";
  warnings_.push_back(msg);
  log(LogLevel::Warning, msg);
}

void ReaderImpl::scan(std::uint64_t begin, std::uint64_t end, bool has_footer) {
  std::uint32_t crc = 0;
  std::vector<std::uint8_t> b;
  // The data section CRC covers the magic and the Header record too.
  read_exact(0, begin, b);
  crc = detail::crc32(crc, b);
  std::uint64_t pos = begin;
  while (pos < end && scan_record(pos, end, has_footer, crc)) {
  }
  if (!has_footer && warnings_.empty()) {
    damaged_tail("byte " + std::to_string(pos), "the file ends without a Footer (the recording was cut short)");
  }
}

// Reads the record at `pos`; returns false once the data section is over.
bool ReaderImpl::scan_record(std::uint64_t& pos, std::uint64_t end, bool has_footer, std::uint32_t& crc) {
  const std::uint64_t at = pos;
  if (end - pos < kRecordHeaderBytes) {
    if (has_footer) fail(place(0, at), "length", "the data section ends inside a record header");
    damaged_tail("byte " + std::to_string(at), "the file ends inside a record header");
    return false;
  }
  read_exact(pos, kRecordHeaderBytes, scratch_);
  const std::uint8_t op = scratch_[0];
  const std::uint64_t len = load_u64(scratch_.data() + 1);
  const RecordPlace where = place(op, at);
  if (op == 0) {
    if (has_footer) fail(where, "opcode", "0x00 is not a record opcode");
    damaged_tail("byte " + std::to_string(at), "opcode 0x00 is not a record (unwritten space?)");
    return false;
  }
  if (len > end - pos - kRecordHeaderBytes) {
    std::string detail = "its " + std::to_string(len) + " bytes run past the end of the " +
                         (has_footer ? "data section (byte " : "file (byte ") + std::to_string(end) + ")";
    if (has_footer) fail(where, "length", detail);
    if (Opcode(op) == Opcode::Chunk) detail += keep_cut_chunk(at, end);
    damaged_tail(where.location(), detail);
    return false;
  }
  const std::uint32_t crc_before = crc;
  crc = detail::crc32(crc, scratch_);
  pos += kRecordHeaderBytes;
  if (Opcode(op) == Opcode::Footer) return false;
  std::vector<std::uint8_t> content;
  read_exact(pos, len, content);
  crc = detail::crc32(crc, content);
  pos += len;
  Cursor c(content, where);
  switch (Opcode(op)) {
    case Opcode::Schema: add_schema(where, c, at); break;
    case Opcode::Channel: add_channel(where, c, at, true); break;
    case Opcode::Chunk: scan_chunk(at, content); break;
    case Opcode::Message: add_message(where, c, at, MessageRef::kNoChunk); break;
    case Opcode::DataEnd: {
      const std::uint32_t stored = c.u32("data_section_crc");
      if (stored != 0 && stored != crc_before && !skipped_chunks_) {  // a damaged chunk is named already
        fail(where, "data_section_crc", "stored " + detail::hex32(stored) + ", computed " + detail::hex32(crc_before) +
                                            " over bytes 0.." + std::to_string(at));
      }
      return false;
    }
    default: break;  // message indexes, attachments, metadata, extensions: not needed here
  }
  return true;
}

void ReaderImpl::scan_chunk(std::uint64_t at, std::span<const std::uint8_t> content) {
  const RecordPlace where = place(std::uint8_t(Opcode::Chunk), at);
  ChunkInfo info;
  info.start = at;
  info.length = kRecordHeaderBytes + content.size();
  Cursor c(content, where);
  c.u64("message_start_time");
  c.u64("message_end_time");
  info.uncompressed_size = c.u64("uncompressed_size");
  c.u32("uncompressed_crc");
  const std::string_view comp = c.string("compression");
  const auto kind = compression_from_field(comp);
  if (!kind) fail(where, "compression", "unknown compression " + detail::quoted(comp) + " (supported: zstd, lz4, none)");
  info.compression = *kind;
  const auto id = std::uint32_t(chunks_.size());
  chunks_.push_back(info);
  ChunkSlot* slot = nullptr;
  try {
    slot = &load_chunk(id);  // decompresses and checks the CRC
  } catch (const ParseError& e) {
    // A damaged chunk (its CRC, its compressed data) found while scanning:
    // its messages are left out, named once, and the records after it read
    // on, as an indexed file loses only that chunk's frames. (load_chunk
    // caches a chunk only once it is whole and checked.)
    chunks_.pop_back();
    skipped_chunks_ = true;
    const std::string msg = std::string(e.what()) + "; the chunk's messages are left out";
    warnings_.push_back(msg);
    log(LogLevel::Warning, msg);
    return;
  }
  index_chunk_records({slot->records, id, at});
}

// A Chunk record the end of the file cut short (`end`: the file's end). Its
// records are kept up to the last whole one: as written when they are not
// compressed, else as far as the zstd or lz4 blocks written decompress.
// Returns what happened, for the damaged-tail warning.
std::string ReaderImpl::keep_cut_chunk(std::uint64_t at, std::uint64_t end) {
  // message_start_time, message_end_time, uncompressed_size, uncompressed_crc, compression's length
  constexpr std::uint64_t kFixed = 8 + 8 + 8 + 4 + 4;
  const std::uint64_t written = end - at - kRecordHeaderBytes;
  std::vector<std::uint8_t> head;
  read_exact(at + kRecordHeaderBytes, std::min(written, kFixed), head);
  if (written < kFixed || written - kFixed < std::uint64_t(detail::load_u32(head.data() + kFixed - 4)) + 8) {
    return "; it ends before its records begin";
  }
  ChunkInfo info;
  info.start = at;
  info.length = end - at;
  info.uncompressed_size = load_u64(head.data() + 16);
  info.cut_short = true;
  std::vector<std::uint8_t> name_bytes;
  read_exact(at + kRecordHeaderBytes + kFixed, detail::load_u32(head.data() + kFixed - 4), name_bytes);
  const std::string_view comp(reinterpret_cast<const char*>(name_bytes.data()), name_bytes.size());
  const auto kind = compression_from_field(comp);
  if (!kind) return "; its compression " + detail::quoted(comp) + " is unknown: its messages are lost";
  info.compression = *kind;
  const std::uint64_t before = message_total();
  const auto id = std::uint32_t(chunks_.size());
  chunks_.push_back(info);
  const ChunkSlot& slot = load_chunk(id);
  const std::uint64_t decoded = slot.records.size();
  index_chunk_records({slot.records, id, at, true});
  const std::string kept = std::to_string(message_total() - before);
  if (*kind == Compression::None) {
    return "; its records are not compressed: the " + kept + " messages wholly written in it are kept";
  }
  const std::string lost = decoded < info.uncompressed_size ? "; the rest of the chunk is lost" : "";
  const std::string damage = slot.damage.empty() ? "" : " (then unreadable: " + slot.damage + ")";
  return "; its records are compressed (" + std::string(comp) + "): the bytes written decompress to " +
         std::to_string(decoded) + " of its " + std::to_string(info.uncompressed_size) + " bytes of records" + damage +
         ", and the " + kept + " messages wholly in them are kept" + lost;
}

void ReaderImpl::index_chunk_records(const ChunkRecords& chunk) {
  const auto records = chunk.records;
  for (std::uint64_t pos = 0; pos < records.size();) {
    const RecordPlace chunk_at = place(std::uint8_t(Opcode::Chunk), chunk.start);
    const bool whole_header = records.size() - pos >= kRecordHeaderBytes;
    const std::uint64_t len = whole_header ? load_u64(records.data() + pos + 1) : 0;
    const bool whole = whole_header && len <= records.size() - pos - kRecordHeaderBytes;
    if (!whole && chunk.cut_short) return;  // the file ends here
    if (!whole_header) {
      fail(chunk_at, "records", "they end inside a record header (offset " + std::to_string(pos) + ")");
    }
    const std::uint8_t op = records[pos];
    if (!whole) {
      fail(chunk_at, "records", record_name(op) + " at offset " + std::to_string(pos) + ": its " +
                                    std::to_string(len) + " bytes run past the chunk's records");
    }
    const RecordPlace where{name(), op, pos, chunk.start};
    Cursor c(records.subspan(pos + kRecordHeaderBytes, len), where);
    if (Opcode(op) == Opcode::Schema) add_schema(where, c, chunk.start);
    if (Opcode(op) == Opcode::Channel) add_channel(where, c, chunk.start, true);
    if (Opcode(op) == Opcode::Message) add_message(where, c, pos, chunk.id);
    pos += kRecordHeaderBytes + len;
  }
}

// A Message record's reference: at file offset `offset` (chunk kNoChunk), or
// at `offset` in the records of chunk `chunk`.
void ReaderImpl::add_message(const RecordPlace& where, Cursor& c, std::uint64_t offset, std::uint32_t chunk) {
  MessageRef r;
  r.channel = c.u16("channel_id");
  c.u32("sequence");
  r.log_time = c.u64("log_time");
  r.offset = offset;
  r.chunk = chunk;
  if (!channels_.count(r.channel)) {
    fail(where, "channel_id", "channel " + std::to_string(r.channel) + " has no Channel record before it");
  }
  messages_[r.channel].push_back(r);
}

// --- Reading messages ---------------------------------------------------------------

std::span<const std::uint8_t> ReaderImpl::chunk_records(const RecordPlace& at, Cursor& c, const ChunkInfo& info,
                                                        ChunkSlot& slot) {
  slot.damage.clear();
  c.u64("message_start_time");
  c.u64("message_end_time");
  const std::uint64_t usize = c.u64("uncompressed_size");
  const std::uint32_t crc = c.u32("uncompressed_crc");
  const std::string_view comp = c.string("compression");
  std::span<const std::uint8_t> records;
  if (info.cut_short) {  // what was written of them
    const std::uint64_t n = c.u64("records");
    records = c.rest().first(std::size_t(std::min<std::uint64_t>(n, c.rest().size())));
  } else {
    records = c.prefixed64("records");
  }
  if (usize != info.uncompressed_size) {
    fail(at, "uncompressed_size", std::to_string(usize) + ", but its ChunkIndex says " +
                                      std::to_string(info.uncompressed_size));
  }
  // An uncompressed chunk cut short is read in place; any other is decompressed.
  if ((!info.cut_short || info.compression != Compression::None) && usize > options_.max_chunk_bytes) {
    fail(at, "uncompressed_size", std::to_string(usize) + " bytes exceeds the reader's limit of " +
                                      std::to_string(options_.max_chunk_bytes));
  }
  if (compression_from_field(comp) != info.compression) {
    fail(at, "compression", detail::quoted(comp) + " differs from its ChunkIndex's " +
                                detail::quoted(compression_field(info.compression)));
  }
  if (info.cut_short) {  // no CRC to check against a part
    if (info.compression == Compression::None) return records;
    slot.damage = decompressor_.run_prefix(info.compression, records, usize, slot.decompressed, at);
    return slot.decompressed;
  }
  std::span<const std::uint8_t> out = records;
  if (info.compression != Compression::None) {
    slot.decompressed.resize(std::size_t(usize));
    decompressor_.run(info.compression, records, slot.decompressed, at);
    out = slot.decompressed;
  }
  check_records(at, info, crc, out);
  return out;
}

// A whole chunk's records: their size and CRC.
void ReaderImpl::check_records(const RecordPlace& at, const ChunkInfo& info, std::uint32_t crc,
                               std::span<const std::uint8_t> records) const {
  if (records.size() != info.uncompressed_size) {
    fail(at, "records", std::to_string(records.size()) + " bytes, uncompressed_size says " +
                            std::to_string(info.uncompressed_size));
  }
  if (crc != 0) {
    const std::uint32_t actual = detail::crc32(0, records);
    if (actual != crc) {
      fail(at, "uncompressed_crc", "stored " + detail::hex32(crc) + ", computed " + detail::hex32(actual));
    }
  }
}

ChunkSlot& ReaderImpl::load_chunk(std::uint32_t id) {
  ++clock_;
  for (ChunkSlot& s : slots_) {
    if (s.id == id) {
      s.used = clock_;
      return s;
    }
  }
  ChunkSlot& slot = slots_[0].used <= slots_[1].used ? slots_[0] : slots_[1];
  slot.id = MessageRef::kNoChunk;  // until it holds a whole, checked chunk
  const ChunkInfo& info = chunks_[id];
  const RecordPlace at = place(std::uint8_t(Opcode::Chunk), info.start);
  read_exact(info.start, info.length, slot.raw);
  if (slot.raw[0] != std::uint8_t(Opcode::Chunk)) fail(at, "opcode", "the chunk index points at " + record_name(slot.raw[0]));
  if (!info.cut_short && load_u64(slot.raw.data() + 1) != info.length - kRecordHeaderBytes) {
    fail(at, "length", std::to_string(load_u64(slot.raw.data() + 1)) + ", but its ChunkIndex says the record is " +
                           std::to_string(info.length) + " bytes");
  }
  Cursor c(std::span(slot.raw).subspan(kRecordHeaderBytes), at);
  slot.records = chunk_records(at, c, info, slot);
  slot.id = id;
  slot.used = clock_;
  return slot;
}

MessageView ReaderImpl::read(const MessageRef& ref) {
  std::span<const std::uint8_t> record;
  const bool chunked = ref.chunk != MessageRef::kNoChunk;
  const RecordPlace where{name(), std::uint8_t(Opcode::Message), ref.offset,
                          chunked && ref.chunk < chunks_.size() ? chunks_[ref.chunk].start : RecordPlace::kNotInChunk};
  if (ref.chunk != MessageRef::kNoChunk) {
    if (ref.chunk >= chunks_.size()) throw UsageError("mcap::Reader::read: no chunk " + std::to_string(ref.chunk));
    const auto records = load_chunk(ref.chunk).records;
    if (ref.offset >= records.size() || records.size() - ref.offset < kRecordHeaderBytes) {
      throw ParseError(name(), where.location(), "offset", "past the chunk's records");
    }
    record = records.subspan(std::size_t(ref.offset));
  } else {
    if (ref.offset > size_ || size_ - ref.offset < kRecordHeaderBytes) {
      throw ParseError(name(), where.location(), "offset", "past the end of the file");
    }
    read_exact(ref.offset, kRecordHeaderBytes, scratch_);
    const std::uint64_t len = load_u64(scratch_.data() + 1);
    if (len > size_ - ref.offset - kRecordHeaderBytes) throw ParseError(name(), where.location(), "length", "runs past the end of the file");
    read_exact(ref.offset, kRecordHeaderBytes + len, scratch_);
    record = scratch_;
  }
  if (record[0] != std::uint8_t(Opcode::Message)) {
    throw ParseError(name(), where.location(), "opcode", "the index points at " + record_name(record[0]) + ", not a Message");
  }
  const std::uint64_t len = load_u64(record.data() + 1);
  if (len > record.size() - kRecordHeaderBytes) throw ParseError(name(), where.location(), "length", "runs past its chunk's records");
  Cursor c(record.subspan(kRecordHeaderBytes, std::size_t(len)), where);
  MessageView v;
  v.channel = c.u16("channel_id");
  v.sequence = c.u32("sequence");
  v.log_time = c.u64("log_time");
  v.publish_time = c.u64("publish_time");
  v.data = c.rest();
  if (v.channel != ref.channel) {
    throw ParseError(name(), where.location(), "channel_id", "the record is on channel " + std::to_string(v.channel) +
                                                               ", its index says channel " + std::to_string(ref.channel));
  }
  return v;
}

std::string ReaderImpl::describe(const MessageRef& ref) const {
  const bool chunked = ref.chunk != MessageRef::kNoChunk && ref.chunk < chunks_.size();
  return RecordPlace{name(), std::uint8_t(Opcode::Message), ref.offset,
                     chunked ? chunks_[ref.chunk].start : RecordPlace::kNotInChunk}
      .location();
}

}  // namespace

std::unique_ptr<Reader> Reader::open(const std::filesystem::path& path, const ReaderOptions& options) {
  auto r = std::make_unique<ReaderImpl>(media::detail::open_file_reader(path), options);
  r->open();
  return r;
}

std::unique_ptr<Reader> Reader::open_memory(std::span<const std::uint8_t> bytes, std::string name,
                                            const ReaderOptions& options) {
  auto r = std::make_unique<ReaderImpl>(media::detail::open_memory_reader(bytes, std::move(name)), options);
  r->open();
  return r;
}

}  // namespace handoff::media::mcap
