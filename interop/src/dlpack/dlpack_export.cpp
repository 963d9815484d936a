#include <handoff/dlpack.hpp>
#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/testing.hpp>

#include <atomic>

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
    case FramePart::Luma: return "luma";
    case FramePart::Chroma: return "chroma";
    case FramePart::Stacked: return "stacked frame";
  }
  return "?";
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

TensorLayout tensor_layout(const Frame& f, FramePart part) {
  TensorLayout l;
  l.device = dlpack_device(f);
  validate(f);
  l.sample_bytes = bytes_per_sample(f.format);
  l.dtype = DLDataType{kDLUInt, std::uint8_t(8 * l.sample_bytes), 1};
  const auto bps = std::int64_t(l.sample_bytes);
  switch (part) {
    case FramePart::Luma: {
      const Plane& p = f.planes[0];
      l.data = p.data;
      l.ndim = 2;
      l.shape = {p.height, p.width, 0};
      l.strides = {std::int64_t(p.pitch) / bps, 1, 0};
      break;
    }
    case FramePart::Chroma: {
      const Plane& p = f.planes[1];
      l.data = p.data;
      l.ndim = 3;
      l.shape = {p.height, p.width, 2};
      l.strides = {std::int64_t(p.pitch) / bps, 2, 1};
      break;
    }
    case FramePart::Stacked: {
      if (!is_stacked(f)) {
        throw UsageError("DLPack export of a whole frame needs a stacked layout (even width, one pitch, "
                         "chroma right after luma); export frame.luma and frame.chroma instead");
      }
      const Plane& p = f.planes[0];
      l.data = p.data;
      l.ndim = 2;
      l.shape = {std::int64_t(f.height) + chroma_height(f.height), f.width, 0};
      l.strides = {std::int64_t(p.pitch) / bps, 1, 0};
      break;
    }
    default: throw UsageError("tensor_layout: unknown frame part " + std::to_string(int(part)));
  }
  return l;
}

DLManagedTensor* export_dlpack(const Frame& frame, FramePart part) {
  return export_dlpack(frame, tensor_layout(frame, part));
}

DLManagedTensorVersioned* export_dlpack_versioned(const Frame& frame, FramePart part) {
  return export_dlpack_versioned(frame, tensor_layout(frame, part));
}

DLManagedTensor* export_dlpack(const Frame& frame, const TensorLayout& l) {
  auto* e = new LegacyExport(frame, l);
  e->fill_tensor();
  e->managed.deleter = &delete_legacy;
  return &e->managed;
}

DLManagedTensorVersioned* export_dlpack_versioned(const Frame& frame, const TensorLayout& l) {
  auto* e = new VersionedExport(frame, l);
  e->fill_tensor();
  e->managed.version = DLPackVersion{kDLPackMajorVersion, kDLPackMinorVersion};
  e->managed.flags = kDLPackFlagReadOnly;
  e->managed.deleter = &delete_versioned;
  return &e->managed;
}

testing::ExportCounts testing::export_counts() noexcept {
  return testing::ExportCounts{g_live_exports.load(std::memory_order_relaxed), g_exported.load(std::memory_order_relaxed),
                      g_deleted.load(std::memory_order_relaxed)};
}

}  // namespace handoff
