#pragma once
// The DLPack 1.x versioned ABI, declared by the project: the system header
// (libdlpack-dev) is 0.6 and has only the legacy DLManagedTensor. The v1
// structs embed the unchanged DLTensor, so they are declared on top of the
// system's DLTensor / DLDevice / DLDataType. Layout is checked below against
// the numbers the DLPack 1.0 specification gives for LP64 platforms, and the
// legacy layout against the system header.
//
// The types live in namespace handoff so that a translation unit which also
// includes a newer dlpack.h (PyTorch's, NumPy's) does not see two definitions.
#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>

namespace handoff {

// DLPack's ABI version (dlpack.h >= 1.0: DLPackVersion).
struct DLPackVersion {
  std::uint32_t major;
  std::uint32_t minor;
};

// dlpack.h >= 1.0: DLManagedTensorVersioned. `flags` is a bitmask of the
// kDLPackFlag* values below; `deleter` frees `self` (and what manager_ctx holds).
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  std::uint64_t flags;
  DLTensor dl_tensor;
};

// The version handoff produces and the major version it accepts.
inline constexpr std::uint32_t kDLPackMajorVersion = 1;
inline constexpr std::uint32_t kDLPackMinorVersion = 0;

// DLPACK_FLAG_BITMASK_READ_ONLY: the consumer must not write the memory.
inline constexpr std::uint64_t kDLPackFlagReadOnly = 1ULL << 0;
// DLPACK_FLAG_BITMASK_IS_COPIED: the producer made a copy for this export.
inline constexpr std::uint64_t kDLPackFlagIsCopied = 1ULL << 1;
// DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1.1): sub-byte types padded to a byte.
inline constexpr std::uint64_t kDLPackFlagIsSubbyteTypePadded = 1ULL << 2;

// Python capsule names (DLPack Python specification).
inline constexpr const char* kCapsuleLegacy = "dltensor";
inline constexpr const char* kCapsuleLegacyUsed = "used_dltensor";
inline constexpr const char* kCapsuleVersioned = "dltensor_versioned";
inline constexpr const char* kCapsuleVersionedUsed = "used_dltensor_versioned";

// --- ABI checks -------------------------------------------------------------
// The numbers are those of the C structs on LP64 (x86-64, aarch64 Linux).
static_assert(sizeof(void*) == 8, "the ABI checks assume a 64-bit (LP64) platform");

// Legacy ABI: the system header's types, as every DLPack producer lays them out.
static_assert(sizeof(DLDevice) == 8 && offsetof(DLDevice, device_id) == 4);
static_assert(sizeof(DLDataType) == 4 && offsetof(DLDataType, bits) == 1 &&
              offsetof(DLDataType, lanes) == 2);
static_assert(sizeof(DLTensor) == 48);
static_assert(offsetof(DLTensor, data) == 0 && offsetof(DLTensor, device) == 8 &&
              offsetof(DLTensor, ndim) == 16 && offsetof(DLTensor, dtype) == 20 &&
              offsetof(DLTensor, shape) == 24 && offsetof(DLTensor, strides) == 32 &&
              offsetof(DLTensor, byte_offset) == 40);
static_assert(sizeof(DLManagedTensor) == 64 && offsetof(DLManagedTensor, dl_tensor) == 0 &&
              offsetof(DLManagedTensor, manager_ctx) == 48 &&
              offsetof(DLManagedTensor, deleter) == 56);
static_assert(kDLCPU == 1 && kDLCUDA == 2 && kDLCUDAHost == 3 && kDLCUDAManaged == 13);
static_assert(kDLUInt == 1);

// Versioned ABI (DLPack 1.0).
static_assert(sizeof(DLPackVersion) == 8 && offsetof(DLPackVersion, minor) == 4);
static_assert(sizeof(DLManagedTensorVersioned) == 80);
static_assert(offsetof(DLManagedTensorVersioned, version) == 0 &&
              offsetof(DLManagedTensorVersioned, manager_ctx) == 8 &&
              offsetof(DLManagedTensorVersioned, deleter) == 16 &&
              offsetof(DLManagedTensorVersioned, flags) == 24 &&
              offsetof(DLManagedTensorVersioned, dl_tensor) == 32);

}  // namespace handoff
