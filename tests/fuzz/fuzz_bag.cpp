// Fuzz target: rosbag2 SQLite3 storage (.db3) and bag folders (metadata.yaml),
// which are read from files: each input is written into a folder of its own
// and opened by path, as `handoff-view BAG` and `--list` open it. The input
// is [u32 little-endian yaml_size][metadata.yaml][the .db3 file]: with
// yaml_size 0 the .db3 file is opened alone, else the folder (metadata.yaml
// beside bag_0.db3; a yaml_size past the input is taken as all of it).
// Any handoff::Error (ParseError) is an accepted outcome; a crash, a
// sanitizer report, a hang or another exception type is a bug.
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>

#include "fuzz_common.hpp"
#include "fuzz_recording.hpp"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

namespace {

using namespace handoff::media;
namespace fs = std::filesystem;

// One folder for this process's inputs, removed at exit (replays end; libFuzzer's
// own runs end by a signal and leave it in the temporary directory).
const fs::path& work_folder() {
  static const fs::path folder = [] {
    std::string t = (fs::temp_directory_path() / "handoff-fuzz-bag-XXXXXX").string();
    if (::mkdtemp(t.data()) == nullptr) std::abort();
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(work_folder(), ec);
    });
    return fs::path(t);
  }();
  return folder;
}

void write_file(const fs::path& p, std::span<const std::uint8_t> bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  if (!out) std::abort();
}

// What a viewer reads of the recording at `path` (read_some_frames), then the topic listing.
void play(const fs::path& path) {
  try {
    auto src = open_recording(path);
    fuzz::read_some_frames(*src);
  } catch (const handoff::Error&) {
  }
  try {
    std::vector<std::string> warnings;
    (void)list_recording_topics(path, &warnings);
  } catch (const handoff::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::quiet_log();
  if (size < 4) return 0;
  std::uint32_t yaml_size;
  std::memcpy(&yaml_size, data, 4);
  const std::span<const std::uint8_t> rest(data + 4, size - 4);
  const std::size_t y = std::min<std::size_t>(yaml_size, rest.size());
  const fs::path& folder = work_folder();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec)) fs::remove_all(e.path(), ec);
  if (y == 0) {
    const fs::path file = folder / "fuzz.db3";
    write_file(file, rest);
    play(file);
    return 0;
  }
  write_file(folder / "metadata.yaml", rest.first(y));
  if (rest.size() > y) write_file(folder / "bag_0.db3", rest.subspan(y));
  play(folder);
  return 0;
}
