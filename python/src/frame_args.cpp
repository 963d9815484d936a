// The frame and overlay arguments (frame_args.hpp).
#include "frame_args.hpp"

#include <handoff/cuda.hpp>
#include <handoff/cuda_abi.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/cuda_check.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cstdint>

namespace handoff::py {
namespace {

// Frame.from_planes (handoff_module.cpp), through the bound class.
PyFrame from_planes(nb::handle luma, nb::handle chroma, const std::string& format,
                    const std::optional<Colorimetry>& colorimetry) {
  nb::object c = colorimetry ? nb::cast(*colorimetry) : nb::none();
  return nb::cast<PyFrame>(nb::type<PyFrame>().attr("from_planes")(luma, chroma, format, c));
}

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

}  // namespace

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

const media::OverlayFrame& resolve_overlays(const OverlayArgs& a, const Frame& frame, media::OverlayFrame& scratch) {
  const bool have_object = a.overlays.ptr() && !a.overlays.is_none();
  if (have_object && !a.arrays.empty()) {
    throw nb::value_error("overlays: pass an Overlays object or the arrays (boxes=, labels=, ...), not both");
  }
  if (have_object) {
    if (!nb::isinstance<PyOverlays>(a.overlays)) {
      throw nb::type_error(("overlays: " + py_type_name(a.overlays) + " is not a handoff.Overlays").c_str());
    }
    return *nb::cast<const PyOverlays&>(a.overlays).overlays;
  }
  overlays_from_arrays(a.arrays, frame.width, frame.height, scratch);
  return scratch;
}

void synchronise_frame_context(const Frame& f, const char* what) {
  if (f.memory != MemoryKind::Cuda || !f.cuda_context) return;
  const cuda::Driver& drv = cuda::driver();
  cuda::ScopedContext current(drv, static_cast<cuda::abi::CUctx_st*>(f.cuda_context));
  HANDOFF_CU_CHECK(drv.api().cuCtxSynchronize(), what);
}

}  // namespace handoff::py
