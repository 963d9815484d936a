// The MCAP writer and reader: round trips with every compression, chunked
// and not, with and without a summary; the file layout checked against the
// specification by an independent record walker; reading through the index
// (no scan); files cut short.
#include <handoff/log.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/mcap.hpp>

#include "log_capture.hpp"
#include "cut_chunk_oracle.hpp"
#include "recording_test_util.hpp"
#include "test_util.hpp"

#include <gmock/gmock.h>
#include <zlib.h>

#include <mutex>

#include <sys/resource.h>

#include <csignal>

namespace handoff::media {
namespace {

using test::message_of;
using test::Rec;
using test::TempDir;
using ::testing::HasSubstr;

// Payload of message k on channel c: deterministic, of varying size.
std::vector<std::uint8_t> payload(int c, int k) {
  std::vector<std::uint8_t> p(std::size_t(1 + (k * 37 + c * 11) % 300));
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = std::uint8_t(i * 7 + std::size_t(k) * 3 + std::size_t(c));
  return p;
}

struct Written {
  int channels = 3;
  int per_channel = 40;
};

// Writes `w.per_channel` messages on each of `w.channels` channels, log time
// 1000 + 10 * k (+ c), interleaved.
void write_file(const std::filesystem::path& p, const mcap::WriterOptions& o, Written w = {}) {
  mcap::Writer writer(p, o);
  const std::vector<std::uint8_t> schema_data{1, 2, 3};
  const std::uint16_t s = writer.add_schema("test.Thing", "protobuf", schema_data);
  std::vector<std::uint16_t> ch;
  for (int c = 0; c < w.channels; ++c) {
    ch.push_back(writer.add_channel(c == 2 ? 0 : s, std::string("/t").append(std::to_string(c)), "protobuf",
                                    {{"k", std::string("v").append(std::to_string(c))}}));
  }
  for (int k = 0; k < w.per_channel; ++k)
    for (int c = 0; c < w.channels; ++c) writer.write(ch[c], std::uint32_t(k), 1000 + 10 * k + c, 5000 + k, payload(c, k));
  writer.close();
}

void expect_all_messages(mcap::Reader& r, Written w = {}) {
  ASSERT_EQ(r.channels().size(), std::size_t(w.channels));
  for (int c = 0; c < w.channels; ++c) {
    const mcap::Channel& ch = r.channels().at(std::uint16_t(c));
    EXPECT_EQ(ch.topic, std::string("/t").append(std::to_string(c)));
    EXPECT_EQ(ch.message_encoding, "protobuf");
    EXPECT_EQ(ch.metadata, (mcap::StringMap{{"k", std::string("v").append(std::to_string(c))}}));
    EXPECT_EQ(ch.schema_id, c == 2 ? 0 : 1);
    const auto& refs = r.messages(std::uint16_t(c));
    ASSERT_EQ(refs.size(), std::size_t(w.per_channel));
    for (int k = 0; k < w.per_channel; ++k) {
      const mcap::MessageView m = r.read(refs[std::size_t(k)]);
      EXPECT_EQ(m.channel, c);
      EXPECT_EQ(m.sequence, std::uint32_t(k));
      EXPECT_EQ(m.log_time, std::uint64_t(1000 + 10 * k + c));
      EXPECT_EQ(m.publish_time, std::uint64_t(5000 + k));
      const auto want = payload(c, k);
      ASSERT_EQ(std::vector<std::uint8_t>(m.data.begin(), m.data.end()), want) << "channel " << c << " message " << k;
    }
  }
  ASSERT_EQ(r.schemas().size(), 1u);
  EXPECT_EQ(r.schemas().at(1).name, "test.Thing");
  EXPECT_EQ(r.schemas().at(1).data, (std::vector<std::uint8_t>{1, 2, 3}));
}

struct Layout {
  mcap::Compression compression;
  std::size_t chunk_size;
  bool summary;
};

class McapRoundTrip : public ::testing::TestWithParam<Layout> {};

TEST_P(McapRoundTrip, EveryMessageComesBack) {
  TempDir dir;
  mcap::WriterOptions o;
  o.compression = GetParam().compression;
  o.chunk_size = GetParam().chunk_size;
  o.summary = GetParam().summary;
  write_file(dir / "a.mcap", o);
  auto r = mcap::Reader::open(dir / "a.mcap");
  EXPECT_EQ(r->header().library, "handoff");
  // Indexed exactly when there are chunks and a summary; never a warning for a whole file.
  EXPECT_EQ(r->indexed(), GetParam().summary && GetParam().chunk_size > 0);
  EXPECT_TRUE(r->warnings().empty());
  expect_all_messages(*r);
  if (GetParam().summary) {
    ASSERT_TRUE(r->statistics());
    EXPECT_EQ(r->statistics()->message_count, 120u);
    EXPECT_EQ(r->statistics()->channel_count, 3u);
    EXPECT_EQ(r->statistics()->schema_count, 1u);
    EXPECT_EQ(r->statistics()->message_start_time, 1000u);
    EXPECT_EQ(r->statistics()->message_end_time, 1000u + 390 + 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, McapRoundTrip,
                         ::testing::Values(Layout{mcap::Compression::None, 1024, true},
                                           Layout{mcap::Compression::Zstd, 1024, true},
                                           Layout{mcap::Compression::Lz4, 1024, true},
                                           Layout{mcap::Compression::Zstd, 1 << 20, true},
                                           Layout{mcap::Compression::Zstd, 1024, false},
                                           Layout{mcap::Compression::Lz4, 1024, false},
                                           Layout{mcap::Compression::None, 0, true},
                                           Layout{mcap::Compression::None, 0, false}));

// The bytes, walked independently: magic at both ends, Header first, records
// then DataEnd, the summary grouped by opcode, summary offsets, Footer; the
// chunk, data section and summary CRCs as zlib computes them.
TEST(McapLayout, FollowsTheSpecification) {
  TempDir dir;
  mcap::WriterOptions o;
  o.compression = mcap::Compression::None;
  o.chunk_size = 2048;
  write_file(dir / "a.mcap", o);
  const auto b = test::read_bytes(dir / "a.mcap");
  const std::vector<std::uint8_t> magic{0x89, 'M', 'C', 'A', 'P', '0', '\r', '\n'};
  ASSERT_TRUE(std::equal(magic.begin(), magic.end(), b.begin()));
  ASSERT_TRUE(std::equal(magic.begin(), magic.end(), b.end() - 8));
  const auto recs = test::records(b);
  ASSERT_GE(recs.size(), 4u);
  EXPECT_EQ(recs.front().op, 0x01);
  EXPECT_EQ(recs.back().op, 0x02);
  EXPECT_EQ(recs.back().len, 20u);
  EXPECT_EQ(recs.back().end() + 8, b.size());
  const Rec& footer = recs.back();
  const std::uint64_t summary_start = test::le64(b, footer.content());
  const std::uint64_t offsets_start = test::le64(b, footer.content() + 8);
  const std::uint32_t summary_crc = test::le32(b, footer.content() + 16);
  EXPECT_EQ(summary_crc, std::uint32_t(::crc32(0, b.data() + summary_start, uInt(footer.content() + 16 - summary_start))));
  // DataEnd directly precedes the summary; its CRC covers everything before it.
  auto data_end = std::find_if(recs.begin(), recs.end(), [](const Rec& r) { return r.op == 0x0F; });
  ASSERT_NE(data_end, recs.end());
  EXPECT_EQ(data_end->end(), summary_start);
  EXPECT_EQ(test::le32(b, data_end->content()), std::uint32_t(::crc32(0, b.data(), uInt(data_end->at))));
  // Data section: Chunk + MessageIndex records only (schemas and channels are inside the chunks).
  int chunks = 0;
  for (auto it = recs.begin() + 1; it != data_end; ++it) {
    ASSERT_TRUE(it->op == 0x06 || it->op == 0x07) << int(it->op);
    if (it->op != 0x06) continue;
    ++chunks;
    const std::size_t c = it->content();
    const std::uint64_t usize = test::le64(b, c + 16);
    const std::uint32_t crc = test::le32(b, c + 24);
    ASSERT_EQ(test::le32(b, c + 28), 0u);  // compression "" (none)
    const std::uint64_t n = test::le64(b, c + 32);
    ASSERT_EQ(n, usize);
    EXPECT_EQ(crc, std::uint32_t(::crc32(0, b.data() + c + 40, uInt(n))));
    EXPECT_EQ(c + 40 + n, it->end());
  }
  EXPECT_GT(chunks, 3);
  // Summary: groups in order Schema, Channel, ChunkIndex, Statistics, then one SummaryOffset per group.
  std::vector<std::uint8_t> ops;
  for (auto it = data_end + 1; it != recs.end() - 1; ++it) {
    if (it->at < offsets_start) {
      if (ops.empty() || ops.back() != it->op) ops.push_back(it->op);
    } else {
      ASSERT_EQ(it->op, 0x0E);
      const std::uint8_t group = b[it->content()];
      const std::uint64_t start = test::le64(b, it->content() + 1);
      EXPECT_EQ(b[start], group);
    }
  }
  EXPECT_EQ(ops, (std::vector<std::uint8_t>{0x03, 0x04, 0x08, 0x0B}));
}

// Messages are ordered by log time whatever order they were written in.
TEST(McapReader, OrdersByLogTime) {
  TempDir dir;
  {
    mcap::Writer w(dir / "a.mcap");
    const std::uint16_t c = w.add_channel(0, "/x", "json");
    for (std::uint64_t t : {30, 10, 20, 10}) w.write(c, std::uint32_t(t), t, t, std::vector<std::uint8_t>{std::uint8_t(t)});
    w.close();
  }
  auto r = mcap::Reader::open(dir / "a.mcap");
  std::vector<std::uint64_t> times;
  for (const auto& ref : r->messages(0)) times.push_back(r->read(ref).log_time);
  EXPECT_EQ(times, (std::vector<std::uint64_t>{10, 10, 20, 30}));
  // Equal times keep the file's order.
  EXPECT_EQ(r->read(r->messages(0)[0]).sequence, 10u);
}

// Through the index, a message is read without touching other chunks: a
// damaged first chunk does not stop reading the last one (a scan would).
TEST(McapReader, ReachesAMessageWithoutScanning) {
  TempDir dir;
  mcap::WriterOptions o;
  o.compression = mcap::Compression::None;
  o.chunk_size = 512;
  write_file(dir / "a.mcap", o);
  auto b = test::read_bytes(dir / "a.mcap");
  const auto chunks = test::records_of(b, 0x06);
  ASSERT_GT(chunks.size(), 4u);
  b[chunks.front().end() - 1] ^= 0xFF;  // last byte of the first chunk's records: its CRC no longer matches
  test::write_bytes(dir / "a.mcap", b);
  auto r = mcap::Reader::open(dir / "a.mcap");
  ASSERT_TRUE(r->indexed());
  const auto& refs = r->messages(1);
  EXPECT_EQ(r->read(refs.back()).sequence, 39u);
  EXPECT_THAT(message_of<ParseError>([&] { r->read(refs.front()); }),
              HasSubstr("Chunk at byte " + std::to_string(chunks.front().at) + ": uncompressed_crc: stored"));
}

// A recording cut short: everything up to its last whole record, one warning.
TEST(McapReader, FileCutShortReadsUpToItsLastWholeChunk) {
  TempDir dir;
  mcap::WriterOptions o;
  o.compression = mcap::Compression::Zstd;
  o.chunk_size = 1024;
  write_file(dir / "a.mcap", o);
  const auto whole = test::read_bytes(dir / "a.mcap");
  const auto chunks = test::records_of(whole, 0x06);
  ASSERT_GT(chunks.size(), 3u);
  std::vector<std::string> logged;
  // Cut in the middle of the third chunk: the first two (and their indexes) survive.
  const std::size_t cut = chunks[2].at + std::size_t(chunks[2].len / 2);
  test::write_bytes(dir / "cut.mcap", std::vector<std::uint8_t>(whole.begin(), whole.begin() + std::ptrdiff_t(cut)));
  std::unique_ptr<mcap::Reader> r;
  {
    handoff::test::LogCapture log;
    r = mcap::Reader::open(dir / "cut.mcap");
    logged = log.texts(LogLevel::Warning);
  }
  EXPECT_FALSE(r->indexed());
  ASSERT_EQ(r->warnings().size(), 1u);
  EXPECT_THAT(r->warnings()[0], HasSubstr("damaged tail: Chunk at byte " + std::to_string(chunks[2].at)));
  EXPECT_EQ(logged, r->warnings());
  std::size_t total = 0;
  for (int c = 0; c < 3; ++c) {
    for (const auto& ref : r->messages(std::uint16_t(c))) {
      const auto m = r->read(ref);
      EXPECT_EQ(std::vector<std::uint8_t>(m.data.begin(), m.data.end()), payload(c, int(m.sequence)));
      ++total;
    }
  }
  EXPECT_GT(total, 0u);
  EXPECT_LT(total, 120u);
  // Cut right after a whole chunk (and its message indexes): no record is damaged, the footer is missing.
  const std::size_t after = chunks[3].at;
  test::write_bytes(dir / "cut2.mcap", std::vector<std::uint8_t>(whole.begin(), whole.begin() + std::ptrdiff_t(after)));
  auto r2 = mcap::Reader::open(dir / "cut2.mcap");
  ASSERT_EQ(r2->warnings().size(), 1u);
  EXPECT_THAT(r2->warnings()[0], HasSubstr("without a Footer"));
}

// An uncompressed chunk cut short: the messages wholly written in it are
// kept (a compressed one cannot be decompressed and goes whole, above).
TEST(McapReader, UncompressedChunkCutShortKeepsItsWholeMessages) {
  TempDir dir;
  mcap::WriterOptions o;
  o.compression = mcap::Compression::None;
  o.chunk_size = std::size_t(1) << 20;  // one chunk holds every record
  write_file(dir / "a.mcap", o);
  const auto whole = test::read_bytes(dir / "a.mcap");
  const auto chunks = test::records_of(whole, 0x06);
  ASSERT_EQ(chunks.size(), 1u);
  const std::size_t cut = chunks[0].at + std::size_t(chunks[0].len / 2);
  // The messages wholly before the cut, walking the chunk's records independently: they
  // follow its fields (two times, uncompressed size and CRC, an empty compression string, the records' length).
  std::size_t kept = 0;
  for (std::size_t at = chunks[0].content() + 8 + 8 + 8 + 4 + 4 + 8; at + 9 <= cut;) {
    const std::size_t end = at + 9 + std::size_t(test::le64(whole, at + 1));
    if (end > cut) break;
    if (whole[at] == 0x05) ++kept;
    at = end;
  }
  ASSERT_GT(kept, 10u);
  ASSERT_LT(kept, 120u);
  test::write_bytes(dir / "cut.mcap", std::vector<std::uint8_t>(whole.begin(), whole.begin() + std::ptrdiff_t(cut)));
  std::unique_ptr<mcap::Reader> r;
  {
    handoff::test::LogCapture log;
    r = mcap::Reader::open(dir / "cut.mcap");
    EXPECT_EQ(log.count(LogLevel::Warning), 1u);
  }
  ASSERT_EQ(r->warnings().size(), 1u);
  EXPECT_THAT(r->warnings()[0], HasSubstr("damaged tail: Chunk at byte " + std::to_string(chunks[0].at) + ": its " +
                                          std::to_string(chunks[0].len) + " bytes run past the end of the file (byte " +
                                          std::to_string(cut) + "); its records are not compressed: the " +
                                          std::to_string(kept) + " messages wholly written in it are kept"));
  EXPECT_EQ(r->channels().size(), 3u);  // their Channel records were in the chunk too
  std::size_t total = 0;
  for (int c = 0; c < 3; ++c) {
    const auto& refs = r->messages(std::uint16_t(c));
    for (std::size_t k = 0; k < refs.size(); ++k) {
      const auto m = r->read(refs[k]);
      EXPECT_EQ(m.sequence, k) << "channel " << c << ": the messages kept are the first ones written";
      EXPECT_EQ(std::vector<std::uint8_t>(m.data.begin(), m.data.end()), payload(c, int(k)));
    }
    total += refs.size();
  }
  EXPECT_EQ(total, kept);
}

// --- Compressed chunks cut short (issue 22) ------------------------------------------

class McapCutCompressedChunk : public ::testing::TestWithParam<mcap::Compression> {
 protected:
  std::string comp() const { return std::string(mcap::compression_field(GetParam())); }
  // Reads `file` cut at byte `cut`: exactly one warning, logged and kept.
  std::unique_ptr<mcap::Reader> open_cut(const std::vector<std::uint8_t>& file, std::size_t cut) {
    test::write_bytes(dir_ / "cut.mcap", std::vector<std::uint8_t>(file.begin(), file.begin() + std::ptrdiff_t(cut)));
    handoff::test::LogCapture log;
    auto r = mcap::Reader::open(dir_ / "cut.mcap");
    EXPECT_EQ(log.count(LogLevel::Warning), 1u);
    EXPECT_EQ(r->warnings().size(), 1u);
    return r;
  }
  // Every message kept is one of the first ones written on its channel, in order, with its payload.
  static std::size_t expect_first_messages(mcap::Reader& r, int channels) {
    std::size_t total = 0;
    for (int c = 0; c < channels; ++c) {
      const auto& refs = r.messages(std::uint16_t(c));
      for (std::size_t k = 0; k < refs.size(); ++k) {
        const auto m = r.read(refs[k]);
        EXPECT_EQ(m.sequence, k) << "channel " << c;
        EXPECT_EQ(std::vector<std::uint8_t>(m.data.begin(), m.data.end()), payload(c, int(k))) << "channel " << c;
      }
      total += refs.size();
    }
    return total;
  }
  TempDir dir_;
};

// One chunk of ~1 MiB of records (several zstd and lz4 blocks), cut at
// several points: every message wholly in what the blocks written decode to
// is kept, and the warning says how many and that the rest is lost.
TEST_P(McapCutCompressedChunk, KeepsTheMessagesWhollyDecompressed) {
  mcap::WriterOptions o;
  o.compression = GetParam();
  o.chunk_size = std::size_t(16) << 20;  // one chunk holds every record
  const Written w{3, 2000};
  write_file(dir_ / "a.mcap", o, w);
  const auto whole = test::read_bytes(dir_ / "a.mcap");
  const auto chunks = test::records_of(whole, 0x06);
  ASSERT_EQ(chunks.size(), 1u);
  const std::uint64_t usize = test::chunk_uncompressed_size(whole, chunks[0]);
  ASSERT_GT(usize, std::uint64_t(600) << 10) << "several blocks of either algorithm";
  std::size_t previous = 0;
  for (const double at : {0.2, 0.4, 0.6, 0.8, 0.95, 0.999}) {
    SCOPED_TRACE("cut at " + std::to_string(at) + " of the chunk");
    const std::size_t cut = chunks[0].at + std::size_t(double(chunks[0].len) * at);
    const test::CutChunk want = test::what_survives(whole, chunks[0], GetParam(), cut);
    if (at >= 0.4) {
      EXPECT_GT(want.messages, 0u) << "the test should cut past whole blocks";
    }
    EXPECT_LT(want.messages, 6000u);
    EXPECT_GE(want.messages, previous);
    previous = want.messages;
    const auto r = open_cut(whole, cut);
    EXPECT_FALSE(r->indexed());
    EXPECT_THAT(r->warnings().at(0),
                HasSubstr("damaged tail: Chunk at byte " + std::to_string(chunks[0].at) + ": its " +
                          std::to_string(chunks[0].len) + " bytes run past the end of the file (byte " +
                          std::to_string(cut) + "); its records are compressed (" + comp() +
                          "): the bytes written decompress to " + std::to_string(want.decoded) + " of its " +
                          std::to_string(usize) + " bytes of records, and the " + std::to_string(want.messages) +
                          " messages wholly in them are kept; the rest of the chunk is lost; reading stops there (" +
                          std::to_string(want.messages) + " messages are kept in all)"));
    EXPECT_EQ(r->channels().size(), 3u);  // their Channel records were at the chunk's start
    EXPECT_EQ(expect_first_messages(*r, 3), want.messages);
  }
}

// Cut inside the compressed stream's header, or inside its first block
// (chunks of 1 KiB are one block each): nothing of that chunk plays, the
// chunks before it do, and nothing crashes.
TEST_P(McapCutCompressedChunk, CutInsideTheFirstBlockKeepsNothingOfThatChunk) {
  mcap::WriterOptions o;
  o.compression = GetParam();
  o.chunk_size = 1024;
  write_file(dir_ / "a.mcap", o);
  const auto whole = test::read_bytes(dir_ / "a.mcap");
  const auto chunks = test::records_of(whole, 0x06);
  ASSERT_GT(chunks.size(), 3u);
  const test::Rec& last = chunks[2];
  // The messages of the chunks before it: the file cut where it starts.
  test::write_bytes(dir_ / "before.mcap",
                    std::vector<std::uint8_t>(whole.begin(), whole.begin() + std::ptrdiff_t(last.at)));
  std::size_t before = 0;
  {
    handoff::test::LogCapture quiet;
    const auto r = mcap::Reader::open(dir_ / "before.mcap");
    for (int c = 0; c < 3; ++c) before += r->messages(std::uint16_t(c)).size();
  }
  ASSERT_GT(before, 0u);
  const std::size_t records_at = test::chunk_records_at(whole, last);
  const std::size_t middle = records_at + (last.end() - records_at) / 2;
  for (const std::size_t cut : {records_at + 1, records_at + 3, records_at + 6, records_at + 20, middle}) {
    SCOPED_TRACE("cut " + std::to_string(cut - records_at) + " bytes into the compressed records");
    EXPECT_EQ(test::what_survives(whole, last, GetParam(), cut).messages, 0u);
    const auto r = open_cut(whole, cut);
    EXPECT_THAT(r->warnings().at(0), HasSubstr("its records are compressed (" + comp() +
                                               "): the bytes written decompress to 0 of its " +
                                               std::to_string(test::chunk_uncompressed_size(whole, last)) +
                                               " bytes of records, and the 0 messages wholly in them are kept"));
    EXPECT_EQ(expect_first_messages(*r, 3), before);
  }
}

// The tail of a file cut short by a crash may hold anything (a power loss
// zero-fills blocks): bytes of a cut chunk that stop being a valid stream end
// its decoding there, the messages decoded before them are kept, and the
// warning says what stopped it. A stream that decodes to more than the
// chunk's own uncompressed_size, or a size over the reader's limit, is still
// an error naming the chunk and the field: the chunk's header is wrong.
TEST_P(McapCutCompressedChunk, BadBytesInWhatWasWrittenEndItsDecoding) {
  mcap::WriterOptions o;
  o.compression = GetParam();
  o.chunk_size = std::size_t(16) << 20;
  write_file(dir_ / "a.mcap", o, Written{3, 2000});
  const auto whole = test::read_bytes(dir_ / "a.mcap");
  const auto chunk = test::records_of(whole, 0x06).at(0);
  const std::size_t cut = chunk.at + std::size_t(double(chunk.len) * 0.8);
  const test::CutChunk intact = test::what_survives(whole, chunk, GetParam(), cut);
  ASSERT_GT(intact.messages, 0u);

  // Zeros where the last blocks written should be: what decoded before them is kept.
  auto zeroed = whole;
  const std::size_t zero_from = chunk.at + std::size_t(double(chunk.len) * 0.6);
  std::fill(zeroed.begin() + std::ptrdiff_t(zero_from), zeroed.begin() + std::ptrdiff_t(cut), std::uint8_t{0});
  const test::CutChunk before_zeros = test::what_survives(whole, chunk, GetParam(), zero_from);
  {
    const auto r = open_cut(zeroed, cut);
    EXPECT_THAT(r->warnings().at(0), HasSubstr("(then unreadable: " + comp() + ": "));
    const std::size_t kept = expect_first_messages(*r, 3);
    EXPECT_GE(kept, before_zeros.messages) << "messages decoded before the zeros were lost: " << r->warnings().at(0) << " / " << before_zeros.decoded;
    EXPECT_LE(kept, intact.messages);
  }
  // The stream's first bytes broken: nothing of the chunk decodes, the file still opens.
  auto bad = whole;
  bad[test::chunk_records_at(whole, chunk)] ^= 0xFF;  // the stream's magic number
  {
    const auto r = open_cut(bad, cut);
    EXPECT_THAT(r->warnings().at(0), HasSubstr("the bytes written decompress to 0 of its"));
    EXPECT_THAT(r->warnings().at(0), HasSubstr("(then unreadable: " + comp() + ": "));
    EXPECT_EQ(expect_first_messages(*r, 3), 0u);
  }

  const std::string where = "cut.mcap: Chunk at byte " + std::to_string(chunk.at) + ": ";
  auto error = [&](const std::vector<std::uint8_t>& b, const mcap::ReaderOptions& ro = {}) {
    test::write_bytes(dir_ / "cut.mcap", std::vector<std::uint8_t>(b.begin(), b.begin() + std::ptrdiff_t(cut)));
    return message_of<ParseError>([&] { mcap::Reader::open(dir_ / "cut.mcap", ro); });
  };
  bad = whole;
  test::put64(bad, chunk.content() + 16, 1000);  // uncompressed_size
  EXPECT_THAT(error(bad), HasSubstr(where + "records: " + comp() +
                                    ": data decompresses to more than uncompressed_size (1000 bytes)"));
  mcap::ReaderOptions small;
  small.max_chunk_bytes = 4096;
  EXPECT_THAT(error(whole, small),
              HasSubstr(where + "uncompressed_size: " + std::to_string(test::chunk_uncompressed_size(whole, chunk)) +
                        " bytes exceeds the reader's limit of 4096"));
}

INSTANTIATE_TEST_SUITE_P(Compressions, McapCutCompressedChunk,
                         ::testing::Values(mcap::Compression::Zstd, mcap::Compression::Lz4),
                         [](const auto& info) { return std::string(mcap::compression_field(info.param)); });

// --- Chunks bounded by time ----------------------------------------------------------

// Small messages 100 ms apart over 4.9 s: far below chunk_size, yet every
// chunk holds at most one second of log time, so a crash loses at most that.
TEST(McapWriter, ChunksHoldAboutOneSecondOfRecording) {
  TempDir dir;
  {
    mcap::Writer w(dir / "a.mcap");  // default options: 4 MiB chunks, zstd
    const std::uint16_t c = w.add_channel(0, "/x", "json");
    for (std::uint32_t k = 0; k < 50; ++k) {
      w.write(c, k, 5'000'000'000ull + k * 100'000'000ull, 0, std::vector<std::uint8_t>(100, std::uint8_t(k)));
    }
    w.close();
  }
  const auto b = test::read_bytes(dir / "a.mcap");
  const auto chunks = test::records_of(b, 0x06);
  // [0 s, 1.0 s], [1.1 s, 2.1 s], [2.2 s, 3.2 s], [3.3 s, 4.3 s], [4.4 s, 4.9 s] after the first message.
  ASSERT_EQ(chunks.size(), 5u);
  for (const test::Rec& chunk : chunks) {
    const std::uint64_t start = test::le64(b, chunk.content()), end = test::le64(b, chunk.content() + 8);
    EXPECT_LE(end - start, 1'000'000'000u) << "chunk at byte " << chunk.at;
  }
  // The reader finds every message, each in the chunk its log time puts it in.
  auto r = mcap::Reader::open(dir / "a.mcap");
  ASSERT_TRUE(r->indexed());
  const auto& refs = r->messages(0);
  ASSERT_EQ(refs.size(), 50u);
  for (std::uint32_t k = 0; k < 50; ++k) {
    EXPECT_EQ(r->read(refs[k]).sequence, k);
    EXPECT_EQ(refs[k].chunk, std::min<std::uint32_t>(k / 11, 4)) << "message " << k;
  }
}

// The bound is WriterOptions::chunk_duration_ns; 0 bounds chunks by size only.
TEST(McapWriter, ChunkDurationIsAnOption) {
  TempDir dir;
  auto chunks_for = [&](std::uint64_t duration) {
    mcap::WriterOptions o;
    o.chunk_duration_ns = duration;
    mcap::Writer w(dir / "a.mcap", o);
    const std::uint16_t c = w.add_channel(0, "/x", "json");
    for (std::uint32_t k = 0; k < 50; ++k) w.write(c, k, k * 100'000'000ull, 0, std::vector<std::uint8_t>(100, 1));
    w.close();
    return test::records_of(test::read_bytes(dir / "a.mcap"), 0x06).size();
  };
  EXPECT_EQ(chunks_for(0), 1u);
  EXPECT_EQ(chunks_for(250'000'000), 13u);  // 4 messages (0.3 s) each, 2 in the last
}

// A write that fails mid-recording (the file size limit here, a full disk
// in the field): the record being written is taken back off the file, nothing
// more is written to it (close() adds no DataEnd, summary or footer over a
// damaged data section), every later call throws that first error, and a
// reader keeps every message of the whole chunks before it.
TEST(McapWriter, AFailedWriteLeavesTheWholeRecordsBeforeIt) {
  TempDir dir;
  const auto file = dir / "full.mcap";
  test::FileSizeLimit limit(64 * 1024);
  std::string first_error;
  std::uint32_t written = 0;
  std::uint64_t in_file = 0;
  {
    mcap::WriterOptions o;
    o.compression = mcap::Compression::None;
    o.chunk_size = 4096;
    mcap::Writer w(file, o);
    const std::uint16_t ch = w.add_channel(0, "/t", "raw", {});
    limit.apply();
    const std::vector<std::uint8_t> data(1000, 0x5a);
    try {
      for (;; ++written) w.write(ch, written, 1000 + written, 1000 + written, data);
    } catch (const Error& e) {
      first_error = e.what();
    }
    EXPECT_THAT(first_error, HasSubstr("File too large"));
    EXPECT_THAT(message_of<Error>([&] { w.write(ch, 0, 1, 1, data); }), HasSubstr("File too large"));
    EXPECT_THAT(message_of<Error>([&] { w.close(); }), HasSubstr("File too large"));
    in_file = w.messages_in_file(ch);
  }
  limit.restore();
  // No record past the last whole chunk, and no second copy of the failed one.
  const auto bytes = test::read_bytes(file);
  EXPECT_LE(bytes.size(), 64u * 1024u);
  const auto chunks = test::records_of(bytes, 0x06);
  ASSERT_GT(chunks.size(), 2u);
  EXPECT_EQ(test::records_of(bytes, 0x0F).size(), 0u) << "no DataEnd after a failure";
  auto r = mcap::Reader::open(file);
  ASSERT_EQ(r->warnings().size(), 1u);
  EXPECT_THAT(r->warnings()[0], HasSubstr("without a Footer"));  // cut at a record boundary: nothing damaged
  std::uint32_t next = 0;
  for (const auto& ref : r->messages(0)) EXPECT_EQ(r->read(ref).sequence, next++);
  EXPECT_GT(next, 0u);
  EXPECT_LT(next, written);
  EXPECT_EQ(in_file, next) << "messages_in_file counts what a reader finds";
}

// A file another writer is still recording into is refused (each holds the
// file's lock): before, the second truncated it under the first, and both
// wrote into it. Once the first is closed the file is free again.
TEST(McapWriter, AFileBeingRecordedIsRefusedToASecondWriter) {
  TempDir dir;
  const auto file = dir / "busy.mcap";
  auto first = std::make_unique<mcap::Writer>(file);
  const std::uint16_t ch = first->add_channel(0, "/t", "raw", {});
  first->write(ch, 0, 1, 1, std::vector<std::uint8_t>(10, 1));
  EXPECT_THAT(message_of<Error>([&] { mcap::Writer second(file); }),
              HasSubstr("another recording is being written into this file"));
  first->close();
  first.reset();
  auto r = mcap::Reader::open(file);
  EXPECT_TRUE(r->warnings().empty());
  EXPECT_EQ(r->messages(0).size(), 1u);
  { mcap::Writer again(file); }  // free: taken and emptied
  EXPECT_TRUE(mcap::Reader::open(file)->channels().empty());
}

TEST(McapReader, EmptyFileHasNoMessages) {
  TempDir dir;
  { mcap::Writer w(dir / "e.mcap"); }
  auto r = mcap::Reader::open(dir / "e.mcap");
  EXPECT_TRUE(r->channels().empty());
  EXPECT_TRUE(r->messages(0).empty());
  EXPECT_TRUE(r->warnings().empty());
}

TEST(McapWriter, Misuse) {
  TempDir dir;
  mcap::Writer w(dir / "a.mcap");
  EXPECT_THROW(w.add_channel(3, "/x", "json"), UsageError);
  EXPECT_THROW(w.write(0, 0, 0, 0, {}), UsageError);
  w.close();
  EXPECT_THROW(w.add_schema("a", "b", {}), UsageError);
  EXPECT_THAT(message_of<Error>([&] { mcap::Writer bad(dir / "no" / "such" / "dir.mcap"); }), HasSubstr("no/such/dir.mcap"));
  EXPECT_EQ(mcap::parse_compression("lz4"), mcap::Compression::Lz4);
  EXPECT_THROW(mcap::parse_compression("gzip"), UsageError);
}

}  // namespace
}  // namespace handoff::media
