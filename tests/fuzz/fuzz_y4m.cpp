// Fuzz target: the Y4M reader on an in-memory file. Any handoff::Error
// (ParseError) is an accepted outcome; a crash, a sanitizer report, a hang or
// another exception type is a bug.
#include <handoff/media/error.hpp>
#include <handoff/media/y4m_reader.hpp>

#include "fuzz_common.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace handoff::media;
  fuzz::quiet_log();
  try {
    auto src = open_y4m_memory(std::span(data, size), "fuzz.y4m");
    const SourceInfo& info = src->info();
    if (info.width == 0 || info.height == 0 || info.width > handoff::kMaxFrameDimension || info.height > handoff::kMaxFrameDimension) {
      __builtin_trap();  // the reader promised a checked size
    }
    // Only allocate a destination when the input holds at least one whole
    // frame (so its size is bounded by the input's).
    if (info.frame_count <= 0) {
      try {
        HostFrame none(info.format, 1, 1);
        FrameWriteTarget t = none.target();
        t.luma_pitch = t.chroma_pitch = t.plane2_pitch = 1u << 30;  // passes the pitch check; never written
        (void)src->read_into(t);
      } catch (const handoff::Error&) {
      }
      return 0;
    }
    HostFrame frame(info.format, info.width, info.height);
    int reads = 0;
    try {
      while (reads < 16 && src->read_into(frame.target())) ++reads;
    } catch (const handoff::Error&) {
    }
    // Seek back and forth over what was indexed.
    const std::int64_t n = src->info().frame_count;
    for (std::int64_t k : {n - 1, std::int64_t(0), n / 2, n}) {
      if (k < 0) continue;
      src->seek(k);
      try {
        (void)src->read_into(frame.target());
      } catch (const handoff::Error&) {
      }
    }
  } catch (const handoff::Error&) {
  }
  return 0;
}
