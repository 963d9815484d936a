#pragma once
// Golden-image comparison: RGBA rows (top-down) against tests/data/golden/<name>.png
// with a per-channel tolerance and a small budget of differing pixels (text
// anti-aliasing differs between drivers). A failing image is written beside
// the reference as <name>.actual.png. HANDOFF_UPDATE_GOLDEN=1 rewrites the
// references instead (check them before committing).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <handoff/media/png.hpp>

namespace handoff::view::test {

inline std::filesystem::path golden_dir() { return HANDOFF_GOLDEN_DIR; }

inline void expect_golden(const std::string& name, const std::vector<std::uint8_t>& rgba, int w, int h,
                          int tolerance = 2, double max_bad_fraction = 0.0) {
  const auto ref_path = golden_dir() / (name + ".png");
  const auto actual_path = golden_dir() / (name + ".actual.png");
  media::Image8 actual;
  actual.width = std::uint32_t(w);
  actual.height = std::uint32_t(h);
  actual.channels = 3;
  actual.pixels.resize(std::size_t(w) * h * 3);
  for (std::size_t i = 0; i < std::size_t(w) * h; ++i)
    for (int k = 0; k < 3; ++k) actual.pixels[i * 3 + k] = rgba[i * 4 + k];
  const char* update = std::getenv("HANDOFF_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    media::write_png(ref_path, actual);
    std::error_code ec;
    std::filesystem::remove(actual_path, ec);
    GTEST_SKIP() << "golden image " << ref_path << " rewritten (HANDOFF_UPDATE_GOLDEN=1)";
  }
  if (!std::filesystem::exists(ref_path)) {
    media::write_png(actual_path, actual);
    FAIL() << "no golden image " << ref_path << "; this run's image is " << actual_path
           << " (check it, then regenerate with HANDOFF_UPDATE_GOLDEN=1)";
  }
  const media::Image8 ref = media::read_png(ref_path, 3);
  ASSERT_EQ(ref.width, actual.width) << ref_path;
  ASSERT_EQ(ref.height, actual.height) << ref_path;
  std::size_t bad = 0;
  int worst = 0;
  for (std::size_t i = 0; i < actual.pixels.size(); i += 3) {
    int d = 0;
    for (int k = 0; k < 3; ++k) d = std::max(d, std::abs(int(actual.pixels[i + k]) - int(ref.pixels[i + k])));
    worst = std::max(worst, d);
    if (d > tolerance) ++bad;
  }
  const std::size_t allowed = std::size_t(max_bad_fraction * double(std::size_t(w) * h));
  if (bad > allowed) {
    media::write_png(actual_path, actual);
    ADD_FAILURE() << name << ": " << bad << " pixels differ by more than " << tolerance << " (allowed "
                  << allowed << ", worst " << worst << "); this run's image: " << actual_path;
  } else {
    std::error_code ec;
    std::filesystem::remove(actual_path, ec);
  }
}

}  // namespace handoff::view::test
