#pragma once
// What the binding files of the module `handoff._handoff` share: the Python
// frame object, format names, and running blocking work without the GIL.
// Not a public header (python/src only).
#include <handoff/error.hpp>
#include <handoff/frame.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

namespace handoff::py {

namespace nb = nanobind;

// handoff.Frame: a frame and whether Python may write it (only frames handoff
// allocated itself: Frame.allocate, a publisher's acquired slot).
struct PyFrame {
  Frame frame;
  bool writable = false;
};

inline PixelFormat parse_format(const std::string& s) {
  if (s == "nv12" || s == "NV12") return PixelFormat::NV12;
  if (s == "p010" || s == "P010") return PixelFormat::P010;
  throw nb::value_error(("format: '" + s + "' is not 'nv12' or 'p010'").c_str());
}

// Runs `f` with the GIL released when this thread holds it. For every call that
// can block (the CUDA driver, a socket, a disk, another thread), so other
// Python threads run meanwhile. `f` must not touch Python objects.
template <typename F>
decltype(auto) without_gil(F&& f) {
  if (PyGILState_Check()) {
    nb::gil_scoped_release released;
    return f();
  }
  return f();
}

// A frame argument: a handoff.Frame, or a (luma, chroma) pair of arrays taken
// through Frame.from_planes without copying (P010 when the luma has 2-byte
// items). TypeError naming `what` for anything else.
inline PyFrame frame_arg(nb::handle obj, const char* what = "frame") {
  if (nb::isinstance<PyFrame>(obj)) return nb::cast<PyFrame>(obj);
  if (nb::isinstance<nb::tuple>(obj) && nb::len(obj) == 2) {
    nb::handle luma = nb::tuple(nb::borrow(obj))[0];
    std::string format = "nv12";
    if (nb::hasattr(luma, "dtype") && nb::hasattr(luma.attr("dtype"), "itemsize") &&
        nb::cast<int>(luma.attr("dtype").attr("itemsize")) == 2)
      format = "p010";
    return nb::cast<PyFrame>(nb::type<PyFrame>().attr("from_planes")(luma, nb::tuple(nb::borrow(obj))[1], format));
  }
  throw nb::type_error((std::string(what) + ": expected a handoff.Frame or a (luma, chroma) pair of arrays, got " +
                        nb::cast<std::string>(nb::str(obj.type().attr("__name__"))))
                           .c_str());
}

}  // namespace handoff::py
