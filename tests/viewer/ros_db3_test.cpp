// rosbag2 SQLite3 bags (.db3, issue 24): a bag written here with SQLite in
// rosbag2's table layout plays its sensor_msgs/msg/Image topic (pixels, log
// times, topic choice, the definition from message_definitions or the
// built-in one); a .db3 that is not SQLite and a bag without an image topic
// are errors naming the file.
#include <handoff/media/cdr.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>

#include "cdr_test_util.hpp"
#include "test_util.hpp"

#include <gmock/gmock.h>
#include <sqlite3.h>

#include <cstring>

namespace handoff::media {
namespace {

using test::TempDir;
using ::testing::HasSubstr;

constexpr std::uint32_t kW = 4, kH = 2, kStep = 9;  // mono8 rows of 4 padded to 9

std::vector<std::uint8_t> rows(int k) {
  std::vector<std::uint8_t> d(kStep * kH, 0xEE);
  for (std::uint32_t y = 0; y < kH; ++y)
    for (std::uint32_t x = 0; x < kW; ++x) d[y * kStep + x] = std::uint8_t(k * 40 + y * 10 + x);
  return d;
}

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
}

// rosbag2's sqlite3 storage schema; `definitions` adds Iron's message_definitions table.
std::filesystem::path write_db3(const TempDir& dir, bool definitions, const std::string& definition_text = {}) {
  const auto path = dir / "bag_0.db3";
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, "
           "serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL)");
  exec(db, "CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL, "
           "data BLOB NOT NULL)");
  exec(db, "INSERT INTO topics VALUES(1, '/imu', 'sensor_msgs/msg/Imu', 'cdr', ''), "
           "(2, '/left/image_raw', 'sensor_msgs/msg/Image', 'cdr', ''), "
           "(3, '/right/image_raw', 'sensor_msgs/msg/Image', 'cdr', '')");
  if (definitions) {
    exec(db, "CREATE TABLE message_definitions(id INTEGER PRIMARY KEY, topic_type TEXT NOT NULL, encoding TEXT NOT NULL, "
             "encoded_message_definition TEXT NOT NULL, type_description_hash TEXT NOT NULL)");
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, "INSERT INTO message_definitions VALUES(1, 'sensor_msgs/msg/Image', 'ros2msg', ?, '')", -1, &s, nullptr);
    sqlite3_bind_text(s, 1, definition_text.c_str(), -1, SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(s), SQLITE_DONE);
    sqlite3_finalize(s);
  }
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO messages(topic_id, timestamp, data) VALUES(?, ?, ?)", -1, &s, nullptr);
  // Inserted out of time order: frames are played by timestamp.
  for (int k : {2, 0, 1}) {
    for (int topic : {2, 3}) {
      const auto msg = test::cdr_image(false, k, 0, "cam", kH, kW, "mono8", 0, kStep, rows(k + (topic == 3 ? 10 : 0)));
      sqlite3_bind_int(s, 1, topic);
      sqlite3_bind_int64(s, 2, 1'000'000'000LL + k * 50'000'000LL);
      sqlite3_bind_blob(s, 3, msg.data(), int(msg.size()), SQLITE_TRANSIENT);
      EXPECT_EQ(sqlite3_step(s), SQLITE_DONE);
      sqlite3_reset(s);
    }
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return path;
}

void expect_frame(RecordingSource& src, int k) {
  HostFrame out(PixelFormat::GRAY8, kW, kH);
  ASSERT_TRUE(src.read_into(out.target()));
  const auto want = rows(k);
  for (std::uint32_t y = 0; y < kH; ++y) EXPECT_EQ(std::memcmp(out.luma() + y * out.luma_pitch(), &want[y * kStep], kW), 0) << k;
}

TEST(RosDb3, ImageTopicPlaysByTimestamp) {
  TempDir dir;
  for (bool definitions : {false, true}) {
    const std::string text = "std_msgs/Header header\nuint32 height\nuint32 width\nstring encoding\nuint8 is_bigendian\n"
                             "uint32 step\nuint8[] data\n";  // dependencies from the built-ins
    auto src = open_recording(write_db3(dir, definitions, text));
    EXPECT_EQ(src->info().format, PixelFormat::GRAY8);
    EXPECT_EQ(src->info().frame_count, 3);
    EXPECT_EQ(src->topic(), "/left/image_raw");
    ASSERT_EQ(src->image_topics().size(), 2u);
    EXPECT_EQ(src->image_topics()[1].messages, 3u);
    for (int k = 0; k < 3; ++k) expect_frame(*src, k);
    EXPECT_EQ(src->log_time(1), 1'050'000'000u);
    src->seek(2);
    expect_frame(*src, 2);
  }
  RecordingOpenOptions right;
  right.topic = "/right/image_raw";
  auto src = open_recording(write_db3(dir, false), right);
  expect_frame(*src, 10);
}

TEST(RosDb3, ABadFrameIsNamedAndTheNextOnePlays) {
  TempDir dir;
  const auto path = write_db3(dir, false);
  {  // frame 1 of /left/image_raw: a step shorter than its rows
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const auto bad = test::cdr_image(false, 1, 0, "cam", kH, kW, "mono8", 0, 3, std::vector<std::uint8_t>(3 * kH));
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, "UPDATE messages SET data = ? WHERE topic_id = 2 AND timestamp = 1050000000", -1, &s, nullptr);
    sqlite3_bind_blob(s, 1, bad.data(), int(bad.size()), SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(s), SQLITE_DONE);
    sqlite3_finalize(s);
    EXPECT_EQ(sqlite3_changes(db), 1);
    sqlite3_close(db);
  }
  auto src = open_recording(path);
  expect_frame(*src, 0);
  HostFrame out(PixelFormat::GRAY8, kW, kH);
  const std::string error = test::message_of<ParseError>([&] { (void)src->read_into(out.target()); });
  EXPECT_THAT(error, HasSubstr("bag_0.db3: topic \"/left/image_raw\", frame 1: message row "));
  EXPECT_THAT(error, HasSubstr("Image.step: 3 is below the 4-byte rows of a mono8 image 4 wide"));
  EXPECT_EQ(src->position(), 2);
  expect_frame(*src, 2);
  EXPECT_FALSE(src->read_into(out.target()));
}

// A bag that stores a type hash but no definition: the built-in one is
// used, and a hash that is not its own is a warning (the bag plays).
TEST(RosDb3, ATypeHashNotTheBuiltInDefinitionsIsAWarning) {
  TempDir dir;
  const std::string ours = ros::type_hash(*ros::MessageDefinition::builtin("sensor_msgs/msg/Image"));
  ASSERT_EQ(ours, "RIHS01_d31d41a9a4c4bc8eae9be757b0beed306564f7526c88ea6a4588fb9582527d47")
      << "sensor_msgs/msg/Image's hash as rosbag2 (Iron and later) stores it";
  for (const bool matches : {true, false}) {
    const auto path = write_db3(dir, true, "");
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const std::string hash = matches ? ours : "RIHS01_" + std::string(64, 'a');
    exec(db, "UPDATE message_definitions SET type_description_hash = '" + hash + "'");
    sqlite3_close(db);
    auto src = open_recording(path);
    expect_frame(*src, 0);
    if (matches) {
      EXPECT_TRUE(src->warnings().empty()) << src->warnings().front();
    } else {
      ASSERT_EQ(src->warnings().size(), 1u);
      EXPECT_THAT(src->warnings()[0], HasSubstr("bag_0.db3: message_definitions: sensor_msgs/msg/Image has type hash "
                                                "RIHS01_aaaa"));
      EXPECT_THAT(src->warnings()[0], HasSubstr("handoff's built-in definition " + ours));
    }
  }
  // Jazzy's topics table carries the hash too.
  const auto path = write_db3(dir, false);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, "ALTER TABLE topics ADD COLUMN type_description_hash TEXT NOT NULL DEFAULT ''");
  exec(db, "UPDATE topics SET type_description_hash = 'RIHS01_" + std::string(64, 'b') + "' WHERE id = 2");
  sqlite3_close(db);
  auto src = open_recording(path);
  ASSERT_EQ(src->warnings().size(), 1u);
  EXPECT_THAT(src->warnings()[0], HasSubstr("bag_0.db3: topics: sensor_msgs/msg/Image has type hash RIHS01_bbbb"));
}

TEST(RosDb3, BadBags) {
  TempDir dir;
  const auto not_sqlite = dir / "bag_0.db3";
  test::write_file(not_sqlite, "this is not an SQLite database, only some text that is long enough");
  EXPECT_THAT(test::message_of<ParseError>([&] { (void)open_recording(not_sqlite); }),
              HasSubstr("bag_0.db3: sqlite: reading the bag"));
  EXPECT_THAT(test::message_of<ParseError>([&] { (void)open_recording(not_sqlite); }), HasSubstr("file is not a database"));
  const auto bag = write_db3(dir, true, "my_msgs/Nope header\n");
  EXPECT_THAT(test::message_of<ParseError>([&] { (void)open_recording(bag); }),
              HasSubstr("message_definitions (sensor_msgs/msg/Image): definition of sensor_msgs/Image: line 1: unknown type my_msgs/Nope"));
  {  // no topic at all: the error names every type a .db3 plays
    const auto empty = dir / "empty.db3";
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(empty.c_str(), &db), SQLITE_OK);
    exec(db, "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, "
             "serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL)");
    exec(db, "CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL, "
             "data BLOB NOT NULL)");
    sqlite3_close(db);
    EXPECT_THAT(test::message_of<ParseError>([&] { (void)open_recording(empty); }),
                HasSubstr("empty.db3: topic: the bag has no sensor_msgs/msg/Image, sensor_msgs/msg/CompressedImage or "
                          "foxglove_msgs/msg/CompressedVideo topic in cdr"));
  }
  RecordingOpenOptions nope;
  nope.topic = "/imu";
  EXPECT_THAT(test::message_of<ParseError>([&] { (void)open_recording(write_db3(dir, false), nope); }),
              HasSubstr("no image topic \"/imu\" (image topics: /left/image_raw, /right/image_raw)"));
}

// Found by fuzz_bag: a .db3 whose topics table has a damaged page. SQLite
// reports the damage on a message count; stepping the topics scan on after
// that restarted it (the statement had expired), the same rows without end:
// `--list` never returned. Now the first error ends the reading, named (the
// messages are counted in one pass, before the topics are read).
TEST(RosDb3, ADamagedPageIsAnErrorNotAnEndlessScan) {
  const std::string seed = test::read_file(std::filesystem::path(HANDOFF_TEST_DATA) / ".." / "fuzz" / "corpus" / "bag" /
                                           "damaged_topics_page_restarts_the_scan.bin");
  std::uint32_t yaml = 0;
  ASSERT_GE(seed.size(), 4u);
  std::memcpy(&yaml, seed.data(), 4);
  ASSERT_LT(4u + yaml, seed.size());
  TempDir dir;
  const auto file = dir / "bag_0.db3";
  test::write_file(file, seed.substr(4 + yaml));
  const std::string listed = test::message_of<ParseError>([&] { (void)list_recording_topics(file); });
  EXPECT_THAT(listed, HasSubstr("bag_0.db3: sqlite: counting the messages of each topic"));
  EXPECT_THAT(listed, HasSubstr("database disk image is malformed"));
  // Its topics are not images: playing it stops at that, before the damage.
  EXPECT_THAT(test::message_of<ParseError>([&] { (void)open_recording(file); }),
              HasSubstr("bag_0.db3: topic: the bag has no sensor_msgs/msg/Image"));
}

// A recording is known by its name (.mcap, .db3, a folder) or, whatever its
// name, by its first bytes; anything else is a video file (Y4M, raw).
TEST(RecordingPath, KnownByItsNameOrItsFirstBytes) {
  TempDir dir;
  const auto db3 = write_db3(dir, false);
  const auto renamed = dir / "cams.sqlite";
  std::filesystem::copy_file(db3, renamed);
  test::write_file(dir / "rec.bin", std::string("\x89MCAP0\r\n") + std::string(64, '\0'));
  test::write_file(dir / "clip.yuv", std::string(96, '\x10'));
  test::write_file(dir / "short.bin", "\x89MC");
  EXPECT_TRUE(is_recording_path(db3));
  EXPECT_TRUE(is_recording_path(dir / "not_there.MCAP"));  // by name: opening it says what is wrong
  EXPECT_TRUE(is_recording_path(dir / "not_there.db3"));
  EXPECT_TRUE(is_recording_path(dir.path()));
  EXPECT_TRUE(is_recording_path(renamed));
  EXPECT_TRUE(is_recording_path(dir / "rec.bin"));
  EXPECT_FALSE(is_recording_path(dir / "clip.yuv"));
  EXPECT_FALSE(is_recording_path(dir / "short.bin"));
  EXPECT_FALSE(is_recording_path(dir / "not_there.yuv"));
  // The renamed bag plays as the .db3 does.
  auto src = open_recording(renamed);
  EXPECT_EQ(src->info().frame_count, 3);
  expect_frame(*src, 0);
}

}  // namespace
}  // namespace handoff::media

namespace handoff::media {
namespace {

// A rosbag2 folder's metadata.yaml, as rosbag2 writes it (the keys handoff reads and some it does not).
std::string metadata(const std::string& files, const std::string& compression_mode = "") {
  return "rosbag2_bagfile_information:\n"
         "  version: 5\n"
         "  storage_identifier: sqlite3\n"
         "  duration:\n    nanoseconds: 100000000\n"
         "  message_count: 6\n"
         "  compression_format: \"\"\n"
         "  compression_mode: \"" + compression_mode + "\"\n"
         "  relative_file_paths:\n" + files;
}

TEST(RosBagFolder, PlaysItsStorageFile) {
  TempDir dir;
  write_db3(dir, false);
  test::write_file(dir / "metadata.yaml", metadata("    - bag_0.db3\n"));
  auto src = open_recording(dir.path());
  EXPECT_EQ(src->topic(), "/left/image_raw");
  for (int k = 0; k < 3; ++k) expect_frame(*src, k);
}

TEST(RosBagFolder, BadFolders) {
  TempDir dir;
  auto error = [&] { return test::message_of<ParseError>([&] { (void)open_recording(dir.path()); }); };
  EXPECT_THAT(error(), HasSubstr("is a directory without a metadata.yaml, not a rosbag2 bag"));
  test::write_file(dir / "metadata.yaml", metadata("    - bag_0.db3\n"));
  EXPECT_THAT(error(), HasSubstr("metadata.yaml: relative_file_paths: names bag_0.db3, which is not in the folder"));
  write_db3(dir, false);
  test::write_file(dir / "metadata.yaml", metadata("    - bag_0.db3\n    - bag_1.db3\n"));
  {  // a file named but missing is skipped with a warning, the rest plays (ros_bag_split_test.cpp has more)
    auto src = open_recording(dir.path());
    EXPECT_EQ(src->info().frame_count, 3);
    ASSERT_EQ(src->warnings().size(), 1u);
    EXPECT_THAT(src->warnings()[0], HasSubstr("metadata.yaml: relative_file_paths: names bag_1.db3, which is not in the "
                                              "folder (file skipped; the rest of the bag plays)"));
  }
  test::write_file(dir / "metadata.yaml", metadata("    - bag_0.db3\n", "FILE"));
  EXPECT_THAT(error(), HasSubstr("metadata.yaml: compression_format: \"\": handoff decompresses zstd only"));
  test::write_file(dir / "metadata.yaml", metadata("    []\n"));
  EXPECT_THAT(error(), HasSubstr("relative_file_paths: names no storage file"));
  test::write_file(dir / "metadata.yaml", "rosbag2_bagfile_information:\n  relative_file_paths: [bag_0.db3\n");
  EXPECT_THAT(error(), HasSubstr("metadata.yaml: line "));
  test::write_file(dir / "metadata.yaml", std::string(100000, '['));  // yaml-cpp's own message is "bad file"
  EXPECT_THAT(error(), HasSubstr("metadata.yaml: line 1: nested too deep (yaml-cpp stops at depth"));
  test::write_file(dir / "metadata.yaml", "something_else: 1\n");
  EXPECT_THAT(error(), HasSubstr("metadata.yaml: rosbag2_bagfile_information: missing"));
}

}  // namespace
}  // namespace handoff::media
