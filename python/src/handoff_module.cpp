// The Python module `handoff._handoff` (re-exported by the `handoff` package).
//
// Frames and planes export through DLPack (__dlpack__ / __dlpack_device__),
// the CUDA Array Interface (CUDA planes) and the buffer protocol /
// __array_interface__ (host planes), always read-only: the producer still owns
// the surface. Frame.from_planes imports any DLPack, CAI or buffer producer.
#include <handoff/cuda.hpp>
#include <handoff/diagnostics.hpp>
#include <handoff/dlpack.hpp>
#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>

#include "capsules.hpp"
#include "module_common.hpp"
#if HANDOFF_PYTHON_VIEWER
#include "live_bindings.hpp"
#include "recording_bindings.hpp"
#include "viewer_bindings.hpp"
#endif

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace handoff::py {
namespace abi = cuda::abi;
namespace {

// --- names ----------------------------------------------------------------------
std::string_view memory_name(MemoryKind m) {
  switch (m) {
    case MemoryKind::Host: return "host";
    case MemoryKind::Cuda: return "cuda";
    case MemoryKind::GlBuffer: return "gl_buffer";
    case MemoryKind::Vulkan: return "vulkan";
  }
  return "?";
}

bool python_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

const cuda::Driver& cuda_driver() {
  return without_gil([]() -> const cuda::Driver& { return cuda::driver(); });
}

// --- Python-side objects ----------------------------------------------------------
struct PyPlane {
  Frame frame;
  FramePart part = FramePart::Luma;
  bool writable = false;
  std::optional<TensorLayout> layout;  // computed once: frames are immutable
};

struct PyProducers;

// The producers of each frame imported from Python, by the frame's owner
// (Frame::owner.get()), for the garbage collector: a producer may refer back
// to its frame (frame -> producer -> frame), a cycle only the collector can
// free, and only if Frame and Plane show it the producers (tp_traverse).
// Entries go with their PyProducers, on whatever thread that ends: a mutex.
std::mutex producers_mutex;
std::unordered_map<const void*, PyProducers*>& producers_by_owner() {
  static auto* m = new std::unordered_map<const void*, PyProducers*>;  // never destroyed: frames may outlive exit
  return *m;
}

// What a frame imported from Python keeps alive: the producer objects, their
// DLPack tensors (deleters run here, once), buffer views and the CUDA context.
struct PyProducers {
  std::vector<nb::object> objects;
  ProducerTensor tensors[kMaxPlanes];
  std::optional<Py_buffer> buffers[kMaxPlanes];
  cuda::PrimaryContext context;
  const void* owner = nullptr;  // the frame's owner, once registered

  PyProducers() = default;
  PyProducers(const PyProducers&) = delete;
  PyProducers& operator=(const PyProducers&) = delete;
  void register_owner(const void* frame_owner) {
    const std::lock_guard lock(producers_mutex);
    owner = frame_owner;
    producers_by_owner()[owner] = this;
  }
  ~PyProducers() {
    if (owner) {
      const std::lock_guard lock(producers_mutex);
      producers_by_owner().erase(owner);
    }
    // The last copy of a frame may go on any thread (a C++ worker): take the GIL.
    // While the interpreter shuts down, leak rather than call into it.
    if (!Py_IsInitialized() || python_finalizing()) {
      for (auto& o : objects) (void)o.release();
      for (auto& t : tensors) t.release();
      return;
    }
    {
      nb::gil_scoped_acquire gil;
      for (auto& t : tensors) t.reset();
      for (auto& b : buffers) {
        if (b) PyBuffer_Release(&*b);
      }
      objects.clear();
    }
    // The last retain of a primary context resets it, which waits for the GPU.
    without_gil([this] { context.reset(); });
  }
};

// --- export -----------------------------------------------------------------------
DLDevice part_device(const Frame& f) {
  try {
    return dlpack_device(f);
  } catch (const UsageError& e) {
    throw nb::buffer_error(e.what());
  }
}

nb::object dlpack_export(const Frame& f, FramePart part, const TensorLayout* cached, nb::handle stream,
                         nb::handle max_version, nb::handle dl_device, nb::handle copy) {
  const DlpackRequest r = dlpack_request(part_device(f), stream, max_version, dl_device, copy);
  try {
    if (r.copy) {
      const Frame c = host_copy(f);  // the tensor holds it through its owner
      return dlpack_capsule(
          r.versioned, kDLPackFlagIsCopied, [&] { return export_dlpack_versioned(c, part); },
          [&] { return export_dlpack(c, part); });
    }
    return dlpack_capsule(
        r.versioned, kDLPackFlagReadOnly,
        [&] { return cached ? export_dlpack_versioned(f, *cached) : export_dlpack_versioned(f, part); },
        [&] { return cached ? export_dlpack(f, *cached) : export_dlpack(f, part); });
  } catch (const UsageError& e) {
    if (dynamic_cast<const InvalidFrame*>(&e)) throw;
    throw nb::buffer_error(e.what());  // GL / Vulkan memory, a frame that is not stacked
  }
}

nb::tuple dlpack_device_tuple(const Frame& f) {
  const DLDevice d = part_device(f);
  return nb::make_tuple(int(d.device_type), d.device_id);
}

nb::tuple to_tuple(const std::array<std::int64_t, 3>& v, int n, std::int64_t scale = 1) {
  nb::list l;
  for (int i = 0; i < n; ++i) l.append(v[std::size_t(i)] * scale);
  return nb::tuple(l);
}

// NumPy's spelling of a format's samples: "|u1", "<u2", "<f4".
const char* typestr_of(PixelFormat f) {
  if (is_float(f)) return "<f4";
  return bytes_per_sample(f) == 1 ? "|u1" : "<u2";
}
const char* dtype_text(PixelFormat f) {
  if (is_float(f)) return "float32";
  return bytes_per_sample(f) == 1 ? "uint8" : "uint16";
}

// The dict of the CUDA Array Interface (v3) or NumPy's __array_interface__ (v3).
nb::dict array_interface(const Frame& f, FramePart part) {
  const TensorLayout l = tensor_layout(f, part);
  nb::dict d;
  d["shape"] = to_tuple(l.shape, l.ndim);
  d["typestr"] = typestr_of(f.format);
  d["data"] = nb::make_tuple(reinterpret_cast<std::uintptr_t>(l.data), true);  // read-only
  d["strides"] = to_tuple(l.strides, l.ndim, std::int64_t(l.sample_bytes));
  d["version"] = 3;
  return d;
}

nb::dict cuda_array_interface(const Frame& f, FramePart part) {
  if (f.memory != MemoryKind::Cuda) {
    throw nb::attribute_error(("__cuda_array_interface__: this plane is in " + std::string(memory_name(f.memory)) +
                               " memory, not CUDA memory")
                                  .c_str());
  }
  nb::dict d = array_interface(f, part);
  d["stream"] = nb::none();  // complete when published: no synchronisation needed
  return d;
}

nb::dict host_array_interface(const Frame& f, FramePart part) {
  if (f.memory != MemoryKind::Host) {
    throw nb::attribute_error(("__array_interface__: this plane is in " + std::string(memory_name(f.memory)) +
                               " memory, not host memory")
                                  .c_str());
  }
  return array_interface(f, part);
}

// Buffer protocol for host planes (read-only).
struct BufferShape {
  Py_ssize_t shape[3];
  Py_ssize_t strides[3];
};

int plane_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  PyPlane* p = nb::inst_ptr<PyPlane>(self);
  if (p->frame.memory != MemoryKind::Host) {
    PyErr_Format(PyExc_BufferError, "buffer protocol: this plane is in %s memory, not host memory",
                 std::string(memory_name(p->frame.memory)).c_str());
    return -1;
  }
  if (flags & PyBUF_WRITABLE) {
    PyErr_SetString(PyExc_BufferError, "buffer protocol: handoff planes are read-only (the producer owns them)");
    return -1;
  }
  TensorLayout l;
  try {
    l = tensor_layout(p->frame, p->part);
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
    return -1;
  }
  // Rows follow each other (elements and samples always do): C-contiguous.
  const bool packed = l.strides[0] == (l.ndim == 2 ? l.shape[1] : l.shape[1] * l.shape[2]);
  if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !packed) {
    PyErr_SetString(PyExc_BufferError, "buffer protocol: the plane is pitched; request strides (PyBUF_STRIDES)");
    return -1;
  }
  // A contiguity request is met exactly or refused (the buffer protocol's rule):
  // Fortran order only where at most one dimension is longer than 1.
  const int long_dims =
      int(std::count_if(l.shape.begin(), l.shape.begin() + l.ndim, [](std::int64_t n) { return n > 1; }));
  const bool c_wanted = (flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS;
  const bool f_wanted = (flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS;
  const bool any_wanted = (flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS;
  if (((c_wanted || any_wanted) && !packed) || (f_wanted && !(packed && long_dims <= 1))) {
    PyErr_SetString(PyExc_BufferError, packed ? "buffer protocol: the plane is in C order, not Fortran order"
                                              : "buffer protocol: the plane is pitched, not contiguous; take it with "
                                                "strides, or copy it (numpy.from_dlpack(plane, copy=True))");
    return -1;
  }
  auto* s = new BufferShape{};
  Py_ssize_t len = Py_ssize_t(l.sample_bytes);
  for (int i = 0; i < l.ndim; ++i) {
    s->shape[i] = Py_ssize_t(l.shape[std::size_t(i)]);
    s->strides[i] = Py_ssize_t(l.strides[std::size_t(i)] * std::int64_t(l.sample_bytes));
    len *= s->shape[i];
  }
  static const char* u16 = (std::endian::native == std::endian::little) ? "H" : "<H";
  static const char* f32 = (std::endian::native == std::endian::little) ? "f" : "<f";
  view->buf = l.data;
  view->obj = Py_NewRef(self);
  view->len = len;
  view->readonly = 1;
  view->itemsize = Py_ssize_t(l.sample_bytes);
  const char* fmt = is_float(p->frame.format) ? f32 : l.sample_bytes == 1 ? "B" : u16;
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(fmt) : nullptr;
  if ((flags & PyBUF_ND) != PyBUF_ND) {
    // A simple (1-D, bytes) request: only a packed plane is one contiguous run.
    if (!packed) {
      delete s;
      Py_CLEAR(view->obj);
      PyErr_SetString(PyExc_BufferError, "buffer protocol: the plane is pitched; request strides (PyBUF_STRIDES)");
      return -1;
    }
    view->ndim = 1;
    view->shape = nullptr;
    view->strides = nullptr;
  } else {
    view->ndim = l.ndim;
    view->shape = s->shape;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? s->strides : nullptr;
  }
  view->suboffsets = nullptr;
  view->internal = s;
  return 0;
}

void plane_releasebuffer(PyObject*, Py_buffer* view) { delete static_cast<BufferShape*>(view->internal); }

// --- cyclic garbage collection (Frame, Plane) ----------------------------------------
// The Python producers a frame holds where this Python object is the frame's
// only holder: then its references are the object's to report. A frame also
// held elsewhere (another Frame or Plane, a viewer's queue) is not: that
// holder keeps the producers alive whatever the collector finds.
PyProducers* sole_producers(const Frame& f) {
  if (!f.owner || f.owner.use_count() != 1) return nullptr;
  const std::lock_guard lock(producers_mutex);
  const auto it = producers_by_owner().find(f.owner.get());
  return it == producers_by_owner().end() ? nullptr : it->second;
}

int traverse_frame(const Frame& f, visitproc visit, void* arg) {
  // Not the exporters the buffer views hold: unreported, they count as held
  // from outside, so the collector never clears one while the frame still has
  // its buffer (a memoryview cleared while exported crashes when released).
  if (PyProducers* p = sole_producers(f))
    for (const nb::object& o : p->objects) Py_VISIT(o.ptr());
  return 0;
}

// Drops the frame (and so its producers) where it is this object's alone.
void clear_frame(Frame& f) {
  if (!sole_producers(f)) return;
  const Frame gone = std::exchange(f, Frame{});
}

template <typename T>
int gc_traverse(PyObject* self, visitproc visit, void* arg) {
#if PY_VERSION_HEX >= 0x03090000
  Py_VISIT(Py_TYPE(self));
#endif
  if (!nb::inst_ready(self)) return 0;
  return traverse_frame(nb::inst_ptr<T>(self)->frame, visit, arg);
}

template <typename T>
int gc_clear(PyObject* self) {
  if (nb::inst_ready(self)) clear_frame(nb::inst_ptr<T>(self)->frame);
  return 0;
}

PyType_Slot plane_slots[] = {{Py_bf_getbuffer, reinterpret_cast<void*>(&plane_getbuffer)},
                             {Py_bf_releasebuffer, reinterpret_cast<void*>(&plane_releasebuffer)},
                             {Py_tp_traverse, reinterpret_cast<void*>(&gc_traverse<PyPlane>)},
                             {Py_tp_clear, reinterpret_cast<void*>(&gc_clear<PyPlane>)},
                             {0, nullptr}};
PyType_Slot frame_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(&gc_traverse<PyFrame>)},
                             {Py_tp_clear, reinterpret_cast<void*>(&gc_clear<PyFrame>)},
                             {0, nullptr}};

// --- import -----------------------------------------------------------------------
// One plane as a producer handed it over, before the frame takes ownership.
struct Incoming {
  DLTensor tensor{};
  std::array<std::int64_t, 3> shape{};
  std::array<std::int64_t, 3> strides{};
  bool has_strides = false;
  nb::object producer;   // the object passed in
  nb::object capsule;    // DLPack: the capsule (renamed once the frame owns its tensor)
  DLManagedTensor* legacy = nullptr;
  DLManagedTensorVersioned* versioned = nullptr;
  std::optional<Py_buffer> buffer;  // buffer protocol: released by the frame, or here on failure
  std::optional<long long> cai_stream;

  Incoming() = default;
  Incoming(const Incoming&) = delete;
  // The DLPack tensor handed over (versioned or legacy), or null.
  const void* managed() const {
    return versioned ? static_cast<const void*>(versioned) : static_cast<const void*>(legacy);
  }
  Incoming& operator=(const Incoming&) = delete;
  ~Incoming() {
    if (buffer) PyBuffer_Release(&*buffer);
  }
};

DLDataType dtype_from_typestr(const std::string& field, const std::string& ts) {
  if (ts.size() < 3) throw InvalidFrame(field, "typestr '" + ts + "' is not understood");
  const char order = ts[0], kind = ts[1];
  const int bytes = std::atoi(ts.c_str() + 2);
  if (order == '>' && bytes > 1)
    throw InvalidFrame(field, "typestr '" + ts + "' is big-endian; handoff's samples are little-endian");
  std::uint8_t code;
  switch (kind) {
    case 'u': code = kDLUInt; break;
    case 'i': code = kDLInt; break;
    case 'f': code = kDLFloat; break;
    case 'c': code = kDLComplex; break;
    default: throw InvalidFrame(field, "typestr '" + ts + "' is not a number type (uint8, uint16 or float32 expected)");
  }
  return DLDataType{code, std::uint8_t(bytes * 8), 1};
}

DLDataType dtype_from_format(const std::string& field, const char* fmt, Py_ssize_t itemsize) {
  std::string f = fmt ? fmt : "B";
  const bool little = std::endian::native == std::endian::little;
  if (f.size() == 2 && (f[0] == '@' || f[0] == '=' || (f[0] == '<' && little))) f = f.substr(1);
  if (f == "B") return DLDataType{kDLUInt, 8, 1};
  if (f == "H" && itemsize == 2) return DLDataType{kDLUInt, 16, 1};
  if (f == "b") return DLDataType{kDLInt, 8, 1};
  if (f == "h") return DLDataType{kDLInt, 16, 1};
  if (f == "f") return DLDataType{kDLFloat, 32, 1};
  if (f == "d") return DLDataType{kDLFloat, 64, 1};
  throw InvalidFrame(field, "buffer format '" + std::string(fmt ? fmt : "") + "' (itemsize " +
                                std::to_string(itemsize) + ") is not uint8, uint16 or float32");
}

void set_shape(Incoming& in, const std::string& name, const nb::tuple& shape) {
  if (shape.size() < 1 || shape.size() > 3) {
    throw InvalidFrame(name + ".ndim", "ndim " + std::to_string(shape.size()) + " is not 2 (height, width) or 3 "
                                       "(height, width, channels)");
  }
  in.tensor.ndim = int(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) in.shape[i] = nb::cast<std::int64_t>(shape[i]);
  in.tensor.shape = in.shape.data();
}

// CUDA Array Interface or __array_interface__: byte strides, no lifetime management.
void from_interface(Incoming& in, const std::string& name, const nb::dict& d, DLDevice device, bool cuda) {
  set_shape(in, name, nb::cast<nb::tuple>(d["shape"]));
  in.tensor.dtype = dtype_from_typestr(name + ".dtype", nb::cast<std::string>(d["typestr"]));
  if (d.contains("mask") && !d["mask"].is_none()) throw InvalidFrame(name + ".mask", "masked arrays are not supported");
  nb::object data = d["data"];
  if (data.is_none()) throw InvalidFrame(name + ".data", "data is None (buffer-backed interface not supported)");
  if (!nb::isinstance<nb::tuple>(data) || nb::len(data) != 2) {
    throw InvalidFrame(name + ".data", std::string(cuda ? "__cuda_array_interface__" : "__array_interface__") +
                                           " data " + text_of(nb::repr(data)) +
                                           " is not a (pointer, read_only) tuple");
  }
  in.tensor.data = reinterpret_cast<void*>(nb::cast<std::uintptr_t>(nb::borrow<nb::tuple>(data)[0]));
  in.tensor.device = device;
  if (d.contains("strides") && !d["strides"].is_none()) {
    const auto st = nb::cast<nb::tuple>(d["strides"]);
    if (int(st.size()) != in.tensor.ndim) throw InvalidFrame(name + ".strides", "strides and shape differ in length");
    std::int64_t bytes[3]{};
    for (std::size_t i = 0; i < st.size(); ++i) bytes[i] = nb::cast<std::int64_t>(st[i]);
    in.strides = element_strides(name + ".strides", bytes, in.tensor.ndim, std::max(1, in.tensor.dtype.bits / 8));
    in.tensor.strides = in.strides.data();
  }
  if (cuda && d.contains("stream") && !d["stream"].is_none()) in.cai_stream = nb::cast<long long>(d["stream"]);
}

void from_capsule(Incoming& in, const std::string& name, nb::handle cap) {
  PyObject* c = cap.ptr();
  if (PyCapsule_IsValid(c, kCapsuleVersioned)) {
    in.versioned = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, kCapsuleVersioned));
    if (in.versioned->version.major != kDLPackMajorVersion) {
      throw InvalidFrame(name + ".version", "DLPack version " + std::to_string(in.versioned->version.major) + "." +
                                                std::to_string(in.versioned->version.minor) +
                                                " is not supported (major version 1 expected)");
    }
    in.tensor = in.versioned->dl_tensor;
  } else if (PyCapsule_IsValid(c, kCapsuleLegacy)) {
    in.legacy = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, kCapsuleLegacy));
    in.tensor = in.legacy->dl_tensor;
  } else {
    const char* n = PyCapsule_GetName(c);
    PyErr_Clear();
    const std::string cname = n ? n : "(null)";
    if (cname == kCapsuleLegacyUsed || cname == kCapsuleVersionedUsed) {
      throw nb::value_error((name + ": DLPack capsule already consumed (named '" + cname +
                             "'); a capsule can be consumed once")
                                .c_str());
    }
    throw nb::type_error((name + ": capsule named '" + cname + "' is not a DLPack tensor").c_str());
  }
  in.capsule = nb::borrow(cap);
}

// A __dlpack__ producer: asked for a capsule (versioned when it can), on the
// legacy default stream for CUDA.
void from_dlpack_producer(Incoming& in, const std::string& name, nb::handle obj) {
  int dev_type = kDLCPU;
  if (nb::hasattr(obj, "__dlpack_device__")) {
    const nb::object device = obj.attr("__dlpack_device__")();
    const auto is_int = [](nb::handle v) { return PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr()); };
    if (!nb::isinstance<nb::tuple>(device) || nb::len(device) != 2 ||
        !is_int(nb::borrow<nb::tuple>(device)[0]) || !is_int(nb::borrow<nb::tuple>(device)[1])) {
      throw nb::type_error((name + ".device: __dlpack_device__() returned " + text_of(nb::repr(device)) +
                            ", not a (device_type, device_id) tuple")
                               .c_str());
    }
    const auto d = nb::borrow<nb::tuple>(device);
    dev_type = nb::cast<int>(d[0]);
    const int id = nb::cast<int>(d[1]);
    if (dev_type != kDLCPU && dev_type != kDLCUDA && dev_type != kDLCUDAHost && dev_type != kDLCUDAManaged) {
      throw InvalidFrame(name + ".device", "device (" + std::to_string(dev_type) + ", " + std::to_string(id) +
                                               ") is not supported (host or CUDA memory only)");
    }
  }
  // CPU producers take stream=None; for CUDA, 1 asks for the legacy default
  // stream, and from_planes synchronises the context after import.
  nb::object stream = nb::none();
  if (dev_type == kDLCUDA || dev_type == kDLCUDAManaged) stream = nb::int_(1);
  nb::object cap;
  try {
    try {
      cap = obj.attr("__dlpack__")("stream"_a = stream, "max_version"_a = nb::make_tuple(1, 0));
    } catch (nb::python_error& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      cap = obj.attr("__dlpack__")("stream"_a = stream);  // a producer from before max_version
    }
  } catch (nb::python_error& e) {
    // The producer cannot export this array (NumPy: big-endian or object
    // samples): a bad frame, named, not the producer's bare BufferError.
    if (!e.matches(PyExc_BufferError)) throw;
    if (std::string why = dtype_problem(obj); !why.empty()) throw InvalidFrame(name + ".dtype", why);
    throw InvalidFrame(name, std::string("its __dlpack__ cannot export it: ") + e.what());
  }
  from_capsule(in, name, cap);
}

// A buffer-protocol producer: the view is held (and released by the frame, or by `in` on failure).
void from_buffer(Incoming& in, const std::string& name, nb::handle obj) {
  Py_buffer view;
  if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_RECORDS_RO) != 0) throw nb::python_error();
  in.buffer = view;
  in.tensor.data = view.buf;
  in.tensor.device = DLDevice{kDLCPU, 0};
  in.tensor.dtype = dtype_from_format(name + ".dtype", view.format, view.itemsize);
  if (view.ndim < 1 || view.ndim > 3) {
    throw InvalidFrame(name + ".ndim", "ndim " + std::to_string(view.ndim) + " is not 2 (height, width) or 3 "
                                       "(height, width, channels)");
  }
  in.tensor.ndim = view.ndim;
  std::int64_t bytes[3]{};
  for (int i = 0; i < view.ndim; ++i) {
    in.shape[std::size_t(i)] = view.shape[i];
    bytes[i] = view.strides ? view.strides[i] : 0;
  }
  in.tensor.shape = in.shape.data();
  if (view.strides) {
    in.strides = element_strides(name + ".strides", bytes, view.ndim, std::size_t(view.itemsize));
    in.tensor.strides = in.strides.data();
  }
}

// One plane from whatever protocol `obj` speaks, tried in this order: a DLPack
// capsule, __dlpack__, the CUDA Array Interface, the buffer protocol, __array_interface__.
void take(Incoming& in, const std::string& name, nb::handle obj, std::optional<int> cai_device) {
  in.producer = nb::borrow(obj);
  if (PyCapsule_CheckExact(obj.ptr())) {
    from_capsule(in, name, obj);
  } else if (nb::hasattr(obj, "__dlpack__")) {
    from_dlpack_producer(in, name, obj);
  } else if (nb::hasattr(obj, "__cuda_array_interface__")) {
    const int dev = cai_device.value_or(0);
    from_interface(in, name, nb::cast<nb::dict>(obj.attr("__cuda_array_interface__")), DLDevice{kDLCUDA, dev}, true);
  } else if (PyObject_CheckBuffer(obj.ptr())) {
    from_buffer(in, name, obj);
  } else if (nb::hasattr(obj, "__array_interface__")) {
    from_interface(in, name, nb::cast<nb::dict>(obj.attr("__array_interface__")), DLDevice{kDLCPU, 0}, false);
  } else {
    throw nb::type_error((name + ": " + nb::cast<std::string>(nb::str(obj.type())) +
                          " is not a DLPack, CUDA Array Interface or buffer-protocol producer")
                             .c_str());
  }
}

// Which CUDA device a CAI plane is on: CAI does not say.
std::optional<int> cai_device_for(std::optional<int> device) {
  if (device) return device;
  const auto& drv = cuda_driver();
  if (drv.usable() && drv.device_count() > 1) {
    throw nb::value_error(
        "from_planes: the CUDA Array Interface does not name the device and there are several; pass device=");
  }
  return 0;
}

// A DLPack tensor is consumed once (its deleter runs once): one tensor given
// for two planes of the same call (one capsule twice, or a producer whose
// __dlpack__ returns the same capsule each call) is refused, naming both planes.
void refuse_repeated_tensor(const Incoming* in, std::size_t n, PixelFormat format) {
  for (std::size_t i = 1; i < n; ++i) {
    if (!in[i].managed()) continue;
    for (std::size_t j = 0; j < i; ++j) {
      if (in[j].managed() != in[i].managed()) continue;
      const std::string plane(plane_name(format, int(i))), first(plane_name(format, int(j)));
      throw nb::value_error((plane + ": the DLPack tensor already taken for plane " + first +
                             "; a capsule is consumed once: give each plane its own")
                                .c_str());
    }
  }
}

// The frame over planes taken already (`n` of them, checked against opts.format
// by the import): synchronises a CUDA producer's context, validates, and on
// success hands the tensors, buffers and producers to the frame.
PyFrame finish_import(Incoming* in, std::size_t n, ImportOptions opts) {
  refuse_repeated_tensor(in, n, opts.format);
  auto keep = std::make_shared<PyProducers>();
  const bool cuda_frame = in[0].tensor.device.device_type == kDLCUDA ||
                          in[0].tensor.device.device_type == kDLCUDAManaged;
  bool cai_stream = false;
  for (std::size_t i = 0; i < n; ++i) cai_stream = cai_stream || in[i].cai_stream.has_value();
  const std::string first(plane_name(opts.format, 0));
  if (cuda_frame && cuda_driver().usable()) {
    // The frame carries the device's primary context (shared with PyTorch and
    // CuPy). Wait for pending work so the planes are complete (DLPack producers
    // were asked for the legacy default stream; CAI may name a stream).
    const int ordinal = in[0].tensor.device.device_id;
    const int count = cuda::driver().device_count();
    if (ordinal < 0 || ordinal >= count) {
      throw InvalidFrame(first + ".device", "CUDA device " + std::to_string(ordinal) +
                                                " is not present (the driver has " + std::to_string(count) +
                                                " device(s))");
    }
    without_gil([&] {
      keep->context = cuda::PrimaryContext(ordinal);
      cuda::ScopedContext current(keep->context);
      HANDOFF_CU_CHECK(cuda::driver().api().cuCtxSynchronize(), "from_planes: the producer's pending work");
    });
    opts.cuda_context = keep->context.handle();
  } else if (cuda_frame && cai_stream) {
    throw nb::buffer_error(("from_planes: the producer asks to synchronise a CUDA stream, but CUDA is unavailable: " +
                            cuda_driver().describe())
                               .c_str());
  }
  opts.keep_alive = keep;
  // Validates; on failure nothing is owned yet and unconsumed capsules free themselves.
  std::array<const DLTensor*, kMaxPlanes> tensors{};
  for (std::size_t i = 0; i < n; ++i) tensors[i] = &in[i].tensor;
  Frame f = frame_from_dltensors(std::span(tensors.data(), n), opts);

  // Success: the frame owns the tensors (renamed capsules), buffers and producers.
  for (std::size_t i = 0; i < n; ++i) {
    Incoming& p = in[i];
    if (p.versioned) {
      PyCapsule_SetName(p.capsule.ptr(), kCapsuleVersionedUsed);
      keep->tensors[i] = ProducerTensor(p.versioned);
    } else if (p.legacy) {
      PyCapsule_SetName(p.capsule.ptr(), kCapsuleLegacyUsed);
      keep->tensors[i] = ProducerTensor(p.legacy);
    }
    if (p.buffer) {
      keep->buffers[i] = *p.buffer;
      p.buffer.reset();
    }
    keep->objects.push_back(p.producer);
  }
  keep->register_owner(f.owner.get());
  return PyFrame{std::move(f), false};
}

// A frame over the producers' arrays, one per plane of `format` (no copy).
PyFrame import_arrays(const std::vector<nb::handle>& arrays, PixelFormat format,
                      std::optional<Colorimetry> colorimetry, std::optional<int> device) {
  ImportOptions opts;
  opts.format = format;
  if (colorimetry) opts.colorimetry = *colorimetry;
  const std::size_t n = arrays.size();
  if (n != std::size_t(plane_count(format))) {
    std::string names;
    for (int i = 0; i < plane_count(format); ++i) names += (i ? ", " : "") + std::string(plane_name(format, i));
    throw nb::value_error(("frame: " + std::to_string(n) + (n == 1 ? " array does" : " arrays do") +
                           " not fit format '" + std::string(to_string(format)) + "': it takes " +
                           std::to_string(plane_count(format)) + " (" + names + ")")
                              .c_str());
  }
  Incoming in[kMaxPlanes];
  bool any_cai = false;
  for (nb::handle a : arrays) any_cai = any_cai || nb::hasattr(a, "__cuda_array_interface__");
  const std::optional<int> cai_dev = any_cai ? cai_device_for(device) : device;
  for (std::size_t i = 0; i < n; ++i) take(in[i], std::string(plane_name(format, int(i))), arrays[i], cai_dev);
  return finish_import(in, n, opts);
}

// The one-array frame formats by the ambiguity rule (docs/python.md, "Which
// format an array is"): H x W x 3 uint8 rgb8, H x W x 4 uint8 rgba8, H x W (or
// H x W x 1) uint8 / uint16 / float32 gray8 / gray16 / gray32f; two arrays
// nv12 / p010 by their samples, three i420. Everything else needs format=.
std::optional<PixelFormat> default_format(const DLTensor& t, std::size_t arrays) {
  const bool u8 = t.dtype.code == kDLUInt && t.dtype.bits == 8 && t.dtype.lanes == 1;
  const bool u16 = t.dtype.code == kDLUInt && t.dtype.bits == 16 && t.dtype.lanes == 1;
  const bool f32 = t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1;
  if (arrays == 2) return u16 ? PixelFormat::P010 : PixelFormat::NV12;
  if (arrays == 3) return PixelFormat::I420;
  if (arrays != 1 || t.shape == nullptr) return std::nullopt;
  const bool grey_shape = t.ndim == 2 || (t.ndim == 3 && t.shape[2] == 1);
  if (grey_shape && u8) return PixelFormat::GRAY8;
  if (grey_shape && u16) return PixelFormat::GRAY16;
  if (grey_shape && f32) return PixelFormat::GRAY32F;
  if (t.ndim == 3 && u8 && t.shape[2] == 3) return PixelFormat::RGB8;
  if (t.ndim == 3 && u8 && t.shape[2] == 4) return PixelFormat::RGBA8;
  return std::nullopt;
}

std::string shape_text(const DLTensor& t) {
  std::string s = "(";
  for (int i = 0; i < t.ndim && t.shape; ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + (t.ndim == 1 ? ",)" : ")");
}

// The luma height of a stacked (H + ceil(H/2), W) array with `rows` rows, or 0.
std::int64_t stacked_height(std::int64_t rows) {
  const std::int64_t h = (2 * rows) / 3;
  for (std::int64_t c = std::max<std::int64_t>(1, h - 1); c <= h + 1; ++c) {
    if (c + (c + 1) / 2 == rows) return c;
  }
  return 0;
}

nb::object slice_rows(nb::handle array, std::int64_t first, std::int64_t last) {
  nb::object s = nb::steal(PySlice_New(nb::int_(first).ptr(), nb::int_(last).ptr(), nullptr));
  if (!s.is_valid()) throw nb::python_error();
  return array.attr("__getitem__")(s);
}

// A stacked NV12 / P010 array (H + ceil(H/2), W), split into its planes (views).
PyFrame stacked_frame(nb::handle array, PixelFormat format, std::optional<Colorimetry> colorimetry,
                      std::optional<int> device) {
  nb::tuple shape;
  try {
    shape = nb::tuple(array.attr("shape"));
  } catch (nb::python_error&) {
    throw nb::type_error(("frame: " + py_type_name(array) + " has no shape: a stacked " +
                          std::string(to_string(format)) + " frame is a (H + H/2, W) array")
                             .c_str());
  }
  if (shape.size() != 2) {
    throw InvalidFrame("frame.shape", "a stacked " + std::string(to_string(format)) +
                                          " frame is 2-D (H + ceil(H/2), W); this array has " +
                                          std::to_string(shape.size()) + " dimensions");
  }
  const std::int64_t rows = nb::cast<std::int64_t>(shape[0]), width = nb::cast<std::int64_t>(shape[1]);
  const std::int64_t h = stacked_height(rows);
  if (h == 0 || width % 2 != 0 || width == 0) {
    throw InvalidFrame("frame.shape", "(" + std::to_string(rows) + ", " + std::to_string(width) +
                                          ") is not a stacked frame (H + ceil(H/2) rows, an even width)");
  }
  nb::object luma = slice_rows(array, 0, h);
  nb::object chroma = slice_rows(array, h, rows).attr("reshape")(rows - h, width / 2, 2);
  return import_arrays({luma, chroma}, format, colorimetry, device);
}

// Frame.from_arrays and what Viewer.show / publish / write take: the format
// given wins; without one, the ambiguity rule above.
PyFrame from_arrays(nb::args arrays, std::optional<std::string> format, std::optional<Colorimetry> colorimetry,
                    std::optional<int> device) {
  std::vector<nb::handle> items(arrays.begin(), arrays.end());
  if (items.empty() || items.size() > kMaxPlanes) {
    throw nb::value_error(("frame: " + std::to_string(items.size()) +
                           " arrays; a frame is one array (a one-plane format, or a stacked nv12 / p010 frame), "
                           "a (luma, chroma) pair or (luma, u, v)")
                              .c_str());
  }
  if (format) {
    const PixelFormat f = enum_arg<PixelFormat>("format", *format);
    if (items.size() == 1 && plane_count(f) == 2) return stacked_frame(items[0], f, colorimetry, device);
    if (items.size() == 1 && f == PixelFormat::I420) {
      throw nb::value_error("format: 'i420' takes three arrays (luma, u, v); one stacked i420 array is not "
                            "supported (its u and v rows are half as wide as luma's)");
    }
    return import_arrays(items, f, colorimetry, device);
  }
  // No format: read the first array's shape and dtype through whatever
  // protocol it speaks, then import the arrays as that format.
  Incoming probe;
  const std::optional<int> cai_dev =
      nb::hasattr(items[0], "__cuda_array_interface__") ? cai_device_for(device) : device;
  take(probe, "frame", items[0], cai_dev);
  const std::optional<PixelFormat> f = default_format(probe.tensor, items.size());
  if (!f) {
    const DLDataType d = probe.tensor.dtype;
    throw nb::value_error(("frame: a " + shape_text(probe.tensor) + " " + dtype_name(d.code, d.bits, d.lanes) +
                           " array has no default format (H x W x 3 / 4 uint8: rgb8 / rgba8; H x W uint8, uint16 "
                           "or float32: gray8, gray16, gray32f); pass format= (one of " +
                           spellings<PixelFormat>() + ")")
                              .c_str());
  }
  if (items.size() == 1) {
    // Import the plane taken already (a capsule is consumed once).
    ImportOptions opts;
    opts.format = *f;
    if (colorimetry) opts.colorimetry = *colorimetry;
    return finish_import(&probe, 1, opts);
  }
  // More planes: import them all; the probe's capsule, if any, was not consumed (renamed) and is read again.
  return import_arrays(items, *f, colorimetry, device);
}

PyFrame from_planes(nb::handle luma, nb::handle chroma, const std::string& format, std::optional<Colorimetry> colorimetry,
                    std::optional<int> device) {
  const PixelFormat f = enum_arg<PixelFormat>("format", format);
  if (plane_count(f) != 2) {
    throw nb::value_error(("format: from_planes takes a (luma, chroma) pair of an nv12 or p010 frame, not " +
                           std::string(to_string(f)) + "; use Frame.from_arrays")
                              .c_str());
  }
  return import_arrays({luma, chroma}, f, colorimetry, device);
}

// --- host frame helpers -------------------------------------------------------------
void copy_into_plane(const PyPlane& p, nb::handle src) {
  if (!p.writable || p.frame.memory != MemoryKind::Host) {
    throw nb::value_error("copy_from: only host frames made by Frame.allocate are writable");
  }
  const TensorLayout l = tensor_layout(p.frame, p.part);
  Py_buffer v;
  if (PyObject_GetBuffer(src.ptr(), &v, PyBUF_RECORDS_RO) != 0) throw nb::python_error();
  struct Release {
    Py_buffer* v;
    ~Release() { PyBuffer_Release(v); }
  } release{&v};
  bool ok = v.ndim == l.ndim && v.itemsize == Py_ssize_t(l.sample_bytes);
  for (int i = 0; ok && i < l.ndim; ++i) ok = v.shape[i] == l.shape[std::size_t(i)];
  if (!ok) {
    throw nb::value_error(("copy_from: source shape/itemsize does not match the " +
                           std::string(part_name(p.frame.format, p.part)) + " plane")
                              .c_str());
  }
  const auto* s = static_cast<const unsigned char*>(v.buf);
  auto* d = static_cast<unsigned char*>(l.data);
  const std::size_t item = l.sample_bytes;
  const std::int64_t c = l.ndim == 3 ? l.shape[2] : 1;
  const std::int64_t inner = l.shape[1] * c;
  for (std::int64_t r = 0; r < l.shape[0]; ++r) {
    for (std::int64_t e = 0; e < inner; ++e) {
      std::int64_t so = r * v.strides[0];
      if (l.ndim == 3) {
        so += (e / c) * v.strides[1] + (e % c) * v.strides[2];
      } else {
        so += e * v.strides[1];
      }
      std::memcpy(d + std::size_t(r * l.strides[0] * std::int64_t(item) + e * std::int64_t(item)), s + so, item);
    }
  }
}

PyPlane plane_of(const PyFrame& f, FramePart part) {
  PyPlane p{f.frame, part, f.writable, std::nullopt};
  try {
    p.layout = tensor_layout(f.frame, part);
  } catch (const std::exception&) {
    // GL / Vulkan memory: the plane exists, its exports say why they cannot.
  }
  return p;
}

// Frame.luma / chroma / u / v / pixels: the plane of that name in this
// frame's format; ValueError naming the planes it has otherwise.
PyPlane named_plane(const PyFrame& f, std::string_view name) {
  const PixelFormat fmt = f.frame.format;
  for (int i = 0; i < plane_count(fmt); ++i) {
    if (plane_name(fmt, i) == name) return plane_of(f, plane_part(i));
  }
  std::string names;
  for (int i = 0; i < plane_count(fmt); ++i) names += (i ? ", frame." : "frame.") + std::string(plane_name(fmt, i));
  throw nb::value_error(("frame." + std::string(name) + ": a " + std::string(to_string(fmt)) + " frame has no " +
                         std::string(name) + " plane; it has " + names)
                            .c_str());
}

nb::tuple all_planes(const PyFrame& f) {
  nb::list l;
  for (int i = 0; i < plane_count(f.frame.format); ++i) l.append(plane_of(f, plane_part(i)));
  return nb::tuple(l);
}

// What the frame itself exports: a one-plane frame its plane, an nv12 / p010
// frame the stacked array (when is_stacked()).
FramePart whole_frame_part(const Frame& f) {
  return plane_count(f.format) == 1 ? FramePart::Pixels : FramePart::Stacked;
}

std::string frame_repr(const Frame& f) {
  return "<handoff.Frame " + std::string(to_string(f.format)) + " " + std::to_string(f.width) + "x" +
         std::to_string(f.height) + " " + std::string(memory_name(f.memory)) +
         (f.memory == MemoryKind::Cuda ? ":" + std::to_string(f.device) : "") + ">";
}

// --- bindings: a function per class (NB_MODULE calls them in this order) --------------------
// InvalidFrame (a ValueError) and how the library's errors reach Python.
void bind_errors(nb::module_& m) {
  static nb::exception<InvalidFrame> invalid_frame(m, "InvalidFrame", PyExc_ValueError);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const InvalidFrame& e) {
      PyErr_SetString(invalid_frame.ptr(), e.what());
    } catch (const UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

void bind_colorimetry(nb::module_& m) {
  nb::class_<Colorimetry>(m, "Colorimetry", "How a frame's codes become colour: matrix, range and chroma siting.")
      .def(
          "__init__",
          [](Colorimetry* c, const std::string& matrix, const std::string& range, const std::string& siting) {
            new (c) Colorimetry{enum_arg<ColorMatrix>("matrix", matrix), enum_arg<ColorRange>("range", range),
                                enum_arg<ChromaSiting>("siting", siting)};
          },
          "matrix"_a = "bt709", "range"_a = "limited", "siting"_a = "left")
      .def_prop_ro("matrix", [](const Colorimetry& c) { return std::string(to_string(c.matrix)); })
      .def_prop_ro("range", [](const Colorimetry& c) { return std::string(to_string(c.range)); })
      .def_prop_ro("siting", [](const Colorimetry& c) { return std::string(to_string(c.siting)); })
      .def("__eq__", [](const Colorimetry& a, const Colorimetry& b) { return a == b; })
      .def("__repr__", [](const Colorimetry& c) {
        return "Colorimetry(matrix='" + std::string(to_string(c.matrix)) + "', range='" +
               std::string(to_string(c.range)) + "', siting='" + std::string(to_string(c.siting)) + "')";
      });
}

void bind_plane(nb::module_& m) {
  nb::class_<PyPlane>(m, "Plane", nb::type_slots(plane_slots),
                      "One plane of a frame (or the whole stacked frame), read-only. Exports through "
                      "__dlpack__, __cuda_array_interface__ (CUDA) and the buffer protocol / "
                      "__array_interface__ (host). Keeps its frame alive.")
      .def("__dlpack__",
           [](const PyPlane& p, nb::handle stream, nb::handle max_version, nb::handle dl_device, nb::handle copy) {
             return dlpack_export(p.frame, p.part, p.layout ? &*p.layout : nullptr, stream, max_version, dl_device,
                                  copy);
           },
           nb::kw_only(), "stream"_a = nb::none(), "max_version"_a = nb::none(), "dl_device"_a = nb::none(),
           "copy"_a = nb::none())
      .def("__dlpack_device__", [](const PyPlane& p) { return dlpack_device_tuple(p.frame); })
      .def_prop_ro("__cuda_array_interface__", [](const PyPlane& p) { return cuda_array_interface(p.frame, p.part); })
      .def_prop_ro("__array_interface__", [](const PyPlane& p) { return host_array_interface(p.frame, p.part); })
      .def_prop_ro("name", [](const PyPlane& p) { return std::string(part_name(p.frame.format, p.part)); })
      .def_prop_ro("shape", [](const PyPlane& p) {
        const TensorLayout l = tensor_layout(p.frame, p.part);
        return to_tuple(l.shape, l.ndim);
      })
      .def_prop_ro("strides", [](const PyPlane& p) {
        const TensorLayout l = tensor_layout(p.frame, p.part);
        return to_tuple(l.strides, l.ndim, std::int64_t(l.sample_bytes));
      }, "Strides in bytes (NumPy's convention).")
      .def_prop_ro("pitch", [](const PyPlane& p) {
        return p.frame.planes[std::size_t(std::max(0, plane_index(p.part)))].pitch;
      })
      .def_prop_ro("dtype", [](const PyPlane& p) { return dtype_text(p.frame.format); },
                   "'uint8', 'uint16' (p010, gray16) or 'float32' (gray32f).")
      .def_prop_ro("ptr", [](const PyPlane& p) {
        return reinterpret_cast<std::uintptr_t>(tensor_layout(p.frame, p.part).data);
      })
      .def_prop_ro("memory", [](const PyPlane& p) { return std::string(memory_name(p.frame.memory)); })
      .def_prop_ro("device", [](const PyPlane& p) { return p.frame.device; }, "CUDA device ordinal; -1 for host.")
      .def_prop_ro("cuda_context", [](const PyPlane& p) -> nb::object {
        if (!p.frame.cuda_context) return nb::none();
        return nb::int_(reinterpret_cast<std::uintptr_t>(p.frame.cuda_context));
      }, "The CUcontext (as an int) the pointer belongs to, None when not CUDA or unknown.")
      .def_prop_ro("frame", [](const PyPlane& p) { return PyFrame{p.frame, p.writable}; })
      .def("copy_from", &copy_into_plane, "source"_a,
           "Copies an array of this plane's shape and item size into it (host frames from Frame.allocate only).")
      .def("__repr__", [](const PyPlane& p) {
        return "<handoff.Plane " + std::string(part_name(p.frame.format, p.part)) + " of " + frame_repr(p.frame) + ">";
      });
}

// --- handoff.Frame: made (allocate, from_planes), described, split into planes -------------
using FrameClass = nb::class_<PyFrame>;

PyFrame allocate_frame(std::uint32_t width, std::uint32_t height, const std::string& format, std::size_t alignment,
                       std::optional<Colorimetry> colorimetry) {
  HostFrameOptions o;
  o.alignment = alignment;
  if (colorimetry) o.colorimetry = *colorimetry;
  return PyFrame{allocate_host_frame(enum_arg<PixelFormat>("format", format), width, height, o), true};
}

// The ways to make a frame: a host frame of the module's own, or one over a producer's planes.
void def_frame_making(FrameClass& cls) {
  cls.def_static("allocate", &allocate_frame, "width"_a, "height"_a, "format"_a = "nv12", "alignment"_a = 256,
                 "colorimetry"_a = nb::none(),
                 "A zero-filled, pitched host frame of any format (pitch = row rounded up to `alignment`), its "
                 "planes in one allocation. Writable through Plane.copy_from and fill_test_pattern.")
      .def_static("from_planes", &from_planes, "luma"_a, "chroma"_a, "format"_a = "nv12",
                  "colorimetry"_a = nb::none(), "device"_a = nb::none(),
                  "A frame over a producer's planes (DLPack, CUDA Array Interface or buffer protocol; no copy). "
                  "luma: (H, W), chroma: (ceil(H/2), ceil(W/2), 2), uint8 (nv12) or uint16 (p010), packed rows "
                  "with any row pitch. Holds the producers alive. `device`: the CUDA ordinal for CAI producers. "
                  "Other formats: Frame.from_arrays.")
      .def_static("from_arrays", &from_arrays, "arrays"_a, "format"_a = nb::none(), "colorimetry"_a = nb::none(),
                  "device"_a = nb::none(),
                  "A frame over a producer's arrays, one per plane (DLPack, CUDA Array Interface or buffer "
                  "protocol; host or CUDA; no copy, any row pitch). `format` always wins; without it an "
                  "H x W x 3 uint8 array is rgb8, H x W x 4 uint8 rgba8, H x W uint8 / uint16 / float32 gray8 / "
                  "gray16 / gray32f, a (luma, chroma) pair nv12 (p010 when uint16) and (luma, u, v) i420. "
                  "Anything else needs format=: e.g. 'bgr8' for OpenCV's images, 'yuyv' / 'uyvy' for an "
                  "H x W x 2 array, 'nv12' / 'p010' for one stacked (H + H/2, W) array. One-plane formats are "
                  "HWC (H x W x C; yuyv / uyvy H x W' x 2); grey may be H x W or H x W x 1.")
      .def("fill_test_pattern", [](const PyFrame& f, std::uint32_t seed) {
        if (!f.writable) throw nb::value_error("fill_test_pattern: only host frames made by Frame.allocate are writable");
        fill_test_pattern(f.frame, seed);
      }, "seed"_a = 0);
}

void bind_frame(nb::module_& m) {
  FrameClass cls(m, "Frame", nb::type_slots(frame_slots),
                 "A frame: one to three pitched planes on one device plus colorimetry, in nv12, p010, i420, "
                 "yuyv, uyvy, rgb8, bgr8, rgba8, bgra8, gray8, gray16 or gray32f. Immutable; holds the memory "
                 "(or its producers) alive.");
  def_frame_making(cls);
  cls.def_prop_ro("format", [](const PyFrame& f) { return std::string(to_string(f.frame.format)); })
      .def_prop_ro("width", [](const PyFrame& f) { return f.frame.width; })
      .def_prop_ro("height", [](const PyFrame& f) { return f.frame.height; })
      .def_prop_ro("memory", [](const PyFrame& f) { return std::string(memory_name(f.frame.memory)); })
      .def_prop_ro("device", [](const PyFrame& f) { return f.frame.device; }, "CUDA device ordinal; -1 for host.")
      .def_prop_ro("cuda_context", [](const PyFrame& f) -> nb::object {
        if (!f.frame.cuda_context) return nb::none();
        return nb::int_(reinterpret_cast<std::uintptr_t>(f.frame.cuda_context));
      })
      .def_prop_ro("colorimetry", [](const PyFrame& f) { return f.frame.colorimetry; })
      .def_prop_ro("index", [](const PyFrame& f) { return f.frame.index; }, "Frame number in its source.")
      .def_prop_ro("timestamp", [](const PyFrame& f) { return f.frame.timestamp; }, "Seconds.")
      .def_prop_ro("luma", [](const PyFrame& f) { return named_plane(f, "luma"); },
                   "Plane 0 of nv12, p010 and i420 frames.")
      .def_prop_ro("chroma", [](const PyFrame& f) { return named_plane(f, "chroma"); },
                   "The interleaved (U, V) plane of nv12 and p010 frames.")
      .def_prop_ro("u", [](const PyFrame& f) { return named_plane(f, "u"); }, "The U plane of i420 frames.")
      .def_prop_ro("v", [](const PyFrame& f) { return named_plane(f, "v"); }, "The V plane of i420 frames.")
      .def_prop_ro("pixels", [](const PyFrame& f) { return named_plane(f, "pixels"); },
                   "The one plane of yuyv, uyvy, RGB and grey frames: H x W x C (grey: H x W).")
      .def_prop_ro("planes", &all_planes, "Every plane, in order (luma, chroma / luma, u, v / pixels).")
      .def_prop_ro("is_stacked", [](const PyFrame& f) { return is_stacked(f.frame); },
                   "True when the frame is one (H + ceil(H/2), W) array: then the frame itself exports.")
      .def_prop_ro("stacked", [](const PyFrame& f) {
        if (!is_stacked(f.frame)) throw nb::value_error("the frame is not stacked (see Frame.is_stacked)");
        return plane_of(f, FramePart::Stacked);
      })
      .def("__dlpack__",
           [](const PyFrame& f, nb::handle stream, nb::handle max_version, nb::handle dl_device, nb::handle copy) {
             return dlpack_export(f.frame, whole_frame_part(f.frame), nullptr, stream, max_version, dl_device, copy);
           },
           nb::kw_only(), "stream"_a = nb::none(), "max_version"_a = nb::none(), "dl_device"_a = nb::none(),
           "copy"_a = nb::none(),
           "The whole frame as one tensor: a one-plane frame's plane (H x W x C, grey H x W), a stacked "
           "nv12 / p010 frame as (H + ceil(H/2), W) (BufferError otherwise: export frame.luma and "
           "frame.chroma; for i420 luma, u and v).")
      .def("__dlpack_device__", [](const PyFrame& f) { return dlpack_device_tuple(f.frame); })
      .def("__repr__", [](const PyFrame& f) { return frame_repr(f.frame); });
}

// handoff.live_objects(): the leak-hunting counts (<handoff/diagnostics.hpp>)
// of this module's copy of the library.
void bind_diagnostics(nb::module_& m) {
  m.def("live_objects", [] {
    const LiveObjects o = live_objects();
    nb::dict d;
    d["frames"] = o.frames;
    d["dlpack_alive"] = o.dlpack_alive;
    d["dlpack_exported"] = o.dlpack_exported;
    d["dlpack_deleted"] = o.dlpack_deleted;
    return d;
  }, "What handoff made and has not released yet, for finding leaks: a dict of 'frames' (frame storage alive: "
     "Frame.allocate's memory, and frames over other producers' arrays, which hold those arrays), 'dlpack_alive' "
     "(tensors exported through __dlpack__ whose deleter has not run), 'dlpack_exported' and 'dlpack_deleted' "
     "(totals since the module was loaded). Read it before and after a loop that should leave nothing behind.");
}

}  // namespace
}  // namespace handoff::py

NB_MODULE(_handoff, m) {
  using namespace handoff::py;
  m.doc() = "handoff: zero-copy frames (nv12, p010, i420, yuyv, uyvy, rgb8, bgr8, rgba8, bgra8, gray8, gray16, "
            "gray32f) for DLPack, the CUDA Array Interface and the buffer protocol";
  watch_for_exit(m);
  bind_errors(m);
  bind_colorimetry(m);
  bind_plane(m);
  bind_frame(m);
  bind_diagnostics(m);
  m.def("cuda_status", [] { return cuda_driver().describe(); }, "One line on whether CUDA is usable, and why not.");
#if HANDOFF_PYTHON_VIEWER
  bind_viewer(m);
  bind_recording(m);
  bind_live(m);
#endif
}
