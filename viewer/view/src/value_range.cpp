#include "value_range.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include <handoff/error.hpp>

namespace handoff::view {
namespace {

constexpr double kLowPercentile = 0.01, kHighPercentile = 0.99;
constexpr double kFollow = 0.25;  // the share of the way to a new frame's range taken per frame

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

std::optional<ValueRange> AutoRange::of(std::vector<float>& values) {
  const auto end = std::remove_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
  values.erase(end, values.end());
  if (values.empty()) return std::nullopt;
  const std::size_t n = values.size();
  const auto at = [&](double q) {
    const auto k = std::size_t(std::llround(q * double(n - 1)));
    std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(k), values.end());
    return double(values[k]);
  };
  ValueRange r{at(kLowPercentile), at(kHighPercentile)};
  if (!(r.hi > r.lo)) {  // a flat frame: shown mid-grey rather than as a division by zero
    const double half = std::max(std::abs(r.lo) * 1e-3, 1e-6);
    r = ValueRange{r.lo - half, r.lo + half};
  }
  return r;
}

void AutoRange::update(std::vector<float>& values) {
  const std::optional<ValueRange> now = of(values);
  if (!now) return;
  if (!range_) {
    range_ = now;
    return;
  }
  ValueRange next{range_->lo + kFollow * (now->lo - range_->lo), range_->hi + kFollow * (now->hi - range_->hi)};
  if (next.hi > next.lo)
    range_ = next;
  else
    range_ = now;
}

void check_value_range(const ValueRange& r, std::string_view field) {
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi) || !(r.lo < r.hi))
    throw UsageError(std::string(field) + ": lo " + number(r.lo) + ", hi " + number(r.hi) +
                     ": both must be finite and lo below hi");
}

}  // namespace handoff::view
