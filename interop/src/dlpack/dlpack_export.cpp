#include <handoff/dlpack.hpp>
#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>

#include "dlpack/export_counts.hpp"

#include <atomic>
#include <cstdio>
#include <string>

namespace handoff {

namespace {

std::atomic<std::size_t> g_live_exports{0};
std::atomic<std::uint64_t> g_exported{0};
std::atomic<std::uint64_t> g_deleted{0};

// One exported tensor and everything it points to; manager_ctx points here.
template <typename Managed>
struct Export {
  Export(const Frame& f, const TensorLayout& l) : frame(f), layout(l) {
    g_live_exports.fetch_add(1, std::memory_order_relaxed);
    g_exported.fetch_add(1, std::memory_order_relaxed);
  }
  ~Export() {
    g_live_exports.fetch_sub(1, std::memory_order_relaxed);
    g_deleted.fetch_add(1, std::memory_order_relaxed);
  }
  Export(const Export&) = delete;
  Export& operator=(const Export&) = delete;

  Managed managed{};
  Frame frame;  // keeps the memory alive (frame.owner)
  TensorLayout layout;

  void fill_tensor() {
    DLTensor& t = managed.dl_tensor;
    t.data = layout.data;
    t.device = layout.device;
    t.ndim = layout.ndim;
    t.dtype = layout.dtype;
    t.shape = layout.shape.data();
    t.strides = layout.strides.data();
    t.byte_offset = 0;
    managed.manager_ctx = this;
  }
};

using LegacyExport = Export<DLManagedTensor>;
using VersionedExport = Export<DLManagedTensorVersioned>;

void delete_legacy(DLManagedTensor* self) noexcept {
  if (self) delete static_cast<LegacyExport*>(self->manager_ctx);
}
void delete_versioned(DLManagedTensorVersioned* self) noexcept {
  if (self) delete static_cast<VersionedExport*>(self->manager_ctx);
}

}  // namespace

std::string_view to_string(FramePart part) noexcept {
  switch (part) {
    case FramePart::Plane0: return "luma";
    case FramePart::Plane1: return "chroma";
    case FramePart::Plane2: return "v";
    case FramePart::Stacked: return "stacked frame";
  }
  return "?";
}

std::string_view part_name(PixelFormat format, FramePart part) noexcept {
  if (part == FramePart::Stacked) return to_string(part);
  return plane_name(format, plane_index(part));
}

DLDevice dlpack_device(const Frame& f) {
  switch (f.memory) {
    case MemoryKind::Host: return DLDevice{kDLCPU, 0};
    case MemoryKind::Cuda: return DLDevice{kDLCUDA, f.device};
    case MemoryKind::GlBuffer:
      throw UsageError("DLPack export needs host or CUDA memory; this frame is in a GL buffer "
                       "(map it into CUDA or host memory first)");
    case MemoryKind::Vulkan:
      throw UsageError("DLPack export needs host or CUDA memory; this frame is in Vulkan memory "
                       "(import it into CUDA first)");
  }
  throw UsageError("DLPack export: unknown memory kind " + std::to_string(int(f.memory)));
}

namespace {

// `part` of a frame as a strided array, from its planes alone (no validation):
// a plane of one sample per element is (rows, width), of several (rows, width,
// components), packed inside a row.
TensorLayout describe(const Frame& f, FramePart part, DLDevice device) {
  TensorLayout l;
  l.device = device;
  l.sample_bytes = bytes_per_sample(f.format);
  l.dtype = DLDataType{std::uint8_t(is_float(f.format) ? kDLFloat : kDLUInt), std::uint8_t(8 * l.sample_bytes), 1};
  const auto bps = std::int64_t(l.sample_bytes);
  if (part == FramePart::Stacked) {
    const Plane& p = f.planes[0];
    l.data = p.data;
    l.ndim = 2;
    l.shape = {std::int64_t(f.height) + chroma_height(f.height), f.width, 0};
    l.strides = {std::int64_t(p.pitch) / bps, 1, 0};
    return l;
  }
  const int index = plane_index(part);
  if (index < 0 || index >= int(kMaxPlanes))
    throw UsageError("tensor_layout: unknown frame part " + std::to_string(int(part)));
  const Plane& p = f.planes[std::size_t(index)];
  l.data = p.data;
  const std::int64_t c = p.components;
  if (c == 1) {
    l.ndim = 2;
    l.shape = {p.height, p.width, 0};
    l.strides = {std::int64_t(p.pitch) / bps, 1, 0};
  } else {
    l.ndim = 3;
    l.shape = {p.height, p.width, c};
    l.strides = {std::int64_t(p.pitch) / bps, c, 1};
  }
  return l;
}

std::string tuple_text(const std::array<std::int64_t, 3>& v, int n) {
  std::string s = "(";
  for (int i = 0; i < n && i < 3; ++i) s += (i ? ", " : "") + std::to_string(v[std::size_t(i)]);
  return s + ")";
}

std::string pointer_text(const void* p) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

std::string device_text(DLDevice d) {
  return tuple_text({d.device_type, d.device_id, 0}, 2);
}

bool same_layout(const TensorLayout& a, const TensorLayout& b) noexcept {
  return a.device.device_type == b.device.device_type && a.device.device_id == b.device.device_id &&
         a.dtype.code == b.dtype.code && a.dtype.bits == b.dtype.bits && a.dtype.lanes == b.dtype.lanes &&
         a.sample_bytes == b.sample_bytes && a.ndim == b.ndim && a.shape == b.shape && a.strides == b.strides;
}

// What differs between `l` and the frame's `want`, first field first.
std::string layout_difference(const Frame& f, FramePart part, const TensorLayout& l, const TensorLayout& want) {
  if (l.device.device_type != want.device.device_type || l.device.device_id != want.device.device_id)
    return "device " + device_text(l.device) + " is not the frame's " + device_text(want.device);
  if (part == FramePart::Stacked && !is_stacked(f)) return "the frame is not stacked";
  if (l.dtype.code != want.dtype.code || l.dtype.bits != want.dtype.bits || l.dtype.lanes != want.dtype.lanes ||
      l.sample_bytes != want.sample_bytes)
    return "dtype of " + std::to_string(l.dtype.bits) + "-bit " + (l.dtype.code == kDLFloat ? "float " : "") +
           "samples is not the frame's " + std::to_string(want.dtype.bits) + "-bit " + std::string(to_string(f.format));
  if (l.ndim != want.ndim || l.shape != want.shape)
    return "shape " + tuple_text(l.shape, l.ndim) + " is not the plane's " + tuple_text(want.shape, want.ndim);
  return "strides " + tuple_text(l.strides, l.ndim) + " are not the plane's " + tuple_text(want.strides, want.ndim);
}

// A layout describes the part its data points at (plane 0's data with more
// rows than plane 0: the stacked frame). Throws UsageError when it points at
// no plane, or naming what differs from that part. Cheap when it agrees:
// pointers, shape and strides, no revalidation (the frame was validated when
// the layout was computed from it) and no strings.
void check_layout_describes(const Frame& f, const TensorLayout& l) {
  const int planes = plane_count(f.format) <= int(kMaxPlanes) ? plane_count(f.format) : 0;
  int index = -1;
  for (int i = 0; i < planes && index < 0; ++i) {
    if (l.data && l.data == f.planes[std::size_t(i)].data) index = i;
  }
  if (index < 0) {
    std::string which;
    for (int i = 0; i < planes; ++i)
      which += (i ? ", " : "") + std::string(plane_name(f.format, i)) + " " + pointer_text(f.planes[std::size_t(i)].data);
    throw UsageError("export_dlpack: the layout's data " + pointer_text(l.data) + " is no plane of this frame (" +
                     which + "): a layout describes the frame it was computed from");
  }
  FramePart part = plane_part(index);
  if (index == 0 && l.ndim == 2 && l.shape[0] != std::int64_t(f.planes[0].height)) part = FramePart::Stacked;
  const TensorLayout want = describe(f, part, dlpack_device(f));
  if (same_layout(l, want) && (part != FramePart::Stacked || is_stacked(f))) return;
  throw UsageError("export_dlpack: the layout does not describe this frame's " +
                   std::string(part_name(f.format, part)) + (part == FramePart::Stacked ? "" : " plane") + ": " +
                   layout_difference(f, part, l, want));
}

}  // namespace

TensorLayout tensor_layout(const Frame& f, FramePart part) {
  const DLDevice device = dlpack_device(f);
  validate(f);
  const int planes = plane_count(f.format);
  if (part == FramePart::Stacked && planes == 1) {
    throw UsageError("DLPack export of a whole frame: a " + std::string(to_string(f.format)) +
                     " frame is one plane; export that plane (pixels)");
  }
  if (part == FramePart::Stacked && f.format == PixelFormat::I420) {
    throw UsageError("DLPack export of a whole frame: an i420 frame has no stacked tensor (its u and v rows are "
                     "half as wide as luma's); export frame.luma, frame.u and frame.v");
  }
  if (part == FramePart::Stacked && !is_stacked(f)) {
    throw UsageError("DLPack export of a whole frame needs a stacked layout (even width, one pitch, "
                     "chroma right after luma); export frame.luma and frame.chroma instead");
  }
  if (part != FramePart::Stacked && (plane_index(part) < 0 || plane_index(part) >= planes)) {
    std::string names;
    for (int i = 0; i < planes; ++i) names += (i ? ", " : "") + std::string(plane_name(f.format, i));
    throw UsageError("DLPack export: plane " + std::to_string(plane_index(part)) + " of a " +
                     std::string(to_string(f.format)) + " frame does not exist (it has " + std::to_string(planes) +
                     (planes == 1 ? " plane: " : " planes: ") + names + ")");
  }
  return describe(f, part, device);
}

DLManagedTensor* export_dlpack(const Frame& frame, FramePart part) {
  return export_dlpack(frame, tensor_layout(frame, part));
}

DLManagedTensorVersioned* export_dlpack_versioned(const Frame& frame, FramePart part) {
  return export_dlpack_versioned(frame, tensor_layout(frame, part));
}

DLManagedTensor* export_dlpack(const Frame& frame, const TensorLayout& l) {
  check_layout_describes(frame, l);
  auto* e = new LegacyExport(frame, l);
  e->fill_tensor();
  e->managed.deleter = &delete_legacy;
  return &e->managed;
}

DLManagedTensorVersioned* export_dlpack_versioned(const Frame& frame, const TensorLayout& l) {
  check_layout_describes(frame, l);
  auto* e = new VersionedExport(frame, l);
  e->fill_tensor();
  e->managed.version = DLPackVersion{kDLPackMajorVersion, kDLPackMinorVersion};
  e->managed.flags = kDLPackFlagReadOnly;
  e->managed.deleter = &delete_versioned;
  return &e->managed;
}

detail::DlpackExportCounts detail::dlpack_export_counts() noexcept {
  return DlpackExportCounts{g_live_exports.load(std::memory_order_relaxed), g_exported.load(std::memory_order_relaxed),
                            g_deleted.load(std::memory_order_relaxed)};
}

}  // namespace handoff
