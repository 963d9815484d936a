#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>

#include "frame/live_frames.hpp"

#include <atomic>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <new>

namespace handoff {

namespace detail {
namespace {
std::atomic<std::size_t> g_live_frames{0};
}
LiveFrameToken::LiveFrameToken() noexcept { g_live_frames.fetch_add(1, std::memory_order_relaxed); }
LiveFrameToken::~LiveFrameToken() { g_live_frames.fetch_sub(1, std::memory_order_relaxed); }
std::size_t live_frame_count() noexcept { return g_live_frames.load(std::memory_order_relaxed); }
}  // namespace detail

namespace {

struct HostAllocation {
  explicit HostAllocation(std::size_t bytes, std::size_t alignment)
      : data(static_cast<unsigned char*>(::operator new(bytes, std::align_val_t(alignment)))),
        align(alignment) {
    std::memset(data, 0, bytes);
  }
  ~HostAllocation() { ::operator delete(data, std::align_val_t(align)); }
  HostAllocation(const HostAllocation&) = delete;
  HostAllocation& operator=(const HostAllocation&) = delete;

  unsigned char* data;
  std::size_t align;
  detail::LiveFrameToken token;
};

}  // namespace

Frame allocate_host_frame(PixelFormat format, std::uint32_t width, std::uint32_t height,
                          const HostFrameOptions& options) {
  const PlaneLayout luma = plane_layout(format, width, height, 0);
  const std::size_t a = options.alignment;
  if (a == 0 || (a & (a - 1)) != 0 || a < luma.sample_bytes || a > 4096) {
    throw UsageError("allocate_host_frame: alignment " + std::to_string(a) +
                     " must be a power of two between the sample size (" + std::to_string(luma.sample_bytes) +
                     ") and 4096");
  }
  FrameLayout layout = FrameLayout::contiguous(format, width, height, a, /*shared_pitch=*/true);
  layout.colorimetry = options.colorimetry;
  auto storage = std::make_shared<HostAllocation>(layout.buffer_bytes(), a);
  Frame f = layout.describe(MemoryKind::Host, {storage->data});
  f.owner = std::move(storage);
  validate(f);
  return f;
}

Frame host_planes_frame(PixelFormat format, std::uint32_t width, std::uint32_t height, void* luma,
                        std::size_t luma_pitch, void* chroma, std::size_t chroma_pitch, const Colorimetry& c) {
  Frame f;
  f.format = format;
  f.width = width;
  f.height = height;
  f.colorimetry = c;
  f.memory = MemoryKind::Host;
  f.device = -1;
  f.planes[0] = Plane{luma, 0, luma_pitch, width, height, 1};
  f.planes[1] = Plane{chroma, 0, chroma_pitch, chroma_width(width), chroma_height(height), 2};
  return f;
}

bool is_stacked(const Frame& f) noexcept {
  if (f.memory != MemoryKind::Host && f.memory != MemoryKind::Cuda) return false;
  if (f.format != PixelFormat::NV12 && f.format != PixelFormat::P010) return false;
  if (f.width % 2 != 0 || f.planes[0].pitch != f.planes[1].pitch) return false;
  const auto* luma = static_cast<const unsigned char*>(f.planes[0].data);
  const auto* chroma = static_cast<const unsigned char*>(f.planes[1].data);
  return luma != nullptr && chroma == luma + f.planes[0].pitch * f.height;
}

void fill_test_pattern(const Frame& f, std::uint32_t seed) {
  if (f.memory != MemoryKind::Host) {
    throw UsageError("fill_test_pattern: the frame is not in host memory");
  }
  validate(f);
  // Little-endian whatever the host is; p010 in the top 10 bits, gray32f a
  // float in quarter steps.
  auto put = [&](unsigned char* row, std::size_t i, std::uint32_t v) {
    switch (f.format) {
      case PixelFormat::P010:
      case PixelFormat::GRAY16: {
        const std::uint16_t s = f.format == PixelFormat::P010 ? std::uint16_t((v % 1024) << 6) : std::uint16_t(v);
        row[2 * i] = std::uint8_t(s & 0xff);
        row[2 * i + 1] = std::uint8_t(s >> 8);
        break;
      }
      case PixelFormat::GRAY32F: {
        const float s = float(v % 4096) * 0.25f;
        std::memcpy(row + 4 * i, &s, sizeof s);
        break;
      }
      default: row[i] = std::uint8_t(v); break;
    }
  };
  // Sample k of an element (k = plane + component: nv12's chroma and i420's U
  // / V get the same values): a different slope per k.
  static constexpr std::uint32_t kSlope[4][3] = {{7, 13, 0}, {5, 3, 64}, {11, 2, 128}, {3, 5, 192}};
  for (int p = 0; p < plane_count(f.format); ++p) {
    const Plane& pl = f.planes[std::size_t(p)];
    for (std::uint32_t r = 0; r < pl.height; ++r) {
      auto* row = static_cast<unsigned char*>(pl.data) + std::size_t(r) * pl.pitch;
      for (std::uint32_t x = 0; x < pl.width; ++x) {
        for (std::uint32_t c = 0; c < pl.components; ++c) {
          const auto& k = kSlope[std::min<std::uint32_t>(std::uint32_t(p) + c, 3)];
          put(row, std::size_t(x) * pl.components + c, k[0] * x + k[1] * r + seed + k[2]);
        }
      }
    }
  }
}

}  // namespace handoff
