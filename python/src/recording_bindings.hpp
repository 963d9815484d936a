#pragma once
// Recordings from Python (recording_bindings.cpp): handoff.RecordingWriter,
// and the record= / record_compression= / record_topic= arguments of
// handoff.Viewer and handoff.Publisher. Reading is handoff.open of a ".mcap"
// (viewer_bindings.cpp). Not a public header (python/src only).
#include <handoff/media/recording.hpp>

#include <nanobind/nanobind.h>

#include <optional>
#include <string>

namespace handoff::py {

// The RecordTarget of record= (None: no recording; a str or os.PathLike),
// record_compression ("none", "zstd", "lz4"), record_codec ("raw", "h264",
// "h265") and record_topic (None: the
// recorder's default). ValueError / TypeError naming the argument.
// Thread safety: with the GIL held.
media::RecordTarget record_target(nanobind::handle path, const std::string& compression,
                                   const std::optional<std::string>& topic, const std::string& codec = "raw");

// Adds RecordingWriter and RecordingStats to the module.
void bind_recording(nanobind::module_& m);

}  // namespace handoff::py
