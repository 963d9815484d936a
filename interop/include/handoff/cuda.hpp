#pragma once
// The CUDA driver, loaded at run time (no link-time CUDA dependency).
//
//   const auto& d = handoff::cuda::driver();       // process-wide, loaded once
//   if (!d.usable()) std::puts(d.describe().c_str());  // says plainly why not
//   handoff::cuda::PrimaryContext ctx(d, 0);       // retain device 0's primary context
//   handoff::cuda::ScopedContext cur(ctx);         // make it current on this thread
//
// handoff's own code checks each raw call with HANDOFF_CU_CHECK (private:
// <handoff/cuda_check.hpp>), which throws handoff::Error through check() below.
//
// The library is `libcuda.so.1`, or the path in the environment variable
// HANDOFF_CUDA_DRIVER (the tests point it at the fake driver, tests/fake_cuda).
// Entry points come from cuGetProcAddress, asking for the CUDA version whose
// ABI handoff declares, or else from dlsym of the versioned symbol names
// (cuMemAlloc_v2, ...).
//
// Raw entry points are for handoff's own code: its private header
// <handoff/cuda_abi.hpp> (interop/include_internal, target
// handoff::interop_private; not installed) declares namespace
// handoff::cuda::abi, and calls go through `driver().api()` (an abi::DriverApi).
#include <handoff/error.hpp>
#include <handoff/uuid.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::cuda::abi {
enum CUresult : int;  // defined in the private handoff/cuda_abi.hpp
struct DriverApi;
struct CUctx_st;
}  // namespace handoff::cuda::abi

namespace handoff::cuda {

// Why CUDA can or cannot be used. Each reason has its own plainly worded
// description (Driver::describe()).
enum class Status {
  Usable,
  NoDriverLibrary,    // dlopen failed (no NVIDIA driver installed); detail = dlerror text
  StubLibrary,        // cuInit returned CUDA_ERROR_STUB_LIBRARY: the toolkit's stub libcuda.so, not a driver
  NoDevice,           // the driver works but sees no CUDA device (cuInit NO_DEVICE or a count of 0)
  DriverTooOld,       // cuDriverGetVersion below kMinimumDriverVersion
  MissingEntryPoint,  // a required entry point could not be resolved; detail names it
  InitFailed,         // cuInit (or a query right after it) failed otherwise; detail has the code and its name
};
std::string_view status_name(Status s) noexcept;  // "Usable", "NoDriverLibrary", ...

// The oldest driver handoff accepts: CUDA 11.4 (11040). Reasons: entry points
// are resolved with cuGetProcAddress (new in 11.3), and the GPU identity check
// uses cuDeviceGetUuid_v2 (new in 11.4), whose UUID matches the one Vulkan and
// GL report (VkPhysicalDeviceIDProperties::deviceUUID, GL_DEVICE_UUID_EXT).
inline constexpr int kMinimumDriverVersion = 11040;

struct DeviceInfo {
  int ordinal = -1;
  std::string name;
  Uuid uuid{};  // cuDeviceGetUuid_v2: the same bytes as Vulkan's and GL's device UUID
  int cc_major = 0;         // compute capability
  int cc_minor = 0;
  std::size_t total_memory = 0;  // bytes
};

// One loaded driver library. Immutable after load(): every const method is
// safe to call from any thread.
class Driver {
 public:
  // Loads `path` ("libcuda.so.1" when empty), calls cuInit(0), checks the
  // version, resolves the entry points and counts the devices. Never throws
  // for an unusable CUDA: status() says why. Independent of driver(); a test
  // may load several. The Driver must outlive every PrimaryContext /
  // ScopedContext made from it. A library whose cuInit succeeded stays loaded
  // after the Driver is destroyed (unloading CUDA under its threads is unsafe).
  static std::unique_ptr<Driver> load(const std::string& path);

  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  Status status() const noexcept { return status_; }
  bool usable() const noexcept { return status_ == Status::Usable; }
  // One line for handoff-info and skip messages, e.g.
  // "CUDA unavailable: no CUDA driver library (libcuda.so.1: cannot open shared object file ...)"
  // or "CUDA 13.0 driver (libcuda.so.1), 1 device(s), entry points via cuGetProcAddress".
  std::string describe() const;
  // The reason text alone (dlerror text, entry point name, error code ...); empty when usable.
  const std::string& detail() const noexcept { return detail_; }
  const std::string& path() const noexcept { return path_; }
  int driver_version() const noexcept { return version_; }  // e.g. 13000; 0 when unknown
  int device_count() const noexcept { return device_count_; }
  // True when the entry points came from cuGetProcAddress (false: dlsym fallback).
  bool via_get_proc_address() const noexcept { return via_proc_address_; }

  // Throws handoff::Error (Api::Cuda, call "cuda::Driver", detail describe())
  // when not usable; returns normally otherwise.
  void require() const;
  // The function table. Throws like require() when not usable.
  const abi::DriverApi& api() const;

  // Device queries. Throw UsageError for an ordinal outside [0, device_count()),
  // handoff::Error when a driver call fails, and as require() when unusable.
  DeviceInfo device(int ordinal) const;
  std::vector<DeviceInfo> devices() const;

  // The symbolic name of a CUresult: cuGetErrorName when the driver has it,
  // else handoff's own table, else "CUDA_ERROR_<code>".
  std::string error_name(int code) const;
  // What HANDOFF_CU_CHECK calls on a failure:
  // does nothing for CUDA_SUCCESS; otherwise throws handoff::Error(Api::Cuda,
  // call, code, error_name(code), detail (plus cuGetErrorString's text), where).
  void check(abi::CUresult result, std::string_view call, std::string_view detail = {},
             const char* where = "") const;

 private:
  Driver() = default;
  void load_impl();
  void fail(Status s, std::string detail);

  std::string path_;
  void* lib_ = nullptr;
  std::unique_ptr<abi::DriverApi> api_;
  Status status_ = Status::InitFailed;
  std::string detail_;
  int version_ = 0;
  int device_count_ = 0;
  bool via_proc_address_ = false;
  bool initialized_ = false;  // cuInit succeeded: the library is never unloaded
};

// The process-wide driver: HANDOFF_CUDA_DRIVER or libcuda.so.1, loaded on the
// first call (std::call_once) and never unloaded. Thread-safe.
const Driver& driver();

// A retained primary context of one device (cuDevicePrimaryCtxRetain /
// cuDevicePrimaryCtxRelease). Primary contexts are shared with PyTorch and
// CuPy, so pointers made in it work there. Move-only; the destructor releases
// and never throws. Thread safety: a CUcontext may be used from any thread.
class PrimaryContext {
 public:
  PrimaryContext() noexcept = default;  // holds nothing
  PrimaryContext(const Driver& drv, int ordinal);  // throws Error / UsageError
  explicit PrimaryContext(int ordinal) : PrimaryContext(::handoff::cuda::driver(), ordinal) {}
  PrimaryContext(PrimaryContext&& o) noexcept;
  PrimaryContext& operator=(PrimaryContext&& o) noexcept;
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  ~PrimaryContext();

  abi::CUctx_st* get() const noexcept { return ctx_; }  // a CUcontext
  void* handle() const noexcept { return ctx_; }       // for Plane::cuda_context
  int device() const noexcept { return ordinal_; }
  const Driver* driver() const noexcept { return drv_; }
  explicit operator bool() const noexcept { return ctx_ != nullptr; }
  void reset() noexcept;  // releases now

 private:
  const Driver* drv_ = nullptr;
  abi::CUctx_st* ctx_ = nullptr;
  int ordinal_ = -1;
};

// Makes a context current on the calling thread for its lifetime
// (cuCtxPushCurrent / cuCtxPopCurrent). Not movable: it belongs to one thread
// and one scope. The destructor pops and never throws.
class ScopedContext {
 public:
  ScopedContext(const Driver& drv, abi::CUctx_st* ctx);  // throws Error
  explicit ScopedContext(const PrimaryContext& ctx);    // throws UsageError when empty
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
  ~ScopedContext();

 private:
  const Driver* drv_;
  abi::CUctx_st* ctx_;
};

}  // namespace handoff::cuda
