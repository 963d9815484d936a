#pragma once
// Value ranges of grey frames: how a given one is checked, and the grey that
// NaN / inf samples are drawn as. The automatic range of gray32f frames is
// media::ScalarRange (handoff/media/overlay.hpp), the one scalar-map layers use.
#include <string_view>

#include <handoff/viewer.hpp>

namespace handoff::view {

// The grey NaN and +-inf samples of a gray32f frame are drawn as (code 128 on
// all three channels): neither black nor white, which are data (clamped ends).
inline constexpr float kNonFiniteGray = 128.0f / 255.0f;

// UsageError naming `field` unless lo and hi are finite and lo < hi.
void check_value_range(const ValueRange& range, std::string_view field);

}  // namespace handoff::view
