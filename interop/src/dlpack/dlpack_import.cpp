#include <handoff/dlpack.hpp>
#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>

#include "frame/live_frames.hpp"

#include <limits>
#include <sstream>
#include <utility>

namespace handoff {

namespace {

std::string dtype_name(DLDataType t) {
  std::string s;
  switch (t.code) {
    case kDLInt: s = "int"; break;
    case kDLUInt: s = "uint"; break;
    case kDLFloat: s = "float"; break;
    case kDLBfloat: s = "bfloat"; break;
    case kDLComplex: s = "complex"; break;
    default: s = "type" + std::to_string(int(t.code)) + "_"; break;
  }
  s += std::to_string(int(t.bits));
  if (t.lanes != 1) s += "x" + std::to_string(int(t.lanes));
  return s;
}

std::string device_name(DLDevice d) {
  std::string s;
  switch (d.device_type) {
    case kDLCPU: s = "cpu"; break;
    case kDLCUDA: s = "cuda"; break;
    case kDLCUDAHost: s = "cuda_host"; break;
    case kDLCUDAManaged: s = "cuda_managed"; break;
    default: s = "device type " + std::to_string(int(d.device_type)); break;
  }
  return s + ":" + std::to_string(d.device_id);
}

std::string tuple(const std::int64_t* v, int n) {
  std::string s = "(";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (n == 1 ? ",)" : ")");
}

bool same_device(DLDevice a, DLDevice b) { return a.device_type == b.device_type && a.device_id == b.device_id; }

// ndim and dtype of both planes, checked first: the shape checks read shape[0..ndim).
void check_ndim_and_dtype(const DLTensor& t, int plane, PixelFormat format) {
  const std::string name(plane_name(plane));
  const std::string fmt(to_string(format));
  const std::size_t bps = bytes_per_sample(format);
  const int want = plane == 0 ? 2 : 3;
  if (t.ndim != want) {
    throw InvalidFrame(name + ".ndim", "ndim " + std::to_string(t.ndim) + " does not fit " + fmt + " " + name +
                                           " (expected " + std::to_string(want) +
                                           (plane == 0 ? ": height, width)" : ": height, width, 2)"));
  }
  if (t.shape == nullptr) throw InvalidFrame(name + ".shape", "shape pointer is null");
  if (t.dtype.code != kDLUInt || t.dtype.bits != 8 * bps || t.dtype.lanes != 1) {
    throw InvalidFrame(name + ".dtype", "dtype " + dtype_name(t.dtype) + " does not fit " + fmt + " (uint" +
                                            std::to_string(8 * bps) + " expected)");
  }
}

// The frame size: luma's shape gives it, chroma's must match it.
void check_shapes(const DLTensor& luma, const DLTensor& chroma, Frame& f) {
  const std::int64_t h = luma.shape[0], w = luma.shape[1];
  for (auto [name, v] : {std::pair{"height", h}, std::pair{"width", w}}) {
    if (v < 0) throw InvalidFrame("luma.shape", "shape " + tuple(luma.shape, 2) + ": " + name + " is negative");
    if (std::string problem = dimension_problem(name, std::uint64_t(v)); !problem.empty())
      throw InvalidFrame("luma.shape", "shape " + tuple(luma.shape, 2) + ": " + problem);
  }
  f.width = std::uint32_t(w);
  f.height = std::uint32_t(h);
  const std::int64_t want_chroma[3] = {chroma_height(f.height), chroma_width(f.width), 2};
  if (chroma.shape[0] != want_chroma[0] || chroma.shape[1] != want_chroma[1] || chroma.shape[2] != 2) {
    throw InvalidFrame("chroma.shape", "shape " + tuple(chroma.shape, 3) + " does not fit " +
                                           std::string(to_string(f.format)) + " " + std::to_string(f.width) + "x" +
                                           std::to_string(f.height) + ": expected " + tuple(want_chroma, 3));
  }
}

// Both planes on one supported device: f.memory, f.device and the CUDA context.
void place_on_device(const DLTensor& luma, const DLTensor& chroma, const ImportOptions& o, Frame& f) {
  if (!same_device(luma.device, chroma.device)) {
    throw InvalidFrame("chroma.device", "chroma is on " + device_name(chroma.device) + ", luma on " +
                                            device_name(luma.device) + ": both planes must be on one device");
  }
  switch (luma.device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      f.memory = MemoryKind::Host;
      f.device = -1;
      break;
    case kDLCUDA:
    case kDLCUDAManaged:
      if (luma.device.device_id < 0) {
        throw InvalidFrame("luma.device", "CUDA device ordinal " + std::to_string(luma.device.device_id) +
                                              " is negative");
      }
      f.memory = MemoryKind::Cuda;
      f.device = luma.device.device_id;
      f.cuda_context = o.cuda_context;
      break;
    default:
      throw InvalidFrame("luma.device", "device " + device_name(luma.device) +
                                            " is not supported (host or CUDA memory only)");
  }
}

// The row stride in elements: only it is free, everything else packed (none
// given: compact rows).
std::int64_t row_stride(const DLTensor& t, int plane, const PlaneLayout& l) {
  const std::string name(plane_name(plane));
  const std::int64_t row_elems = std::int64_t(l.width) * l.components;
  if (t.strides == nullptr) return row_elems;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.strides[d] < 0) {
      throw InvalidFrame(name + ".strides", "strides " + tuple(t.strides, t.ndim) +
                                                " have a negative stride (flipped views are not supported)");
    }
  }
  // Inner dimensions must be packed; a dimension of extent 1 may carry any stride.
  const bool packed = plane == 0 ? (t.shape[1] == 1 || t.strides[1] == 1)
                                 : ((t.shape[1] == 1 || t.strides[1] == 2) && t.strides[2] == 1);
  if (!packed) {
    throw InvalidFrame(name + ".strides",
                       "strides " + tuple(t.strides, t.ndim) + " (elements) do not describe packed rows: " +
                           (plane == 0 ? std::string("expected (pitch, 1)") : std::string("expected (pitch, 2, 1)")) +
                           "; only the row stride may differ from a compact layout");
  }
  std::int64_t stride = t.strides[0];
  if (l.height == 1 && stride < row_elems) stride = row_elems;  // one row: its stride is unused
  if (stride < row_elems) {
    throw InvalidFrame(name + ".strides", "row stride " + std::to_string(stride) +
                                              " elements is below the packed row of " + std::to_string(row_elems) +
                                              " elements (strides " + tuple(t.strides, t.ndim) + ")");
  }
  return stride;
}

// data + byte_offset, checked: not null, no overflow, sample-aligned.
void* plane_address(const DLTensor& t, int plane, std::size_t bps) {
  const std::string name(plane_name(plane));
  if (t.data == nullptr) throw InvalidFrame(name + ".data", "data pointer is null");
  std::uintptr_t addr = 0;
  if (__builtin_add_overflow(reinterpret_cast<std::uintptr_t>(t.data), t.byte_offset, &addr)) {
    throw InvalidFrame(name + ".byte_offset", "data + byte_offset " + std::to_string(t.byte_offset) +
                                                  " overflows the address space");
  }
  if (addr % bps != 0) {
    std::ostringstream a;
    a << std::hex << addr;
    throw InvalidFrame(name + ".byte_offset", "data + byte_offset = 0x" + a.str() + " is not aligned to " +
                                                  std::to_string(bps) + "-byte samples");
  }
  return reinterpret_cast<void*>(addr);
}

// One plane of the frame `f` (format and size set): pitch, address and shape.
Plane describe_plane(const DLTensor& t, int plane, const Frame& f) {
  const std::size_t bps = bytes_per_sample(f.format);
  const PlaneLayout l = plane_layout(f.format, f.width, f.height, plane);
  const std::int64_t stride = row_stride(t, plane, l);
  std::int64_t pitch = 0;
  if (__builtin_mul_overflow(stride, std::int64_t(bps), &pitch)) {
    throw InvalidFrame(std::string(plane_name(plane)) + ".strides",
                       "row stride " + std::to_string(stride) + " overflows in bytes");
  }
  Plane p;
  p.data = plane_address(t, plane, bps);
  p.pitch = std::size_t(pitch);
  p.width = l.width;
  p.height = l.height;
  p.components = l.components;
  return p;
}

// The frame a pair of tensors describes, without an owner. The checks run in
// this order, so that each reads only what the ones before it vouched for.
Frame describe(const DLTensor& luma, const DLTensor& chroma, const ImportOptions& o) {
  require_format(o.format, {PixelFormat::NV12, PixelFormat::P010}, "a luma and a chroma tensor");
  check_ndim_and_dtype(luma, 0, o.format);
  check_ndim_and_dtype(chroma, 1, o.format);
  Frame f;
  f.format = o.format;
  f.colorimetry = o.colorimetry;
  check_shapes(luma, chroma, f);
  place_on_device(luma, chroma, o, f);
  f.planes[0] = describe_plane(luma, 0, f);
  f.planes[1] = describe_plane(chroma, 1, f);
  validate(f);
  return f;
}

struct ImportedStorage {
  detail::LiveFrameToken token;
  std::shared_ptr<const void> keep_alive;
  ProducerTensor luma;
  ProducerTensor chroma;
  ~ImportedStorage() {
    // Deleters first, then whatever the caller asked us to keep alive.
    luma.reset();
    chroma.reset();
  }
};

void check_version(const ProducerTensor& t, const char* name) {
  if (!t) throw InvalidFrame(std::string(name), "no tensor (empty ProducerTensor)");
  if (t.versioned() && t.version().major != kDLPackMajorVersion) {
    throw InvalidFrame(std::string(name) + ".version",
                       "DLPack version " + std::to_string(t.version().major) + "." +
                           std::to_string(t.version().minor) + " is not supported (major version 1 expected)");
  }
}

}  // namespace

ProducerTensor::ProducerTensor(ProducerTensor&& o) noexcept
    : legacy_(std::exchange(o.legacy_, nullptr)), versioned_(std::exchange(o.versioned_, nullptr)) {}

ProducerTensor& ProducerTensor::operator=(ProducerTensor&& o) noexcept {
  if (this != &o) {
    reset();
    legacy_ = std::exchange(o.legacy_, nullptr);
    versioned_ = std::exchange(o.versioned_, nullptr);
  }
  return *this;
}

const DLTensor* ProducerTensor::tensor() const noexcept {
  if (legacy_) return &legacy_->dl_tensor;
  if (versioned_) return &versioned_->dl_tensor;
  return nullptr;
}

DLPackVersion ProducerTensor::version() const noexcept {
  return versioned_ ? versioned_->version : DLPackVersion{0, 0};
}

void ProducerTensor::reset() noexcept {
  if (auto* t = std::exchange(legacy_, nullptr); t && t->deleter) t->deleter(t);
  if (auto* t = std::exchange(versioned_, nullptr); t && t->deleter) t->deleter(t);
}

Frame frame_from_dltensors(const DLTensor& luma, const DLTensor& chroma, const ImportOptions& options) {
  Frame f = describe(luma, chroma, options);
  auto storage = std::make_shared<ImportedStorage>();
  storage->keep_alive = options.keep_alive;
  f.owner = std::move(storage);
  return f;
}

Frame import_dlpack(ProducerTensor& luma, ProducerTensor& chroma, const ImportOptions& options) {
  check_version(luma, "luma");
  check_version(chroma, "chroma");
  Frame f = describe(*luma.tensor(), *chroma.tensor(), options);
  auto storage = std::make_shared<ImportedStorage>();  // may throw bad_alloc: tensors still the caller's
  storage->keep_alive = options.keep_alive;
  storage->luma = std::move(luma);  // ownership passes to the frame: noexcept from here on
  storage->chroma = std::move(chroma);
  f.owner = std::move(storage);
  return f;
}

std::array<std::int64_t, 3> element_strides(std::string_view field, const std::int64_t* byte_strides, int ndim,
                                            std::size_t sample_bytes) {
  std::array<std::int64_t, 3> out{};
  if (ndim < 0 || ndim > 3) {
    throw InvalidFrame(std::string(field), "ndim " + std::to_string(ndim) + " is not 2 or 3");
  }
  for (int d = 0; d < ndim; ++d) {
    if (byte_strides[d] % std::int64_t(sample_bytes) != 0) {
      throw InvalidFrame(std::string(field), "byte strides " + tuple(byte_strides, ndim) +
                                                 " are not a whole number of " + std::to_string(sample_bytes) +
                                                 "-byte samples");
    }
    out[std::size_t(d)] = byte_strides[d] / std::int64_t(sample_bytes);
  }
  return out;
}

}  // namespace handoff
