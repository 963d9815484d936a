#include "capsules.hpp"

#include <handoff/frame_copy.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "module_common.hpp"

namespace handoff::py {

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

namespace {

// `obj` as a tuple of `n` ints (n = 0: at least one), or a TypeError naming `what`.
std::vector<long long> int_tuple(nb::handle obj, std::size_t n, const char* what) {
  std::vector<long long> out;
  if (nb::isinstance<nb::tuple>(obj)) {
    const auto t = nb::borrow<nb::tuple>(obj);
    for (nb::handle v : t) {
      long long x = 0;
      if (PyBool_Check(v.ptr()) || !nb::try_cast<long long>(v, x)) break;
      out.push_back(x);
    }
    if (out.size() == t.size() && (n ? out.size() == n : !out.empty())) return out;
  }
  throw nb::type_error((std::string(what) + ": expected a tuple of " + (n ? std::to_string(n) : "1 or more") +
                        " ints, got " + text_of(nb::repr(obj)))
                           .c_str());
}

}  // namespace

DlpackRequest dlpack_request(DLDevice dev, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                             nb::handle copy) {
  DlpackRequest r;
  int copy_wanted = -1;  // -1: None (copy only where needed), 0: never, 1: always
  if (!copy.is_none()) {
    copy_wanted = PyObject_IsTrue(copy.ptr());
    if (copy_wanted < 0) throw nb::python_error();  // its __bool__ raised
  }
  r.copy = copy_wanted == 1;
  bool to_host = dev.device_type == kDLCPU;  // where the export goes: dl_device, else the array's device
  if (!dl_device.is_none()) {
    const std::vector<long long> d = int_tuple(dl_device, 2, "dl_device");
    const bool own = d[0] == dev.device_type && d[1] == dev.device_id;
    to_host = d[0] == kDLCPU && d[1] == 0;
    if (!own && !to_host) {
      throw nb::buffer_error(("dl_device (" + std::to_string(d[0]) + ", " + std::to_string(d[1]) +
                              ") is neither the array's device (" + std::to_string(int(dev.device_type)) + ", " +
                              std::to_string(dev.device_id) + ") nor the host (1, 0): handoff copies to the host only")
                                 .c_str());
    }
    if (!own) {
      if (copy_wanted == 0)
        throw nb::buffer_error("dl_device (1, 0) with copy=False: the array is in CUDA memory, the host needs a copy");
      r.copy = true;
    }
  }
  // DLPack: a copy is made on the device asked for (dl_device None: the
  // array's). handoff copies to the host only, so a CUDA array's copy=True
  // needs dl_device=(1, 0) too; else BufferError, as the standard says for a
  // copy the producer cannot make.
  if (r.copy && !to_host)
    throw nb::buffer_error(
        "copy=True of an array in CUDA memory: handoff copies to the host only; ask for dl_device=(1, 0) too");
  if (!stream.is_none()) {
    if (to_host)
      throw nb::value_error(dev.device_type == kDLCPU
                                ? "stream: must be None for a host array (DLPack: CPU has no streams)"
                                : "stream: must be None for an export to the host, dl_device (1, 0) (DLPack: CPU has no streams)");
    long long st = 0;
    if (PyBool_Check(stream.ptr()) || !nb::try_cast<long long>(stream, st))
      throw nb::type_error(("stream: expected None or an int, got " + text_of(nb::repr(stream))).c_str());
    if (st == 0 || st < -1)
      throw nb::value_error(("stream: " + std::to_string(st) +
                             " is not valid for CUDA (DLPack: None, -1, 1, 2 or a stream handle; 0 is ambiguous)")
                                .c_str());
  }
  if (!max_version.is_none()) r.versioned = int_tuple(max_version, 0, "max_version")[0] >= 1;
  return r;
}

// A host copy of `f` (its samples packed, planes one after the other), for
// an export that asks for one (copy=True; CUDA memory asked for on the host).
Frame host_copy(const Frame& f) {
  // One allocation, each plane's rows packed, the planes one after the other:
  // a copied plane is C-contiguous, and an even-width NV12 / P010 copy is
  // stacked (its rows all one luma row long) as the source may be.
  FrameLayout layout = FrameLayout::contiguous(f.format, f.width, f.height, 1);
  layout.colorimetry = f.colorimetry;
  std::shared_ptr<std::uint8_t[]> bytes(new std::uint8_t[std::max<std::size_t>(layout.buffer_bytes(), 1)]);
  Frame c = layout.describe(MemoryKind::Host, {bytes.get()});
  c.index = f.index;
  c.timestamp = f.timestamp;
  c.owner = std::move(bytes);
  try {
    without_gil([&] { copy_frame(f, c); });
  } catch (const std::exception& e) {  // CUDA memory this process cannot read (no driver, no context)
    throw nb::buffer_error(
        ("the copy to the host (copy=True or dl_device (1, 0)) failed: " + std::string(e.what())).c_str());
  }
  return c;
}

}  // namespace handoff::py
