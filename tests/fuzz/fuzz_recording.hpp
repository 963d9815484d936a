#pragma once
// Shared by the recording fuzz targets (fuzz_mcap, fuzz_bag): what a viewer
// reads of an opened recording, a few frames with their overlays, log times
// and colorimetry, in an order that seeks both ways.
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/frame.hpp>  // kMaxFrameDimension

#include <cstdint>

namespace handoff::media::fuzz {

inline void read_some_frames(RecordingSource& src) {
  const SourceInfo& info = src.info();
  if (info.width == 0 || info.height == 0 || info.width > handoff::kMaxFrameDimension ||
      info.height > handoff::kMaxFrameDimension || info.frame_count <= 0) {
    __builtin_trap();  // the source promised a checked first frame
  }
  // The first frame was checked against its data at open, so this
  // allocation is bounded by the input (or a chunk's limit).
  HostFrame frame(info.format, info.width, info.height);
  OverlayFrame overlays;
  const std::int64_t n = info.frame_count;
  for (std::int64_t k : {std::int64_t(0), std::int64_t(1), n / 2, n - 1, n - 2, std::int64_t(2)}) {
    if (k < 0 || k >= n) continue;
    src.seek(k);
    // Read or refused as malformed, the frame is passed: playback goes on
    // after it (a bad video access unit: at the next keyframe).
    try {
      (void)src.read_into(frame.target());
      if (src.position() != k + 1) __builtin_trap();
    } catch (const ParseError&) {
      if (src.position() <= k) __builtin_trap();
    } catch (const handoff::Error&) {
    }
    try {
      (void)src.overlays_for(k, overlays);
    } catch (const handoff::Error&) {
    }
    (void)src.log_time(k);
    (void)src.colorimetry(k);
  }
}

}  // namespace handoff::media::fuzz
