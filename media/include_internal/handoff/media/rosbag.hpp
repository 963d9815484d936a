#pragma once
// rosbag2 bags from storage files in memory, read as a split bag's files
// (in recording order) and, in compression_mode message, with each message
// zstd-compressed: the paths open_recording / list_recording_topics take for a
// bag folder of MCAP files, without the folder. For fuzzing.
#include <handoff/media/recording.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace handoff::media {

// ParseError as for the bag's files on disk (each part named `name`#i).
std::unique_ptr<RecordingSource> open_bag_memory(const std::vector<std::span<const std::uint8_t>>& parts,
                                                 bool compressed_messages, const std::string& name,
                                                 const RecordingOpenOptions& options = {});
std::vector<RecordingTopicListing> list_bag_topics_memory(const std::vector<std::span<const std::uint8_t>>& parts,
                                                          bool compressed_messages, const std::string& name,
                                                          std::uint64_t max_chunk_bytes = std::uint64_t(1) << 30);

}  // namespace handoff::media
