// Split and compressed rosbag2 bags (issue 24): a folder whose metadata.yaml
// names several storage files plays them as one recording (one frame index
// over every file, topics matched by name, not by each file's ids; listed as
// one); files compressed whole (compression_mode file) and messages
// compressed one by one (message) play with zstd, in .db3 and .mcap. A file of
// a split bag that is missing, not of its storage, cut short or a damaged zstd
// stream is skipped with a warning naming it while the other files play; a bag
// none of whose files plays, mixed storage and another compression format are
// errors naming the file(s), the message or the metadata.yaml field.
#include <handoff/log.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/mcap.hpp>
#include <handoff/media/recording.hpp>

#include "cdr_test_util.hpp"
#include "test_util.hpp"

#include <gmock/gmock.h>
#include <sqlite3.h>
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <tuple>

namespace handoff::media {
namespace {

using test::TempDir;
using ::testing::HasSubstr;

constexpr std::uint32_t kW = 4, kH = 2, kStep = 6;  // mono8 rows of 4 padded to 6
constexpr std::uint64_t kStart = 1'000'000'000, kInterval = 50'000'000;
const std::string kLeft = "/left/image_raw", kRight = "/right/image_raw";

// Frame k's rows: a pattern per frame (the right camera's frames are k + 10).
std::vector<std::uint8_t> rows(int k) {
  std::vector<std::uint8_t> d(kStep * kH, 0xEE);
  for (std::uint32_t y = 0; y < kH; ++y)
    for (std::uint32_t x = 0; x < kW; ++x) d[y * kStep + x] = std::uint8_t(k * 20 + y * 7 + x);
  return d;
}

std::vector<std::uint8_t> image(int k) { return test::cdr_image(false, k, 0, "cam", kH, kW, "mono8", 0, kStep, rows(k)); }

std::vector<std::uint8_t> zstd(std::span<const std::uint8_t> in) {
  std::vector<std::uint8_t> out(ZSTD_compressBound(in.size()));
  const std::size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

std::vector<std::uint8_t> read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Replaces `path` with `path`.zstd, compressed whole (compression_mode file).
std::string compress_file(const std::filesystem::path& path) {
  const auto packed = zstd(read_all(path));
  test::write_file(path.string() + ".zstd", {reinterpret_cast<const char*>(packed.data()), packed.size()});
  std::filesystem::remove(path);
  return path.filename().string() + ".zstd";
}

// One storage file's messages: frames `frames` of both cameras, logged kInterval apart.
struct Part {
  std::vector<int> frames;
  bool swap_ids = false;         // the cameras' topic ids swapped (each file numbers its own)
  bool compress = false;         // each message zstd-compressed (compression_mode message)
  int corrupt = -1;              // this frame's message is not zstd
};

std::vector<std::uint8_t> stored(const Part& p, int k, int topic_frame) {
  if (k == p.corrupt) return {0x28, 0xB5, 0x2F, 0xFD, 1, 2, 3};  // zstd's magic, then garbage
  const auto msg = image(topic_frame);
  return p.compress ? zstd(msg) : msg;
}

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
}

// rosbag2's sqlite3 table layout.
std::string write_db3(const TempDir& dir, const std::string& name, const Part& p) {
  const auto path = dir / name;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, "
           "serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL)");
  exec(db, "CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL, "
           "data BLOB NOT NULL)");
  const int left = p.swap_ids ? 3 : 2, right = p.swap_ids ? 2 : 3;
  exec(db, "INSERT INTO topics VALUES(1, '/imu', 'sensor_msgs/msg/Imu', 'cdr', ''), (" + std::to_string(left) + ", '" +
               kLeft + "', 'sensor_msgs/msg/Image', 'cdr', ''), (" + std::to_string(right) + ", '" + kRight +
               "', 'sensor_msgs/msg/Image', 'cdr', '')");
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO messages(topic_id, timestamp, data) VALUES(?, ?, ?)", -1, &s, nullptr);
  for (int k : p.frames) {
    for (int topic : {left, right}) {
      const auto data = stored(p, topic == left ? k : -2, topic == left ? k : k + 10);
      sqlite3_bind_int(s, 1, topic);
      sqlite3_bind_int64(s, 2, std::int64_t(kStart + std::uint64_t(k) * kInterval));
      sqlite3_bind_blob(s, 3, data.data(), int(data.size()), SQLITE_TRANSIENT);
      EXPECT_EQ(sqlite3_step(s), SQLITE_DONE);
      sqlite3_reset(s);
    }
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return name;
}

// The same in MCAP, through handoff's writer (built-in definitions: no schema text).
std::string write_mcap(const TempDir& dir, const std::string& name, const Part& p) {
  mcap::Writer wr(dir / name);
  const auto schema = wr.add_schema("sensor_msgs/msg/Image", "", {});
  const auto imu = wr.add_channel(0, "/imu", "cdr");
  (void)imu;
  const auto left = wr.add_channel(schema, p.swap_ids ? kRight : kLeft, "cdr");
  const auto right = wr.add_channel(schema, p.swap_ids ? kLeft : kRight, "cdr");
  for (int k : p.frames) {
    for (auto ch : {left, right}) {
      const bool is_left = (ch == left) != p.swap_ids;
      const auto data = stored(p, is_left ? k : -2, is_left ? k : k + 10);
      wr.write(ch, std::uint32_t(k), kStart + std::uint64_t(k) * kInterval, 0, data);
    }
  }
  wr.close();
  return name;
}

std::string metadata(const std::vector<std::string>& files, const std::string& storage, const std::string& mode = "",
                     const std::string& format = "") {
  std::string out = "rosbag2_bagfile_information:\n  version: 9\n  storage_identifier: " + storage +
                    "\n  compression_format: \"" + format + "\"\n  compression_mode: \"" + mode + "\"\n"
                    "  relative_file_paths:\n";
  for (const auto& f : files) out += "    - " + f + "\n";
  return out;
}

void expect_frame(RecordingSource& src, int k) {
  HostFrame out(PixelFormat::GRAY8, kW, kH);
  ASSERT_TRUE(src.read_into(out.target()));
  const auto want = rows(k);
  for (std::uint32_t y = 0; y < kH; ++y)
    EXPECT_EQ(std::memcmp(out.luma() + y * out.luma_pitch(), &want[y * kStep], kW), 0) << "frame " << k << " row " << y;
}

RecordingTopicListing listed(const std::filesystem::path& bag, const std::string& topic) {
  for (auto& t : list_recording_topics(bag))
    if (t.topic == topic) return t;
  ADD_FAILURE() << topic << " is not listed";
  return {};
}

enum class Storage { Db3, Mcap };
std::string write_part(Storage s, const TempDir& dir, int i, const Part& p) {
  return s == Storage::Db3 ? write_db3(dir, "bag_" + std::to_string(i) + ".db3", p)
                           : write_mcap(dir, "bag_" + std::to_string(i) + ".mcap", p);
}
std::string storage_id(Storage s) { return s == Storage::Db3 ? "sqlite3" : "mcap"; }

class SplitBag : public ::testing::TestWithParam<Storage> {};

TEST_P(SplitBag, FilesPlayAsOneRecording) {
  TempDir dir;
  // The second file numbers its topics the other way round.
  const auto a = write_part(GetParam(), dir, 0, {{0, 1, 2}});
  const auto b = write_part(GetParam(), dir, 1, {{3, 4}, true});
  test::write_file(dir / "metadata.yaml", metadata({a, b}, storage_id(GetParam())));
  auto src = open_recording(dir.path());
  EXPECT_EQ(src->topic(), kLeft);
  EXPECT_EQ(src->info().frame_count, 5);
  ASSERT_EQ(src->image_topics().size(), 2u);
  for (const auto& t : src->image_topics()) EXPECT_EQ(t.messages, 5u) << t.topic;
  for (int k = 0; k < 5; ++k) expect_frame(*src, k);
  EXPECT_FALSE(src->read_into(HostFrame(PixelFormat::GRAY8, kW, kH).target()));
  EXPECT_EQ(src->log_time(3), kStart + 3 * kInterval);
  EXPECT_EQ(src->info().rate.num * 1000 / src->info().rate.den, 20'000);  // 20 per second, over both files
  src->seek(4);
  expect_frame(*src, 4);
  src->seek(1);
  expect_frame(*src, 1);

  RecordingOpenOptions right;
  right.topic = kRight;
  auto r = open_recording(dir.path(), right);
  for (int k = 0; k < 5; ++k) expect_frame(*r, k + 10);

  const auto left = listed(dir.path(), kLeft);
  EXPECT_EQ(left.messages, 5u);
  EXPECT_NEAR(left.rate, 20.0, 1e-9);
  EXPECT_EQ(left.kind, RecordingTopicListing::Kind::Image);
  EXPECT_EQ(listed(dir.path(), kRight).messages, 5u);
}

// Files whose times overlap (rosbag2's reader merges them by time too) play in log-time order.
TEST_P(SplitBag, OverlappingFilesPlayInLogTimeOrder) {
  TempDir dir;
  const auto a = write_part(GetParam(), dir, 0, {{0, 2, 4}});
  const auto b = write_part(GetParam(), dir, 1, {{1, 3}});
  test::write_file(dir / "metadata.yaml", metadata({a, b}, storage_id(GetParam())));
  auto src = open_recording(dir.path());
  ASSERT_EQ(src->info().frame_count, 5);
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(src->log_time(k), kStart + std::uint64_t(k) * kInterval);
    expect_frame(*src, k);
  }
}

// Each file compressed whole (compression_mode file); the temporary .db3
// copies are removed when the recording closes.
TEST_P(SplitBag, FilesCompressedWholePlay) {
  TempDir dir;
  const auto tmp = dir / "tmp";
  std::filesystem::create_directory(tmp);
  const auto a = compress_file(dir / write_part(GetParam(), dir, 0, {{0, 1}}));
  const auto b = compress_file(dir / write_part(GetParam(), dir, 1, {{2}}));
  test::write_file(dir / "metadata.yaml", metadata({a, b}, storage_id(GetParam()), "file", "zstd"));
  // The temporary files .db3 needs go under TMPDIR, removed when the recording closes.
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  {
    auto src = open_recording(dir.path());
    EXPECT_EQ(src->info().frame_count, 3);
    for (int k = 0; k < 3; ++k) expect_frame(*src, k);
    const auto held = std::distance(std::filesystem::directory_iterator(tmp), {});
    EXPECT_EQ(held, GetParam() == Storage::Db3 ? 2 : 0);  // MCAP is decompressed to memory
    EXPECT_EQ(listed(dir.path(), kLeft).messages, 3u);
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(tmp), {}), 0);
  if (old) ::setenv("TMPDIR", saved.c_str(), 1);
  else ::unsetenv("TMPDIR");
}

TEST_P(SplitBag, MessagesCompressedOneByOnePlayAndABadOneIsNamed) {
  TempDir dir;
  const auto a = write_part(GetParam(), dir, 0, {{0, 1, 2}, false, true, 1});
  const auto b = write_part(GetParam(), dir, 1, {{3}, false, true});
  test::write_file(dir / "metadata.yaml", metadata({a, b}, storage_id(GetParam()), "MESSAGE", "zstd"));
  auto src = open_recording(dir.path());
  EXPECT_EQ(src->info().frame_count, 4);
  expect_frame(*src, 0);
  HostFrame out(PixelFormat::GRAY8, kW, kH);
  const std::string error = test::message_of<ParseError>([&] { src->read_into(out.target()); });
  EXPECT_THAT(error, HasSubstr(a + ": "));
  EXPECT_THAT(error, HasSubstr(GetParam() == Storage::Db3 ? "frame 1: " : "message 1 "));
  EXPECT_THAT(error, HasSubstr("data: zstd: "));
  src->seek(2);  // the rest plays on
  expect_frame(*src, 2);
  expect_frame(*src, 3);
  const auto left = listed(dir.path(), kLeft);
  EXPECT_EQ(left.messages, 4u);
  EXPECT_EQ(left.kind, RecordingTopicListing::Kind::Image);
  EXPECT_EQ(left.note, "mono8");
}

TEST_P(SplitBag, DamagedFileStreamIsNamed) {
  TempDir dir;
  const auto a = compress_file(dir / write_part(GetParam(), dir, 0, {{0, 1}}));
  auto bytes = read_all(dir / a);
  bytes.resize(bytes.size() / 2);  // cut short
  test::write_file(dir / a, {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  test::write_file(dir / "metadata.yaml", metadata({a}, storage_id(GetParam()), "file", "zstd"));
  const std::string error = test::message_of<ParseError>([&] { (void)open_recording(dir.path()); });
  EXPECT_THAT(error, HasSubstr(a + ": compression: zstd: "));
  EXPECT_THAT(test::message_of<ParseError>([&] { (void)list_recording_topics(dir.path()); }), HasSubstr(a + ": compression: zstd: "));
  test::write_file(dir / a, "not zstd at all");
  EXPECT_THAT(test::message_of<ParseError>([&] { (void)open_recording(dir.path()); }), HasSubstr(a + ": compression: zstd: "));
}

// --- Files that cannot be played are skipped ---------------------------------------

std::string ext(Storage s) { return s == Storage::Db3 ? ".db3" : ".mcap"; }

// Three files, frames 0-1, 2-3 and 4-5; the second one spoilt by `spoil` (given
// its path), which returns its name as metadata.yaml gives it.
struct SpoiltBag {
  std::vector<std::string> names;
  std::vector<std::string> logged;  // warnings logged while the bag was opened and listed
  std::size_t logged_by_open = 0;   // the first of them, logged by open_recording
  std::unique_ptr<RecordingSource> src;
  std::vector<std::string> listing_warnings;
};

template <typename Spoil>
SpoiltBag spoilt_bag(Storage storage, const TempDir& dir, Spoil&& spoil, const std::string& mode = "") {
  SpoiltBag bag;
  for (int i = 0; i < 3; ++i) {
    std::string name = write_part(storage, dir, i, {{2 * i, 2 * i + 1}});
    if (mode == "file") name = compress_file(dir / name);
    bag.names.push_back(i == 1 ? spoil(dir / name) : name);
  }
  test::write_file(dir / "metadata.yaml", metadata(bag.names, storage_id(storage), mode, mode.empty() ? "" : "zstd"));
  const LogSink previous = set_log_sink([&](LogLevel, std::string_view m) { bag.logged.emplace_back(m); });
  try {
    bag.src = open_recording(dir.path());
    bag.logged_by_open = bag.logged.size();
    (void)list_recording_topics(dir.path(), &bag.listing_warnings);
  } catch (...) {
    set_log_sink(previous);
    throw;
  }
  set_log_sink(previous);
  return bag;
}

// Frames 0, 1, 4 and 5 play (the first and the last file), in order, with their pixels and times;
// the one warning names the second file and `problem`, in warnings(), in the log and in the listing's warnings.
void expect_second_file_skipped(const SpoiltBag& bag, const std::string& problem) {
  RecordingSource& src = *bag.src;
  ASSERT_EQ(src.info().frame_count, 4);
  const int played[] = {0, 1, 4, 5};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(src.log_time(i), kStart + std::uint64_t(played[i]) * kInterval);
    expect_frame(src, played[i]);
  }
  EXPECT_FALSE(src.read_into(HostFrame(PixelFormat::GRAY8, kW, kH).target()));
  EXPECT_EQ(src.info().rate.num * 1000 / src.info().rate.den, 12'000);  // 4 frames over 250 ms: 3 intervals
  ASSERT_EQ(src.warnings().size(), 1u);
  const std::string& w = src.warnings()[0];
  EXPECT_THAT(w, HasSubstr(bag.names[1]));
  EXPECT_THAT(w, HasSubstr(problem));
  EXPECT_THAT(w, HasSubstr("(file skipped; the rest of the bag plays)"));
  // Once by open_recording, which picks among the two cameras without opening the files again.
  EXPECT_EQ(std::count(bag.logged.begin(), bag.logged.begin() + std::ptrdiff_t(bag.logged_by_open), "recording: " + w), 1);
  EXPECT_THAT(bag.listing_warnings, ::testing::ElementsAre(w));
  for (const std::string& name : {bag.names[0], bag.names[2]})
    EXPECT_THAT(w, ::testing::Not(HasSubstr(name)));
}

TEST_P(SplitBag, MissingFileInTheMiddleIsSkippedAndTheRestPlays) {
  TempDir dir;
  const SpoiltBag bag = spoilt_bag(GetParam(), dir, [](const std::filesystem::path& p) {
    std::filesystem::remove(p);
    return p.filename().string();
  });
  expect_second_file_skipped(bag, "metadata.yaml: relative_file_paths: names bag_1" + ext(GetParam()) +
                                      ", which is not in the folder");
  // The other camera plays from the same files.
  RecordingOpenOptions right;
  right.topic = kRight;
  auto r = open_recording(dir.path(), right);
  ASSERT_EQ(r->info().frame_count, 4);
  for (int k : {0, 1, 4, 5}) expect_frame(*r, k + 10);
  const auto left = listed(dir.path(), kLeft);
  EXPECT_EQ(left.messages, 4u);
  EXPECT_EQ(left.kind, RecordingTopicListing::Kind::Image);
}

TEST_P(SplitBag, NameOfADirectoryIsSkippedAndTheRestPlays) {
  TempDir dir;
  const SpoiltBag bag = spoilt_bag(GetParam(), dir, [](const std::filesystem::path& p) {
    std::filesystem::remove(p);
    std::filesystem::create_directory(p);
    return p.filename().string();
  });
  expect_second_file_skipped(bag, "metadata.yaml: relative_file_paths: names bag_1" + ext(GetParam()) + ", which is not a file");
}

TEST_P(SplitBag, FileNotOfItsStorageIsSkippedAndTheRestPlays) {
  TempDir dir;
  const SpoiltBag bag = spoilt_bag(GetParam(), dir, [](const std::filesystem::path& p) {
    test::write_file(p, std::string(4096, 'x'));
    return p.filename().string();
  });
  expect_second_file_skipped(bag, GetParam() == Storage::Db3 ? "bag_1.db3: sqlite: reading the bag (SELECT count(*) FROM topics): file is not a database"
                                                             : "bag_1.mcap: byte 0: magic: ");
}

// A .db3 cut short is refused by SQLite (its header's page count is past the
// end) and skipped; an MCAP file cut short plays up to its last whole message
// (mcap::Reader), with a warning naming it.
TEST_P(SplitBag, FileCutShortIsSkippedOrPlaysItsWholeMessages) {
  TempDir dir;
  const SpoiltBag bag = spoilt_bag(GetParam(), dir, [](const std::filesystem::path& p) {
    std::filesystem::resize_file(p, std::filesystem::file_size(p) * 2 / 3);
    return p.filename().string();
  });
  if (GetParam() == Storage::Db3) return expect_second_file_skipped(bag, "bag_1.db3: sqlite: reading the bag");
  RecordingSource& src = *bag.src;
  ASSERT_GE(src.info().frame_count, 4);
  ASSERT_LE(src.info().frame_count, 6);
  std::vector<int> played;
  for (std::int64_t i = 0; i < src.info().frame_count; ++i) {
    played.push_back(int((src.log_time(i) - kStart) / kInterval));
    expect_frame(src, played.back());
  }
  // The first file's, what the second one holds whole (a prefix of 2, 3), the third's.
  std::vector<int> want{0, 1};
  for (int k = 2; k < 2 + int(played.size()) - 4; ++k) want.push_back(k);
  want.insert(want.end(), {4, 5});
  EXPECT_EQ(played, want);
  ASSERT_EQ(src.warnings().size(), 1u);
  EXPECT_THAT(src.warnings()[0], HasSubstr("bag_1.mcap: "));
}

TEST_P(SplitBag, DamagedCompressedFileIsSkippedAndTheRestPlays) {
  TempDir dir;
  const SpoiltBag bag = spoilt_bag(
      GetParam(), dir,
      [](const std::filesystem::path& p) {
        auto bytes = read_all(p);
        bytes.resize(bytes.size() / 2);  // cut short
        test::write_file(p, {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
        return p.filename().string();
      },
      "file");
  expect_second_file_skipped(bag, "bag_1" + ext(GetParam()) + ".zstd: compression: zstd: ");
}

TEST_P(SplitBag, NoFileThatPlaysIsAnErrorNamingEachFile) {
  TempDir dir;
  const auto a = write_part(GetParam(), dir, 0, {{0, 1}});
  test::write_file(dir / a, "not a storage file at all");
  const auto b = write_part(GetParam(), dir, 1, {{2, 3}});
  std::filesystem::remove(dir / b);
  test::write_file(dir / "metadata.yaml", metadata({a, b}, storage_id(GetParam())));
  for (const std::string& error : {test::message_of<ParseError>([&] { (void)open_recording(dir.path()); }),
                                   test::message_of<ParseError>([&] { (void)list_recording_topics(dir.path()); })}) {
    EXPECT_THAT(error, HasSubstr("metadata.yaml: relative_file_paths: no storage file of the bag can be played: "));
    EXPECT_THAT(error, HasSubstr("names " + b + ", which is not in the folder"));
    EXPECT_THAT(error, HasSubstr(a + (GetParam() == Storage::Db3 ? ": sqlite: " : ": byte 0: magic: ")));
  }
}

// A file named twice, by any spelling, is an error naming both entries, not
// every message played twice.
TEST_P(SplitBag, AFileNamedTwiceIsAnError) {
  TempDir dir;
  const auto a = write_part(GetParam(), dir, 0, {{0, 1}});
  const auto b = write_part(GetParam(), dir, 1, {{2, 3}});
  for (const auto& [names, first, second] :
       {std::tuple{std::vector<std::string>{a, b, a}, a + " (entry 1)", a + " (entry 3)"},
        std::tuple{std::vector<std::string>{a, b, "./" + b}, b + " (entry 2)", "./" + b + " (entry 3)"}}) {
    test::write_file(dir / "metadata.yaml", metadata(names, storage_id(GetParam())));
    for (const std::string& error : {test::message_of<ParseError>([&] { (void)open_recording(dir.path()); }),
                                     test::message_of<ParseError>([&] { (void)list_recording_topics(dir.path()); })}) {
      EXPECT_THAT(error, HasSubstr("metadata.yaml: relative_file_paths: names the same file twice: " + first +
                                   " and " + second));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Storages, SplitBag, ::testing::Values(Storage::Db3, Storage::Mcap),
                         [](const auto& info) { return info.param == Storage::Db3 ? "db3" : "mcap"; });

TEST(SplitBagFolder, BadFolders) {
  TempDir dir;
  auto error = [&] { return test::message_of<ParseError>([&] { (void)open_recording(dir.path()); }); };
  const auto a = write_db3(dir, "bag_0.db3", {{0}});
  test::write_file(dir / "metadata.yaml", metadata({"bag_1.db3"}, "sqlite3"));
  EXPECT_THAT(error(), HasSubstr("metadata.yaml: relative_file_paths: no storage file of the bag can be played: "));
  EXPECT_THAT(error(), HasSubstr("metadata.yaml: relative_file_paths: names bag_1.db3, which is not in the folder"));
  const auto m = write_mcap(dir, "bag_1.mcap", {{1}});
  test::write_file(dir / "metadata.yaml", metadata({a, m}, "sqlite3"));
  EXPECT_THAT(error(), HasSubstr("metadata.yaml: relative_file_paths: names bag_1.mcap, of another storage than bag_0.db3"));
  test::write_file(dir / "metadata.yaml", metadata({a}, "sqlite3", "file", "lz4"));
  EXPECT_THAT(error(), HasSubstr("metadata.yaml: compression_format: \"lz4\": handoff decompresses zstd only"));
  test::write_file(dir / "metadata.yaml", metadata({a}, "sqlite3", "sometimes", "zstd"));
  EXPECT_THAT(error(), HasSubstr("metadata.yaml: compression_mode: \"sometimes\""));
  EXPECT_THAT(test::message_of<ParseError>([&] { (void)list_recording_topics(dir.path()); }), HasSubstr("compression_mode"));
}

}  // namespace
}  // namespace handoff::media
