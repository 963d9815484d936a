#include "value_range.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include <handoff/error.hpp>

namespace handoff::view {
namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

void check_value_range(const ValueRange& r, std::string_view field) {
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi) || !(r.lo < r.hi))
    throw UsageError(std::string(field) + ": lo " + number(r.lo) + ", hi " + number(r.hi) +
                     ": both must be finite and lo below hi");
}

FloatMapping float_mapping(double lo, double hi) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi)) return {};
  if (lo >= kMax) return {0.0f, 0.0f, 1.0f, 0.0f};  // every float is below the range
  if (hi <= -kMax) return {0.0f, 0.0f, 1.0f, 1.0f};  // every float is above it
  // In halves: finite for any finite range (hi - lo can overflow a double).
  double mid = lo / 2 + hi / 2, half = hi / 2 - lo / 2;
  const double tiny = std::ldexp(1.0, -111);
  if (half < std::max(tiny, std::ldexp(std::max(std::abs(lo), std::abs(hi)), -22))) {
    // Too narrow for float to tell its ends apart: about its middle as a
    // float (which then draws 0.5 exactly), 8 float steps of it each way.
    const float m = float(std::clamp(mid, -kMax, kMax));
    mid = m;
    half = m == 0.0f ? tiny : std::max(tiny, std::ldexp(1.0, std::ilogb(m) - 20));
  }
  const int e = std::ilogb(half) + 1;  // the span, 2 * half, is in [2^e, 2^(e + 1))
  if (e > 140) {
    // Every float (|v| < 2^128) sits at 0's place in the range, to 2^-12.
    return {0.0f, 0.0f, 1.0f, float(std::clamp(0.5 - mid / half / 2, -1.0, 2.0))};
  }
  const int k = e > 64 ? std::min(e, 120) : e < -64 ? e : 0;
  const double p = std::ldexp(1.0, -k);
  // The middle, scaled, as float holds it (exact where it is a float), and
  // the span's reciprocal; both finite: p brought the span near 1, or the
  // middle is beyond float's values and only the clamp's side matters.
  const float m = float(std::clamp(mid * p, -kMax, kMax));
  const double scale = std::clamp(1.0 / (2 * half * p), double(std::numeric_limits<float>::min()), kMax);
  return {float(p), m, float(scale), 0.5f};
}

}  // namespace handoff::view
