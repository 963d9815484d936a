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

// A range (lo, hi) as float arithmetic applies it to float samples v (the
// grey and scalar-map shaders and their CPU twins): v is drawn at
// clamp((v * prescale - lo) * scale + offset, 0, 1), here with lo the
// range's middle (scaled) and offset 0.5, so a range's middle, when a
// float, draws 0.5 exactly. Any finite lo < hi gives finite parts with
// scale a normal float > 0 (no overflow, no denormal a GPU could flush):
// prescale is a power of two that brings very wide or very narrow ranges
// near 1 (1 for spans in 2^-64 .. 2^64), or 0 where the range is so wide
// (over 2^140) that no float moves v's place in it by 1/4096 (then the
// place of 0). A range narrower than float resolves at its ends (under
// 2^-21 of them, or 2^-110) is widened about its middle (as a float) to 8
// float steps of it each way (at least 2^-111), so such data draws like a
// constant; one entirely beyond float's values draws all 0 (above them) or
// all 1 (below). Anything else (NaN, lo >= hi): the identity.
struct FloatMapping {
  float prescale = 1.0f, lo = 0.0f, scale = 1.0f, offset = 0.0f;
};
FloatMapping float_mapping(double lo, double hi);

}  // namespace handoff::view
