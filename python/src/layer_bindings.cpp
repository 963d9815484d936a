#include "layer_bindings.hpp"

#include "module_common.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <handoff/cuda.hpp>
#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>
#include <handoff/frame_validate.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace handoff::py {
namespace nb = nanobind;
using namespace nb::literals;

namespace {

[[noreturn]] void fail(const std::string& field, const std::string& detail) {
  throw nb::value_error((field + ": " + detail).c_str());
}

float opacity_arg(double opacity) {
  if (!(opacity >= 0.0 && opacity <= 1.0)) {
    std::ostringstream o;
    o << "opacity " << opacity << " is not in 0..1";
    fail("opacity", o.str());
  }
  return float(opacity);
}

// target=(x, y, w, h) in frame pixels, or None: the whole frame.
std::optional<media::RectF> target_arg(const std::optional<std::array<double, 4>>& target) {
  if (!target) return std::nullopt;
  const auto [x, y, w, h] = *target;
  std::ostringstream o;
  o << "(" << x << ", " << y << ", " << w << ", " << h << ")";
  for (double v : *target)
    if (!std::isfinite(v) || std::fabs(v) > 1e7) fail("target", "target " + o.str() + " is not finite, or out of range");
  if (!(w > 0 && h > 0)) fail("target", "target " + o.str() + " needs a positive width and height: (x, y, w, h)");
  return media::RectF{float(x), float(y), float(w), float(h)};
}

// What each Python layer object holds: the array and the layer's settings
// (its LayerArray filled in by layers_from_objects).
// Entries for ids 2**63 .. 2**64 - 1, which only uint64 ids can be: kept apart
// until the dtype is known (layers_from_objects), keyed by their 64 bits as
// ClassMap keys uint64 ids, so that they never meet the negative ids given.
struct AboveInt64 {
  std::map<std::int64_t, media::Color8> colors;
  std::map<std::int64_t, std::string> names;
  std::vector<std::int64_t> transparent;
};
struct PyClassMap {
  nb::object ids;
  media::ClassMap layer;
  AboveInt64 above;
};
struct PyScalarMap {
  nb::object values;
  media::ScalarMap layer;
};
struct PyInstanceMasks {
  nb::object masks;
  media::InstanceMasks layer;
};

// The array a layer object holds is the user's (any object with __dlpack__ or
// an array interface), which may refer back to the layer: the collector sees it.
template <typename T, nb::object T::*array>
int layer_traverse(PyObject* self, visitproc visit, void* arg) {
#if PY_VERSION_HEX >= 0x03090000
  Py_VISIT(Py_TYPE(self));
#endif
  if (nb::inst_ready(self)) Py_VISIT((nb::inst_ptr<T>(self)->*array).ptr());
  return 0;
}

template <typename T, nb::object T::*array>
int layer_clear(PyObject* self) {
  if (nb::inst_ready(self)) {
    nb::object gone = std::move(nb::inst_ptr<T>(self)->*array);
    nb::inst_ptr<T>(self)->*array = nb::none();  // the property reads None, not a null object
  }
  return 0;
}

template <typename T, nb::object T::*array>
PyType_Slot layer_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(&layer_traverse<T, array>)},
                             {Py_tp_clear, reinterpret_cast<void*>(&layer_clear<T, array>)},
                             {0, nullptr}};

media::Color8 color_arg(nb::handle c, const std::string& field) {
  if (nb::isinstance<nb::str>(c)) {
    const std::string text = nb::cast<std::string>(c);
    if (auto parsed = media::parse_hex_color(text)) return *parsed;
    fail(field, "'" + text + "' is not a colour ('#rrggbb', '#rgb' or (r, g, b) 0..255)");
  }
  std::vector<int> v;
  try {
    for (nb::handle x : c) v.push_back(nb::cast<int>(x));
  } catch (const std::exception&) {
    fail(field, "a colour is '#rrggbb', '#rgb' or (r, g, b) with 0..255 integers");
  }
  if (v.size() != 3 && v.size() != 4) fail(field, "a colour has 3 (or 4) components, not " + std::to_string(v.size()));
  for (int x : v)
    if (x < 0 || x > 255) fail(field, "component " + std::to_string(x) + " is not in 0..255");
  return media::Color8{std::uint8_t(v[0]), std::uint8_t(v[1]), std::uint8_t(v[2]), 255};
}

// A class id given in `field`: an integer (Python int, NumPy integer) of
// -2**63 .. 2**64 - 1, as the map keys it (`above`: 2**63 or more, keyed by
// its 64 bits). TypeError / ValueError naming `field` otherwise.
struct IdArg {
  std::int64_t key = 0;
  bool above = false;
};
IdArg id_arg(nb::handle k, const std::string& field) {
  if (nb::isinstance<nb::float_>(k) || !PyIndex_Check(k.ptr()))
    throw nb::type_error((field + ": a class id is an integer, not " + py_type_name(k)).c_str());
  nb::object i = nb::steal(PyNumber_Index(k.ptr()));
  if (!i.is_valid()) throw nb::python_error();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow == 0) {
    if (v == -1 && PyErr_Occurred()) throw nb::python_error();
    return {std::int64_t(v), false};
  }
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(i.ptr());
    if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred()))
      return {static_cast<std::int64_t>(std::uint64_t(u)), true};
    PyErr_Clear();
  }
  throw nb::value_error((field + ": id " + text_of(i) + " is not a 64-bit id (-2**63 .. 2**64 - 1)").c_str());
}

// "colors[3000000000]": an entry of `arg`, named by the id as given.
std::string entry_field(const char* arg, nb::handle key) {
  return std::string(arg) + "[" + text_of(nb::repr(key)) + "]";
}

// A dict or a sequence for `arg` (a str is a sequence of one-letter names, a
// number none at all: both mistakes); TypeError naming it otherwise.
void check_collection(nb::handle v, const char* arg, const char* what) {
  bool iterable = !nb::isinstance<nb::str>(v) && !nb::isinstance<nb::bytes>(v);
  if (iterable) {
    nb::object it = nb::steal(PyObject_GetIter(v.ptr()));
    if (!it.is_valid()) PyErr_Clear();
    iterable = it.is_valid();
  }
  if (!iterable) throw nb::type_error((std::string(arg) + ": " + what + ", not " + py_type_name(v)).c_str());
}

std::string name_arg(nb::handle n, const std::string& field) {
  if (!nb::isinstance<nb::str>(n))
    throw nb::type_error((field + ": a name is a str, not " + py_type_name(n)).c_str());
  return nb::cast<std::string>(n);
}

void init_class_map(PyClassMap* self, nb::object ids, nb::handle names, nb::handle colors, double opacity,
                    nb::handle transparent, std::optional<std::array<double, 4>> target) {
  media::ClassMap m;
  AboveInt64 above;
  m.opacity = opacity_arg(opacity);
  m.target = target_arg(target);
  if (!names.is_none()) {
    check_collection(names, "names", "a list of names (index = id) or a dict id -> name");
    if (!nb::isinstance<nb::dict>(names)) {
      // A sequence: names[i] is the name of id i.
      std::int64_t i = 0;
      for (nb::handle n : names) {
        m.names[i] = name_arg(n, "names[" + std::to_string(i) + "]");
        ++i;
      }
    } else {
      // Over a list of the items (owned): a key's __index__ may change the dict.
      for (nb::handle item : nb::cast<nb::dict>(names).items()) {
        nb::handle k = PyTuple_GET_ITEM(item.ptr(), 0), v = PyTuple_GET_ITEM(item.ptr(), 1);  // (key, value)
        const std::string field = entry_field("names", k);
        const IdArg id = id_arg(k, field);
        (id.above ? above.names : m.names)[id.key] = name_arg(v, field);
      }
    }
  }
  if (!colors.is_none()) {
    check_collection(colors, "colors", "a list of colours (index = id) or a dict id -> colour");
    if (nb::isinstance<nb::dict>(colors)) {
      for (nb::handle item : nb::cast<nb::dict>(colors).items()) {  // owned, as names'
        nb::handle k = PyTuple_GET_ITEM(item.ptr(), 0), v = PyTuple_GET_ITEM(item.ptr(), 1);  // (key, value)
        const std::string field = entry_field("colors", k);
        const IdArg id = id_arg(k, field);
        (id.above ? above.colors : m.colors)[id.key] = color_arg(v, field);
      }
    } else {
      std::int64_t i = 0;
      for (nb::handle v : colors) {
        m.colors[i] = color_arg(v, "colors[" + std::to_string(i) + "]");
        ++i;
      }
    }
  }
  check_collection(transparent, "transparent", "a list of ids");
  std::size_t i = 0;
  for (nb::handle t : transparent) {
    const IdArg id = id_arg(t, "transparent[" + std::to_string(i++) + "]");
    (id.above ? above.transparent : m.transparent).push_back(id.key);
  }
  new (self) PyClassMap{std::move(ids), std::move(m), std::move(above)};
}

void init_scalar_map(PyScalarMap* self, nb::object values, const std::string& colormap,
                     std::optional<std::array<double, 2>> range, double opacity,
                     std::optional<std::array<double, 4>> target) {
  media::ScalarMap s;
  s.target = target_arg(target);
  try {
    s.colormap = media::parse_colormap(colormap);
  } catch (const InvalidFrame& e) {
    throw nb::value_error(e.what());
  }
  if (range) {
    const auto [lo, hi] = *range;
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi)) {
      std::ostringstream o;
      o << "range (" << lo << ", " << hi << ") needs finite lo < hi";
      fail("range", o.str());
    }
    s.range = range;
  }
  s.opacity = opacity_arg(opacity);
  new (self) PyScalarMap{std::move(values), std::move(s)};
}

void init_masks(PyInstanceMasks* self, nb::object masks, double threshold, double opacity,
                std::optional<std::array<double, 4>> target) {
  media::InstanceMasks m;
  m.target = target_arg(target);
  if (!std::isfinite(threshold)) fail("threshold", "threshold is not finite");
  m.threshold = float(threshold);
  m.opacity = opacity_arg(opacity);
  new (self) PyInstanceMasks{std::move(masks), std::move(m)};
}

std::optional<media::SampleType> sample_type(nb::dlpack::dtype t) {
  using code = nb::dlpack::dtype_code;
  if (t.lanes != 1) return std::nullopt;
  const int b = t.bits;
  switch (code(t.code)) {
    case code::UInt:
      if (b == 8) return media::SampleType::U8;
      if (b == 16) return media::SampleType::U16;
      if (b == 32) return media::SampleType::U32;
      if (b == 64) return media::SampleType::U64;
      break;
    case code::Int:
      if (b == 8) return media::SampleType::I8;
      if (b == 16) return media::SampleType::I16;
      if (b == 32) return media::SampleType::I32;
      if (b == 64) return media::SampleType::I64;
      break;
    case code::Float:
      if (b == 16) return media::SampleType::F16;
      if (b == 32) return media::SampleType::F32;
      if (b == 64) return media::SampleType::F64;
      break;
    case code::Bool:
      if (b == 8) return media::SampleType::Bool;
      break;
    default: break;
  }
  return std::nullopt;
}

// A CUDA array's layer, read in place (the viewer copies it device to
// device): its device's primary context (shared with PyTorch and CuPy), held
// by the layer, after the producer's pending work (DLPack asked for the
// legacy default stream).
void cuda_layer(media::LayerArray& l, int ordinal, const std::string& field) {
  const cuda::Driver& drv = without_gil([]() -> const cuda::Driver& { return cuda::driver(); });
  if (!drv.usable()) fail(field, "the array is in CUDA memory, but CUDA is unavailable: " + drv.describe());
  if (ordinal < 0 || ordinal >= drv.device_count())
    fail(field + ".device", "CUDA device " + std::to_string(ordinal) + " is not present (the driver has " +
                                std::to_string(drv.device_count()) + " device(s))");
  auto context = without_gil([&] {
    auto c = std::make_shared<cuda::PrimaryContext>(ordinal);
    cuda::ScopedContext current(*c);
    HANDOFF_CU_CHECK(drv.api().cuCtxSynchronize(), field + ": the producer's pending work");
    return c;
  });
  l.memory = MemoryKind::Cuda;
  l.device = ordinal;
  l.cuda_context = context->handle();
  l.owner = std::move(context);
}

// What array_of reads of an array: from nanobind's ndarray (DLPack, the
// buffer protocol) or from a CUDA Array Interface. Strides in samples.
struct ArrayView {
  const void* data = nullptr;
  nb::dlpack::dtype dtype{};
  std::size_t ndim = 0;
  std::array<std::int64_t, 4> shape{}, stride{};
  bool cuda = false;
  int device = 0;
};

std::string shape_text(const ArrayView& a) {
  std::string shape = "(";
  for (std::size_t d = 0; d < a.ndim; ++d) shape += (d ? ", " : "") + std::to_string(a.shape[d]);
  return shape + (a.ndim == 1 ? ",)" : ")");
}

ArrayView view_of(const nb::ndarray<nb::ro>& a, const std::string& field) {
  ArrayView v;
  if (a.ndim() > v.shape.size())
    fail(field, "a " + std::to_string(a.ndim()) + "-D array (2-D, or 3-D for masks, expected)");
  v.data = a.data();
  v.dtype = a.dtype();
  v.ndim = a.ndim();
  for (std::size_t d = 0; d < v.ndim; ++d) {
    v.shape[d] = std::int64_t(a.shape(d));
    v.stride[d] = a.stride(d);
  }
  if (a.device_type() == nb::device::cuda::value) {
    v.cuda = true;
    v.device = int(a.device_id());
  } else if (a.device_type() != nb::device::cpu::value) {
    fail(field, "an array on device type " + std::to_string(a.device_type()) + " (host or CUDA arrays only)");
  }
  return v;
}

// CUDA Array Interface version 3 (numba's definition): shape, typestr, data,
// strides (bytes; None: C order), no mask. It does not name the device:
// device 0, the only one there may be.
ArrayView view_of_cai(nb::handle obj, const std::string& field) {
  ArrayView v;
  v.cuda = true;
  try {
    const nb::dict d = nb::cast<nb::dict>(obj.attr("__cuda_array_interface__"));
    const nb::tuple shape = nb::cast<nb::tuple>(d["shape"]);
    if (shape.size() > v.shape.size())
      fail(field, "a " + std::to_string(shape.size()) + "-D array (2-D, or 3-D for masks, expected)");
    v.ndim = shape.size();
    for (std::size_t i = 0; i < v.ndim; ++i) {
      v.shape[i] = nb::cast<std::int64_t>(shape[i]);
      if (v.shape[i] < 0) fail(field, "__cuda_array_interface__: a negative dimension");
    }
    const std::string ts = nb::cast<std::string>(d["typestr"]);
    const char kind = ts.size() >= 3 ? ts[1] : '?';
    const int bytes = ts.size() >= 3 ? std::atoi(ts.c_str() + 2) : 0;
    using code = nb::dlpack::dtype_code;
    const code c = kind == 'u' ? code::UInt : kind == 'i' ? code::Int : kind == 'f' ? code::Float
                 : kind == 'b' ? code::Bool : code::Complex;
    const bool sized = bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8;
    if (ts.size() < 3 || (ts[0] == '>' && bytes > 1) || c == code::Complex || !sized)
      fail(field, "__cuda_array_interface__ typestr '" + ts + "' is not a little-endian integer, float or bool type");
    v.dtype = nb::dlpack::dtype{std::uint8_t(c), std::uint8_t(bytes * 8), 1};
    if (d.contains("mask") && !d["mask"].is_none()) fail(field, "masked arrays are not taken");
    const nb::tuple data = nb::cast<nb::tuple>(d["data"]);
    if (data.size() != 2)
      fail(field, "__cuda_array_interface__ data " + text_of(nb::repr(data)) + " is not a (pointer, read_only) tuple");
    v.data = reinterpret_cast<const void*>(nb::cast<std::uintptr_t>(data[0]));
    std::int64_t next = 1;
    for (std::size_t i = v.ndim; i-- > 0;) {  // C order
      v.stride[i] = next;
      next *= std::max<std::int64_t>(v.shape[i], 1);
    }
    if (d.contains("strides") && !d["strides"].is_none()) {
      const nb::tuple st = nb::cast<nb::tuple>(d["strides"]);
      if (st.size() != v.ndim) fail(field, "__cuda_array_interface__: strides and shape differ in length");
      for (std::size_t i = 0; i < v.ndim; ++i) {
        const std::int64_t b = nb::cast<std::int64_t>(st[i]);
        if (b % bytes != 0)
          fail(field, "__cuda_array_interface__: stride " + std::to_string(b) + " is not a whole number of " +
                          std::to_string(bytes) + "-byte samples");
        v.stride[i] = b / bytes;
      }
    }
  } catch (const nb::cast_error&) {
    fail(field, "__cuda_array_interface__ is not a dict with shape, typestr and data (version 3)");
  } catch (const nb::python_error& e) {
    fail(field, std::string("__cuda_array_interface__: ") + e.what());
  }
  const cuda::Driver& drv = without_gil([]() -> const cuda::Driver& { return cuda::driver(); });
  if (drv.usable() && drv.device_count() > 1)
    fail(field, "the CUDA Array Interface does not name the device and there are several: pass a DLPack array");
  return v;
}

// The array `obj` as a LayerArray of `dims` (2: H x W; 3: N x H x W), rows
// contiguous, read in place while `keep` holds what owns it. `field`: "layers[0].ids".
media::LayerArray array_of(nb::handle obj, std::size_t dims, const std::string& field, const char* shape_name,
                           LayerKeep& keep) {
  ArrayView a;
  nb::ndarray<nb::ro> nd;
  bool cast = true;
  try {
    nd = nb::cast<nb::ndarray<nb::ro>>(obj);
  } catch (const std::exception&) {
    cast = false;
  }
  keep.objects.push_back(nb::borrow(obj));
  if (cast) {
    // The tensor may be the data's only owner (a capsule, a fresh export): held to the end of the call.
    keep.tensors.push_back(nd);
    a = view_of(nd, field);
  }
  else if (nb::hasattr(obj, "__cuda_array_interface__")) a = view_of_cai(obj, field);
  else if (std::string why = dtype_problem(obj); !why.empty())
    fail(field, why);  // an array nanobind cannot take: its dtype says why
  else
    fail(field, "a " + py_type_name(obj) +
                    " is not an array (NumPy, PyTorch, CuPy, DLPack, the CUDA Array Interface or the buffer protocol)");
  if (a.ndim != dims) fail(field, "shape " + shape_text(a) + " is " + std::to_string(a.ndim) + "-D, not " + shape_name);
  const auto type = sample_type(a.dtype);
  if (!type)
    fail(field,
         "dtype " + dtype_name(a.dtype.code, a.dtype.bits, a.dtype.lanes) + " is not an integer, float or bool type");
  const std::size_t item = media::sample_size(*type);
  // Strides of dimensions of size 0 or 1 say nothing (producers set them freely;
  // NumPy gives an empty array's all 0): N = 0 masks, for a frame without
  // detections, are read as none; a 0 height or width is refused by name when validated.
  if (std::find(a.shape.begin(), a.shape.begin() + dims, 0) != a.shape.begin() + dims) {
    media::LayerArray none;
    none.type = *type;
    none.width = std::uint32_t(std::min<std::int64_t>(a.shape[dims - 1], 0xFFFFFFFF));
    none.height = std::uint32_t(std::min<std::int64_t>(a.shape[dims - 2], 0xFFFFFFFF));
    none.count = dims == 3 ? std::uint32_t(std::min<std::int64_t>(a.shape[0], 0xFFFFFFFF)) : 1;
    return none;
  }
  if (a.shape[dims - 1] > 1 && a.stride[dims - 1] != 1)
    fail(field, "its rows are not contiguous (last stride " + std::to_string(a.stride[dims - 1]) + ")");
  for (std::size_t d = 0; d + 1 < dims; ++d)
    if (a.stride[d] < 0) fail(field, "negative strides are not taken");
  for (std::size_t d = 0; d < dims; ++d)
    if (a.shape[d] > std::int64_t(0xFFFFFFFFu)) fail(field, "dimension " + std::to_string(d) + " is too large");
  media::LayerArray l;
  l.data = a.data;
  l.type = *type;
  l.width = std::uint32_t(a.shape[dims - 1]);
  l.height = std::uint32_t(a.shape[dims - 2]);
  l.pitch = a.shape[dims - 2] > 1 ? std::size_t(a.stride[dims - 2]) * item : 0;
  if (dims == 3) {
    l.count = std::uint32_t(a.shape[0]);
    l.image_stride = a.shape[0] > 1 ? std::size_t(a.stride[0]) * item : 0;
  }
  if (a.cuda) cuda_layer(l, a.device, field);
  return l;
}

nb::ndarray<nb::numpy, std::uint8_t> colormap_array(const std::string& name) {
  media::Colormap c;
  try {
    c = media::parse_colormap(name);
  } catch (const InvalidFrame& e) {
    throw nb::value_error(e.what());
  }
  const auto& table = media::colormap_table(c);
  auto* data = new std::uint8_t[256 * 3];
  for (std::size_t i = 0; i < 256; ++i) {
    data[i * 3] = table[i].r;
    data[i * 3 + 1] = table[i].g;
    data[i * 3 + 2] = table[i].b;
  }
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<std::uint8_t*>(p); });
  return nb::ndarray<nb::numpy, std::uint8_t>(data, {256, 3}, owner);
}

// A read-only NumPy view of a host layer array (as received or read back),
// keeping its owner alive: (H, W), or (N, H, W) for masks.
nb::object array_view(const media::LayerArray& a, bool stack) {
  auto* keep = new std::shared_ptr<const void>(a.owner);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<const void>*>(p); });
  const std::size_t s = media::sample_size(a.type);
  const std::size_t shape3[3] = {a.count, a.height, a.width};
  const std::int64_t strides3[3] = {std::int64_t(a.image_pitch() / s), std::int64_t(a.row_pitch() / s), 1};
  const std::size_t ndim = stack ? 3 : 2;
  nb::dlpack::dtype dt;
  switch (a.type) {
    case media::SampleType::U8:
    case media::SampleType::Bool: dt = nb::dtype<std::uint8_t>(); break;
    case media::SampleType::I8: dt = nb::dtype<std::int8_t>(); break;
    case media::SampleType::U16: dt = nb::dtype<std::uint16_t>(); break;
    case media::SampleType::I16: dt = nb::dtype<std::int16_t>(); break;
    case media::SampleType::U32: dt = nb::dtype<std::uint32_t>(); break;
    case media::SampleType::I32: dt = nb::dtype<std::int32_t>(); break;
    case media::SampleType::F32: dt = nb::dtype<float>(); break;
    default: throw nb::value_error("layers: a received layer of an unexpected sample type");
  }
  nb::ndarray<nb::numpy, nb::ro> view(a.data, ndim, stack ? shape3 : shape3 + 1, owner,
                                      stack ? strides3 : strides3 + 1, dt);
  return nb::cast(view, nb::rv_policy::reference);
}

// The map keys uint64 ids by their 64 bits and every other dtype's by value:
// for uint64 ids the negative ids given go (none is one of them; as keys they
// would be 2**63 and above) and the entries of 2**63 and above join; for any
// other dtype those stay out. Ids a dtype cannot hold are never drawn.
void settle_ids(media::ClassMap& m, const AboveInt64& above) {
  if (m.ids.type != media::SampleType::U64) return;
  const auto negative = [](std::int64_t id) { return id < 0; };
  std::erase_if(m.colors, [&](const auto& e) { return negative(e.first); });
  std::erase_if(m.names, [&](const auto& e) { return negative(e.first); });
  std::erase_if(m.transparent, negative);
  for (const auto& [id, c] : above.colors) m.colors[id] = c;
  for (const auto& [id, n] : above.names) m.names[id] = n;
  m.transparent.insert(m.transparent.end(), above.transparent.begin(), above.transparent.end());
}

}  // namespace

nb::list layers_to_objects(const media::OverlayFrame& overlays) {
  nb::list out;
  for (const media::Layer& layer : overlays.layers) {
    const media::LayerArray& a = media::layer_array(layer);
    if (a.memory != MemoryKind::Host) throw nb::value_error("layers: a CUDA layer cannot be returned");
    nb::object array = array_view(a, layer.index() == 2);
    if (const auto* m = std::get_if<media::ClassMap>(&layer)) out.append(nb::cast(PyClassMap{array, *m, {}}));
    else if (const auto* v = std::get_if<media::ScalarMap>(&layer)) out.append(nb::cast(PyScalarMap{array, *v}));
    else out.append(nb::cast(PyInstanceMasks{array, std::get<media::InstanceMasks>(layer)}));
  }
  return out;
}

void layers_from_objects(nb::handle layers, media::OverlayFrame& out, LayerKeep& keep) {
  if (!layers.ptr() || layers.is_none()) return;
  if (!nb::isinstance<nb::list>(layers) && !nb::isinstance<nb::tuple>(layers))
    throw nb::type_error(("layers: a list of handoff.ClassMap / ScalarMap / InstanceMasks, not " +
                          py_type_name(layers)).c_str());
  std::size_t i = 0;
  for (nb::handle h : layers) {
    const std::string field = "layers[" + std::to_string(i++) + "]";
    if (nb::isinstance<PyClassMap>(h)) {
      const auto& p = nb::cast<const PyClassMap&>(h);
      media::ClassMap m = p.layer;
      m.ids = array_of(p.ids, 2, field + ".ids", "2-D (H, W) ids", keep);
      if (!media::is_integer(m.ids.type)) {
        fail(field + ".ids", std::string("class ids are integers, not ") + std::string(media::to_string(m.ids.type)));
      }
      settle_ids(m, p.above);
      out.layers.push_back(std::move(m));
    } else if (nb::isinstance<PyScalarMap>(h)) {
      const auto& p = nb::cast<const PyScalarMap&>(h);
      media::ScalarMap s = p.layer;
      s.values = array_of(p.values, 2, field + ".values", "2-D (H, W): a scalar map is one value per pixel", keep);
      out.layers.push_back(std::move(s));
    } else if (nb::isinstance<PyInstanceMasks>(h)) {
      const auto& p = nb::cast<const PyInstanceMasks&>(h);
      media::InstanceMasks m = p.layer;
      m.masks = array_of(p.masks, 3, field + ".masks", "3-D (N, H, W): one mask per box", keep);
      const std::size_t boxes = media::boxed_objects(out);
      if (m.masks.count != boxes)
        fail(field + ".masks", std::to_string(m.masks.count) + " masks for " + std::to_string(boxes) +
                                   " boxes: one mask per box of the same call");
      out.layers.push_back(std::move(m));
    } else {
      throw nb::type_error((field + ": a " + py_type_name(h) +
                            " is not a handoff.ClassMap, ScalarMap or InstanceMasks").c_str());
    }
  }
}

// A ClassMap's id key as a Python int: uint64 ids are keyed by their 64 bits
// (media::ClassMap), as are the ids above 2**63 given before the dtype is known.
nb::object id_object(std::int64_t key, bool unsigned_key) {
  if (unsigned_key) return nb::steal(PyLong_FromUnsignedLongLong(static_cast<std::uint64_t>(key)));
  return nb::int_(key);
}

// names / colors / transparent as given (a list came in as {0: ..., 1: ...}).
template <typename Value, typename Convert>
nb::dict id_dict(const std::map<std::int64_t, Value>& entries, const std::map<std::int64_t, Value>& above,
                 bool unsigned_keys, Convert convert) {
  nb::dict d;
  for (const auto& [id, v] : entries) d[id_object(id, unsigned_keys)] = convert(v);
  for (const auto& [id, v] : above) d[id_object(id, true)] = convert(v);
  return d;
}

nb::object color_tuple(const media::Color8& c) { return nb::make_tuple(c.r, c.g, c.b); }

nb::object target_tuple(const std::optional<media::RectF>& t) {
  if (!t) return nb::none();
  return nb::make_tuple(t->x, t->y, t->w, t->h);
}

void bind_layers(nb::module_& m) {
  nb::class_<PyClassMap>(m, "ClassMap", nb::type_slots(layer_slots<PyClassMap, &PyClassMap::ids>),
                         "A class id per pixel (segmentation), drawn over the frame: Viewer.show(..., layers=[...]).")
      .def("__init__", &init_class_map, "ids"_a, "names"_a = nb::none(), "colors"_a = nb::none(),
           "opacity"_a = 0.5, "transparent"_a = nb::tuple(), "target"_a = nb::none(),
           "ids: (H, W) integers (8..64-bit, signed or not), each id by its value; names / colors: a list "
           "(index = id) or a dict id -> name (a str) / colour ('#rrggbb' or (r, g, b)); ids (-2**63 .. "
           "2**64 - 1) without a colour take a fixed default palette; transparent: ids not drawn; the ids "
           "given colours or made transparent lie within 65536 consecutive ids; opacity 0..1. The layer "
           "covers the whole frame (nearest), or target=(x, y, w, h) in frame pixels (a letterboxed model "
           "input, a crop).")
      .def_prop_ro("ids", [](const PyClassMap& p) { return p.ids; })
      .def_prop_ro("names", [](const PyClassMap& p) {
        return id_dict(p.layer.names, p.above.names, p.layer.ids.type == media::SampleType::U64,
                       [](const std::string& n) { return nb::str(n.c_str(), n.size()); });
      }, "A dict id -> name (a list given comes back as {0: names[0], ...}).")
      .def_prop_ro("colors", [](const PyClassMap& p) {
        return id_dict(p.layer.colors, p.above.colors, p.layer.ids.type == media::SampleType::U64, color_tuple);
      }, "A dict id -> (r, g, b) of the colours given (ids without one take the default palette).")
      .def_prop_ro("transparent", [](const PyClassMap& p) {
        nb::list out;
        for (std::int64_t id : p.layer.transparent) out.append(id_object(id, p.layer.ids.type == media::SampleType::U64));
        for (std::int64_t id : p.above.transparent) out.append(id_object(id, true));
        return nb::tuple(out);
      })
      .def_prop_ro("opacity", [](const PyClassMap& p) { return p.layer.opacity; })
      .def_prop_ro("target", [](const PyClassMap& p) { return target_tuple(p.layer.target); });
  nb::class_<PyScalarMap>(m, "ScalarMap", nb::type_slots(layer_slots<PyScalarMap, &PyScalarMap::values>),
                          "A value per pixel (depth, heatmap, confidence) through a colormap, drawn over the frame.")
      .def("__init__", &init_scalar_map, "values"_a, "colormap"_a = "turbo", "range"_a = nb::none(),
           "opacity"_a = 0.5, "target"_a = nb::none(),
           "values: (H, W) floats (16/32/64-bit) or integers; colormap: gray, viridis, turbo, inferno, magma or "
           "plasma; range: (lo, hi), values outside clamp, or None: automatic (1st..99th percentile, smoothed "
           "across frames); NaN and +-inf are not drawn. Bilinear over the whole frame, or target=(x, y, w, h) "
           "in frame pixels.")
      .def_prop_ro("values", [](const PyScalarMap& p) { return p.values; })
      .def_prop_ro("colormap", [](const PyScalarMap& p) { return std::string(media::to_string(p.layer.colormap)); })
      .def_prop_ro("range", [](const PyScalarMap& p) -> nb::object {
        if (!p.layer.range) return nb::none();
        return nb::make_tuple((*p.layer.range)[0], (*p.layer.range)[1]);
      }, "(lo, hi) as given, or None: automatic from the data.")
      .def_prop_ro("opacity", [](const PyScalarMap& p) { return p.layer.opacity; })
      .def_prop_ro("target", [](const PyScalarMap& p) { return target_tuple(p.layer.target); });
  nb::class_<PyInstanceMasks>(m, "InstanceMasks",
                              nb::type_slots(layer_slots<PyInstanceMasks, &PyInstanceMasks::masks>),
                              "One mask per box of the same show() call, each in its detection's colour, outlined.")
      .def("__init__", &init_masks, "masks"_a, "threshold"_a = 0.5, "opacity"_a = 0.5, "target"_a = nb::none(),
           "masks: (N, H, W) bool, uint8 or float, N = the number of boxes; a pixel is in a mask where its "
           "value > threshold (0/1 and 0/255 masks both work at 0.5). Over the whole frame (nearest), or "
           "target=(x, y, w, h) in frame pixels.")
      .def_prop_ro("masks", [](const PyInstanceMasks& p) { return p.masks; })
      .def_prop_ro("threshold", [](const PyInstanceMasks& p) { return p.layer.threshold; })
      .def_prop_ro("opacity", [](const PyInstanceMasks& p) { return p.layer.opacity; })
      .def_prop_ro("target", [](const PyInstanceMasks& p) { return target_tuple(p.layer.target); });
  m.def("colormap", &colormap_array, "name"_a,
        "The viewer's 256-entry table of a colormap (gray, viridis, turbo, inferno, magma, plasma) as a "
        "(256, 3) uint8 array: entry i is the colour at i / 255 of the range.");
}

}  // namespace handoff::py
