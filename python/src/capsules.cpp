#include "capsules.hpp"

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

}  // namespace handoff::py
