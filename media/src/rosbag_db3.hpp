#pragma once
// rosbag2 SQLite3 storage files (.db3): their sensor_msgs/msg/Image topics as
// a RecordingSource (open_recording dispatches here for an SQLite file).
#include "rosbag_folder.hpp"

#include <handoff/media/recording.hpp>

#include <filesystem>
#include <memory>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace handoff::media {

// The file starts with SQLite's 16-byte header ("SQLite format 3\0").
bool is_sqlite_file(const std::filesystem::path& path);
// A path ending in .db3 (any case), or an SQLite file.
bool is_db3_path(const std::filesystem::path& path);
// Opens the SQLite file at `path` read-only for the .db3 `file` (its name in
// messages; `path` differs for a file compressed whole) and reads its topics
// and messages tables through (count(*) visits each table's pages), so a file
// that is not SQLite, lacks rosbag2's tables or is cut short is a ParseError
// naming `file` when it is opened, not when a frame is played. SQLite checks
// each b-tree cell it reads (PRAGMA cell_size_check): a damaged page is an
// error, not a loop over the same rows without end. The caller closes it.
sqlite3* open_db3(const std::string& path, const std::string& file);
// One sqlite3_step: true for a row, false when the statement is done, a
// ParseError naming `file` and `what` for anything else. A damaged page is an
// error to stop at: stepping on after one (a loop's next row) may find the
// statement expired and started over, the same rows again without end.
bool next_row(sqlite3_stmt* s, const std::string& file, const std::string& what);
// ParseError naming the file (and the frame / field) for a file SQLite cannot
// read, a bag without a cdr sensor_msgs/msg/Image topic, or a bad image.
// `bag` is one .db3 file, or a rosbag2 folder's (split, compressed) files, of
// which those that do not open are skipped (open_bag_files; logged unless
// `log_skipped` is false: the bag was opened before and they were said then).
std::unique_ptr<RecordingSource> open_db3_recording(const RosbagFolder& bag, const RecordingOpenOptions& options,
                                                    bool log_skipped = true);

}  // namespace handoff::media
