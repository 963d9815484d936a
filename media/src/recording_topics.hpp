#pragma once
// Topic listings (list_recording_topics) of recordings already open: how
// open_recording picks a topic among several without reading the file again.
#include "rosbag_folder.hpp"

#include <handoff/media/mcap.hpp>
#include <handoff/media/recording.hpp>

#include <string>
#include <vector>

namespace handoff::media {

// Every topic `reader` holds, as list_recording_topics lists them; the
// reader's warnings are left to it (they were logged when it was opened).
std::vector<RecordingTopicListing> list_mcap_topics(mcap::Reader& reader);
// Every topic of the .db3 `bag`, its files opened again; the files skipped
// are appended to `warnings` when given, and logged only when `log_skipped`.
std::vector<RecordingTopicListing> list_db3_topics(const RosbagFolder& bag, std::vector<std::string>* warnings,
                                                   bool log_skipped);

}  // namespace handoff::media
