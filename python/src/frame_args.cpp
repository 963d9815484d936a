// The frame and overlay arguments (frame_args.hpp).
#include "frame_args.hpp"

#include <handoff/cuda.hpp>
#include <handoff/cuda_abi.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/cuda_check.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>

namespace handoff::py {
namespace {

// Frame.from_arrays (handoff_module.cpp), through the bound class: the
// format rule lives there, once.
PyFrame from_arrays(nb::tuple arrays, std::optional<std::string> format, std::optional<Colorimetry> colorimetry) {
  nb::object f = format ? nb::cast(*format) : nb::none();
  nb::object c = colorimetry ? nb::cast(*colorimetry) : nb::none();
  nb::dict kw;
  kw["format"] = f;
  kw["colorimetry"] = c;
  return nb::cast<PyFrame>(nb::type<PyFrame>().attr("from_arrays")(*arrays, **kw));
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
    if (nb::len(obj) != 2 && nb::len(obj) != 3) {
      throw nb::value_error(("frame: a sequence of " + std::to_string(nb::len(obj)) +
                             " items; a frame is a (luma, chroma) pair, (luma, u, v) or one array")
                                .c_str());
    }
    return from_arrays(nb::tuple(obj), std::move(format), std::move(colorimetry));
  }
  return from_arrays(nb::make_tuple(obj), std::move(format), std::move(colorimetry));
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
