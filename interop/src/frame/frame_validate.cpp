#include <handoff/frame_validate.hpp>

#include <cstdint>
#include <limits>
#include <sstream>
#include <tuple>
#include <utility>

namespace handoff {

namespace {

std::string plane_field(PixelFormat format, int plane, std::string_view what) {
  std::string s = "planes[" + std::to_string(plane) + "]";
  s += " (";
  s += plane_name(format, plane);
  s += ").";
  s += what;
  return s;
}

bool known(PixelFormat f) { return f <= PixelFormat::GRAY32F; }

std::string unknown_format(PixelFormat f) {
  return "format value " + std::to_string(int(f)) + " is not one of " + spellings<PixelFormat>();
}

// Elements per row and components of plane `plane` of a W-wide frame.
std::pair<std::uint32_t, std::uint32_t> plane_shape(PixelFormat f, std::uint32_t w, int plane) {
  switch (f) {
    case PixelFormat::NV12:
    case PixelFormat::P010: return plane == 0 ? std::pair{w, 1u} : std::pair{chroma_width(w), 2u};
    case PixelFormat::I420: return {plane == 0 ? w : chroma_width(w), 1u};
    case PixelFormat::YUYV:
    case PixelFormat::UYVY: return {2 * chroma_width(w), 2u};
    case PixelFormat::RGB8:
    case PixelFormat::BGR8: return {w, 3u};
    case PixelFormat::RGBA8:
    case PixelFormat::BGRA8: return {w, 4u};
    default: return {w, 1u};
  }
}

std::string hex(const void* p) {
  std::ostringstream o;
  o << "0x" << std::hex << reinterpret_cast<std::uintptr_t>(p);
  return o.str();
}

}  // namespace

std::string_view plane_name(int plane) noexcept {
  switch (plane) {
    case 0: return "luma";
    case 1: return "chroma";
  }
  return "plane?";
}

std::string_view plane_name(PixelFormat format, int plane) noexcept {
  if (plane < 0 || plane >= plane_count(format)) return "plane?";
  if (format == PixelFormat::I420) return plane == 0 ? "luma" : plane == 1 ? "u" : "v";
  if (plane_count(format) == 1) return "pixels";
  return plane_name(plane);
}

void require_format(PixelFormat format, std::initializer_list<PixelFormat> accepted, std::string_view who) {
  std::string names;
  std::size_t i = 0;
  for (PixelFormat a : accepted) {
    if (a == format) return;
    names += (i == 0 ? "" : i + 1 == accepted.size() ? " or " : ", ");
    names += to_string(a);
    ++i;
  }
  const std::string got = format <= PixelFormat::GRAY32F ? std::string(to_string(format))
                                                          : "format value " + std::to_string(int(format));
  throw InvalidFrame("format", std::string(who) + " takes " + names + " frames, not " + got);
}

std::string dimension_problem(std::string_view name, std::uint64_t value) {
  if (value == 0) return std::string(name) + " is 0";
  if (value > kMaxFrameDimension)
    return std::string(name) + " " + std::to_string(value) + " exceeds the maximum " +
           std::to_string(kMaxFrameDimension);
  return {};
}

void validate_dimensions(std::uint32_t width, std::uint32_t height) {
  for (auto [name, v] : {std::pair{"width", width}, std::pair{"height", height}}) {
    if (std::string problem = dimension_problem(name, v); !problem.empty()) throw InvalidFrame(name, problem);
  }
}

PlaneLayout plane_layout(PixelFormat format, std::uint32_t width, std::uint32_t height, int plane) {
  validate_dimensions(width, height);
  if (!known(format)) throw InvalidFrame("format", unknown_format(format));
  const int planes = plane_count(format);
  if (plane < 0 || plane >= planes) {
    std::string which;
    for (int i = 0; i < planes; ++i)
      which += (i ? (i + 1 == planes ? " or " : ", ") : "") + std::to_string(i) + " (" +
               std::string(plane_name(format, i)) + ")";
    throw InvalidFrame("plane", "plane index " + std::to_string(plane) + " of a " + std::string(to_string(format)) +
                                    " frame is not " + which);
  }
  PlaneLayout l;
  l.sample_bytes = bytes_per_sample(format);
  std::tie(l.width, l.components) = plane_shape(format, width, plane);
  l.height = plane == 0 ? height : chroma_height(height);
  // Cannot overflow: width <= 32768 (+1), components <= 4, sample_bytes <= 4.
  l.row_bytes = std::size_t(l.width) * l.components * l.sample_bytes;
  return l;
}

std::size_t plane_span_bytes(std::size_t pitch, std::uint32_t rows, std::size_t row_bytes,
                             std::string_view field) {
  if (rows == 0) return 0;
  std::size_t body = 0, span = 0;
  if (__builtin_mul_overflow(pitch, std::size_t(rows - 1), &body) ||
      __builtin_add_overflow(body, row_bytes, &span) ||
      span > std::size_t(std::numeric_limits<std::int64_t>::max())) {
    throw InvalidFrame(std::string(field), "pitch " + std::to_string(pitch) + " x " + std::to_string(rows) +
                                               " rows overflows the addressable size");
  }
  return span;
}

void validate(const Frame& f) {
  if (!known(f.format)) throw InvalidFrame("format", unknown_format(f.format));
  validate_dimensions(f.width, f.height);
  const auto& c = f.colorimetry;
  if (c.matrix > ColorMatrix::BT2020) {
    throw InvalidFrame("colorimetry.matrix", "value " + std::to_string(int(c.matrix)) +
                                                 " is not bt601, bt709 or bt2020");
  }
  if (c.range > ColorRange::Full) {
    throw InvalidFrame("colorimetry.range", "value " + std::to_string(int(c.range)) + " is not limited or full");
  }
  if (c.siting > ChromaSiting::TopLeft) {
    throw InvalidFrame("colorimetry.siting", "value " + std::to_string(int(c.siting)) +
                                                 " is not left, center or topleft");
  }

  switch (f.memory) {
    case MemoryKind::Host: break;
    case MemoryKind::Cuda:
      if (f.device < 0) {
        throw InvalidFrame("device", "CUDA memory needs a device ordinal >= 0, got " + std::to_string(f.device));
      }
      break;
    case MemoryKind::GlBuffer:
      if (f.gl_buffer == 0) throw InvalidFrame("gl_buffer", "GL buffer memory needs a buffer name, got 0");
      break;
    case MemoryKind::Vulkan: break;
    default:
      throw InvalidFrame("memory", "memory kind value " + std::to_string(int(f.memory)) + " is not known");
  }
  const bool pointers = f.memory == MemoryKind::Host || f.memory == MemoryKind::Cuda;

  for (int i = 0; i < plane_count(f.format); ++i) {
    const Plane& p = f.planes[std::size_t(i)];
    const PlaneLayout l = plane_layout(f.format, f.width, f.height, i);
    if (p.width != l.width || p.height != l.height || p.components != l.components) {
      throw InvalidFrame(plane_field(f.format, i, "shape"),
                         "shape (" + std::to_string(p.height) + ", " + std::to_string(p.width) + ", " +
                             std::to_string(p.components) + ") does not fit " + std::string(to_string(f.format)) +
                             " " + std::to_string(f.width) + "x" + std::to_string(f.height) + ": expected (" +
                             std::to_string(l.height) + ", " + std::to_string(l.width) + ", " +
                             std::to_string(l.components) + ")");
    }
    if (p.pitch < l.row_bytes) {
      throw InvalidFrame(plane_field(f.format, i, "pitch"),
                         "pitch " + std::to_string(p.pitch) + " is below the packed row of " +
                             std::to_string(l.row_bytes) + " bytes (" + std::to_string(l.width) + " x " +
                             std::to_string(l.components) + " samples of " + std::to_string(l.sample_bytes) +
                             " byte" + (l.sample_bytes == 1 ? "" : "s") + ")");
    }
    if (p.pitch % l.sample_bytes != 0) {
      throw InvalidFrame(plane_field(f.format, i, "pitch"),
                         "pitch " + std::to_string(p.pitch) + " is not a whole number of " +
                             std::to_string(l.sample_bytes) + "-byte samples");
    }
    std::size_t span = 0;
    try {
      span = plane_span_bytes(p.pitch, l.height, l.row_bytes);
    } catch (const InvalidFrame& e) {
      // Re-thrown with the plane named; the field string is built only on failure.
      throw InvalidFrame(plane_field(f.format, i, "pitch"), std::string(e.what()).substr(e.field().size() + 2));
    }
    if (pointers) {
      if (p.data == nullptr) throw InvalidFrame(plane_field(f.format, i, "data"), "data pointer is null");
      const auto addr = reinterpret_cast<std::uintptr_t>(p.data);
      if (addr % l.sample_bytes != 0) {
        throw InvalidFrame(plane_field(f.format, i, "data"), "address " + hex(p.data) + " is not aligned to " +
                                                       std::to_string(l.sample_bytes) + "-byte samples");
      }
      std::uintptr_t end = 0;
      if (__builtin_add_overflow(addr, span, &end)) {
        throw InvalidFrame(plane_field(f.format, i, "data"), "address " + hex(p.data) + " + " + std::to_string(span) +
                                                       " bytes overflows the address space");
      }
    } else {
      std::size_t end = 0;
      if (p.offset % l.sample_bytes != 0) {
        throw InvalidFrame(plane_field(f.format, i, "offset"), "offset " + std::to_string(p.offset) +
                                                         " is not aligned to " + std::to_string(l.sample_bytes) +
                                                         "-byte samples");
      }
      if (__builtin_add_overflow(p.offset, span, &end) ||
          end > std::size_t(std::numeric_limits<std::int64_t>::max())) {
        throw InvalidFrame(plane_field(f.format, i, "offset"), "offset " + std::to_string(p.offset) + " + " +
                                                         std::to_string(span) + " bytes overflows");
      }
    }
  }
}

}  // namespace handoff
