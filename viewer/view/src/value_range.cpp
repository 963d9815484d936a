#include "value_range.hpp"

#include <algorithm>
#include <cmath>
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

}  // namespace handoff::view
