#include <handoff/frame.hpp>

namespace handoff {

std::string_view to_string(PixelFormat f) { return f == PixelFormat::NV12 ? "nv12" : "p010"; }
std::string_view to_string(ColorMatrix m) {
  switch (m) {
    case ColorMatrix::BT601: return "bt601";
    case ColorMatrix::BT709: return "bt709";
    case ColorMatrix::BT2020: return "bt2020";
  }
  return "?";
}
std::string_view to_string(ColorRange r) { return r == ColorRange::Limited ? "limited" : "full"; }
std::string_view to_string(ChromaSiting s) {
  switch (s) {
    case ChromaSiting::Left: return "left";
    case ChromaSiting::Center: return "center";
    case ChromaSiting::TopLeft: return "topleft";
  }
  return "?";
}

}  // namespace handoff
