#pragma once
// DLPack capsules of the arrays the viewer and live bindings export (snapshots,
// acquired buffers): __dlpack__'s keyword arguments checked, the tensor wrapped
// in a "dltensor" / "dltensor_versioned" capsule that frees it only while
// unconsumed. Not a public header (python/src only).
//
// Thread safety: call with the GIL held. Ownership: the capsule owns the tensor
// until a consumer renames it; the consumer then calls its deleter once.
#include <handoff/dlpack.hpp>
#include <handoff/frame.hpp>

#include <nanobind/nanobind.h>

#include <cstdint>

namespace handoff::py {

namespace nb = nanobind;

// PyCapsule destructors: free the tensor when the capsule was never consumed.
void legacy_capsule_destructor(PyObject* cap);
void versioned_capsule_destructor(PyObject* cap);

// What a __dlpack__ call asks for, its keyword arguments checked against the
// array's device (DLPack's Python specification):
// - copy=True: a copy made here (DLPACK_FLAG_BITMASK_IS_COPIED, writable);
//   copy=False: never one (BufferError where one would be needed);
// - dl_device: the array's own device, or the host (kDLCPU, 0) for a CUDA
//   array, which is then copied unless copy=False; any other is a BufferError;
// - stream: None for a host array; for CUDA None, -1, 1, 2 or a handle (ValueError otherwise);
// - max_version: (major, minor); a major of 1 or more takes a versioned capsule.
// Arguments of the wrong type are a TypeError naming them.
struct DlpackRequest {
  bool versioned = false;  // a "dltensor_versioned" capsule
  bool copy = false;       // export a host copy
};
DlpackRequest dlpack_request(DLDevice dev, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                             nb::handle copy);

// A host copy of `f` (each plane packed, the planes one after the other) for an
// export that asks for one; made without the GIL. BufferError when it cannot be made.
Frame host_copy(const Frame& f);

// A capsule around a tensor made by `make_versioned` or `make_legacy`; a
// versioned tensor gets `flags` (kDLPackFlagReadOnly, kDLPackFlagIsCopied).
template <typename V, typename L>
nb::object dlpack_capsule(bool versioned, std::uint64_t flags, V make_versioned, L make_legacy) {
  PyObject* cap;
  if (versioned) {
    DLManagedTensorVersioned* t = make_versioned();
    t->flags = flags;
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
