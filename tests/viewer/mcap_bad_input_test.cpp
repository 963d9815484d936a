// Bad MCAP input (issue 14, section 5): a truncated file, a bad magic, CRC
// mismatches, an unknown compression, chunk and record lengths past the end,
// a missing schema, an unknown encoding, image data shorter than the image.
// Each is a ParseError naming the file, the record and its byte offset, and
// the field, or, for a tail cut short, playback up to the last good message
// with one warning. Files are damaged on purpose at offsets found by an
// independent record walker (recording_test_util.hpp).
#include <handoff/log.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/mcap.hpp>
#include <handoff/media/recording.hpp>

#include <foxglove/RawImage.pb.h>
#include <google/protobuf/descriptor.pb.h>

#include "log_capture.hpp"
#include "recording_test_util.hpp"
#include "test_util.hpp"

#include <gmock/gmock.h>

#include <algorithm>

namespace handoff::media {
namespace {

using test::message_of;
using test::Rec;
using test::TempDir;
using ::testing::HasSubstr;

std::string at(const char* record, std::size_t offset) { return std::string(record) + " at byte " + std::to_string(offset); }

class McapBadInput : public ::testing::Test {
 protected:
  // A recording of 4 NV12 16x8 frames, one chunk each (unless chunk_size says otherwise), without CRCs unless asked.
  std::filesystem::path recording(mcap::Compression c = mcap::Compression::None, bool summary = true, bool crc = false,
                                  std::size_t chunk_size = 1) {
    const auto p = dir_ / "r.mcap";
    mcap::WriterOptions o;
    o.compression = c;
    o.chunk_size = chunk_size;
    o.summary = summary;
    o.crc = crc;
    mcap::Writer w(p, o);
    const auto s = w.add_schema(kRawImageSchema, "protobuf", raw_image_descriptor_set());
    const auto ch = w.add_channel(s, "/c", "protobuf");
    std::vector<std::uint8_t> msg;
    for (std::uint32_t i = 0; i < 4; ++i) {
      encode_raw_image(test::pattern_frame(PixelFormat::NV12, 16, 8, i), i, msg);
      w.write(ch, i, 100 + i, 100 + i, msg);
    }
    w.close();
    return p;
  }
  // One image message (`image`) with the given schema and encodings.
  std::filesystem::path foreign(const std::string& image, std::string_view message_encoding = "protobuf",
                                std::string_view schema_encoding = "protobuf",
                                std::span<const std::uint8_t> schema = raw_image_descriptor_set()) {
    const auto p = dir_ / "f.mcap";
    mcap::Writer w(p);
    const auto s = w.add_schema(kRawImageSchema, schema_encoding, schema);
    const auto ch = w.add_channel(s, "/c", message_encoding);
    w.write(ch, 0, 1, 1, std::span(reinterpret_cast<const std::uint8_t*>(image.data()), image.size()));
    w.close();
    return p;
  }
  std::vector<std::uint8_t> bytes(const std::filesystem::path& p) { return test::read_bytes(p); }
  std::filesystem::path save(const std::vector<std::uint8_t>& b, const std::string& name = "bad.mcap") {
    test::write_bytes(dir_ / name, b);
    return dir_ / name;
  }
  std::string open_error(const std::filesystem::path& p) {
    return message_of<ParseError>([&] { open_recording(p); });
  }
  // Opens a recording with a damaged tail: exactly one warning is logged, and kept.
  std::unique_ptr<RecordingSource> open_damaged(const std::filesystem::path& p) {
    handoff::test::LogCapture log;
    auto src = open_recording(p);
    EXPECT_EQ(log.count(LogLevel::Warning), 1u);
    EXPECT_EQ(src->warnings().size(), 1u);
    return src;
  }
  // Plays frames 0..n-1 of recording() (their pattern), then the end.
  static void expect_frames(RecordingSource& src, std::uint32_t n) {
    EXPECT_EQ(src.info().frame_count, std::int64_t(n));
    HostFrame f(PixelFormat::NV12, 16, 8);
    for (std::uint32_t i = 0; i < n; ++i) {
      ASSERT_TRUE(src.read_into(f.target()));
      EXPECT_TRUE(test::has_pattern(f, i));
    }
    EXPECT_FALSE(src.read_into(f.target()));
  }
  // Reads every frame; returns the first ParseError's message.
  std::string play_error(const std::filesystem::path& p) {
    return message_of<ParseError>([&] {
      auto src = open_recording(p);
      HostFrame f(src->info().format, src->info().width, src->info().height);
      while (src->read_into(f.target())) {
      }
    });
  }
  TempDir dir_;
};

// --- Truncation ---------------------------------------------------------------------

TEST_F(McapBadInput, TruncatedInsideTheHeader) {
  auto b = bytes(recording());
  b.resize(12);
  EXPECT_THAT(open_error(save(b)), HasSubstr("bad.mcap: Header at byte 8: opcode: the file ends before the Header record"));
  b = bytes(recording());
  b.resize(20);
  EXPECT_THAT(open_error(save(b)), HasSubstr("Header at byte 8: length:"));
}

TEST_F(McapBadInput, TruncatedTailPlaysUpToTheLastGoodMessageWithOneWarning) {
  auto b = bytes(recording(mcap::Compression::Zstd, true, true));
  const auto chunks = test::records_of(b, 0x06);
  ASSERT_EQ(chunks.size(), 4u);
  b.resize(chunks[3].at + 30);
  const auto src = open_damaged(save(b));
  ASSERT_EQ(src->warnings().size(), 1u);
  EXPECT_THAT(src->warnings()[0], HasSubstr("bad.mcap: damaged tail: " + at("Chunk", chunks[3].at) +
                                            ": its " + std::to_string(chunks[3].len) + " bytes run past the end of the file"));
  EXPECT_THAT(src->warnings()[0], HasSubstr("; it ends before its records begin; reading stops there (3 messages"));
  expect_frames(*src, 3);
}

// A crash inside an uncompressed chunk: the frames wholly written in it still play.
TEST_F(McapBadInput, TruncatedUncompressedChunkPlaysItsWholeFrames) {
  auto b = bytes(recording(mcap::Compression::None, true, true, std::size_t(1) << 20));
  const auto chunks = test::records_of(b, 0x06);
  ASSERT_EQ(chunks.size(), 1u);  // every frame in one chunk
  b.resize(chunks[0].end() - 100);  // inside the fourth frame's message
  const auto src = open_damaged(save(b));
  ASSERT_EQ(src->warnings().size(), 1u);
  EXPECT_THAT(src->warnings()[0],
              HasSubstr("bad.mcap: damaged tail: " + at("Chunk", chunks[0].at) + ": its " + std::to_string(chunks[0].len) +
                        " bytes run past the end of the file (byte " + std::to_string(b.size()) +
                        "); its records are not compressed: the 3 messages wholly written in it are kept; reading "
                        "stops there (3 messages are kept in all)"));
  expect_frames(*src, 3);
}

// Two image topics and no topic asked for: open_recording judges them from
// the file it opened (no second scan), so the cut tail is still one warning,
// also when the first topic is passed over for the second.
TEST_F(McapBadInput, TruncatedTailWithTwoImageTopicsIsOneWarning) {
  foxglove::RawImage unshown;
  unshown.set_width(4);
  unshown.set_height(2);
  unshown.set_step(12);
  unshown.set_encoding("bayer_rggb8");
  unshown.set_data(std::string(24, 'x'));
  for (const bool first_shown : {true, false}) {
    const auto p = dir_ / "two.mcap";
    {
      mcap::WriterOptions o;
      o.compression = mcap::Compression::Zstd;
      o.chunk_size = 1;
      mcap::Writer w(p, o);
      const auto s = w.add_schema(kRawImageSchema, "protobuf", raw_image_descriptor_set());
      const auto a = w.add_channel(s, "/a", "protobuf"), b = w.add_channel(s, "/b", "protobuf");
      std::vector<std::uint8_t> msg;
      const std::string bad = unshown.SerializeAsString();
      for (std::uint32_t i = 0; i < 4; ++i) {
        encode_raw_image(test::pattern_frame(PixelFormat::NV12, 16, 8, i), i, msg);
        if (first_shown) w.write(a, i, 100 + i, 100 + i, msg);
        else w.write(a, i, 100 + i, 100 + i, std::span(reinterpret_cast<const std::uint8_t*>(bad.data()), bad.size()));
        w.write(b, i, 100 + i, 100 + i, msg);
      }
      w.close();
    }
    auto data = bytes(p);
    const auto chunks = test::records_of(data, 0x06);
    ASSERT_EQ(chunks.size(), 8u);
    data.resize(chunks[7].at + 30);
    handoff::test::LogCapture log;
    const auto src = open_recording(save(data));
    EXPECT_EQ(src->topic(), first_shown ? "/a" : "/b");
    const auto warnings = log.texts(LogLevel::Warning);
    EXPECT_EQ(std::count_if(warnings.begin(), warnings.end(),
                            [](const std::string& w) { return w.find("damaged tail") != std::string::npos; }), 1)
        << log.text();
    EXPECT_EQ(warnings.size(), first_shown ? 1u : 2u) << log.text();  // and the topic passed over
    ASSERT_EQ(src->warnings().size(), 1u);
    EXPECT_THAT(src->warnings()[0], HasSubstr("bad.mcap: damaged tail: " + at("Chunk", chunks[7].at)));
    EXPECT_EQ(src->info().frame_count, first_shown ? 4 : 3);
  }
}

TEST_F(McapBadInput, TruncatedBeforeAnyImage) {
  auto b = bytes(recording());
  b.resize(test::records_of(b, 0x06)[0].at + 5);
  handoff::test::LogCapture quiet;
  EXPECT_THAT(open_error(save(b)), HasSubstr("topic: the recording has no foxglove.RawImage, foxglove.CompressedImage, foxglove.CompressedVideo, sensor_msgs/msg/Image or CompressedImage channel"));
}

// --- Magic --------------------------------------------------------------------------

TEST_F(McapBadInput, BadMagic) {
  auto b = bytes(recording());
  b[1] = 'X';
  EXPECT_THAT(open_error(save(b)), HasSubstr("bad.mcap: byte 0: magic: not an MCAP file"));
  b = bytes(recording());
  b[5] = '1';
  EXPECT_THAT(open_error(save(b)), HasSubstr("byte 0: magic: unsupported MCAP major version '1'"));
  EXPECT_THAT(open_error(save({'M', 'C'})), HasSubstr("not an MCAP file"));
  EXPECT_THAT(open_error(save({})), HasSubstr("not an MCAP file"));
}

// --- CRCs ---------------------------------------------------------------------------

TEST_F(McapBadInput, ChunkCrcMismatch) {
  auto b = bytes(recording(mcap::Compression::None, true, true));
  const Rec chunk = test::records_of(b, 0x06)[2];
  b[chunk.end() - 1] ^= 0x01;  // a pixel of the third frame
  EXPECT_THAT(play_error(save(b)), HasSubstr("bad.mcap: " + at("Chunk", chunk.at) + ": uncompressed_crc: stored 0x"));
}

TEST_F(McapBadInput, CompressedChunkCrcMismatch) {
  auto b = bytes(recording(mcap::Compression::Lz4, true, true));
  const Rec chunk = test::records_of(b, 0x06)[1];
  b[chunk.content() + 24] ^= 0x01;  // the stored uncompressed_crc itself
  EXPECT_THAT(play_error(save(b)), HasSubstr(at("Chunk", chunk.at) + ": uncompressed_crc:"));
}

// Without a summary the file is scanned: a damaged chunk in the middle (its
// CRC, or compressed data that does not decompress) is left out with one
// warning naming it, and the frames of the other chunks play, as an indexed
// file loses only that chunk's frames.
TEST_F(McapBadInput, ScannedFileLeavesOutADamagedChunkAndPlaysTheRest) {
  for (const auto compression : {mcap::Compression::None, mcap::Compression::Zstd}) {
    auto b = bytes(recording(compression, false, true));
    const Rec chunk = test::records_of(b, 0x06)[1];
    if (compression == mcap::Compression::None) b[chunk.end() - 1] ^= 0x01;  // a pixel of the second frame
    else for (std::size_t i = chunk.content() + 48; i < chunk.end(); ++i) b[i] = 0xA5;
    auto src = open_recording(save(b));
    EXPECT_EQ(src->info().frame_count, 3) << "frames 0, 2 and 3";
    ASSERT_EQ(src->warnings().size(), 1u);
    EXPECT_THAT(src->warnings()[0], HasSubstr("bad.mcap: " + at("Chunk", chunk.at) + ": "));
    EXPECT_THAT(src->warnings()[0], HasSubstr("; the chunk's messages are left out"));
    HostFrame f(PixelFormat::NV12, 16, 8);
    for (std::uint32_t want : {0u, 2u, 3u}) {
      ASSERT_TRUE(src->read_into(f.target()));
      EXPECT_TRUE(test::has_pattern(f, want)) << "frame " << want;
    }
    EXPECT_FALSE(src->read_into(f.target()));
  }
}

// A damaged summary (its CRC differs) is not used: the file is read from
// its records instead, every frame plays, one warning says so.
TEST_F(McapBadInput, SummaryCrcMismatchReadsTheRecordsInstead) {
  auto b = bytes(recording(mcap::Compression::None, true, true));
  const Rec ci = test::records_of(b, 0x08)[0];
  b[ci.content()] ^= 0x01;  // message_start_time of a chunk index
  const Rec footer = test::records_of(b, 0x02)[0];
  auto src = open_recording(save(b));
  EXPECT_FALSE(src->indexed());
  ASSERT_EQ(src->info().frame_count, 4);
  ASSERT_EQ(src->warnings().size(), 1u);
  EXPECT_THAT(src->warnings()[0], HasSubstr("bad.mcap: " + at("Footer", footer.at) + ": summary_crc: stored 0x"));
  EXPECT_THAT(src->warnings()[0], HasSubstr("the summary is not used: the file is read from its records"));
  HostFrame f(PixelFormat::NV12, 16, 8);
  for (std::uint32_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(src->read_into(f.target()));
    EXPECT_TRUE(test::has_pattern(f, i)) << "frame " << i;
  }
  // Damaged data as well as the summary: the scan names the chunk, and the others play.
  const Rec chunk = test::records_of(b, 0x06)[2];
  b[chunk.end() - 1] ^= 0x01;
  src = open_recording(save(b, "worse.mcap"));
  EXPECT_EQ(src->info().frame_count, 3);
  ASSERT_EQ(src->warnings().size(), 2u);
  EXPECT_THAT(src->warnings()[1], HasSubstr(at("Chunk", chunk.at) + ": uncompressed_crc"));
}

TEST_F(McapBadInput, DataSectionCrcMismatch) {
  auto b = bytes(recording(mcap::Compression::None, false, true));
  // Without a summary the file is scanned, and the scan checks the data section CRC.
  const Rec mi = test::records_of(b, 0x07)[0];
  b[mi.content() + 8] ^= 0x01;  // a message index time: nothing else checks it
  const Rec data_end = test::records_of(b, 0x0F)[0];
  EXPECT_THAT(open_error(save(b)), HasSubstr(at("DataEnd", data_end.at) + ": data_section_crc: stored 0x"));
}

// --- Compression --------------------------------------------------------------------

TEST_F(McapBadInput, UnknownCompression) {
  for (bool summary : {true, false}) {
    auto b = bytes(recording(mcap::Compression::Zstd, summary));
    // "zstd" -> "brot" in every Chunk and ChunkIndex (same length; no CRCs to fix).
    for (std::size_t i = 0; i + 4 <= b.size(); ++i)
      if (std::memcmp(&b[i], "zstd", 4) == 0) std::memcpy(&b[i], "brot", 4);
    const Rec first = test::records_of(b, summary ? 0x08 : 0x06)[0];
    EXPECT_THAT(open_error(save(b)), HasSubstr(at(summary ? "ChunkIndex" : "Chunk", first.at) +
                                               ": compression: unknown compression \"brot\" (supported: zstd, lz4, none)"));
  }
}

TEST_F(McapBadInput, CorruptCompressedData) {
  auto b = bytes(recording(mcap::Compression::Zstd));
  const Rec chunk = test::records_of(b, 0x06)[1];
  for (std::size_t i = chunk.content() + 48; i < chunk.end(); ++i) b[i] = 0xA5;
  EXPECT_THAT(play_error(save(b)), HasSubstr(at("Chunk", chunk.at) + ": records: zstd:"));
}

// --- Lengths past the end -------------------------------------------------------------

TEST_F(McapBadInput, ChunkIndexPastTheEnd) {
  auto b = bytes(recording());
  const Rec ci = test::records_of(b, 0x08)[1];
  test::put64(b, ci.content() + 24, 1ull << 40);  // chunk_length
  EXPECT_THAT(open_error(save(b)), HasSubstr(at("ChunkIndex", ci.at) + ": chunk_length: the chunk at byte"));
  b = bytes(recording());
  test::put64(b, ci.content() + 16, b.size() + 100);  // chunk_start_offset
  EXPECT_THAT(open_error(save(b)), HasSubstr("runs past the end of the file"));
}

TEST_F(McapBadInput, OverlappingChunkIndexes) {
  // Two chunk indexes claiming the same chunk: refused, so that the message
  // indexes read at open never add up to more than the file.
  auto b = bytes(recording());
  const auto cis = test::records_of(b, 0x08);
  const std::uint64_t first = test::le64(b, cis[0].content() + 16);
  test::put64(b, cis[1].content() + 16, first);
  test::put64(b, cis[1].content() + 24, test::le64(b, cis[0].content() + 24));
  EXPECT_THAT(open_error(save(b)), HasSubstr("chunk_start_offset: the chunk at byte " + std::to_string(first) +
                                             " overlaps the chunk at byte " + std::to_string(first)));
}

TEST_F(McapBadInput, RecordLengthPastTheEnd) {
  // A file with a footer but no summary is scanned: a record running past the data section is an error, not a tail.
  auto b = bytes(recording(mcap::Compression::None, false));
  const Rec chunk = test::records_of(b, 0x06)[1];
  test::put64(b, chunk.at + 1, 1ull << 50);
  EXPECT_THAT(open_error(save(b)), HasSubstr(at("Chunk", chunk.at) + ": length: its " + std::to_string(1ull << 50) +
                                             " bytes run past the end of the data section"));
}

TEST_F(McapBadInput, RecordInsideAChunkPastItsEnd) {
  auto b = bytes(recording(mcap::Compression::None, false));
  const Rec chunk = test::records_of(b, 0x06)[0];
  // The first record in the chunk's records is the Schema; make it claim more than the chunk holds.
  test::put64(b, chunk.content() + 40 + 1, 1u << 30);
  EXPECT_THAT(open_error(save(b)), HasSubstr(at("Chunk", chunk.at) + ": records: Schema at offset 0: its"));
}

TEST_F(McapBadInput, MessageIndexPointsAtAnotherRecord) {
  auto b = bytes(recording());
  const Rec mi = test::records_of(b, 0x07)[0];
  test::put64(b, mi.content() + 2 + 4 + 8, 0);  // the message's offset -> the Schema record at offset 0
  EXPECT_THAT(play_error(save(b)), HasSubstr("bad.mcap: Message at offset 0 of the Chunk at byte"));
  EXPECT_THAT(play_error(save(b)), HasSubstr("opcode: the index points at Schema, not a Message"));
}

// --- Schemas and encodings -----------------------------------------------------------

TEST_F(McapBadInput, MissingSchema) {
  // In the summary: the channel names schema 9.
  auto b = bytes(recording());
  const Rec ch = test::records_of(b, 0x04)[0];
  test::put32(b, ch.content(), 0x00090000);  // id 0, schema_id 9 (two uint16 fields)
  EXPECT_THAT(open_error(save(b)), HasSubstr(at("Channel", ch.at) + ": schema_id: channel 0 (/c) names schema 9, "
                                                                       "which has no Schema record in the summary"));
  // While scanning: a Channel before any Schema with its id.
  {
    mcap::WriterOptions o;
    o.chunk_size = 0;
    o.summary = false;
    mcap::Writer w(dir_ / "s.mcap", o);
    w.add_schema("x", "protobuf", {});
    w.write(w.add_channel(1, "/c", "protobuf"), 0, 0, 0, {});
    w.close();
  }
  b = bytes(dir_ / "s.mcap");
  const Rec schema = test::records_of(b, 0x03)[0];
  b[schema.content()] = 0;  // schema id 0: readers ignore such a record
  b[schema.content() + 1] = 0;
  const Rec channel = test::records_of(b, 0x04)[0];
  EXPECT_THAT(open_error(save(b)), HasSubstr(at("Channel", channel.at) + ": schema_id: channel 0 (/c) names schema 1, "
                                                                            "which has no Schema record before it"));
}

TEST_F(McapBadInput, UnknownImageEncoding) {
  foxglove::RawImage m;
  m.set_width(4);
  m.set_height(2);
  m.set_step(12);
  m.set_encoding("bayer_rggb8");  // Foxglove's, not handoff's
  m.set_data(std::string(24, 'x'));
  EXPECT_THAT(open_error(foreign(m.SerializeAsString())),
              HasSubstr("f.mcap: topic \"/c\", frame 0: Message at offset "));
  EXPECT_THAT(open_error(foreign(m.SerializeAsString())),
              HasSubstr("RawImage.encoding: unsupported encoding \"bayer_rggb8\" (supported: nv12, p010, rgb8, bgr8, "
                        "rgba8, bgra8, mono8, 8UC1, mono16, 16UC1, 32FC1, yuyv, yuv422_yuy2, uyvy, yuv422)"));
  m.set_encoding("RGB8");  // encodings are case-sensitive
  EXPECT_THAT(open_error(foreign(m.SerializeAsString())), HasSubstr("unsupported encoding \"RGB8\""));
}

// Issue 23's encodings: a step below each one's packed row, and data short of
// step * height (one plane: no chroma rows), each refused naming the field.
TEST_F(McapBadInput, OnePlaneImagesAreCheckedAgainstTheirRows) {
  const std::pair<const char*, std::uint32_t> cases[] = {
      {"rgb8", 15}, {"bgra8", 20}, {"mono8", 5}, {"mono16", 10}, {"16UC1", 10}, {"32FC1", 20}, {"yuyv", 12}, {"uyvy", 12}};
  for (auto [encoding, row] : cases) {
    foxglove::RawImage m;
    m.set_width(5);  // odd: a 4:2:2 row holds 3 pairs (12 bytes)
    m.set_height(3);
    m.set_encoding(encoding);
    m.set_step(row - 1);
    m.set_data(std::string(row * 3, 'x'));
    EXPECT_THAT(open_error(foreign(m.SerializeAsString())),
                HasSubstr("RawImage.step: " + std::to_string(row - 1) + " is below the " + std::to_string(row) +
                          "-byte rows"))
        << encoding;
    m.set_step(row + 3);
    m.set_data(std::string((row + 3) * 3 - 1, 'x'));
    EXPECT_THAT(open_error(foreign(m.SerializeAsString())),
                HasSubstr("RawImage.data: " + std::to_string((row + 3) * 3 - 1) + " bytes, shorter than step * height"))
        << encoding;
  }
}

TEST_F(McapBadInput, UnknownMessageOrSchemaEncoding) {
  const std::string image = "\x15\x04";  // not needed: the channel is refused first
  EXPECT_THAT(open_error(foreign(image, "cdr")),
              HasSubstr("Channel 0 (/c) at byte"));
  EXPECT_THAT(open_error(foreign(image, "cdr")), HasSubstr("message_encoding: \"cdr\" is not supported"));
  EXPECT_THAT(open_error(foreign(image, "protobuf", "jsonschema")),
              HasSubstr("Schema 1 (foxglove.RawImage) at byte"));
  EXPECT_THAT(open_error(foreign(image, "protobuf", "jsonschema")), HasSubstr("encoding: \"jsonschema\" is not supported"));
}

TEST_F(McapBadInput, SchemaThatIsNotFoxglovesRawImage) {
  google::protobuf::FileDescriptorSet set;
  const auto d = raw_image_descriptor_set();
  ASSERT_TRUE(set.ParseFromArray(d.data(), int(d.size())));
  for (auto& f : *set.mutable_file())
    for (auto& m : *f.mutable_message_type())
      for (auto& field : *m.mutable_field())
        if (m.name() == "RawImage" && field.name() == "width") field.set_type(google::protobuf::FieldDescriptorProto::TYPE_UINT32);
  const std::string changed = set.SerializeAsString();
  const std::span schema(reinterpret_cast<const std::uint8_t*>(changed.data()), changed.size());
  EXPECT_THAT(open_error(foreign("", "protobuf", "protobuf", schema)),
              HasSubstr("data: foxglove.RawImage.width is field 2 of type TYPE_UINT32, Foxglove's is field 2 of type TYPE_FIXED32"));
  const std::uint8_t junk[] = {0xFF, 0x01};
  EXPECT_THAT(open_error(foreign("", "protobuf", "protobuf", junk)), HasSubstr("data: not a serialized FileDescriptorSet"));
}

TEST_F(McapBadInput, ImageDataShorterThanHeightTimesStep) {
  foxglove::RawImage m;
  m.set_width(16);
  m.set_height(8);
  m.set_step(16);
  m.set_encoding("nv12");
  m.set_data(std::string(16 * 12 - 1, 'x'));
  EXPECT_THAT(open_error(foreign(m.SerializeAsString())),
              HasSubstr("RawImage.data: 191 bytes, shorter than step * (height + ceil(height/2)) = 16 * 12 = 192"));
  m.set_data(std::string(16 * 12, 'x'));
  m.set_step(15);
  EXPECT_THAT(open_error(foreign(m.SerializeAsString())), HasSubstr("RawImage.step: 15 is below the 16-byte rows"));
}

TEST_F(McapBadInput, ALaterFrameThatDoesNotFit) {
  const auto p = dir_ / "later.mcap";
  {
    mcap::Writer w(p);
    const auto ch = w.add_channel(w.add_schema(kRawImageSchema, "protobuf", raw_image_descriptor_set()), "/c", "protobuf");
    std::vector<std::uint8_t> msg;
    encode_raw_image(test::pattern_frame(PixelFormat::NV12, 16, 8, 0), 0, msg);
    w.write(ch, 0, 1, 1, msg);
    encode_raw_image(test::pattern_frame(PixelFormat::NV12, 8, 8, 0), 0, msg);
    w.write(ch, 1, 2, 2, msg);
    w.close();
  }
  EXPECT_THAT(play_error(p), HasSubstr("later.mcap: topic \"/c\", frame 1: Message at offset"));
  EXPECT_THAT(play_error(p), HasSubstr("RawImage.width: 8x8, but the stream is 16x8"));
}

// A malformed annotations message is left out with one warning naming it;
// its frame and every other frame's annotations play.
TEST_F(McapBadInput, ABadAnnotationsMessageIsLeftOutAndItsFramePlays) {
  const auto p = dir_ / "bad_annotations.mcap";
  {
    mcap::Writer w(p);
    const auto img = w.add_channel(w.add_schema(kRawImageSchema, "protobuf", raw_image_descriptor_set()), "/c", "protobuf");
    const auto ann = w.add_channel(w.add_schema(kImageAnnotationsSchema, "protobuf", image_annotations_descriptor_set()),
                                   "/c/annotations", "protobuf");
    std::vector<std::uint8_t> msg;
    for (int i = 0; i < 3; ++i) {
      const std::uint64_t t = 1'000'000'000ull + std::uint64_t(i) * 40'000'000ull;
      encode_raw_image(test::pattern_frame(PixelFormat::NV12, 16, 8, i), t, msg);
      w.write(img, std::uint32_t(i), t, t, msg);
      std::string a;
      if (i == 1) {
        a = std::string("\x0a\xff\xff\xff\xff\x0f", 6);  // a field whose length runs past the message
      } else {
        OverlayFrame o;
        o.add_box(float(i), 1, float(i) + 4, 5, "n", 0.5f, i);
        encode_annotations(o, t, a);
      }
      w.write(ann, std::uint32_t(i), t, t, std::span(reinterpret_cast<const std::uint8_t*>(a.data()), a.size()));
    }
    w.close();
  }
  auto src = open_recording(p);
  HostFrame f(PixelFormat::NV12, 16, 8);
  OverlayFrame o;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(src->read_into(f.target())) << i;
    const bool has = src->overlays_for(i, o);
    EXPECT_EQ(has, i != 1) << i;
    if (i != 1) {
      ASSERT_EQ(o.objects.size(), 1u) << i;
      EXPECT_FLOAT_EQ(o.objects[0].x0, float(i));
    }
  }
  ASSERT_EQ(src->warnings().size(), 1u);
  EXPECT_THAT(src->warnings()[0], HasSubstr("bad_annotations.mcap: overlay topic \"/c/annotations\": Message at offset"));
  (void)src->overlays_for(1, o);  // asked again: still one warning
  EXPECT_EQ(src->warnings().size(), 1u);
}

TEST_F(McapBadInput, HugeClaimedChunkIsRefused) {
  auto b = bytes(recording(mcap::Compression::Zstd));
  const Rec ci = test::records_of(b, 0x08)[0];
  // uncompressed_size is the index record's last field.
  test::put64(b, ci.end() - 8, 1ull << 40);
  EXPECT_THAT(open_error(save(b)), HasSubstr(at("ChunkIndex", ci.at) + ": uncompressed_size: 1099511627776 bytes exceeds"));
}

}  // namespace
}  // namespace handoff::media
