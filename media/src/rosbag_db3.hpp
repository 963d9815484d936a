#pragma once
// rosbag2 SQLite3 storage files (.db3): their sensor_msgs/msg/Image topics as
// a RecordingSource (open_recording dispatches here for an SQLite file).
#include "rosbag_folder.hpp"

#include <handoff/media/recording.hpp>

#include <filesystem>
#include <memory>
#include <string>

struct sqlite3;

namespace handoff::media {

// The file starts with SQLite's 16-byte header ("SQLite format 3\0").
bool is_sqlite_file(const std::filesystem::path& path);
// Reads an open .db3's topics and messages tables through (count(*) visits
// each table's pages), so a file that is not SQLite, lacks rosbag2's tables or
// is cut short is a ParseError naming `file` when it is opened, not when a
// frame is played.
void check_db3_tables(sqlite3* db, const std::string& file);
// ParseError naming the file (and the frame / field) for a file SQLite cannot
// read, a bag without a cdr sensor_msgs/msg/Image topic, or a bad image.
// `bag` is one .db3 file, or a rosbag2 folder's (split, compressed) files, of
// which those that do not open are skipped (open_bag_files).
std::unique_ptr<RecordingSource> open_db3_recording(const RosbagFolder& bag, const RecordingOpenOptions& options);

}  // namespace handoff::media
