#pragma once
// The colormaps' 256-entry tables (colormap_tables.cpp, written by
// scripts/fit_colormaps.py).
#include <cstdint>

namespace handoff::media::detail {

extern const std::uint8_t kViridis[256][3];
extern const std::uint8_t kTurbo[256][3];
extern const std::uint8_t kInferno[256][3];
extern const std::uint8_t kMagma[256][3];
extern const std::uint8_t kPlasma[256][3];

}  // namespace handoff::media::detail
