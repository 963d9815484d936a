// handoff.Viewer and the file sources in Python (bind_viewer): show frames and
// detections from any thread, acquire the viewer's own buffers for writing,
// snapshots as RGBA arrays, handoff.open / handoff.open_scene yielding frames
// with their overlays. docs/python.md ("The viewer") is the reference.
//
// The GIL: every call that can block (opening the viewer, show, acquire,
// present, snapshot, close, waits, reading a file) runs with it released;
// converting Python arrays into a frame or overlays runs with it held.
#include "viewer_bindings.hpp"

#include "module_common.hpp"
#include "overlay_arrays.hpp"

#include <handoff/cuda.hpp>
#include <handoff/cuda_abi.hpp>
#include <handoff/dlpack.hpp>
#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/testing.hpp>
#include <handoff/viewer.hpp>
#include <handoff/viewer/error.hpp>
#include <handoff/viewer/overlay.hpp>
#include <handoff/viewer/raw_reader.hpp>
#include <handoff/viewer/scene.hpp>
#include <handoff/viewer/y4m_reader.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace handoff::py {
namespace nb = nanobind;
using namespace nb::literals;
namespace {

// str(obj) as a C++ string.
std::string text_of(nb::handle obj) {
  nb::object s = nb::steal(PyObject_Str(obj.ptr()));
  if (!s.is_valid()) throw nb::python_error();
  return nb::cast<std::string>(s);
}

std::string py_type_name(nb::handle h) { return text_of(h.type()); }

// Frame.from_planes (handoff_module.cpp), through the bound class.
PyFrame from_planes(nb::handle luma, nb::handle chroma, const std::string& format,
                    const std::optional<Colorimetry>& colorimetry) {
  nb::object c = colorimetry ? nb::cast(*colorimetry) : nb::none();
  return nb::cast<PyFrame>(nb::type<PyFrame>().attr("from_planes")(luma, chroma, format, c));
}

// --- frames handed to show() ---------------------------------------------------------
// P010 when the array's samples are 16 bits wide: its dtype (NumPy, PyTorch
// and CuPy all name it so), else the typestr of its array interface.
std::string format_from_dtype(nb::handle array) {
  if (nb::hasattr(array, "dtype")) {
    return text_of(array.attr("dtype")).find("16") != std::string::npos ? "p010" : "nv12";
  }
  for (const char* iface : {"__cuda_array_interface__", "__array_interface__"}) {
    if (!nb::hasattr(array, iface)) continue;
    nb::object d = array.attr(iface);
    if (nb::isinstance<nb::dict>(d) && nb::cast<nb::dict>(d).contains("typestr")) {
      const std::string t = text_of(nb::cast<nb::dict>(d)["typestr"]);
      return t.size() >= 3 && t.substr(2) == "2" ? "p010" : "nv12";
    }
  }
  return "nv12";
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

PyFrame stacked_frame(nb::handle array, std::optional<std::string> format, std::optional<Colorimetry> colorimetry) {
  nb::tuple shape;
  try {
    shape = nb::tuple(array.attr("shape"));
  } catch (nb::python_error&) {
    throw nb::type_error(("frame: " + py_type_name(array) +
                          " is not a handoff.Frame, a (luma, chroma) pair or a stacked (H + H/2, W) array")
                             .c_str());
  }
  if (shape.size() != 2) {
    throw InvalidFrame("frame.shape", "a stacked frame is 2-D (H + ceil(H/2), W); this array has " +
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
  return from_planes(luma, chroma, format ? *format : format_from_dtype(array), colorimetry);
}

// show()'s frame argument: a handoff.Frame, a (luma, chroma) pair or a stacked array.
PyFrame frame_of(nb::handle obj, std::optional<std::string> format, std::optional<Colorimetry> colorimetry) {
  if (nb::isinstance<PyFrame>(obj)) {
    if (format || colorimetry) {
      throw nb::value_error("format / colorimetry: a handoff.Frame carries its own; pass them only with arrays");
    }
    return nb::cast<PyFrame>(obj);
  }
  if (nb::isinstance<nb::tuple>(obj) || nb::isinstance<nb::list>(obj)) {
    if (nb::len(obj) != 2) {
      throw nb::value_error(("frame: a sequence of " + std::to_string(nb::len(obj)) +
                             " items; a frame is a (luma, chroma) pair")
                                .c_str());
    }
    nb::object luma = obj[0], chroma = obj[1];
    return from_planes(luma, chroma, format ? *format : format_from_dtype(luma), colorimetry);
  }
  return stacked_frame(obj, format, colorimetry);
}

// --- overlays -------------------------------------------------------------------------
// handoff.Overlays: one frame's overlays (from a file source, or built from arrays).
struct PyOverlays {
  std::shared_ptr<const viewer::OverlayFrame> overlays = std::make_shared<viewer::OverlayFrame>();
};

nb::object numpy_array(const nb::list& values, const char* dtype) {
  return nb::module_::import_("numpy").attr("array")(values, "dtype"_a = dtype);
}

nb::object overlay_boxes(const viewer::OverlayFrame& f) {
  nb::list rows;
  for (const auto& o : f.objects) {
    if (o.has_box) rows.append(nb::make_tuple(o.x0, o.y0, o.x1, o.y1));
    else rows.append(nb::make_tuple(NAN, NAN, NAN, NAN));
  }
  return numpy_array(rows, "float32").attr("reshape")(f.objects.size(), 4);
}

template <typename Get>
nb::object overlay_column(const viewer::OverlayFrame& f, const char* dtype, Get get) {
  nb::list l;
  for (const auto& o : f.objects) l.append(get(o));
  return numpy_array(l, dtype);
}

// The arrays of show(), or an Overlays object, as one OverlayFrame.
struct OverlayArgs {
  OverlayArrays arrays;
  nb::handle overlays;  // a handoff.Overlays, or None
};

void resolve_overlays(const OverlayArgs& a, const Frame& frame, viewer::OverlayFrame& scratch,
                      const viewer::OverlayFrame*& out) {
  const bool have_object = a.overlays.ptr() && !a.overlays.is_none();
  if (have_object && !a.arrays.empty()) {
    throw nb::value_error("overlays: pass an Overlays object or the arrays (boxes=, labels=, ...), not both");
  }
  if (have_object) {
    if (!nb::isinstance<PyOverlays>(a.overlays)) {
      throw nb::type_error(("overlays: " + py_type_name(a.overlays) + " is not a handoff.Overlays").c_str());
    }
    out = nb::cast<const PyOverlays&>(a.overlays).overlays.get();
    return;
  }
  overlays_from_arrays(a.arrays, frame.width, frame.height, scratch);
  out = &scratch;
}

// --- snapshots ------------------------------------------------------------------------
struct PySnapshot {
  RgbaImage image;
};

// --- DLPack and array-interface exports of this file's host / CUDA arrays ----------
void legacy_capsule_destructor(PyObject* cap) {
  // Only an unconsumed capsule still owns its tensor; a consumer renames it.
  if (PyCapsule_IsValid(cap, kCapsuleLegacy)) {
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kCapsuleLegacy));
    if (t && t->deleter) t->deleter(t);
  }
}

void versioned_capsule_destructor(PyObject* cap) {
  if (PyCapsule_IsValid(cap, kCapsuleVersioned)) {
    auto* t = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, kCapsuleVersioned));
    if (t && t->deleter) t->deleter(t);
  }
}

// Checks __dlpack__'s keyword arguments against the array's device; true when
// the consumer takes a versioned (1.x) capsule.
bool dlpack_request(DLDevice dev, nb::handle stream, nb::handle max_version, nb::handle dl_device, nb::handle copy) {
  if (!copy.is_none() && PyObject_IsTrue(copy.ptr()) == 1) {
    throw nb::buffer_error("copy=True: handoff exports without copying; copy in the consumer");
  }
  if (!dl_device.is_none()) {
    const auto t = nb::cast<nb::tuple>(dl_device);
    if (t.size() != 2 || nb::cast<int>(t[0]) != int(dev.device_type) || nb::cast<int>(t[1]) != dev.device_id) {
      throw nb::buffer_error("dl_device: not the array's device; handoff does not copy across devices");
    }
  }
  if (!stream.is_none()) {
    if (dev.device_type != kDLCUDA) throw nb::value_error("stream: must be None for a host array (DLPack)");
    const long long st = nb::cast<long long>(stream);
    if (st == 0 || st < -1) throw nb::value_error("stream: 0 and values below -1 are not valid for CUDA (DLPack)");
  }
  if (max_version.is_none()) return false;
  const auto v = nb::cast<nb::tuple>(max_version);
  return v.size() >= 1 && nb::cast<long long>(v[0]) >= 1;
}

// A capsule around a tensor made by `make_versioned` or `make_legacy`.
// `writable` clears the versioned tensor's read-only flag.
template <typename V, typename L>
nb::object dlpack_capsule(bool versioned, bool writable, V make_versioned, L make_legacy) {
  PyObject* cap;
  if (versioned) {
    DLManagedTensorVersioned* t = make_versioned();
    if (writable) t->flags &= ~kDLPackFlagReadOnly;
    cap = PyCapsule_New(t, kCapsuleVersioned, &versioned_capsule_destructor);
    if (!cap) t->deleter(t);
  } else {
    DLManagedTensor* t = make_legacy();
    cap = PyCapsule_New(t, kCapsuleLegacy, &legacy_capsule_destructor);
    if (!cap) t->deleter(t);
  }
  if (!cap) throw nb::python_error();
  return nb::steal(cap);
}

nb::object snapshot_dlpack(const PySnapshot& s, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                           nb::handle copy) {
  const bool versioned = dlpack_request(DLDevice{kDLCPU, 0}, stream, max_version, dl_device, copy);
  return dlpack_capsule(
      versioned, false, [&] { return s.image.to_dlpack_versioned(); }, [&] { return s.image.to_dlpack(); });
}

nb::dict snapshot_interface(const PySnapshot& s) {
  nb::dict d;
  d["shape"] = nb::make_tuple(s.image.height(), s.image.width(), 4);
  d["typestr"] = "|u1";
  d["data"] = nb::make_tuple(reinterpret_cast<std::uintptr_t>(s.image.data()), true);
  d["strides"] = nb::none();
  d["version"] = 3;
  return d;
}

// --- the viewer -----------------------------------------------------------------------
struct PyViewer {
  std::unique_ptr<Viewer> viewer;

  PyViewer() = default;
  PyViewer(const PyViewer&) = delete;
  PyViewer& operator=(const PyViewer&) = delete;
  ~PyViewer() {
    // Closing waits for the display thread: without the GIL, so no Python thread stalls.
    without_gil([this] { viewer.reset(); });
  }
  Viewer& get() { return *viewer; }
};

ViewerOptions viewer_options(const std::string& title, int width, int height, bool vsync, bool show_ui,
                             bool show_overlays, bool headless, const std::string& display, const std::string& memory,
                             int cuda_device, std::size_t ring, const std::string& paused_show,
                             const std::string& output_dir, const std::string& screenshot, bool gl_debug) {
  ViewerOptions o;
  o.title = title;
  o.width = width;
  o.height = height;
  o.vsync = vsync;
  o.show_ui = show_ui;
  o.show_overlays = show_overlays;
  if (display == "auto") o.display = ViewerDisplay::Auto;
  else if (display == "window") o.display = ViewerDisplay::Window;
  else if (display == "headless") o.display = ViewerDisplay::Headless;
  else throw nb::value_error(("display: '" + display + "' is not 'auto', 'window' or 'headless'").c_str());
  if (headless) o.display = ViewerDisplay::Headless;
  if (memory == "auto") o.memory = ViewerMemory::Auto;
  else if (memory == "cuda") o.memory = ViewerMemory::Cuda;
  else if (memory == "host") o.memory = ViewerMemory::Host;
  else throw nb::value_error(("memory: '" + memory + "' is not 'auto', 'cuda' or 'host'").c_str());
  o.cuda_device = cuda_device;
  o.ring = ring;
  if (paused_show == "keep_newest") o.paused_show = PausedShow::KeepNewest;
  else if (paused_show == "block") o.paused_show = PausedShow::Block;
  else throw nb::value_error(("paused_show: '" + paused_show + "' is not 'keep_newest' or 'block'").c_str());
  o.output_dir = output_dir;
  o.screenshot = screenshot;
  o.gl_debug = gl_debug;
  return o;
}

void show(PyViewer& v, nb::handle frame_obj, const OverlayArgs& ov, std::optional<std::string> format,
          std::optional<Colorimetry> colorimetry) {
  const PyFrame f = frame_of(frame_obj, format, colorimetry);
  viewer::OverlayFrame scratch;
  const viewer::OverlayFrame* overlays = nullptr;
  resolve_overlays(ov, f.frame, scratch, overlays);
  without_gil([&] { v.get().show(f.frame, *overlays); });
}

// Blocks until closed or `timeout` seconds (None: no limit), in short waits
// without the GIL so Ctrl-C (a pending signal) ends it.
bool wait_closed(PyViewer& v, std::optional<double> timeout) {
  using namespace std::chrono;
  const auto deadline = steady_clock::now() + duration_cast<steady_clock::duration>(duration<double>(timeout.value_or(0)));
  for (;;) {
    if (without_gil([&] { return v.get().wait_closed_for(milliseconds(50)); })) break;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    if (timeout && steady_clock::now() >= deadline) return false;
  }
  without_gil([&] { v.get().wait_closed(); });  // rethrows what the display thread stopped on
  return true;
}

// --- acquire: the viewer's own buffer, written through DLPack --------------------------
// The frame's owner holds the ViewerFrame, so every export (a DLPack tensor, an
// array over __array_interface__, a plane object) keeps the buffer mapped. At
// present() no export may be left (the buffer goes back to the viewer);
// otherwise the frame is not shown and the buffer returns when the last export goes.
struct AcquiredState {
  Frame frame;                            // owner: the ViewerFrame
  ViewerFrame* slot = nullptr;
  viewer::OverlayFrame overlays;
  bool done = false;
};

struct PyAcquired {
  nb::object viewer;  // the handoff.Viewer
  std::shared_ptr<AcquiredState> state;
};

struct PyAcquiredPlane {
  Frame frame;  // a copy: holds the buffer
  FramePart part;
};

const Frame& live_frame(const PyAcquired& a) {
  if (a.state->done) throw nb::value_error("acquire: the frame was presented or given back already");
  return a.state->frame;
}

nb::object writable_dlpack(const PyAcquiredPlane& p, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                           nb::handle copy) {
  const bool versioned = dlpack_request(dlpack_device(p.frame), stream, max_version, dl_device, copy);
  return dlpack_capsule(
      versioned, true, [&] { return export_dlpack_versioned(p.frame, p.part); },
      [&] { return export_dlpack(p.frame, p.part); });
}

// __array_interface__ (host) or __cuda_array_interface__ (CUDA), writable.
nb::dict writable_interface(const PyAcquiredPlane& p, MemoryKind want) {
  if (p.frame.memory != want) {
    throw nb::attribute_error(want == MemoryKind::Cuda ? "__cuda_array_interface__: the buffer is host memory"
                                                       : "__array_interface__: the buffer is CUDA memory");
  }
  const TensorLayout l = tensor_layout(p.frame, p.part);
  nb::list shape, strides;
  for (int i = 0; i < l.ndim; ++i) {
    shape.append(l.shape[std::size_t(i)]);
    strides.append(l.strides[std::size_t(i)] * std::int64_t(l.sample_bytes));
  }
  nb::dict d;
  d["shape"] = nb::tuple(shape);
  d["typestr"] = l.sample_bytes == 1 ? "|u1" : "<u2";
  d["data"] = nb::make_tuple(reinterpret_cast<std::uintptr_t>(l.data), false);
  d["strides"] = nb::tuple(strides);
  d["version"] = 3;
  if (want == MemoryKind::Cuda) d["stream"] = nb::none();  // nothing pending on the viewer's side
  return d;
}

// Waits for the caller's CUDA work on the frame's context (the primary
// context PyTorch and CuPy share), so the buffer is complete when presented.
void synchronise_cuda(const Frame& f) {
  if (f.memory != MemoryKind::Cuda || !f.cuda_context) return;
  const cuda::Driver& drv = cuda::driver();
  cuda::ScopedContext current(drv, static_cast<cuda::abi::CUctx_st*>(f.cuda_context));
  HANDOFF_CU_CHECK(drv.api().cuCtxSynchronize(), "acquire: the writes into the viewer's buffer");
}

void present(PyAcquired& a) {
  AcquiredState& s = *a.state;
  if (s.done) throw nb::value_error("present: the frame was presented or given back already");
  s.done = true;
  std::shared_ptr<const void> owner = std::move(s.frame.owner);
  const long exports = owner.use_count() - 1;
  if (exports > 0) {
    // Still referenced: the buffer returns, unshown, when the last reference goes.
    throw nb::buffer_error(("present: " + std::to_string(exports) +
                            " array(s) or plane(s) still refer to the acquired buffer; let them go (del) before "
                            "the with block ends. The frame was not shown.")
                               .c_str());
  }
  ViewerFrame slot = std::move(*s.slot);
  slot.frame().index = s.frame.index;
  slot.frame().timestamp = s.frame.timestamp;
  owner.reset();
  Viewer& v = nb::cast<PyViewer&>(a.viewer).get();
  without_gil([&] {
    synchronise_cuda(slot.frame());
    v.present(std::move(slot), s.overlays);
  });
}

void give_back(PyAcquired& a) {
  AcquiredState& s = *a.state;
  if (s.done) return;
  s.done = true;
  without_gil([&] { s.frame.owner.reset(); });  // gives the buffer back unless exports still hold it
}

PyAcquired acquire(nb::handle self, const std::string& format, std::uint32_t width, std::uint32_t height,
                   std::optional<Colorimetry> colorimetry) {
  Viewer& v = nb::cast<PyViewer&>(self).get();
  const PixelFormat pf = parse_format(format);
  auto slot = std::make_shared<ViewerFrame>(
      without_gil([&] { return v.acquire(pf, width, height, colorimetry.value_or(Colorimetry{})); }));
  auto state = std::make_shared<AcquiredState>();
  state->slot = slot.get();
  state->frame = slot->frame();
  state->frame.owner = std::move(slot);
  return PyAcquired{nb::borrow(self), std::move(state)};
}

// --- sources: handoff.open / handoff.open_scene ------------------------------------------
// A FrameSource is one thread's at a time and its reads run without the GIL:
// `busy` keeps two Python threads from reading, seeking or closing it at once.
struct PySource {
  std::unique_ptr<std::mutex> busy = std::make_unique<std::mutex>();
  std::unique_ptr<viewer::FrameSource> source;
  viewer::OverlayStore file_overlays;
  bool has_file_overlays = false;
  std::int64_t limit = -1;  // frames to yield (-1: the source's end)
  std::int64_t yielded = 0;

  viewer::FrameSource& get() {
    if (!source) throw nb::value_error("the source is closed");
    return *source;
  }
};

// Holds the source's lock, taken without the GIL (another thread may hold the
// lock while it waits for the GIL itself).
std::unique_lock<std::mutex> lock_source(PySource& s) {
  return without_gil([&] { return std::unique_lock<std::mutex>(*s.busy); });
}

nb::object read_next(PySource& s) {
  const auto lock = lock_source(s);
  viewer::FrameSource& src = s.get();
  if (s.limit >= 0 && s.yielded >= s.limit) return nb::none();
  const viewer::SourceInfo& info = src.info();
  HostFrameOptions ho;
  ho.colorimetry = info.colorimetry;
  Frame frame = allocate_host_frame(info.format, info.width, info.height, ho);
  const std::int64_t index = src.position();
  auto overlays = std::make_shared<viewer::OverlayFrame>();
  const bool got = without_gil([&] {
    if (!src.read_into(viewer::write_target(frame))) return false;
    if (s.has_file_overlays) {
      if (const viewer::OverlayFrame* o = s.file_overlays.find(index)) *overlays = *o;
    } else {
      src.overlays_for(index, *overlays);
    }
    return true;
  });
  if (!got) return nb::none();
  ++s.yielded;
  frame.index = index;
  frame.timestamp = info.rate.value() > 0 ? double(index) / info.rate.value() : 0.0;
  return nb::make_tuple(PyFrame{std::move(frame), true}, PyOverlays{std::move(overlays)});
}

void load_overlay_file(PySource& s, const std::optional<std::string>& path) {
  if (!path) return;
  const viewer::SourceInfo& info = s.get().info();
  viewer::OverlayParseOptions po;
  po.frame_width = float(info.width);
  po.frame_height = float(info.height);
  without_gil([&] { s.file_overlays.load_jsonl(*path, po); });
  s.has_file_overlays = true;
}

PySource open_file(const std::string& path, std::optional<std::string> format, std::optional<std::uint32_t> width,
                   std::optional<std::uint32_t> height, std::optional<Colorimetry> colorimetry,
                   std::optional<double> rate, std::optional<std::string> overlays) {
  PySource s;
  const bool raw = width || height || format;
  if (raw) {
    if (!width || !height) throw nb::value_error("width / height: a raw NV12 / P010 file needs both");
    viewer::RawOptions ro;
    ro.format = parse_format(format.value_or("nv12"));
    ro.width = *width;
    ro.height = *height;
    if (colorimetry) ro.colorimetry = *colorimetry;
    if (rate) {
      if (!(*rate > 0) || !std::isfinite(*rate)) throw nb::value_error("rate: must be a positive number");
      ro.rate = viewer::Rational{std::int64_t(std::llround(*rate * 1000)), 1000};
    }
    s.source = without_gil([&] { return viewer::open_raw(path, ro); });
  } else {
    if (colorimetry || rate) {
      throw nb::value_error("colorimetry / rate: a Y4M file says its own; pass them only for raw files");
    }
    s.source = without_gil([&] { return viewer::open_y4m(path); });
  }
  load_overlay_file(s, overlays);
  return s;
}

PySource open_scene(std::uint32_t width, std::uint32_t height, const std::string& format,
                    std::optional<std::int64_t> frames) {
  if (frames && *frames < 0) throw nb::value_error("frames: must be >= 0 (None: endless)");
  viewer::SceneOptions so;
  so.width = width;
  so.height = height;
  so.format = parse_format(format);
  PySource s;
  s.source = without_gil([&] { return viewer::make_scene_source(so); });
  s.limit = frames.value_or(-1);
  return s;
}

std::string format_name(PixelFormat f) { return f == PixelFormat::NV12 ? "nv12" : "p010"; }

}  // namespace

void bind_viewer(nb::module_& m) {
  static nb::exception<ViewerClosed> viewer_closed(m, "ViewerClosed", PyExc_RuntimeError);
  static nb::exception<viewer::ParseError> parse_error(m, "ParseError", PyExc_ValueError);

  nb::class_<PyOverlays>(m, "Overlays",
                         "One frame's overlays (objects with boxes, labels, scores, class and track ids, "
                         "keypoints; shapes and texts). Pass to Viewer.show(frame, overlays=...). Immutable.")
      .def(nb::init<>())
      .def_static(
          "from_arrays",
          [](nb::handle boxes, const std::string& box_format, bool normalized, std::optional<std::uint32_t> width,
             std::optional<std::uint32_t> height, nb::handle labels, nb::handle scores, nb::handle class_ids,
             nb::handle track_ids, nb::handle keypoints, nb::handle skeleton) {
            if (normalized && (!width || !height)) {
              throw nb::value_error("normalized: needs the frame's width= and height=");
            }
            OverlayArrays a{boxes, labels, scores, class_ids, track_ids, keypoints, skeleton, box_format, normalized};
            auto f = std::make_shared<viewer::OverlayFrame>();
            overlays_from_arrays(a, width.value_or(0), height.value_or(0), *f);
            return PyOverlays{std::move(f)};
          },
          "boxes"_a = nb::none(), "box_format"_a = "xywh", "normalized"_a = false, "width"_a = nb::none(),
          "height"_a = nb::none(), "labels"_a = nb::none(), "scores"_a = nb::none(), "class_ids"_a = nb::none(),
          "track_ids"_a = nb::none(), "keypoints"_a = nb::none(), "skeleton"_a = nb::none(),
          "Overlays from arrays, as Viewer.show takes them (normalized coordinates need width= and height=).")
      .def("__len__", [](const PyOverlays& o) { return o.overlays->objects.size(); })
      .def_prop_ro("boxes", [](const PyOverlays& o) { return overlay_boxes(*o.overlays); },
                   "(N, 4) float32, xyxy pixels; NaN rows for objects without a box.")
      .def_prop_ro("labels", [](const PyOverlays& o) {
        nb::list l;
        for (const auto& obj : o.overlays->objects) {
          if (obj.label.empty()) l.append(nb::none());
          else l.append(nb::str(o.overlays->text(obj.label).data(), obj.label.size));
        }
        return l;
      }, "N labels (None where an object has none).")
      .def_prop_ro("scores", [](const PyOverlays& o) {
        return overlay_column(*o.overlays, "float32", [](const viewer::OverlayObject& x) { return x.score; });
      }, "(N,) float32; NaN where an object has no score.")
      .def_prop_ro("class_ids", [](const PyOverlays& o) {
        return overlay_column(*o.overlays, "int32", [](const viewer::OverlayObject& x) { return x.class_id; });
      }, "(N,) int32; -1 where none.")
      .def_prop_ro("track_ids", [](const PyOverlays& o) {
        return overlay_column(*o.overlays, "int32", [](const viewer::OverlayObject& x) { return x.track_id; });
      }, "(N,) int32; -1 where none.")
      .def_prop_ro("keypoint_counts", [](const PyOverlays& o) {
        return overlay_column(*o.overlays, "int32",
                              [](const viewer::OverlayObject& x) { return std::int64_t(x.keypoint_count); });
      }, "(N,) int32: keypoints of each object.")
      .def_prop_ro("shapes", [](const PyOverlays& o) { return o.overlays->shapes.size(); },
                   "Number of polygons and polylines.")
      .def_prop_ro("texts", [](const PyOverlays& o) { return o.overlays->texts.size(); }, "Number of free texts.")
      .def("__repr__", [](const PyOverlays& o) {
        return "<handoff.Overlays " + std::to_string(o.overlays->objects.size()) + " objects>";
      });

  nb::class_<ViewerStats>(m, "ViewerStats", "Viewer.stats: what the viewer did (a snapshot of its counters).")
      .def_ro("submitted", &ViewerStats::submitted, "Frames handed in (show / present).")
      .def_ro("shown", &ViewerStats::shown, "Frames displayed.")
      .def_ro("dropped", &ViewerStats::dropped, "Frames replaced by a newer one before they were displayed.")
      .def_ro("last_index", &ViewerStats::last_index, "Frame.index of the frame on display (-1: none yet).")
      .def_ro("display_fps", &ViewerStats::display_fps, "Displayed frames per second (smoothed).")
      .def_ro("latency_p50_ms", &ViewerStats::latency_p50_ms, "show() to displayed, median (ms).")
      .def_ro("latency_p99_ms", &ViewerStats::latency_p99_ms, "show() to displayed, 99th percentile (ms).")
      .def_ro("frame_p50_ms", &ViewerStats::frame_p50_ms)
      .def_ro("frame_p99_ms", &ViewerStats::frame_p99_ms)
      .def_ro("copy_ms", &ViewerStats::copy_ms, "Mean time of the producer's copy into the viewer's buffer (ms).")
      .def_ro("map_ms", &ViewerStats::map_ms, "Of copy_ms: mapping the buffer (ms).")
      .def_ro("upload_ms", &ViewerStats::upload_ms, "Mean upload of a frame into the display's textures (ms).")
      .def_ro("draw_ms", &ViewerStats::draw_ms, "Mean CPU time to submit a frame's drawing (ms).")
      .def("__repr__", [](const ViewerStats& s) {
        return "<handoff.ViewerStats submitted=" + std::to_string(s.submitted) + " shown=" + std::to_string(s.shown) +
               " dropped=" + std::to_string(s.dropped) + " display_fps=" + std::to_string(s.display_fps) + ">";
      });

  nb::class_<PySnapshot>(m, "Snapshot",
                         "RGBA8 pixels, (height, width, 4), rows top-down: numpy.from_dlpack(s) or "
                         "numpy.asarray(s) reads it without a copy (read-only).")
      .def("__dlpack__", &snapshot_dlpack, nb::kw_only(), "stream"_a = nb::none(), "max_version"_a = nb::none(),
           "dl_device"_a = nb::none(), "copy"_a = nb::none())
      .def("__dlpack_device__", [](const PySnapshot&) { return nb::make_tuple(int(kDLCPU), 0); })
      .def_prop_ro("__array_interface__", &snapshot_interface)
      .def_prop_ro("width", [](const PySnapshot& s) { return s.image.width(); })
      .def_prop_ro("height", [](const PySnapshot& s) { return s.image.height(); })
      .def_prop_ro("shape", [](const PySnapshot& s) { return nb::make_tuple(s.image.height(), s.image.width(), 4); })
      .def("__repr__", [](const PySnapshot& s) {
        return "<handoff.Snapshot " + std::to_string(s.image.width()) + "x" + std::to_string(s.image.height()) + ">";
      });

  nb::class_<PyAcquiredPlane>(m, "AcquiredPlane",
                              "A WRITABLE plane of a buffer from Viewer.acquire: torch.from_dlpack(p).copy_(y), "
                              "numpy.from_dlpack(p)[:] = y. Let every array over it go before the with block ends.")
      .def("__dlpack__", &writable_dlpack, nb::kw_only(), "stream"_a = nb::none(), "max_version"_a = nb::none(),
           "dl_device"_a = nb::none(), "copy"_a = nb::none())
      .def("__dlpack_device__", [](const PyAcquiredPlane& p) {
        const DLDevice d = dlpack_device(p.frame);
        return nb::make_tuple(int(d.device_type), d.device_id);
      })
      .def_prop_ro("__array_interface__", [](const PyAcquiredPlane& p) { return writable_interface(p, MemoryKind::Host); })
      .def_prop_ro("__cuda_array_interface__",
                   [](const PyAcquiredPlane& p) { return writable_interface(p, MemoryKind::Cuda); })
      .def_prop_ro("shape", [](const PyAcquiredPlane& p) {
        const TensorLayout l = tensor_layout(p.frame, p.part);
        nb::list s;
        for (int i = 0; i < l.ndim; ++i) s.append(l.shape[std::size_t(i)]);
        return nb::tuple(s);
      })
      .def_prop_ro("pitch", [](const PyAcquiredPlane& p) { return p.frame.planes[p.part == FramePart::Chroma].pitch; });

  nb::class_<PyAcquired>(m, "AcquiredFrame",
                         "A buffer of the viewer's ring, mapped for writing (Viewer.acquire). As a context "
                         "manager it is presented when the block ends without an exception, given back "
                         "unshown otherwise.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyAcquired& a, nb::handle type, nb::handle, nb::handle) {
        if (type.is_none()) present(a);
        else give_back(a);
      }, "type"_a.none(), "value"_a.none(), "traceback"_a.none())
      .def_prop_ro("luma", [](const PyAcquired& a) { return PyAcquiredPlane{live_frame(a), FramePart::Luma}; })
      .def_prop_ro("chroma", [](const PyAcquired& a) { return PyAcquiredPlane{live_frame(a), FramePart::Chroma}; })
      .def_prop_ro("format", [](const PyAcquired& a) { return format_name(a.state->frame.format); })
      .def_prop_ro("width", [](const PyAcquired& a) { return a.state->frame.width; })
      .def_prop_ro("height", [](const PyAcquired& a) { return a.state->frame.height; })
      .def_prop_ro("memory", [](const PyAcquired& a) {
        return std::string(a.state->frame.memory == MemoryKind::Cuda ? "cuda" : "host");
      })
      .def_prop_rw("index", [](const PyAcquired& a) { return a.state->frame.index; },
                   [](PyAcquired& a, std::int64_t i) { a.state->frame.index = i; })
      .def_prop_rw("timestamp", [](const PyAcquired& a) { return a.state->frame.timestamp; },
                   [](PyAcquired& a, double t) { a.state->frame.timestamp = t; })
      .def("set_overlays",
           [](PyAcquired& a, nb::handle boxes, const std::string& box_format, bool normalized, nb::handle labels,
              nb::handle scores, nb::handle class_ids, nb::handle track_ids, nb::handle keypoints,
              nb::handle skeleton, nb::handle overlays) {
             const Frame& f = live_frame(a);
             OverlayArgs args{{boxes, labels, scores, class_ids, track_ids, keypoints, skeleton, box_format, normalized},
                              overlays};
             viewer::OverlayFrame scratch;
             const viewer::OverlayFrame* out = nullptr;
             resolve_overlays(args, f, scratch, out);
             a.state->overlays = *out;
           },
           "boxes"_a = nb::none(), "box_format"_a = "xywh", "normalized"_a = false, "labels"_a = nb::none(),
           "scores"_a = nb::none(), "class_ids"_a = nb::none(), "track_ids"_a = nb::none(),
           "keypoints"_a = nb::none(), "skeleton"_a = nb::none(), "overlays"_a = nb::none(),
           "The overlays drawn with this frame when it is presented (the arrays of Viewer.show).")
      .def("present", &present, "Hands the buffer back to be displayed (what the with block does on exit).")
      .def("give_back", &give_back, "Hands the buffer back unshown.");

  nb::class_<PyViewer>(m, "Viewer",
                       "A window (or headless EGL view) showing your frames and detections. Every method may "
                       "be called from any thread; blocking calls release the GIL. A context manager: closes "
                       "on exit.")
      .def(
          "__init__",
          [](PyViewer* self, const std::string& title, int width, int height, bool vsync, bool show_ui,
             bool show_overlays, bool headless, const std::string& display, const std::string& memory,
             int cuda_device, std::size_t ring, const std::string& paused_show, const std::string& output_dir,
             const std::string& screenshot, bool gl_debug) {
            const ViewerOptions o = viewer_options(title, width, height, vsync, show_ui, show_overlays, headless,
                                                   display, memory, cuda_device, ring, paused_show, output_dir,
                                                   screenshot, gl_debug);
            auto made = without_gil([&] { return std::make_unique<Viewer>(o); });  // may throw: nothing made yet
            new (self) PyViewer();
            self->viewer = std::move(made);
          },
          nb::kw_only(), "title"_a = "handoff", "width"_a = 1280, "height"_a = 720, "vsync"_a = true,
          "show_ui"_a = true, "show_overlays"_a = true, "headless"_a = false, "display"_a = "auto",
          "memory"_a = "auto", "cuda_device"_a = 0, "ring"_a = 3, "paused_show"_a = "keep_newest",
          "output_dir"_a = "", "screenshot"_a = "", "gl_debug"_a = false)
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyViewer& v, nb::handle, nb::handle, nb::handle) { without_gil([&] { v.get().close(); }); },
           "type"_a.none(), "value"_a.none(), "traceback"_a.none())
      .def(
          "show",
          [](PyViewer& v, nb::handle frame, nb::handle boxes, const std::string& box_format, bool normalized,
             nb::handle labels, nb::handle scores, nb::handle class_ids, nb::handle track_ids, nb::handle keypoints,
             nb::handle skeleton, nb::handle overlays, std::optional<std::string> format,
             std::optional<Colorimetry> colorimetry) {
            show(v, frame,
                 OverlayArgs{{boxes, labels, scores, class_ids, track_ids, keypoints, skeleton, box_format, normalized},
                             overlays},
                 std::move(format), std::move(colorimetry));
          },
          "frame"_a, nb::kw_only(), "boxes"_a = nb::none(), "box_format"_a = "xywh", "normalized"_a = false,
          "labels"_a = nb::none(), "scores"_a = nb::none(), "class_ids"_a = nb::none(), "track_ids"_a = nb::none(),
          "keypoints"_a = nb::none(), "skeleton"_a = nb::none(), "overlays"_a = nb::none(), "format"_a = nb::none(),
          "colorimetry"_a = nb::none(),
          "Shows `frame` (a handoff.Frame, a (luma, chroma) pair or a stacked (H + H/2, W) array; host or "
          "CUDA) with its overlays. Returns once the frame is copied; never waits for the display. The "
          "arrays may be reused when it returns.")
      .def("acquire", &acquire, "format"_a, "width"_a, "height"_a, "colorimetry"_a = nb::none(),
           "A buffer of the viewer's ring to write into (AcquiredFrame; a context manager presenting it).")
      .def(
          "snapshot",
          [](PyViewer& v, const std::string& kind) -> nb::object {
            SnapshotKind k;
            if (kind == "frame") k = SnapshotKind::Frame;
            else if (kind == "view") k = SnapshotKind::View;
            else throw nb::value_error(("kind: '" + kind + "' is not 'frame' or 'view'").c_str());
            RgbaImage img = without_gil([&] { return v.get().snapshot(k); });
            if (img.empty()) return nb::none();
            return nb::cast(PySnapshot{std::move(img)});
          },
          "kind"_a = "frame",
          "What is displayed, once the newest frame handed in is: 'frame' (the frame with its overlays at "
          "its own size) or 'view' (the view as shown, UI included). None before the first frame.")
      .def("is_open", [](const PyViewer& v) { return v.viewer->is_open(); })
      .def("close", [](PyViewer& v) { without_gil([&] { v.get().close(); }); })
      .def("wait_closed", &wait_closed, "timeout"_a = nb::none(),
           "Blocks (GIL released) until the viewer closes or `timeout` seconds pass; True when closed. "
           "Raises what the display thread stopped on, if anything.")
      .def_prop_ro("stats", [](const PyViewer& v) { return v.viewer->stats(); })
      .def_prop_ro("stream", [](const PyViewer& v) {
        const StreamInfo s = v.viewer->stream();
        nb::dict d;
        d["name"] = s.name;
        d["source"] = s.source;
        d["memory"] = s.memory;
        d["format"] = format_name(s.format);
        d["width"] = s.width;
        d["height"] = s.height;
        d["ring"] = s.ring;
        return d;
      })
      .def_prop_ro("diagnostics", [](const PyViewer& v) {
        const ViewerDiagnostics dg = v.viewer->diagnostics();
        nb::dict d;
        d["gl_errors"] = dg.gl_errors;
        d["first_gl_error"] = dg.first_gl_error;
        d["output_written"] = dg.output_written;
        nb::list errors;
        for (const auto& e : dg.output_errors) errors.append(e);
        d["output_errors"] = errors;
        return d;
      })
      .def_prop_rw("paused", [](const PyViewer& v) { return v.viewer->paused(); },
                   [](PyViewer& v, bool p) { without_gil([&] { v.get().set_paused(p); }); })
      .def("step", [](PyViewer& v) { without_gil([&] { v.get().step(); }); },
           "While paused, displays the next frame and stays paused.")
      .def_prop_ro("steps", [](const PyViewer& v) { return v.viewer->steps(); });

  nb::class_<PySource>(m, "Source",
                       "Frames from a file or the scene (handoff.open / handoff.open_scene). Iterating yields "
                       "(Frame, Overlays): a new host frame each time. One thread at a time.")
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", [](PySource& s) {
        nb::object r = read_next(s);
        if (r.is_none()) throw nb::stop_iteration();
        return r;
      })
      .def("read", &read_next, "The next (Frame, Overlays), or None at the end.")
      .def("seek", [](PySource& s, std::int64_t index) {
        const auto lock = lock_source(s);
        s.get().seek(index);
      }, "index"_a)
      .def("__len__", [](PySource& s) -> std::int64_t {
        const std::int64_t n = s.get().info().frame_count;
        if (s.limit >= 0) return n < 0 ? s.limit : std::min(n, s.limit);
        if (n < 0) throw nb::type_error("the scene is endless: pass frames= to open_scene for a length");
        return n;
      })
      .def_prop_ro("position", [](PySource& s) { return s.get().position(); })
      .def_prop_ro("width", [](PySource& s) { return s.get().info().width; })
      .def_prop_ro("height", [](PySource& s) { return s.get().info().height; })
      .def_prop_ro("format", [](PySource& s) { return format_name(s.get().info().format); })
      .def_prop_ro("colorimetry", [](PySource& s) { return s.get().info().colorimetry; })
      .def_prop_ro("rate", [](PySource& s) { return s.get().info().rate.value(); }, "Frames per second.")
      .def_prop_ro("name", [](PySource& s) { return s.get().info().name; })
      .def("close", [](PySource& s) {
        const auto lock = lock_source(s);
        s.source.reset();
      })
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PySource& s, nb::handle, nb::handle, nb::handle) {
        const auto lock = lock_source(s);
        s.source.reset();
      },
           "type"_a.none(), "value"_a.none(), "traceback"_a.none());

  m.def("_skip_same_gpu_check_in_new_workers", &testing::skip_same_gpu_check_in_new_workers, "skip"_a = true,
        "TESTS ONLY: GL workers made from now on skip the check that CUDA and GL are one GPU (the fake "
        "CUDA driver against llvmpipe).");
  m.def("open", &open_file, "path"_a, nb::kw_only(), "format"_a = nb::none(), "width"_a = nb::none(),
        "height"_a = nb::none(), "colorimetry"_a = nb::none(), "rate"_a = nb::none(), "overlays"_a = nb::none(),
        "Opens a Y4M file, or a raw NV12 / P010 file when format= / width= / height= are given. "
        "`overlays`: a JSON Lines overlay file (docs/viewer-core.md). Raises ParseError naming the file "
        "and field.");
  m.def("open_scene", &open_scene, nb::kw_only(), "width"_a = 1280, "height"_a = 720, "format"_a = "nv12",
        "frames"_a = nb::none(),
        "The built-in synthetic scene with its ground-truth overlays; endless unless `frames` is given.");
}

}  // namespace handoff::py
