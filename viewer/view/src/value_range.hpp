#pragma once
// The range a scalar frame (gray32f) is shown over when the user gives none:
// picked from the data, robust to outliers (the 1st and 99th percentiles of a
// sample of its finite values, so a few hot pixels or a far depth do not
// flatten the rest) and stable from frame to frame (each frame moves the range
// a quarter of the way to its own, so a changing scene does not flicker; the
// first frame, or the first after reset(), takes its own at once).
//
// Thread safety: a plain value; one thread at a time.
#include <optional>
#include <string_view>
#include <vector>

#include <handoff/viewer.hpp>

namespace handoff::view {

// The grey NaN and +-inf samples of a gray32f frame are drawn as (code 128 on
// all three channels): neither black nor white, which are data (clamped ends).
inline constexpr float kNonFiniteGray = 128.0f / 255.0f;

class AutoRange {
 public:
  // A frame's sampled values (any order; NaN / inf are ignored, and a frame
  // with no finite value leaves the range as it was). `values` is reordered.
  void update(std::vector<float>& values);
  void reset() { range_.reset(); }
  std::optional<ValueRange> range() const { return range_; }

  // What one frame's values alone give (update() before smoothing): the 1st
  // and 99th percentiles (nearest rank), widened around their middle where
  // they are equal. nullopt when no value is finite. `values` is reordered.
  static std::optional<ValueRange> of(std::vector<float>& values);

 private:
  std::optional<ValueRange> range_;
};

// UsageError naming `field` unless lo and hi are finite and lo < hi.
void check_value_range(const ValueRange& range, std::string_view field);

}  // namespace handoff::view
