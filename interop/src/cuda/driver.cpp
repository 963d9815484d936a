// Loading the CUDA driver at run time and the small RAII types around it.
#include <handoff/cuda.hpp>
#include <handoff/log.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>

namespace handoff::cuda {

std::string_view status_name(Status s) noexcept {
  switch (s) {
    case Status::Usable: return "Usable";
    case Status::NoDriverLibrary: return "NoDriverLibrary";
    case Status::StubLibrary: return "StubLibrary";
    case Status::NoDevice: return "NoDevice";
    case Status::DriverTooOld: return "DriverTooOld";
    case Status::MissingEntryPoint: return "MissingEntryPoint";
    case Status::InitFailed: return "InitFailed";
  }
  return "?";
}

namespace {

std::string version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string code_text(int code, const char* name) {
  return std::string(name ? name : "CUDA_ERROR_?") + " (" + std::to_string(code) + ")";
}

template <typename Fn>
Fn sym(void* lib, const char* name) {
  return reinterpret_cast<Fn>(::dlsym(lib, name));
}

}  // namespace

std::unique_ptr<Driver> Driver::load(const std::string& path) {
  std::unique_ptr<Driver> d(new Driver);
  d->path_ = path.empty() ? std::string("libcuda.so.1") : path;
  d->api_ = std::make_unique<abi::DriverApi>();
  d->load_impl();
  if (d->usable()) {
    log(LogLevel::Debug, d->describe());
  }
  return d;
}

Driver::~Driver() {
  // A driver that initialised stays loaded: CUDA keeps threads and state for
  // the process (other libraries may share it), and unloading it under them
  // is unsafe. One that never initialised is closed.
  if (lib_ && !initialized_) ::dlclose(lib_);
}

void Driver::fail(Status s, std::string detail) {
  status_ = s;
  detail_ = std::move(detail);
}

void Driver::load_impl() {
  ::dlerror();
  lib_ = ::dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    const char* e = ::dlerror();
    fail(Status::NoDriverLibrary, e ? e : (path_ + ": dlopen failed"));
    return;
  }
  abi::DriverApi& a = *api_;
  a.cuInit = sym<abi::PFN_cuInit>(lib_, "cuInit");
  a.cuDriverGetVersion = sym<abi::PFN_cuDriverGetVersion>(lib_, "cuDriverGetVersion");
  a.cuGetErrorName = sym<abi::PFN_cuGetErrorName>(lib_, "cuGetErrorName");
  if (!a.cuInit) {
    fail(Status::MissingEntryPoint, "cuInit (" + path_ + " does not export it: not a CUDA driver)");
    return;
  }
  if (!a.cuDriverGetVersion) {
    fail(Status::MissingEntryPoint, "cuDriverGetVersion");
    return;
  }

  const abi::CUresult init = a.cuInit(0);
  initialized_ = init == abi::CUDA_SUCCESS;
  if (init == abi::CUDA_ERROR_STUB_LIBRARY) {
    fail(Status::StubLibrary, path_ + " is the CUDA toolkit's stub library, not a driver; cuInit returned " +
                                  code_text(init, abi::result_name(init)));
    return;
  }
  if (init == abi::CUDA_ERROR_NO_DEVICE) {
    fail(Status::NoDevice, "cuInit returned " + code_text(init, abi::result_name(init)));
    return;
  }
  if (init != abi::CUDA_SUCCESS) {
    fail(Status::InitFailed, "cuInit returned " + code_text(init, error_name(init).c_str()));
    return;
  }

  int version = 0;
  if (abi::CUresult r = a.cuDriverGetVersion(&version); r != abi::CUDA_SUCCESS) {
    fail(Status::InitFailed, "cuDriverGetVersion returned " + code_text(r, error_name(r).c_str()));
    return;
  }
  version_ = version;
  if (version < kMinimumDriverVersion) {
    fail(Status::DriverTooOld, "driver supports CUDA " + version_string(version) + ", handoff needs " +
                                   version_string(kMinimumDriverVersion) +
                                   " or newer (cuGetProcAddress and cuDeviceGetUuid_v2)");
    return;
  }

  // cuGetProcAddress_v2 (12.0+) reports why a symbol is missing; the 11.x one does not.
  if (version >= 12000) a.cuGetProcAddress = sym<abi::PFN_cuGetProcAddress>(lib_, "cuGetProcAddress_v2");
  if (!a.cuGetProcAddress) a.cuGetProcAddress_v1 = sym<abi::PFN_cuGetProcAddress_v1>(lib_, "cuGetProcAddress");

  int via_proc = 0, via_dlsym = 0;
  auto resolve = [&](const char* name, int abi_version, const char* versioned) -> void* {
    void* p = nullptr;
    if (a.cuGetProcAddress) {
      abi::CUdriverProcAddressQueryResult q = abi::CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      if (a.cuGetProcAddress(name, &p, abi_version, abi::CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) !=
              abi::CUDA_SUCCESS ||
          q != abi::CU_GET_PROC_ADDRESS_SUCCESS)
        p = nullptr;
    } else if (a.cuGetProcAddress_v1) {
      if (a.cuGetProcAddress_v1(name, &p, abi_version, abi::CU_GET_PROC_ADDRESS_LEGACY_STREAM) !=
          abi::CUDA_SUCCESS)
        p = nullptr;
    }
    if (p) {
      ++via_proc;
      return p;
    }
    p = ::dlsym(lib_, versioned);
    if (p) ++via_dlsym;
    return p;
  };

  std::string missing;
#define HANDOFF_CUDA_RESOLVE_(fn, ver, versioned, required)                          \
  a.fn = reinterpret_cast<abi::PFN_##fn>(resolve(#fn, ver, versioned));               \
  if (!a.fn && required) missing += (missing.empty() ? "" : ", ") + std::string(versioned);
  HANDOFF_CUDA_ENTRY_POINTS(HANDOFF_CUDA_RESOLVE_)
#undef HANDOFF_CUDA_RESOLVE_
  if (!missing.empty()) {
    fail(Status::MissingEntryPoint, missing);
    return;
  }
  via_proc_address_ = via_proc > 0 && via_dlsym == 0;

  int count = 0;
  if (abi::CUresult r = a.cuDeviceGetCount(&count); r != abi::CUDA_SUCCESS) {
    fail(Status::InitFailed, "cuDeviceGetCount returned " + code_text(r, error_name(r).c_str()));
    return;
  }
  device_count_ = count;
  if (count <= 0) {
    fail(Status::NoDevice, "cuDeviceGetCount reports 0 devices");
    return;
  }
  status_ = Status::Usable;
  detail_.clear();
}

std::string Driver::describe() const {
  switch (status_) {
    case Status::Usable: {
      std::string s = "CUDA " + version_string(version_) + " driver (" + path_ + "), " +
                      std::to_string(device_count_) + " device(s), entry points via " +
                      (via_proc_address_ ? "cuGetProcAddress" : "dlsym");
      return s;
    }
    case Status::NoDriverLibrary:
      return "CUDA unavailable: no CUDA driver library (" + detail_ + ")";
    case Status::StubLibrary:
      return "CUDA unavailable: stub driver library, no NVIDIA driver installed (" + detail_ + ")";
    case Status::NoDevice:
      return "CUDA unavailable: no CUDA device found (" + path_ + ": " + detail_ + ")";
    case Status::DriverTooOld:
      return "CUDA unavailable: driver too old (" + detail_ + ")";
    case Status::MissingEntryPoint:
      return "CUDA unavailable: required entry point(s) missing from the driver: " + detail_ + " (" + path_ + ")";
    case Status::InitFailed:
      return "CUDA unavailable: driver initialisation failed (" + detail_ + ")";
  }
  return "CUDA unavailable";
}

void Driver::require() const {
  if (!usable()) throw Error(Api::Cuda, "cuda::Driver", 0, "", describe());
}

const abi::DriverApi& Driver::api() const {
  require();
  return *api_;
}

std::string Driver::error_name(int code) const {
  if (api_ && api_->cuGetErrorName) {
    const char* s = nullptr;
    if (api_->cuGetErrorName(static_cast<abi::CUresult>(code), &s) == abi::CUDA_SUCCESS && s) return s;
  }
  if (const char* s = abi::result_name(code)) return s;
  return "CUDA_ERROR_" + std::to_string(code);
}

void Driver::check(abi::CUresult result, std::string_view call, std::string_view detail, const char* where) const {
  if (result == abi::CUDA_SUCCESS) return;
  std::string d(detail);
  if (api_ && api_->cuGetErrorString) {
    const char* s = nullptr;
    if (api_->cuGetErrorString(result, &s) == abi::CUDA_SUCCESS && s && *s) {
      d += d.empty() ? "" : "; ";
      d += s;
    }
  }
  throw Error(Api::Cuda, std::string(call.empty() ? "?" : call), result, error_name(result), d, where ? where : "");
}

DeviceInfo Driver::device(int ordinal) const {
  const abi::DriverApi& a = api();
  if (ordinal < 0 || ordinal >= device_count_) {
    throw UsageError("cuda::Driver::device: ordinal " + std::to_string(ordinal) + " is outside [0, " +
                     std::to_string(device_count_) + ")");
  }
  DeviceInfo info;
  info.ordinal = ordinal;
  abi::CUdevice dev = 0;
  HANDOFF_CU_CHECK(a.cuDeviceGet(&dev, ordinal));
  char name[256] = {};
  HANDOFF_CU_CHECK(a.cuDeviceGetName(name, static_cast<int>(sizeof name - 1), dev));
  info.name = name;
  abi::CUuuid uuid{};
  HANDOFF_CU_CHECK(a.cuDeviceGetUuid(&uuid, dev));
  for (std::size_t i = 0; i < info.uuid.bytes.size(); ++i)
    info.uuid.bytes[i] = static_cast<std::uint8_t>(uuid.bytes[i]);
  HANDOFF_CU_CHECK(a.cuDeviceGetAttribute(&info.cc_major, abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
                   "COMPUTE_CAPABILITY_MAJOR");
  HANDOFF_CU_CHECK(a.cuDeviceGetAttribute(&info.cc_minor, abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
                   "COMPUTE_CAPABILITY_MINOR");
  HANDOFF_CU_CHECK(a.cuDeviceTotalMem(&info.total_memory, dev));
  return info;
}

std::vector<DeviceInfo> Driver::devices() const {
  require();
  std::vector<DeviceInfo> v;
  for (int i = 0; i < device_count_; ++i) v.push_back(device(i));
  return v;
}

// --- the process-wide driver -------------------------------------------------

namespace {
// Set once driver() has loaded; read by error naming, which must not load it.
std::atomic<const Driver*> g_process_driver{nullptr};
}  // namespace

const Driver& driver() {
  static std::once_flag once;
  static Driver* instance = nullptr;
  std::call_once(once, [] {
    const char* env = std::getenv("HANDOFF_CUDA_DRIVER");
    // Never destroyed: CUDA work (and other libraries' CUDA state) may still be
    // running while static destructors run; unloading the driver then is unsafe.
    instance = Driver::load(env && *env ? env : "").release();
    g_process_driver.store(instance, std::memory_order_release);
  });
  return *instance;
}

// --- HANDOFF_CU_CHECK ----------------------------------------------------------

namespace detail {

void throw_call_failed(int result, std::string_view expression, const char* where, const std::string& detail) {
  const std::string_view call = handoff::detail::call_name(expression);
  const auto code = static_cast<abi::CUresult>(result);
  if (const Driver* d = g_process_driver.load(std::memory_order_acquire); d && d->usable())
    d->check(code, call, detail, where);
  const char* name = abi::result_name(result);
  throw Error(Api::Cuda, std::string(call), result, name ? name : "CUDA_ERROR_" + std::to_string(result), detail,
              where ? where : "");
}

}  // namespace detail

// --- PrimaryContext ----------------------------------------------------------

PrimaryContext::PrimaryContext(const Driver& drv, int ordinal) {
  const abi::DriverApi& a = drv.api();
  if (ordinal < 0 || ordinal >= drv.device_count()) {
    throw UsageError("cuda::PrimaryContext: device ordinal " + std::to_string(ordinal) + " is outside [0, " +
                     std::to_string(drv.device_count()) + ")");
  }
  abi::CUdevice dev = 0;
  HANDOFF_CU_CHECK(a.cuDeviceGet(&dev, ordinal));
  abi::CUcontext ctx = nullptr;
  HANDOFF_CU_CHECK(a.cuDevicePrimaryCtxRetain(&ctx, dev));
  drv_ = &drv;
  ctx_ = ctx;
  ordinal_ = ordinal;
}

PrimaryContext::PrimaryContext(PrimaryContext&& o) noexcept
    : drv_(std::exchange(o.drv_, nullptr)),
      ctx_(std::exchange(o.ctx_, nullptr)),
      ordinal_(std::exchange(o.ordinal_, -1)) {}

PrimaryContext& PrimaryContext::operator=(PrimaryContext&& o) noexcept {
  if (this != &o) {
    reset();
    drv_ = std::exchange(o.drv_, nullptr);
    ctx_ = std::exchange(o.ctx_, nullptr);
    ordinal_ = std::exchange(o.ordinal_, -1);
  }
  return *this;
}

PrimaryContext::~PrimaryContext() { reset(); }

void PrimaryContext::reset() noexcept {
  if (!ctx_) return;
  // The table exists: ctx_ is only set after api() succeeded.
  abi::CUdevice dev = 0;
  const abi::DriverApi* a = nullptr;
  try {
    a = &drv_->api();
  } catch (...) {
  }
  if (a) {
    abi::CUresult r = a->cuDeviceGet(&dev, ordinal_);
    if (r == abi::CUDA_SUCCESS) r = a->cuDevicePrimaryCtxRelease(dev);
    if (r != abi::CUDA_SUCCESS && r != abi::CUDA_ERROR_DEINITIALIZED) {
      log(LogLevel::Warning, "cuDevicePrimaryCtxRelease failed with " + drv_->error_name(r) + " (device " +
                                 std::to_string(ordinal_) + ")");
    }
  }
  drv_ = nullptr;
  ctx_ = nullptr;
  ordinal_ = -1;
}

// --- ScopedContext -------------------------------------------------------------

ScopedContext::ScopedContext(const Driver& drv, abi::CUctx_st* ctx) : drv_(&drv), ctx_(ctx) {
  HANDOFF_CU_CHECK(drv.api().cuCtxPushCurrent(ctx));
}

namespace {
const Driver& driver_of(const PrimaryContext& ctx) {
  if (!ctx) throw UsageError("cuda::ScopedContext: the PrimaryContext is empty (moved from or reset)");
  return *ctx.driver();
}
}  // namespace

ScopedContext::ScopedContext(const PrimaryContext& ctx) : ScopedContext(driver_of(ctx), ctx.get()) {}

ScopedContext::~ScopedContext() {
  abi::CUcontext popped = nullptr;
  abi::CUresult r = drv_->api().cuCtxPopCurrent(&popped);  // api() cannot throw: the push succeeded
  if (r != abi::CUDA_SUCCESS && r != abi::CUDA_ERROR_DEINITIALIZED) {
    log(LogLevel::Warning, "cuCtxPopCurrent failed with " + drv_->error_name(r));
  } else if (r == abi::CUDA_SUCCESS && popped != ctx_) {
    // Someone pushed a context inside this scope and did not pop it.
    log(LogLevel::Warning, "cuda::ScopedContext popped a context it did not push (unbalanced push/pop inside its scope)");
  }
}

}  // namespace handoff::cuda
