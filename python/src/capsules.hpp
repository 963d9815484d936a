#pragma once
// DLPack capsules of the arrays the viewer and live bindings export (snapshots,
// acquired buffers): __dlpack__'s keyword arguments checked, the tensor wrapped
// in a "dltensor" / "dltensor_versioned" capsule that frees it only while
// unconsumed. Not a public header (python/src only).
//
// Thread safety: call with the GIL held. Ownership: the capsule owns the tensor
// until a consumer renames it; the consumer then calls its deleter once.
#include <handoff/dlpack.hpp>

#include <nanobind/nanobind.h>

namespace handoff::py {

namespace nb = nanobind;

// PyCapsule destructors: free the tensor when the capsule was never consumed.
void legacy_capsule_destructor(PyObject* cap);
void versioned_capsule_destructor(PyObject* cap);

// Checks __dlpack__'s keyword arguments against the array's device
// (BufferError for copy=True or another dl_device, ValueError for a stream a
// host array cannot take or CUDA forbids); true when the consumer takes a
// versioned (1.x) capsule.
bool dlpack_request(DLDevice dev, nb::handle stream, nb::handle max_version, nb::handle dl_device, nb::handle copy);

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

}  // namespace handoff::py
