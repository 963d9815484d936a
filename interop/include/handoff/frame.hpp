#pragma once
// Frames: one to three pitched planes on one device, in one of the formats
// below, with the colorimetry that says how to turn YUV codes into colour.
//
// Formats and their planes (W x H pixels; "components" are the samples of one
// plane element, e.g. an interleaved chroma pair or an RGB pixel):
//   nv12, p010   luma H x W x 1, chroma ceil(H/2) x ceil(W/2) x 2 (U, V);
//                1-byte samples (nv12), 2-byte little-endian with the value
//                in the top 10 bits (p010)
//   i420         luma H x W, U ceil(H/2) x ceil(W/2), V the same; 1 byte
//                (ffmpeg's yuv420p)
//   yuyv, uyvy   one plane H x W' x 2, W' = W rounded up to even: 4:2:2
//                packed, each pair of pixels Y0 U Y1 V (yuyv, "YUY2") or
//                U Y0 V Y1 (uyvy); 1 byte
//   rgb8, bgr8   one plane H x W x 3, 1 byte
//   rgba8, bgra8 one plane H x W x 4, 1 byte (alpha is carried, not drawn)
//   gray8        one plane H x W x 1, 1 byte
//   gray16       one plane H x W x 1, 2 bytes little-endian, all 16 bits
//   gray32f      one plane H x W x 1, 4-byte IEEE float (a scalar: shown
//                over a range)
// Colorimetry applies to the YUV formats (nv12, p010, i420, yuyv, uyvy); RGB
// and grey frames carry it unused.
//
// A Frame is a description plus a keep-alive: `owner` holds whatever keeps the
// memory valid (a GL buffer, a Vulkan allocation, a producer's DLPack tensor,
// a host allocation). Copying a Frame shares the owner. Frames are immutable
// values and may be passed between threads freely.
//
// FrameLayout says where a frame's planes sit in one or two buffers; every
// frame handoff makes (mapped GL buffers, Vulkan buffers, host frames, the
// viewer's rings) is described through it.
//
// See also: frame_validate.hpp (validate()), host_frame.hpp (pitched host
// frames), dlpack.hpp (DLPack export / import).
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace handoff {

enum class PixelFormat : std::uint8_t {
  NV12,
  P010,
  I420,
  YUYV,
  UYVY,
  RGB8,
  BGR8,
  RGBA8,
  BGRA8,
  GRAY8,
  GRAY16,
  GRAY32F,
};
// Every format, in enum order (loops in tests and help texts).
inline constexpr PixelFormat kPixelFormats[] = {
    PixelFormat::NV12,  PixelFormat::P010,  PixelFormat::I420,  PixelFormat::YUYV,
    PixelFormat::UYVY,  PixelFormat::RGB8,  PixelFormat::BGR8,  PixelFormat::RGBA8,
    PixelFormat::BGRA8, PixelFormat::GRAY8, PixelFormat::GRAY16, PixelFormat::GRAY32F,
};
// The most planes a frame has (i420).
inline constexpr std::size_t kMaxPlanes = 3;
enum class ColorMatrix : std::uint8_t { BT601, BT709, BT2020 };
enum class ColorRange : std::uint8_t { Limited, Full };
// Where chroma samples sit relative to luma (H.273 / "chroma_sample_loc_type"
// 0 = Left (MPEG-2, default for 4:2:0 video), 1 = Center (MPEG-1/JPEG), 2 = TopLeft).
enum class ChromaSiting : std::uint8_t { Left, Center, TopLeft };

struct Colorimetry {
  ColorMatrix matrix = ColorMatrix::BT709;
  ColorRange range = ColorRange::Limited;
  ChromaSiting siting = ChromaSiting::Left;
  bool operator==(const Colorimetry&) const = default;
};

// Where a frame's bytes live.
enum class MemoryKind : std::uint8_t {
  Host,      // ordinary CPU memory (or a GL buffer mapped into host memory)
  Cuda,      // CUDA device memory: `device` ordinal, `cuda_context` (primary context)
  GlBuffer,  // a GL buffer object: `gl_buffer` name, planes at byte offsets
  Vulkan,    // Vulkan device memory: planes at byte offsets of the allocation
};

struct Plane {
  // Host / CUDA: address of the first sample. GlBuffer / Vulkan: byte offset
  // inside the buffer or allocation, stored as an integer in `offset`.
  void* data = nullptr;
  std::size_t offset = 0;
  std::size_t pitch = 0;   // bytes from one row to the next
  std::uint32_t width = 0;   // elements per row (luma: W, chroma: ceil(W/2), rgb8: W pixels)
  std::uint32_t height = 0;  // rows
  std::uint32_t components = 1;  // samples per element: 1 luma / grey, 2 interleaved chroma or 4:2:2, 3 RGB, 4 RGBA
};

struct Frame {
  PixelFormat format = PixelFormat::NV12;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  Colorimetry colorimetry{};
  MemoryKind memory = MemoryKind::Host;
  int device = -1;                 // CUDA ordinal (Cuda), -1 otherwise
  void* cuda_context = nullptr;    // CUcontext the pointers belong to (Cuda)
  std::uint32_t gl_buffer = 0;     // GL buffer name (GlBuffer)
  std::array<Plane, kMaxPlanes> planes{};  // plane_count(format) used: [0] luma (or the one plane), [1] chroma / U, [2] V
  std::int64_t index = 0;          // frame number in its source
  double timestamp = 0.0;          // seconds
  std::shared_ptr<const void> owner;  // keeps the memory valid

  const Plane& luma() const { return planes[0]; }
  const Plane& chroma() const { return planes[1]; }
};

// Planes of a frame of format f: 2 (nv12, p010), 3 (i420), else 1.
constexpr int plane_count(PixelFormat f) {
  switch (f) {
    case PixelFormat::NV12:
    case PixelFormat::P010: return 2;
    case PixelFormat::I420: return 3;
    default: return 1;
  }
}
// Bytes per sample: 2 for p010 and gray16, 4 for gray32f, else 1.
constexpr std::size_t bytes_per_sample(PixelFormat f) {
  switch (f) {
    case PixelFormat::P010:
    case PixelFormat::GRAY16: return 2;
    case PixelFormat::GRAY32F: return 4;
    default: return 1;
  }
}
// YUV codes that colorimetry turns into colour: nv12, p010, i420, yuyv, uyvy.
constexpr bool is_yuv(PixelFormat f) { return f <= PixelFormat::UYVY; }
// RGB-family: rgb8, bgr8, rgba8, bgra8.
constexpr bool is_rgb(PixelFormat f) { return f >= PixelFormat::RGB8 && f <= PixelFormat::BGRA8; }
// One channel: gray8, gray16, gray32f.
constexpr bool is_gray(PixelFormat f) { return f >= PixelFormat::GRAY8 && f <= PixelFormat::GRAY32F; }
// Samples are floats (gray32f); all others are unsigned integers.
constexpr bool is_float(PixelFormat f) { return f == PixelFormat::GRAY32F; }
constexpr std::uint32_t chroma_width(std::uint32_t w) { return (w + 1) / 2; }
constexpr std::uint32_t chroma_height(std::uint32_t h) { return (h + 1) / 2; }

// The largest width or height of a frame anywhere in handoff: frames, layouts,
// DLPack imports, Vulkan frame memory and the viewer's file readers all refuse
// more with the same message (validate_dimensions, frame_validate.hpp). It also
// keeps every size product below in 64-bit range. A display may show less: the
// viewer names its GL's GL_MAX_TEXTURE_SIZE when a frame exceeds that.
inline constexpr std::uint32_t kMaxFrameDimension = 32768;

// The packed shape of one plane (0 = luma or the only plane, 1 = chroma / U, 2 = V).
struct PlaneLayout {
  std::uint32_t width = 0;       // elements per row
  std::uint32_t height = 0;      // rows
  std::uint32_t components = 1;  // samples per element (Plane::components)
  std::size_t sample_bytes = 1;  // bytes_per_sample(format)
  std::size_t row_bytes = 0;     // width * components * sample_bytes: the packed row
};

// The packed layout of `plane` for a frame of `format`, `width` x `height`.
// Throws InvalidFrame for bad dimensions, an unknown format or a plane index
// outside 0 .. plane_count(format) - 1.
PlaneLayout plane_layout(PixelFormat format, std::uint32_t width, std::uint32_t height, int plane);

// Where one plane sits: in buffer `buffer` (0 or 1), first row at byte
// `offset`, rows `pitch` bytes apart (0: the packed row).
struct PlanePlacement {
  std::size_t pitch = 0;
  std::size_t offset = 0;
  std::size_t buffer = 0;
  bool operator==(const PlanePlacement&) const = default;
};

// Where a frame's planes sit in one to three buffers (GL buffers,
// mapped ranges, Vulkan or host allocations): the one planar-layout type.
// CudaGlBuffer's make_frame reads it, VkFrameBuffer allocates by it, host
// frames and the viewer's rings are built from it. A plain value; no checks
// until describe()d and validated.
struct FrameLayout {
  PixelFormat format = PixelFormat::NV12;
  std::uint32_t width = 0, height = 0;
  Colorimetry colorimetry{};
  // plane_count(format) used: luma (or the one plane), chroma / U, V
  std::array<PlanePlacement, kMaxPlanes> planes{PlanePlacement{0, 0, 0}, PlanePlacement{0, 0, 1},
                                                PlanePlacement{0, 0, 2}};

  // A buffer per plane, packed rows: plane i in buffer i at offset 0. Never
  // throws: bad dimensions surface where the layout is used.
  static FrameLayout packed(PixelFormat format, std::uint32_t width, std::uint32_t height);
  // One buffer: each plane's rows after the previous plane's, starting at its
  // end rounded up to `alignment`. Each plane's pitch is its packed row rounded
  // up to `alignment`; with `shared_pitch` every plane takes the largest pitch
  // (for code that addresses them with one stride). Throws InvalidFrame for bad
  // dimensions, UsageError for an alignment that is not a power of two in 1..4096.
  static FrameLayout contiguous(PixelFormat format, std::uint32_t width, std::uint32_t height,
                                std::size_t alignment = 256, bool shared_pitch = false);

  PlaneLayout plane(int i) const;     // the packed shape of plane i (plane_layout)
  std::size_t pitch(int i) const;     // planes[i].pitch, or the packed row when that is 0
  // Bytes plane i spans from its first sample to just past its last one:
  // pitch * (rows - 1) + the packed row (what a frame touches).
  std::size_t span(int i) const;
  // Bytes buffer `buffer` must hold: the largest offset + pitch * rows of its
  // planes (whole rows: a writer may fill a row's padding).
  std::size_t buffer_bytes(std::size_t buffer = 0) const;

  // A Frame with this layout in `memory`. Host / Cuda: each plane's data is
  // bases[its buffer] + its offset; GlBuffer / Vulkan: offsets only (the
  // caller sets gl_buffer, device, cuda_context and owner as the memory kind
  // needs). Not validated here: validate() the result (frame_validate.hpp).
  Frame describe(MemoryKind memory, std::array<void*, kMaxPlanes> bases = {}) const;
};

// Names of the enums above, one spelling each: "nv12", "p010", "i420",
// "yuyv", "uyvy", "rgb8", "bgr8", "rgba8", "bgra8", "gray8", "gray16",
// "gray32f"; "bt601" /
// "bt709" / "bt2020", "limited" / "full", "left" / "center" / "topleft".
// Thread safety: all of these are pure and may be called from any thread.
std::string_view to_string(PixelFormat);
std::string_view to_string(ColorMatrix);
std::string_view to_string(ColorRange);
std::string_view to_string(ChromaSiting);

// The value to_string spells `text` as, in any letter case ("NV12" is nv12);
// E is PixelFormat, ColorMatrix, ColorRange or ChromaSiting. Throws UsageError
// naming the kind, the text and every accepted spelling:
//   pixel format 'yuv444p' is not one of nv12, p010, i420, ...
template <typename E>
E from_string(std::string_view text);
// As from_string, std::nullopt where from_string would throw.
template <typename E>
std::optional<E> try_from_string(std::string_view text);
// The accepted spellings of E in to_string's order, joined by `separator`
// (command-line help: spellings<PixelFormat>(" | ") is "nv12 | p010").
template <typename E>
std::string spellings(std::string_view separator = ", ");

template <> PixelFormat from_string<PixelFormat>(std::string_view);
template <> ColorMatrix from_string<ColorMatrix>(std::string_view);
template <> ColorRange from_string<ColorRange>(std::string_view);
template <> ChromaSiting from_string<ChromaSiting>(std::string_view);
template <> std::optional<PixelFormat> try_from_string<PixelFormat>(std::string_view);
template <> std::optional<ColorMatrix> try_from_string<ColorMatrix>(std::string_view);
template <> std::optional<ColorRange> try_from_string<ColorRange>(std::string_view);
template <> std::optional<ChromaSiting> try_from_string<ChromaSiting>(std::string_view);
template <> std::string spellings<PixelFormat>(std::string_view);
template <> std::string spellings<ColorMatrix>(std::string_view);
template <> std::string spellings<ColorRange>(std::string_view);
template <> std::string spellings<ChromaSiting>(std::string_view);

}  // namespace handoff
