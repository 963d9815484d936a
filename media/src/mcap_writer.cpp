// MCAP writer: schemas and channels are written into the data (inside the open
// chunk) just before their first message, so a file cut short still reads up
// to its last whole chunk; a chunk is closed at chunk_size bytes or once its
// log times span chunk_duration_ns, which bounds what a crash loses; close()
// adds DataEnd, the summary and the footer.
#include "mcap_format.hpp"

#include <handoff/error.hpp>
#include <handoff/log.hpp>
#include <handoff/unique_handle.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>
#include <tuple>

namespace handoff::media::mcap {

using detail::Builder;

namespace {

struct ChunkIndexRecord {
  std::uint64_t start_time = 0, end_time = 0, chunk_start = 0, chunk_length = 0;
  std::vector<std::pair<std::uint16_t, std::uint64_t>> message_index_offsets;
  std::uint64_t message_index_length = 0, compressed_size = 0, uncompressed_size = 0;
};

// The open chunk: its records and, per channel, (log_time, offset) of each message.
struct OpenChunk {
  std::vector<std::uint8_t> records;
  std::map<std::uint16_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> index;
  std::uint64_t start_time = std::numeric_limits<std::uint64_t>::max(), end_time = 0;
  bool has_messages() const { return !index.empty(); }
  // Its messages' log times span `duration` ns or more (0: never).
  bool spans(std::uint64_t duration) const {
    return duration > 0 && has_messages() && end_time - start_time >= duration;
  }
  void clear() {
    records.clear();
    index.clear();
    start_time = std::numeric_limits<std::uint64_t>::max();
    end_time = 0;
  }
};

void put_schema(Builder& b, const Schema& s) {
  const std::size_t r = b.begin_record(Opcode::Schema);
  b.u16(s.id);
  b.string(s.name);
  b.string(s.encoding);
  b.u32(std::uint32_t(s.data.size()));
  b.raw(s.data);
  b.end_record(r);
}

void put_channel(Builder& b, const Channel& c) {
  const std::size_t r = b.begin_record(Opcode::Channel);
  b.u16(c.id);
  b.u16(c.schema_id);
  b.string(c.topic);
  b.string(c.message_encoding);
  b.string_map(c.metadata);
  b.end_record(r);
}

void put_chunk_index(Builder& b, const ChunkIndexRecord& ci, std::string_view compression) {
  const std::size_t r = b.begin_record(Opcode::ChunkIndex);
  b.u64(ci.start_time);
  b.u64(ci.end_time);
  b.u64(ci.chunk_start);
  b.u64(ci.chunk_length);
  b.u32(std::uint32_t(ci.message_index_offsets.size() * 10));
  for (const auto& [ch, off] : ci.message_index_offsets) {
    b.u16(ch);
    b.u64(off);
  }
  b.u64(ci.message_index_length);
  b.string(compression);
  b.u64(ci.compressed_size);
  b.u64(ci.uncompressed_size);
  b.end_record(r);
}

void put_statistics(Builder& b, const Statistics& s, const std::map<std::uint16_t, std::uint64_t>& counts) {
  const std::size_t r = b.begin_record(Opcode::Statistics);
  b.u64(s.message_count);
  b.u16(s.schema_count);
  b.u32(s.channel_count);
  b.u32(s.attachment_count);
  b.u32(s.metadata_count);
  b.u32(s.chunk_count);
  b.u64(s.message_count ? s.message_start_time : 0);
  b.u64(s.message_count ? s.message_end_time : 0);
  b.u32(std::uint32_t(counts.size() * 10));
  for (const auto& [ch, n] : counts) {
    b.u16(ch);
    b.u64(n);
  }
  b.end_record(r);
}

}  // namespace

struct Writer::Impl {
  std::string path;
  WriterOptions options;
  UniqueFd fd;
  std::uint64_t offset = 0;
  std::uint32_t data_crc = 0;
  bool closed = false;
  // The first failed write: the file was cut back to its last whole record,
  // and nothing more is written to it (a reader scans what is there).
  std::exception_ptr failure;
  detail::Compressor compressor;
  std::vector<Schema> schemas;  // id = index + 1
  std::vector<Channel> channels;  // id = index
  std::vector<bool> schema_written, channel_written;
  OpenChunk chunk;
  std::vector<std::uint8_t> staging, compressed;
  std::vector<ChunkIndexRecord> chunk_indexes;
  Statistics stats;
  std::map<std::uint16_t, std::uint64_t> channel_counts;
  std::map<std::uint16_t, std::uint64_t> counts_in_file;  // messages in whole records on the file

  Impl(const std::filesystem::path& p, WriterOptions o)
      : path(p.string()), options(std::move(o)), compressor(options.compression, options.compression_level) {}

  void write_iov(std::initializer_list<std::span<const std::uint8_t>> parts, bool in_data);
  void put_schema_and_channel(std::uint16_t channel, std::vector<std::uint8_t>& out);
  // Writes the open chunk, whose records are chunk.records followed by
  // `tail` (a large message's data, not copied into chunk.records).
  void write_chunk(std::span<const std::uint8_t> tail = {});
  void write_summary_and_footer();
};

// Each call writes whole records: one that fails (a full disk) is taken back
// off the file, and every later call throws that first error again.
void Writer::Impl::write_iov(std::initializer_list<std::span<const std::uint8_t>> parts, bool in_data) {
  if (failure) std::rethrow_exception(failure);
  const std::uint64_t whole = offset;
  for (auto part : parts) {
    if (in_data && options.crc) data_crc = detail::crc32(data_crc, part);
    const std::uint8_t* p = part.data();
    std::size_t n = part.size();
    while (n > 0) {
      const ssize_t w = ::write(fd.get(), p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        failure = std::make_exception_ptr(Error(Api::System, "write", errno, std::strerror(errno), path));
        if (::ftruncate(fd.get(), off_t(whole)) == 0) offset = whole;  // else: a reader stops at the cut record
        std::rethrow_exception(failure);
      }
      p += w;
      n -= std::size_t(w);
      offset += std::uint64_t(w);
    }
  }
}

void Writer::Impl::put_schema_and_channel(std::uint16_t channel, std::vector<std::uint8_t>& out) {
  Builder b(out);
  const Channel& c = channels[channel];
  if (c.schema_id != 0 && !schema_written[c.schema_id - 1]) {
    put_schema(b, schemas[c.schema_id - 1]);
    schema_written[c.schema_id - 1] = true;
  }
  if (!channel_written[channel]) {
    put_channel(b, c);
    channel_written[channel] = true;
  }
}

void Writer::Impl::write_chunk(std::span<const std::uint8_t> tail) {
  if (chunk.records.empty()) return;
  if (!tail.empty() && options.compression != Compression::None) {
    chunk.records.insert(chunk.records.end(), tail.begin(), tail.end());  // the compressor wants one buffer
    tail = {};
  }
  const std::uint64_t records_size = chunk.records.size() + tail.size();
  const std::uint32_t records_crc =
      options.crc ? detail::crc32_combine(detail::crc32(0, chunk.records), detail::crc32(0, tail), tail.size()) : 0;
  std::span<const std::uint8_t> payload = chunk.records;  // uncompressed: written as is, no copy
  if (options.compression != Compression::None) {
    compressor.compress(chunk.records, compressed);
    payload = compressed;
  }
  const std::uint64_t payload_size = payload.size() + tail.size();
  staging.clear();
  Builder b(staging);
  const std::uint64_t chunk_start = offset;
  const bool any = chunk.has_messages();
  b.u8(std::uint8_t(Opcode::Chunk));
  const std::string_view comp = compression_field(options.compression);
  b.u64(8 + 8 + 8 + 4 + 4 + comp.size() + 8 + payload_size);
  b.u64(any ? chunk.start_time : 0);
  b.u64(any ? chunk.end_time : 0);
  b.u64(records_size);
  b.u32(records_crc);
  b.string(comp);
  b.u64(payload_size);
  const std::size_t head = staging.size();
  // Message indexes follow the chunk, one per channel, in channel order.
  ChunkIndexRecord ci{any ? chunk.start_time : 0, any ? chunk.end_time : 0, chunk_start,
                      head + payload_size, {}, 0, payload_size, records_size};
  for (const auto& [channel, entries] : chunk.index) {
    ci.message_index_offsets.emplace_back(channel, chunk_start + ci.chunk_length + (staging.size() - head));
    const std::size_t r = b.begin_record(Opcode::MessageIndex);
    b.u16(channel);
    b.u32(std::uint32_t(entries.size() * 16));
    for (const auto& [t, o] : entries) {
      b.u64(t);
      b.u64(o);
    }
    b.end_record(r);
  }
  ci.message_index_length = staging.size() - head;
  const std::span<const std::uint8_t> all(staging);
  if (options.crc) {
    // The data section CRC goes on from the chunk's pieces; an uncompressed
    // chunk's records are not run through CRC-32 a second time.
    const std::uint32_t payload_crc = options.compression == Compression::None ? records_crc : detail::crc32(0, payload);
    data_crc = detail::crc32(data_crc, all.first(head));
    data_crc = detail::crc32_combine(data_crc, payload_crc, payload_size);
    data_crc = detail::crc32(data_crc, all.subspan(head));
  }
  write_iov({all.first(head), payload, tail, all.subspan(head)}, false);
  for (const auto& [channel, entries] : chunk.index) counts_in_file[channel] += entries.size();
  chunk_indexes.push_back(std::move(ci));
  ++stats.chunk_count;
  chunk.clear();
}

Writer::Writer(const std::filesystem::path& path, WriterOptions options)
    : impl_(std::make_unique<Impl>(path, std::move(options))) {
  // Emptied only once locked: a file another writer (this process or another)
  // is still recording into is refused, not cut under it and interleaved.
  impl_->fd = UniqueFd(::open(impl_->path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  if (!impl_->fd) throw Error(Api::System, "open", errno, std::strerror(errno), impl_->path);
  if (::flock(impl_->fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK)
      throw Error(impl_->path + ": another recording is being written into this file (it holds its lock)");
    // A file system without locks: recorded all the same.
  }
  struct stat st {};
  if (::fstat(impl_->fd.get(), &st) == 0 && S_ISREG(st.st_mode) && ::ftruncate(impl_->fd.get(), 0) != 0)
    throw Error(Api::System, "ftruncate", errno, std::strerror(errno), impl_->path);
  impl_->staging.clear();
  Builder b(impl_->staging);
  b.raw(kMagic);
  const std::size_t r = b.begin_record(Opcode::Header);
  b.string(impl_->options.profile);
  b.string(impl_->options.library);
  b.end_record(r);
  impl_->write_iov({impl_->staging}, true);
}

Writer::~Writer() {
  try {
    close();
  } catch (const std::exception& e) {
    log(LogLevel::Error, std::string("mcap::Writer: closing ") + impl_->path + ": " + e.what());
  }
}

std::uint16_t Writer::add_schema(std::string_view name, std::string_view encoding, std::span<const std::uint8_t> data) {
  if (impl_->closed) throw UsageError("mcap::Writer::add_schema after close");
  if (impl_->schemas.size() >= 0xFFFF) throw UsageError("mcap::Writer: more than 65535 schemas");
  Schema s;
  s.id = std::uint16_t(impl_->schemas.size() + 1);
  s.name = name;
  s.encoding = encoding;
  s.data.assign(data.begin(), data.end());
  impl_->schemas.push_back(std::move(s));
  impl_->schema_written.push_back(false);
  return impl_->schemas.back().id;
}

std::uint16_t Writer::add_channel(std::uint16_t schema_id, std::string_view topic, std::string_view message_encoding,
                                  const StringMap& metadata) {
  if (impl_->closed) throw UsageError("mcap::Writer::add_channel after close");
  if (schema_id > impl_->schemas.size()) {
    throw UsageError("mcap::Writer::add_channel: no schema with id " + std::to_string(schema_id));
  }
  if (impl_->channels.size() >= 0xFFFF) throw UsageError("mcap::Writer: more than 65535 channels");
  Channel c;
  c.id = std::uint16_t(impl_->channels.size());
  c.schema_id = schema_id;
  c.topic = topic;
  c.message_encoding = message_encoding;
  c.metadata = metadata;
  impl_->channels.push_back(std::move(c));
  impl_->channel_written.push_back(false);
  return impl_->channels.back().id;
}

void Writer::write(std::uint16_t channel, std::uint32_t sequence, std::uint64_t log_time, std::uint64_t publish_time,
                   std::span<const std::uint8_t> data) {
  Impl& m = *impl_;
  if (m.closed) throw UsageError("mcap::Writer::write after close");
  if (m.failure) std::rethrow_exception(m.failure);  // nothing more goes into a failed file, nor piles up here
  if (channel >= m.channels.size()) throw UsageError("mcap::Writer::write: no channel with id " + std::to_string(channel));
  const bool chunked = m.options.chunk_size > 0;
  const std::size_t record_bytes = detail::kRecordHeaderBytes + detail::kMessageFixedBytes + data.size();
  if (chunked && !m.chunk.records.empty() && m.chunk.records.size() + record_bytes > m.options.chunk_size) {
    m.write_chunk();
  }
  std::vector<std::uint8_t>& out = chunked ? m.chunk.records : m.staging;
  if (!chunked) out.clear();
  m.put_schema_and_channel(channel, out);
  Builder b(out);
  const std::uint64_t at = out.size();
  b.u8(std::uint8_t(Opcode::Message));
  b.u64(detail::kMessageFixedBytes + data.size());
  b.u16(channel);
  b.u32(sequence);
  b.u64(log_time);
  b.u64(publish_time);
  if (chunked) {
    // A message that closes its chunk (a 1080p frame fills one on its own)
    // goes out after the chunk's records without being copied into them.
    const bool direct = out.size() + data.size() >= m.options.chunk_size;
    if (!direct) b.raw(data);
    m.chunk.index[channel].emplace_back(log_time, at);
    m.chunk.start_time = std::min(m.chunk.start_time, log_time);
    m.chunk.end_time = std::max(m.chunk.end_time, log_time);
    if (direct) {
      m.write_chunk(data);
    } else if (m.chunk.records.size() >= m.options.chunk_size || m.chunk.spans(m.options.chunk_duration_ns)) {
      m.write_chunk();
    }
  } else {
    m.write_iov({out, data}, true);
    ++m.counts_in_file[channel];
  }
  if (m.stats.message_count == 0 || log_time < m.stats.message_start_time) m.stats.message_start_time = log_time;
  m.stats.message_end_time = std::max(m.stats.message_end_time, log_time);
  ++m.stats.message_count;
  ++m.channel_counts[channel];
}

void Writer::flush_chunk() {
  if (impl_->closed) throw UsageError("mcap::Writer::flush_chunk after close");
  impl_->write_chunk();
}

void Writer::Impl::write_summary_and_footer() {
  staging.clear();
  Builder b(staging);
  const std::uint64_t summary_start = offset;
  std::vector<std::tuple<Opcode, std::uint64_t, std::uint64_t>> groups;
  auto group = [&](Opcode op, auto&& body) {
    const std::size_t begin = staging.size();
    body();
    if (staging.size() > begin) groups.emplace_back(op, summary_start + begin, staging.size() - begin);
  };
  group(Opcode::Schema, [&] {
    for (const Schema& s : schemas)
      if (schema_written[s.id - 1]) put_schema(b, s);
  });
  group(Opcode::Channel, [&] {
    for (const Channel& c : channels)
      if (channel_written[c.id]) put_channel(b, c);
  });
  group(Opcode::ChunkIndex, [&] {
    for (const ChunkIndexRecord& ci : chunk_indexes) put_chunk_index(b, ci, compression_field(options.compression));
  });
  group(Opcode::Statistics, [&] {
    stats.schema_count = std::uint16_t(std::count(schema_written.begin(), schema_written.end(), true));
    stats.channel_count = std::uint32_t(std::count(channel_written.begin(), channel_written.end(), true));
    put_statistics(b, stats, channel_counts);
  });
  const std::uint64_t summary_offset_start = summary_start + staging.size();
  for (const auto& [op, start, length] : groups) {
    const std::size_t r = b.begin_record(Opcode::SummaryOffset);
    b.u8(std::uint8_t(op));
    b.u64(start);
    b.u64(length);
    b.end_record(r);
  }
  b.u8(std::uint8_t(Opcode::Footer));
  b.u64(detail::kFooterContentBytes);
  b.u64(summary_start);
  b.u64(summary_offset_start);
  // The summary CRC covers the summary, the summary offsets and the footer up to this field.
  b.u32(options.crc ? detail::crc32(0, staging) : 0);
  b.raw(kMagic);
  write_iov({staging}, false);
}

void Writer::close() {
  Impl& m = *impl_;
  if (m.closed) return;
  m.closed = true;  // a failure below leaves a file that readers scan
  if (m.failure) {  // the file ends at its last whole record: nothing is added to it
    const int fd = m.fd.release();
    ::close(fd);
    std::rethrow_exception(m.failure);
  }
  m.write_chunk();
  m.staging.clear();
  Builder b(m.staging);
  const std::size_t r = b.begin_record(Opcode::DataEnd);
  b.u32(m.options.crc ? m.data_crc : 0);
  b.end_record(r);
  m.write_iov({m.staging}, false);
  if (m.options.summary) {
    m.write_summary_and_footer();
  } else {
    m.staging.clear();
    b.u8(std::uint8_t(Opcode::Footer));
    b.u64(detail::kFooterContentBytes);
    b.u64(0);  // no summary
    b.u64(0);  // no summary offsets
    b.u32(0);
    b.raw(kMagic);
    m.write_iov({m.staging}, false);
  }
  if (m.options.sync_on_close && ::fdatasync(m.fd.get()) != 0) {
    throw Error(Api::System, "fdatasync", errno, std::strerror(errno), m.path);
  }
  const int fd = m.fd.release();
  if (::close(fd) != 0) throw Error(Api::System, "close", errno, std::strerror(errno), m.path);
}

std::uint64_t Writer::bytes_written() const { return impl_->offset; }
std::uint64_t Writer::message_count() const { return impl_->stats.message_count; }
std::uint64_t Writer::messages_in_file(std::uint16_t channel) const {
  const auto it = impl_->counts_in_file.find(channel);
  return it == impl_->counts_in_file.end() ? 0 : it->second;
}

}  // namespace handoff::media::mcap
