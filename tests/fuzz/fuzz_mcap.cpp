// Fuzz target: the MCAP reader, the recording source and the topic listing
// on an in-memory file; and the same file as a rosbag2 bag's storage file
// twice over (a split bag) with each message zstd-compressed (compression_mode
// message; rosbags' seeds ros2_zstd_messages*.mcap are such files). Any handoff::Error (ParseError) is an accepted outcome; a crash, a
// sanitizer report, a hang or another exception type is a bug.
#include <handoff/media/error.hpp>
#include <handoff/media/mcap.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/media/rosbag.hpp>

#include "fuzz_common.hpp"
#include "fuzz_recording.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace {

using namespace handoff::media;

// Chunks may claim at most this much (libFuzzer's default memory limit is 2 GiB).
constexpr std::uint64_t kMaxChunk = std::uint64_t(16) << 20;

// Every channel's messages through the low-level reader (a bounded number).
void read_messages(std::span<const std::uint8_t> bytes) {
  try {
    mcap::ReaderOptions o;
    o.max_chunk_bytes = kMaxChunk;
    auto r = mcap::Reader::open_memory(bytes, "fuzz.mcap", o);
    int budget = 64;
    for (const auto& [id, channel] : r->channels()) {
      for (const auto& ref : r->messages(id)) {
        if (--budget < 0) return;
        try {
          (void)r->read(ref);
        } catch (const handoff::Error&) {
        }
      }
    }
  } catch (const handoff::Error&) {
  }
}

// The frames and overlays a viewer would play, from the file alone or as a split, message-compressed bag.
void play(std::span<const std::uint8_t> bytes, bool bag) {
  try {
    RecordingOpenOptions o;
    o.max_chunk_bytes = kMaxChunk;
    auto src = bag ? open_bag_memory({bytes, bytes}, true, "fuzz-bag", o) : open_recording_memory(bytes, "fuzz.mcap", o);
    fuzz::read_some_frames(*src);
  } catch (const handoff::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::quiet_log();
  const std::span<const std::uint8_t> bytes(data, size);
  read_messages(bytes);
  play(bytes, false);
  play(bytes, true);
  try {
    (void)list_recording_topics_memory(bytes, "fuzz.mcap", kMaxChunk);  // handoff-view FILE --list
  } catch (const handoff::Error&) {
  }
  try {
    (void)list_bag_topics_memory({bytes, bytes}, true, "fuzz-bag", kMaxChunk);
  } catch (const handoff::Error&) {
  }
  return 0;
}
