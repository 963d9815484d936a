#include "overlay_arrays.hpp"

#include "module_common.hpp"

#include <handoff/cuda.hpp>
#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>

#include <nanobind/ndarray.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

namespace handoff::py {
namespace nb = nanobind;
namespace {

// A value as Python prints it (2, 2.5, 1e+20): the shortest text that reads back the same.
std::string number_text(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(std::int64_t(v));
  char text[32];
  const auto r = std::to_chars(text, text + sizeof text, v);
  return std::string(text, r.ptr);
}

bool absent(nb::handle h) { return !h.ptr() || h.is_none(); }

[[noreturn]] void fail(const std::string& field, const std::string& detail) {
  throw nb::value_error((field + ": " + detail).c_str());
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// One array's values as float64 on the host, row-major, with its shape.
struct HostArray {
  std::vector<std::int64_t> shape;
  std::vector<double> values;
  bool integral = false;  // the source dtype was an integer (or bool) type
};

double element(const std::uint8_t* p, nb::dlpack::dtype t) {
  using code = nb::dlpack::dtype_code;
  switch (code(t.code)) {
    case code::Float:
      if (t.bits == 32) { float v; std::memcpy(&v, p, 4); return v; }
      if (t.bits == 64) { double v; std::memcpy(&v, p, 8); return v; }
      break;
    case code::Int:
      if (t.bits == 8) return double(*reinterpret_cast<const std::int8_t*>(p));
      if (t.bits == 16) { std::int16_t v; std::memcpy(&v, p, 2); return v; }
      if (t.bits == 32) { std::int32_t v; std::memcpy(&v, p, 4); return v; }
      if (t.bits == 64) { std::int64_t v; std::memcpy(&v, p, 8); return double(v); }
      break;
    case code::UInt:
      if (t.bits == 8) return *p;
      if (t.bits == 16) { std::uint16_t v; std::memcpy(&v, p, 2); return v; }
      if (t.bits == 32) { std::uint32_t v; std::memcpy(&v, p, 4); return v; }
      if (t.bits == 64) { std::uint64_t v; std::memcpy(&v, p, 8); return double(v); }
      break;
    case code::Bool: return *p ? 1.0 : 0.0;
    default: break;
  }
  return NAN;  // not reached: checked by dtype_supported
}

bool dtype_supported(nb::dlpack::dtype t) {
  using code = nb::dlpack::dtype_code;
  if (t.lanes != 1) return false;
  switch (code(t.code)) {
    case code::Float: return t.bits == 32 || t.bits == 64;
    case code::Int:
    case code::UInt: return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case code::Bool: return t.bits == 8;
    default: return false;
  }
}

// The bytes an array's elements span, copied from CUDA memory to the host
// (once per array), so the caller reads them like a host array.
std::vector<std::uint8_t> copy_from_device(const std::string& field, const nb::ndarray<nb::ro>& a,
                                           std::int64_t& base_offset) {
  const std::size_t item = a.dtype().bits / 8;
  std::int64_t lo = 0, hi = 0;  // element offsets spanned
  for (std::size_t d = 0; d < a.ndim(); ++d) {
    if (a.shape(d) == 0) return {};
    const std::int64_t step = a.stride(d) * std::int64_t(a.shape(d) - 1);
    (step < 0 ? lo : hi) += step;
  }
  base_offset = -lo;
  const std::size_t bytes = std::size_t(hi - lo + 1) * item;
  std::vector<std::uint8_t> host(bytes);
  const auto* start = static_cast<const std::uint8_t*>(a.data()) + lo * std::int64_t(item);
  const cuda::Driver& drv = without_gil([]() -> const cuda::Driver& { return cuda::driver(); });
  if (!drv.usable()) fail(field, "the array is in CUDA memory, but CUDA is unavailable: " + drv.describe());
  const int ordinal = int(a.device_id());
  if (ordinal < 0 || ordinal >= drv.device_count()) {
    fail(field, "CUDA device " + std::to_string(ordinal) + " is not present");
  }
  without_gil([&] {
    cuda::PrimaryContext ctx(ordinal);
    cuda::ScopedContext current(ctx);
    // The producer's pending work first (DLPack asked for the legacy default stream).
    HANDOFF_CU_CHECK(drv.api().cuCtxSynchronize(), "overlay arrays: the producer's pending work");
    HANDOFF_CU_CHECK(drv.api().cuMemcpyDtoH(host.data(), reinterpret_cast<cuda::abi::CUdeviceptr>(start), bytes),
                     "overlay arrays: copy to the host");
  });
  return host;
}

bool is_sequence(nb::handle h) { return nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h); }

// A list / tuple as a tuple of its items now: a value's __float__ (or a list
// subclass) may change the lists while they are read; the snapshot holds what
// was counted.
nb::tuple snapshot(nb::handle h) {
  PyObject* t = PySequence_Tuple(h.ptr());
  if (!t) throw nb::python_error();
  return nb::steal<nb::tuple>(t);
}

// No overlay array has more dimensions (a list that holds itself would never end).
constexpr std::size_t kMaxSequenceDepth = 32;

void read_leaves(const std::string& field, nb::handle h, std::size_t depth, HostArray& out) {
  if (depth == out.shape.size()) {
    if (is_sequence(h)) fail(field, "ragged: the nested sequences differ in depth");
    if (PyUnicode_Check(h.ptr()) || PyBytes_Check(h.ptr())) {
      fail(field, "dtype " + text_of(h.type()) + " is not a number type");
    }
    const double v = PyFloat_AsDouble(h.ptr());
    if (v == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      fail(field, "dtype " + text_of(h.type()) + " is not a number type");
    }
    out.integral = out.integral && (PyLong_Check(h.ptr()) != 0);
    out.values.push_back(v);
    return;
  }
  const auto ragged = [&] {
    fail(field, "ragged: rows of different lengths (shape " + shape_text(out.shape) + " from the first row)");
  };
  if (!is_sequence(h)) ragged();
  const nb::tuple row = snapshot(h);
  if (std::int64_t(row.size()) != out.shape[depth]) ragged();
  for (nb::handle item : row) read_leaves(field, item, depth + 1, out);
}

// Nested lists / tuples of numbers, without NumPy: the shape from the first
// element at each depth, every row checked against it as it is read (each
// row read from a snapshot: as many values as the shape says, whatever the
// values' conversions do to the lists).
HostArray read_sequence(const std::string& field, nb::handle obj) {
  HostArray out;
  out.integral = true;
  nb::object h = nb::borrow(obj);
  while (is_sequence(h)) {
    if (out.shape.size() == kMaxSequenceDepth)
      fail(field, "sequences nested more than " + std::to_string(kMaxSequenceDepth) + " deep");
    const nb::tuple row = snapshot(h);
    out.shape.push_back(std::int64_t(row.size()));
    if (row.size() == 0) break;
    h = row[0];
  }
  read_leaves(field, obj, 0, out);
  return out;
}

HostArray read_array(const std::string& field, nb::handle obj) {
  if (is_sequence(obj)) return read_sequence(field, obj);
  nb::ndarray<nb::ro> a;
  if (!nb::try_cast(obj, a, false)) {
    // A producer nanobind does not take directly (e.g. __array_interface__ only): through NumPy.
    nb::object np;
    try {
      np = nb::module_::import_("numpy");
    } catch (nb::python_error&) {
      fail(field, text_of(obj.type()) + " is not an array (DLPack, buffer protocol) or a sequence of numbers");
    }
    nb::object arr;
    try {
      arr = np.attr("asarray")(obj);
    } catch (nb::python_error& e) {
      fail(field, std::string("cannot be read as an array (") + e.what() + ")");
    }
    if (!nb::try_cast(arr, a, false)) {
      fail(field, "dtype " + text_of(arr.attr("dtype")) + " is not a number type");
    }
  }
  if (!dtype_supported(a.dtype()))
    fail(field, "dtype " + dtype_name(a.dtype().code, a.dtype().bits, a.dtype().lanes) + " is not a number type");
  HostArray out;
  out.integral = a.dtype().code != std::uint8_t(nb::dlpack::dtype_code::Float);
  std::size_t n = 1;
  for (std::size_t d = 0; d < a.ndim(); ++d) {
    out.shape.push_back(std::int64_t(a.shape(d)));
    n *= a.shape(d);
  }
  const int dev = a.device_type();
  const std::uint8_t* base = static_cast<const std::uint8_t*>(a.data());
  std::vector<std::uint8_t> staged;
  std::int64_t offset = 0;
  if (dev == nb::device::cuda::value || dev == nb::device::cuda_managed::value) {
    staged = copy_from_device(field, a, offset);
    base = staged.data();
  } else if (dev != nb::device::cpu::value && dev != nb::device::cuda_host::value) {
    fail(field, "device type " + std::to_string(dev) + " is not supported (host or CUDA memory only)");
  }
  const std::int64_t item = a.dtype().bits / 8;
  out.values.resize(n);
  std::vector<std::int64_t> idx(a.ndim(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t off = offset;
    for (std::size_t d = 0; d < a.ndim(); ++d) off += idx[d] * a.stride(d);
    out.values[i] = element(base + off * item, a.dtype());
    for (std::size_t d = a.ndim(); d-- > 0;) {
      if (++idx[d] < std::int64_t(a.shape(d))) break;
      idx[d] = 0;
    }
  }
  return out;
}

void check_finite(const std::string& field, const HostArray& a, std::size_t row_size) {
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    const double v = a.values[i];
    if (!std::isfinite(v)) {
      fail(field + "[" + std::to_string(i / row_size) + "]", std::isnan(v) ? "NaN value" : "infinite value");
    }
  }
}

void check_rows(const std::string& field, const HostArray& a, std::int64_t& n) {
  if (n < 0) {
    n = a.shape.empty() ? 1 : a.shape[0];
  } else if (a.shape.empty() || a.shape[0] != n) {
    fail(field, "length " + (a.shape.empty() ? std::string("(a scalar)") : std::to_string(a.shape[0])) +
                    " does not match the " + std::to_string(n) + " objects");
  }
}

HostArray read_vector(const std::string& field, nb::handle obj, std::int64_t& n) {
  HostArray a = read_array(field, obj);
  if (a.shape.size() != 1) fail(field, "shape " + shape_text(a.shape) + " is not (N,)");
  check_rows(field, a, n);
  check_finite(field, a, 1);
  return a;
}

std::vector<std::int32_t> read_ids(const std::string& field, nb::handle obj, std::int64_t& n) {
  const HostArray a = read_vector(field, obj, n);
  std::vector<std::int32_t> ids(a.values.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const double v = a.values[i];
    if (v != std::floor(v)) fail(field + "[" + std::to_string(i) + "]", number_text(v) + " is not an integer");
    if (v < -1 || v > double(std::numeric_limits<std::int32_t>::max())) {
      fail(field + "[" + std::to_string(i) + "]", std::to_string(std::int64_t(v)) + " is outside -1..2^31-1");
    }
    ids[i] = std::int32_t(v);
  }
  return ids;
}

// xyxy corners from a row in `format`.
void to_corners(std::string_view format, const double* r, double c[4]) {
  if (format == "xyxy") {
    c[0] = r[0], c[1] = r[1], c[2] = r[2], c[3] = r[3];
  } else if (format == "xywh") {
    c[0] = r[0], c[1] = r[1], c[2] = r[0] + r[2], c[3] = r[1] + r[3];
  } else {  // cxcywh
    c[0] = r[0] - r[2] / 2, c[1] = r[1] - r[3] / 2, c[2] = r[0] + r[2] / 2, c[3] = r[1] + r[3] / 2;
  }
}

void add_boxes(const OverlayArrays& in, float sx, float sy, std::int64_t& n, media::OverlayFrame& out) {
  const HostArray b = read_array("boxes", in.boxes);
  if (b.shape.size() != 2 || b.shape[1] != 4) fail("boxes", "shape " + shape_text(b.shape) + " is not (N, 4)");
  check_rows("boxes", b, n);
  check_finite("boxes", b, 4);
  out.objects.resize(std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double* r = &b.values[std::size_t(i) * 4];
    if (in.box_format != "xyxy" && (r[2] < 0 || r[3] < 0)) {
      fail("boxes[" + std::to_string(i) + "]", "negative width or height (" + std::to_string(r[2]) + ", " +
                                                   std::to_string(r[3]) + ") in " + in.box_format);
    }
    double c[4];
    to_corners(in.box_format, r, c);
    media::OverlayObject& o = out.objects[std::size_t(i)];
    o.x0 = float(std::min(c[0], c[2]) * sx), o.x1 = float(std::max(c[0], c[2]) * sx);
    o.y0 = float(std::min(c[1], c[3]) * sy), o.y1 = float(std::max(c[1], c[3]) * sy);
    o.has_box = true;
  }
}

void add_labels(nb::handle labels, std::int64_t& n, media::OverlayFrame& out) {
  if (nb::isinstance<nb::str>(labels) || nb::isinstance<nb::bytes>(labels)) {
    fail("labels", "a single string; pass one string per object (a list)");
  }
  std::vector<nb::object> items;
  try {
    for (nb::handle h : labels) items.push_back(nb::borrow(h));
  } catch (nb::python_error&) {
    fail("labels", text_of(labels.type()) + " is not a sequence of strings");
  }
  const std::int64_t count = std::int64_t(items.size());
  if (n >= 0 && count != n) {
    fail("labels", "length " + std::to_string(count) + " does not match the " + std::to_string(n) + " objects");
  }
  n = count;
  if (out.objects.size() < std::size_t(n)) out.objects.resize(std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const nb::object& it = items[std::size_t(i)];
    if (it.is_none()) continue;
    if (!nb::isinstance<nb::str>(it)) {
      fail("labels[" + std::to_string(i) + "]", text_of(it.type()) + " is not a string");
    }
    const std::string s = nb::cast<std::string>(it);
    if (!s.empty()) out.objects[std::size_t(i)].label = out.add_text(s);
  }
}

void add_keypoints(const OverlayArrays& in, float sx, float sy, std::int64_t& n, media::OverlayFrame& out) {
  const HostArray k = read_array("keypoints", in.keypoints);
  if (k.shape.size() != 3 || (k.shape[2] != 2 && k.shape[2] != 3)) {
    fail("keypoints", "shape " + shape_text(k.shape) + " is not (N, K, 2) or (N, K, 3)");
  }
  check_rows("keypoints", k, n);
  const std::int64_t per = k.shape[1], dims = k.shape[2];
  check_finite("keypoints", k, std::size_t(per * dims));
  std::vector<std::array<std::uint32_t, 2>> edges;
  if (!absent(in.skeleton)) {
    const HostArray s = read_array("skeleton", in.skeleton);
    if (s.shape.size() != 2 || s.shape[1] != 2) fail("skeleton", "shape " + shape_text(s.shape) + " is not (E, 2)");
    for (std::size_t e = 0; e < s.values.size(); ++e) {
      const double v = s.values[e];
      if (!(v >= 0 && v < double(per) && v == std::floor(v))) {
        fail("skeleton[" + std::to_string(e / 2) + "]",
             "keypoint index " + number_text(v) + " is not an integer in 0.." + std::to_string(per - 1));
      }
    }
    for (std::size_t e = 0; e + 1 < s.values.size(); e += 2) {
      edges.push_back({std::uint32_t(s.values[e]), std::uint32_t(s.values[e + 1])});
    }
  }
  if (out.objects.size() < std::size_t(n)) out.objects.resize(std::size_t(n));
  std::vector<media::Keypoint> kps(static_cast<std::size_t>(per));
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < per; ++j) {
      const double* p = &k.values[std::size_t((i * per + j) * dims)];
      kps[std::size_t(j)] = {float(p[0] * sx), float(p[1] * sy), dims == 3 ? float(p[2]) : 1.0f};
    }
    out.set_keypoints(std::uint32_t(i), kps.data(), std::uint32_t(per), edges.data(), std::uint32_t(edges.size()));
  }
}

}  // namespace

void overlays_from_arrays(const OverlayArrays& in, std::uint32_t frame_width, std::uint32_t frame_height,
                          media::OverlayFrame& out) {
  out.clear();
  if (in.box_format != "xywh" && in.box_format != "xyxy" && in.box_format != "cxcywh") {
    fail("box_format", "'" + in.box_format + "' is not 'xywh', 'xyxy' or 'cxcywh'");
  }
  if (absent(in.keypoints) && !absent(in.skeleton)) fail("skeleton", "given without keypoints");
  const float sx = in.normalized ? float(frame_width) : 1.0f, sy = in.normalized ? float(frame_height) : 1.0f;
  std::int64_t n = -1;  // objects, set by the first array given
  // Objects first (their count), then each field fills them in.
  if (!absent(in.boxes)) add_boxes(in, sx, sy, n, out);
  if (!absent(in.labels)) add_labels(in.labels, n, out);
  if (!absent(in.scores)) {
    const HostArray s = read_vector("scores", in.scores, n);
    out.objects.resize(std::size_t(n));
    for (std::size_t i = 0; i < s.values.size(); ++i) out.objects[i].score = float(s.values[i]);
  }
  if (!absent(in.class_ids)) {
    const auto ids = read_ids("class_ids", in.class_ids, n);
    out.objects.resize(std::size_t(n));
    for (std::size_t i = 0; i < ids.size(); ++i) out.objects[i].class_id = ids[i];
  }
  if (!absent(in.track_ids)) {
    const auto ids = read_ids("track_ids", in.track_ids, n);
    out.objects.resize(std::size_t(n));
    for (std::size_t i = 0; i < ids.size(); ++i) out.objects[i].track_id = ids[i];
  }
  if (!absent(in.keypoints)) add_keypoints(in, sx, sy, n, out);
}

}  // namespace handoff::py
