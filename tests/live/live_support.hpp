#pragma once
// Shared by the live tests and their peer program: frames with a known
// pattern, the check of a received frame against it, overlays derived from a
// frame index, and process resource counts (descriptors, resident memory).
#include <handoff/host_frame.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/media/overlay.hpp>

#include <dirent.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace handoff::live::test {

// The pattern seed of frame `index` (fill_test_pattern's seed).
inline std::uint32_t seed_of(std::int64_t index) { return static_cast<std::uint32_t>(index % 251); }

// A host frame holding frame `index`'s pattern.
inline Frame pattern_frame(PixelFormat format, std::uint32_t w, std::uint32_t h, std::int64_t index) {
  Frame f = allocate_host_frame(format, w, h);
  fill_test_pattern(f, seed_of(index));
  f.index = index;
  f.timestamp = double(index) / 30.0;
  return f;
}

// Compares the packed rows of two host frames; "" when equal, else where they differ.
inline std::string first_mismatch(const Frame& got, const Frame& want) {
  if (got.format != want.format || got.width != want.width || got.height != want.height)
    return "format or size differs";
  for (int p = 0; p < plane_count(want.format); ++p) {
    const PlaneLayout l = plane_layout(want.format, want.width, want.height, p);
    for (std::uint32_t y = 0; y < l.height; ++y) {
      const auto* a = static_cast<const unsigned char*>(got.planes[p].data) + y * got.planes[p].pitch;
      const auto* b = static_cast<const unsigned char*>(want.planes[p].data) + y * want.planes[p].pitch;
      if (std::memcmp(a, b, l.row_bytes) != 0)
        return "plane " + std::to_string(p) + " row " + std::to_string(y) + " differs";
    }
  }
  return "";
}

// Checks a received host frame against the pattern of its own index.
inline std::string check_pattern(const Frame& got) {
  const Frame want = pattern_frame(got.format, got.width, got.height, got.index);
  return first_mismatch(got, want);
}

// Overlays for frame `index`: `boxes` boxes labelled "obj<k>" (score, class and
// track derived from k), so a receiver can rebuild and compare them.
inline media::OverlayFrame overlays_for(std::int64_t index, std::uint32_t boxes) {
  media::OverlayFrame o;
  o.frame = index;
  for (std::uint32_t k = 0; k < boxes; ++k) {
    const float x = float(k % 100) * 10.f, y = float(k / 100) * 10.f;
    o.add_box(x, y, x + 8, y + 8, "obj" + std::to_string(k), float(k % 10) / 10.f, std::int32_t(k % 7),
              std::int32_t(index));
  }
  o.add_label_text(1, 2, "frame " + std::to_string(index));
  return o;
}

inline std::string check_overlays(const media::OverlayFrame* got, std::int64_t index, std::uint32_t boxes) {
  if (boxes == 0) return got ? "overlays arrived, none were sent" : "";
  if (!got) return "overlays missing";
  const media::OverlayFrame want = overlays_for(index, boxes);
  if (got->frame != want.frame) return "overlay frame " + std::to_string(got->frame);
  if (got->objects.size() != want.objects.size()) return "object count " + std::to_string(got->objects.size());
  for (std::size_t k = 0; k < want.objects.size(); ++k) {
    const auto& a = got->objects[k];
    const auto& b = want.objects[k];
    if (a.x0 != b.x0 || a.y1 != b.y1 || a.class_id != b.class_id || a.track_id != b.track_id ||
        got->text(a.label) != want.text(b.label))
      return "object " + std::to_string(k) + " differs";
  }
  if (got->texts.size() != 1 || got->text(got->texts[0].text) != want.text(want.texts[0].text)) return "texts differ";
  return "";
}

// Sanitizer builds keep freed memory aside (ASan's quarantine, TSan's shadow
// and history), so resident memory grows by design there; LeakSanitizer checks
// for leaks at exit instead (the peer's exit status says so).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kResidentMemoryIsMeaningful = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kResidentMemoryIsMeaningful = false;
#else
inline constexpr bool kResidentMemoryIsMeaningful = true;
#endif
#else
inline constexpr bool kResidentMemoryIsMeaningful = true;
#endif

// Open descriptors of this process.
inline int open_descriptors() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
    --n;  // the directory stream's own
  }
  return n;
}

// Resident memory of this process, KiB (VmRSS).
inline long resident_kib() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      long v = 0;
      in >> v;
      return v;
    }
    std::getline(in, key);
  }
  return -1;
}

}  // namespace handoff::live::test
