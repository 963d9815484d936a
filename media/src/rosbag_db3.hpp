#pragma once
// rosbag2 SQLite3 storage files (.db3): their sensor_msgs/msg/Image topics as
// a RecordingSource (open_recording dispatches here for an SQLite file).
#include <handoff/media/recording.hpp>

#include <filesystem>
#include <memory>

namespace handoff::media {

// The file starts with SQLite's 16-byte header ("SQLite format 3\0").
bool is_sqlite_file(const std::filesystem::path& path);
// ParseError naming the file (and the frame / field) for a file SQLite cannot
// read, a bag without a cdr sensor_msgs/msg/Image topic, or a bad image.
std::unique_ptr<RecordingSource> open_db3_recording(const std::filesystem::path& path, const RecordingOpenOptions& options);

// The storage file of a rosbag2 folder, from its metadata.yaml. ParseError
// naming metadata.yaml (and the key) when it is missing or unreadable, names
// no file or a file not in the folder, or says the bag is compressed or split
// into several files (not played yet).
std::filesystem::path rosbag_storage_file(const std::filesystem::path& folder);

}  // namespace handoff::media
