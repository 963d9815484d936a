#include "acquired_frame.hpp"

#include "capsules.hpp"
#include "frame_args.hpp"

#include <handoff/dlpack.hpp>
#include <handoff/frame_validate.hpp>

#include <nanobind/stl/string.h>

#include <string>
#include <string_view>

namespace handoff::py {
using namespace nb::literals;
namespace {

struct PyAcquiredPlane {
  Frame frame;  // a copy: holds the buffer
  FramePart part;
};

const Frame& live_frame(const PyAcquired& a) {
  if (a.state->done) throw nb::value_error("acquire: the frame was presented or given back already");
  return a.state->frame;
}

// The plane called `name` in the acquired frame's format (frame_validate.hpp's
// plane_name: luma / chroma, luma / u / v, or pixels).
PyAcquiredPlane named_plane(const PyAcquired& a, std::string_view name) {
  const Frame& f = live_frame(a);
  std::string names;
  for (int i = 0; i < plane_count(f.format); ++i) {
    if (plane_name(f.format, i) == name) return PyAcquiredPlane{f, plane_part(i)};
    names += (i ? ", " : "") + std::string(plane_name(f.format, i));
  }
  throw nb::value_error(("acquire: a " + std::string(to_string(f.format)) + " frame has no " + std::string(name) +
                         " plane; it has " + names)
                            .c_str());
}

nb::object writable_dlpack(const PyAcquiredPlane& p, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                           nb::handle copy) {
  const DlpackRequest r = dlpack_request(dlpack_device(p.frame), stream, max_version, dl_device, copy);
  if (r.copy) {
    const Frame c = host_copy(p.frame);
    return dlpack_capsule(
        r.versioned, kDLPackFlagIsCopied, [&] { return export_dlpack_versioned(c, p.part); },
        [&] { return export_dlpack(c, p.part); });
  }
  return dlpack_capsule(
      r.versioned, 0, [&] { return export_dlpack_versioned(p.frame, p.part); },
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
  d["typestr"] = is_float(p.frame.format) ? "<f4" : l.sample_bytes == 1 ? "|u1" : "<u2";
  d["data"] = nb::make_tuple(reinterpret_cast<std::uintptr_t>(l.data), false);
  d["strides"] = nb::tuple(strides);
  d["version"] = 3;
  if (want == MemoryKind::Cuda) d["stream"] = nb::none();  // nothing pending on handoff's side
  return d;
}

void present(PyAcquired& a) {
  AcquiredState& s = *a.state;
  if (s.done) throw nb::value_error("present: the frame was presented or given back already");
  s.done = true;
  std::shared_ptr<const void> owner = std::move(s.frame.owner);
  const long exports = owner.use_count() - 1;
  if (exports > 0) {
    // Still referenced: the buffer returns, unpresented, when the last reference goes.
    throw nb::buffer_error(("present: " + std::to_string(exports) +
                            " array(s) or plane(s) still refer to the acquired buffer; let them go (del) before "
                            "the with block ends. The frame was not presented.")
                               .c_str());
  }
  without_gil([&] {
    // The caller's CUDA writes into the buffer, so it is complete when presented.
    synchronise_frame_context(s.frame, "acquire: the writes into the acquired buffer");
    s.present(std::move(owner), s.frame, s.overlays);
  });
}

void give_back(PyAcquired& a) {
  AcquiredState& s = *a.state;
  if (s.done) return;
  s.done = true;
  without_gil([&] { s.frame.owner.reset(); });  // gives the buffer back unless exports still hold it
}

void set_overlays(PyAcquired& a, nb::handle boxes, const std::string& box_format, bool normalized, nb::handle labels,
                  nb::handle scores, nb::handle class_ids, nb::handle track_ids, nb::handle keypoints,
                  nb::handle skeleton, nb::handle overlays) {
  const Frame& f = live_frame(a);
  const OverlayArgs args =
      overlay_args(boxes, box_format, normalized, labels, scores, class_ids, track_ids, keypoints, skeleton, overlays);
  media::OverlayFrame scratch;
  a.state->overlays = resolve_overlays(args, f, scratch);
}

// The source may refer back to the frame (a Viewer subclass keeping it in an
// attribute): a cycle the collector frees only if it sees the source. Cleared,
// the buffer goes back first, while the source still holds its viewer or
// publisher, then the source goes.
int acquired_traverse(PyObject* self, visitproc visit, void* arg) {
#if PY_VERSION_HEX >= 0x03090000
  Py_VISIT(Py_TYPE(self));
#endif
  if (nb::inst_ready(self)) Py_VISIT(nb::inst_ptr<PyAcquired>(self)->source.ptr());
  return 0;
}

int acquired_clear(PyObject* self) {
  if (!nb::inst_ready(self)) return 0;
  PyAcquired& a = *nb::inst_ptr<PyAcquired>(self);
  give_back(a);
  nb::object gone = std::move(a.source);
  a.source = nb::none();
  return 0;
}

PyType_Slot acquired_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(&acquired_traverse)},
                                {Py_tp_clear, reinterpret_cast<void*>(&acquired_clear)},
                                {0, nullptr}};

}  // namespace

PyAcquired make_acquired(nb::handle source, Frame frame, std::shared_ptr<const void> owner,
                         decltype(AcquiredState::present) present) {
  auto state = std::make_shared<AcquiredState>();
  state->frame = std::move(frame);
  state->frame.owner = std::move(owner);
  state->present = std::move(present);
  return PyAcquired{nb::borrow(source), std::move(state)};
}

void bind_acquired(nb::module_& m) {
  nb::class_<PyAcquiredPlane>(m, "AcquiredPlane",
                              "A WRITABLE plane of an acquired buffer (Viewer.acquire, Publisher.acquire): "
                              "torch.from_dlpack(p).copy_(y), numpy.from_dlpack(p)[:] = y. Let every array over "
                              "it go before the with block ends.")
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
      .def_prop_ro("pitch",
                   [](const PyAcquiredPlane& p) { return p.frame.planes[std::size_t(plane_index(p.part))].pitch; });

  auto overlay_doc = "The overlays that go with this frame when it is presented (the arrays of Viewer.show).";
  nb::class_<PyAcquired> cls(m, "AcquiredFrame",
                             "A buffer mapped for writing: a buffer of a viewer's ring (Viewer.acquire) or a "
                             "publisher's shared slot (Publisher.acquire). As a context manager it is presented "
                             "(shown, announced) when the block ends without an exception, given back "
                             "unpresented otherwise.",
                             nb::type_slots(acquired_slots));
  cls.def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyAcquired& a, nb::handle type, nb::handle, nb::handle) {
        if (type.is_none()) present(a);
        else give_back(a);
      }, "type"_a.none(), "value"_a.none(), "traceback"_a.none())
      .def_prop_ro("luma", [](const PyAcquired& a) { return named_plane(a, "luma"); })
      .def_prop_ro("chroma", [](const PyAcquired& a) { return named_plane(a, "chroma"); })
      .def_prop_ro("u", [](const PyAcquired& a) { return named_plane(a, "u"); })
      .def_prop_ro("v", [](const PyAcquired& a) { return named_plane(a, "v"); })
      .def_prop_ro("pixels", [](const PyAcquired& a) { return named_plane(a, "pixels"); },
                   "The one plane of yuyv, uyvy, RGB and grey frames (H x W x C; grey H x W).")
      .def_prop_ro("format", [](const PyAcquired& a) { return std::string(to_string(a.state->frame.format)); })
      .def_prop_ro("width", [](const PyAcquired& a) { return a.state->frame.width; })
      .def_prop_ro("height", [](const PyAcquired& a) { return a.state->frame.height; })
      .def_prop_ro("memory", [](const PyAcquired& a) {
        return std::string(a.state->frame.memory == MemoryKind::Cuda ? "cuda" : "host");
      })
      .def_prop_rw("index", [](const PyAcquired& a) { return a.state->frame.index; },
                   [](PyAcquired& a, std::int64_t i) { a.state->frame.index = i; })
      .def_prop_rw("timestamp", [](const PyAcquired& a) { return a.state->frame.timestamp; },
                   [](PyAcquired& a, double t) { a.state->frame.timestamp = t; });
  std::apply([&](auto&&... kw) { cls.def("set_overlays", &set_overlays, kw..., overlay_doc); },
             overlay_kwargs());
  cls.def("present", &present, "Hands the buffer on to be shown / announced (what the with block does on exit).")
      .def("give_back", &give_back, "Hands the buffer back unpresented.");
}

}  // namespace handoff::py
