#include <handoff/dlpack.hpp>
#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>

#include "frame/live_frames.hpp"

#include <array>
#include <limits>
#include <span>
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

// The components of a format's plane, spelled for messages: "(R, G, B)".
std::string channel_names(PixelFormat f, int plane) {
  switch (f) {
    case PixelFormat::NV12:
    case PixelFormat::P010: return plane == 1 ? " (U, V)" : "";
    case PixelFormat::YUYV: return " (Y, then U or V)";
    case PixelFormat::UYVY: return " (U or V, then Y)";
    case PixelFormat::RGB8: return " (R, G, B)";
    case PixelFormat::BGR8: return " (B, G, R)";
    case PixelFormat::RGBA8: return " (R, G, B, A)";
    case PixelFormat::BGRA8: return " (B, G, R, A)";
    default: return "";
  }
}

std::string dtype_of(PixelFormat f) {
  return (is_float(f) ? "float" : "uint") + std::to_string(8 * bytes_per_sample(f));
}

// Components per element of `plane` (the same for every frame size).
std::uint32_t components_of(PixelFormat f, int plane) { return plane_layout(f, 2, 2, plane).components; }

// ndim, channels and dtype of a plane, checked first: the shape checks read
// shape[0..ndim). A grey plane may carry a channel axis of 1.
void check_ndim_and_dtype(const DLTensor& t, int plane, PixelFormat format) {
  const std::string name(plane_name(format, plane));
  const std::string fmt(to_string(format));
  const std::uint32_t c = components_of(format, plane);
  const int want = c == 1 ? 2 : 3;
  const bool channel_axis_ok = c == 1 && plane_count(format) == 1;  // grey as (H, W, 1)
  if (t.ndim != want && !(channel_axis_ok && t.ndim == 3)) {
    throw InvalidFrame(name + ".ndim", "ndim " + std::to_string(t.ndim) + " does not fit " + fmt + " " + name +
                                           " (expected " + std::to_string(want) +
                                           (c == 1 ? ": height, width)"
                                                   : ": height, width, " + std::to_string(c) + ")"));
  }
  if (t.shape == nullptr) throw InvalidFrame(name + ".shape", "shape pointer is null");
  if (t.ndim == 3 && t.shape[2] != std::int64_t(c)) {
    throw InvalidFrame(name + ".shape", "shape " + tuple(t.shape, t.ndim) + " does not fit " + fmt + ": " +
                                            std::to_string(c) + (c == 1 ? " channel" : " channels") +
                                            channel_names(format, plane) + " expected, not " +
                                            std::to_string(t.shape[2]));
  }
  const std::uint8_t code = is_float(format) ? kDLFloat : kDLUInt;
  if (t.dtype.code != code || t.dtype.bits != 8 * bytes_per_sample(format) || t.dtype.lanes != 1) {
    throw InvalidFrame(name + ".dtype", "dtype " + dtype_name(t.dtype) + " does not fit " + fmt + " (" +
                                            dtype_of(format) + " expected)");
  }
}

// The frame size: plane 0's shape gives it (yuyv / uyvy: W' = the width, even),
// the other planes' must match it.
void check_shapes(std::span<const DLTensor* const> planes, Frame& f) {
  const DLTensor& first = *planes[0];
  const std::string first_name(plane_name(f.format, 0));
  const std::int64_t h = first.shape[0], w = first.shape[1];
  for (auto [name, v] : {std::pair{"height", h}, std::pair{"width", w}}) {
    if (v < 0)
      throw InvalidFrame(first_name + ".shape", "shape " + tuple(first.shape, first.ndim) + ": " + name + " is negative");
    if (std::string problem = dimension_problem(name, std::uint64_t(v)); !problem.empty())
      throw InvalidFrame(first_name + ".shape", "shape " + tuple(first.shape, first.ndim) + ": " + problem);
  }
  if ((f.format == PixelFormat::YUYV || f.format == PixelFormat::UYVY) && w % 2 != 0) {
    throw InvalidFrame(first_name + ".shape", "shape " + tuple(first.shape, first.ndim) + ": width " +
                                                  std::to_string(w) + " is odd; " + std::string(to_string(f.format)) +
                                                  " rows hold pairs of pixels");
  }
  f.width = std::uint32_t(w);
  f.height = std::uint32_t(h);
  for (std::size_t i = 1; i < planes.size(); ++i) {
    const DLTensor& t = *planes[i];
    const PlaneLayout l = plane_layout(f.format, f.width, f.height, int(i));
    const std::int64_t want[3] = {l.height, l.width, l.components};
    const int n = l.components == 1 ? 2 : 3;
    if (t.shape[0] != want[0] || t.shape[1] != want[1] || (t.ndim == 3 && t.shape[2] != want[2])) {
      throw InvalidFrame(std::string(plane_name(f.format, int(i))) + ".shape",
                         "shape " + tuple(t.shape, t.ndim) + " does not fit " + std::string(to_string(f.format)) +
                             " " + std::to_string(f.width) + "x" + std::to_string(f.height) + ": expected " +
                             tuple(want, n));
    }
  }
}

// Every plane on one supported device: f.memory, f.device and the CUDA context.
void place_on_device(std::span<const DLTensor* const> planes, const ImportOptions& o, Frame& f) {
  const DLTensor& first = *planes[0];
  const std::string first_name(plane_name(f.format, 0));
  for (std::size_t i = 1; i < planes.size(); ++i) {
    if (!same_device(first.device, planes[i]->device)) {
      const std::string name(plane_name(f.format, int(i)));
      throw InvalidFrame(name + ".device", name + " is on " + device_name(planes[i]->device) + ", " + first_name +
                                               " on " + device_name(first.device) +
                                               ": every plane must be on one device");
    }
  }
  switch (first.device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      f.memory = MemoryKind::Host;
      f.device = -1;
      break;
    case kDLCUDA:
    case kDLCUDAManaged:
      if (first.device.device_id < 0) {
        throw InvalidFrame(first_name + ".device", "CUDA device ordinal " + std::to_string(first.device.device_id) +
                                                       " is negative");
      }
      f.memory = MemoryKind::Cuda;
      f.device = first.device.device_id;
      f.cuda_context = o.cuda_context;
      break;
    default:
      throw InvalidFrame(first_name + ".device", "device " + device_name(first.device) +
                                                     " is not supported (host or CUDA memory only)");
  }
}

// The row stride in elements: only it is free, everything else packed (none
// given: compact rows).
std::int64_t row_stride(const DLTensor& t, const std::string& name, const PlaneLayout& l) {
  const std::int64_t c = l.components;
  const std::int64_t row_elems = std::int64_t(l.width) * c;
  if (t.strides == nullptr) return row_elems;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.strides[d] < 0) {
      throw InvalidFrame(name + ".strides", "strides " + tuple(t.strides, t.ndim) +
                                                " have a negative stride (flipped views are not supported)");
    }
  }
  // Inner dimensions must be packed; a dimension of extent 1 may carry any stride.
  const bool packed = (t.shape[1] == 1 || t.strides[1] == c) && (t.ndim < 3 || t.shape[2] == 1 || t.strides[2] == 1);
  if (!packed) {
    const std::string want = t.ndim == 2 ? "(pitch, 1)" : "(pitch, " + std::to_string(c) + ", 1)";
    throw InvalidFrame(name + ".strides", "strides " + tuple(t.strides, t.ndim) +
                                              " (elements) do not describe packed rows" +
                                              (t.ndim == 3 && c > 1 ? " (a pixel's channels next to each other, "
                                                                      "pixels next to each other)"
                                                                    : "") +
                                              ": expected " + want +
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
void* plane_address(const DLTensor& t, const std::string& name, std::size_t bps) {
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
  const std::string name(plane_name(f.format, plane));
  const std::size_t bps = bytes_per_sample(f.format);
  const PlaneLayout l = plane_layout(f.format, f.width, f.height, plane);
  const std::int64_t stride = row_stride(t, name, l);
  std::int64_t pitch = 0;
  if (__builtin_mul_overflow(stride, std::int64_t(bps), &pitch)) {
    throw InvalidFrame(name + ".strides", "row stride " + std::to_string(stride) + " overflows in bytes");
  }
  Plane p;
  p.data = plane_address(t, name, bps);
  p.pitch = std::size_t(pitch);
  p.width = l.width;
  p.height = l.height;
  p.components = l.components;
  return p;
}

void check_plane_count(std::size_t given, PixelFormat format) {
  const int n = plane_count(format);
  if (given == std::size_t(n)) return;
  std::string names;
  for (int i = 0; i < n; ++i) names += (i ? ", " : "") + std::string(plane_name(format, i));
  throw InvalidFrame("planes", std::to_string(given) + (given == 1 ? " tensor does" : " tensors do") + " not fit " +
                                   std::string(to_string(format)) + ": it takes " + std::to_string(n) +
                                   (n == 1 ? " (" : " (") + names + ")");
}

// The frame the tensors describe, without an owner. The checks run in this
// order, so that each reads only what the ones before it vouched for.
Frame describe(std::span<const DLTensor* const> planes, const ImportOptions& o) {
  if (o.format > PixelFormat::GRAY32F) {
    throw InvalidFrame("format", "format value " + std::to_string(int(o.format)) + " is not one of " +
                                     spellings<PixelFormat>());
  }
  check_plane_count(planes.size(), o.format);
  for (std::size_t i = 0; i < planes.size(); ++i) {
    if (planes[i] == nullptr)
      throw InvalidFrame(std::string(plane_name(o.format, int(i))), "no tensor (null pointer)");
    check_ndim_and_dtype(*planes[i], int(i), o.format);
  }
  Frame f;
  f.format = o.format;
  f.colorimetry = o.colorimetry;
  check_shapes(planes, f);
  place_on_device(planes, o, f);
  for (std::size_t i = 0; i < planes.size(); ++i) f.planes[i] = describe_plane(*planes[i], int(i), f);
  validate(f);
  return f;
}

struct ImportedStorage {
  detail::LiveFrameToken token;
  std::shared_ptr<const void> keep_alive;
  std::array<ProducerTensor, kMaxPlanes> tensors;
  ~ImportedStorage() {
    // Deleters first, then whatever the caller asked us to keep alive.
    for (auto& t : tensors) t.reset();
  }
};

void check_version(const ProducerTensor& t, const std::string& name) {
  if (!t) throw InvalidFrame(name, "no tensor (empty ProducerTensor)");
  if (t.versioned() && t.version().major != kDLPackMajorVersion) {
    throw InvalidFrame(name + ".version",
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

Frame frame_from_dltensors(std::span<const DLTensor* const> planes, const ImportOptions& options) {
  Frame f = describe(planes, options);
  auto storage = std::make_shared<ImportedStorage>();
  storage->keep_alive = options.keep_alive;
  f.owner = std::move(storage);
  return f;
}

Frame frame_from_dltensors(const DLTensor& luma, const DLTensor& chroma, const ImportOptions& options) {
  const DLTensor* planes[2] = {&luma, &chroma};
  return frame_from_dltensors(planes, options);
}

Frame import_dlpack(std::span<ProducerTensor> planes, const ImportOptions& options) {
  if (planes.size() > kMaxPlanes) check_plane_count(planes.size(), options.format);
  std::array<const DLTensor*, kMaxPlanes> tensors{};
  for (std::size_t i = 0; i < planes.size(); ++i) {
    check_version(planes[i], std::string(plane_name(options.format, int(i))));
    tensors[i] = planes[i].tensor();
  }
  Frame f = describe(std::span(tensors.data(), planes.size()), options);
  auto storage = std::make_shared<ImportedStorage>();  // may throw bad_alloc: tensors still the caller's
  storage->keep_alive = options.keep_alive;
  // Ownership passes to the frame: noexcept from here on.
  for (std::size_t i = 0; i < planes.size(); ++i) storage->tensors[i] = std::move(planes[i]);
  f.owner = std::move(storage);
  return f;
}

Frame import_dlpack(ProducerTensor& luma, ProducerTensor& chroma, const ImportOptions& options) {
  ProducerTensor planes[2] = {std::move(luma), std::move(chroma)};
  try {
    Frame f = import_dlpack(std::span<ProducerTensor>(planes), options);
    return f;
  } catch (...) {
    luma = std::move(planes[0]);  // on failure both are the caller's again, untouched
    chroma = std::move(planes[1]);
    throw;
  }
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
