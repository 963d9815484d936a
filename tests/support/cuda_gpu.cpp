#include "cuda_gpu.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>

namespace handoff::test {
namespace {

constexpr int kCudaSuccess = 0;
constexpr int kCudaErrorStubLibrary = 34;  // the toolkit's stub libcuda.so
constexpr int kCudaErrorNoDevice = 100;

CudaGpuPresence probe(const std::string& path) {
  // The library stays loaded: a driver whose cuInit ran is never unloaded
  // (handoff's own loader shares this handle for the same path).
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    return {false, "no CUDA driver library (" + (e ? std::string(e) : path) + ")"};
  }
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  const auto init = reinterpret_cast<Init>(::dlsym(lib, "cuInit"));
  const auto count = reinterpret_cast<Count>(::dlsym(lib, "cuDeviceGetCount"));
  if (!init || !count) return {true, path + " loads but lacks cuInit / cuDeviceGetCount"};
  const int r = init(0);
  if (r == kCudaErrorStubLibrary)
    return {false, path + " is the CUDA toolkit's stub library (cuInit: CUDA_ERROR_STUB_LIBRARY), not a driver"};
  if (r == kCudaErrorNoDevice) return {false, path + " sees no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)"};
  if (r != kCudaSuccess) return {true, path + " loads and cuInit fails with CUresult " + std::to_string(r)};
  int n = 0;
  const int c = count(&n);
  if (c != kCudaSuccess) return {true, path + " initialises and cuDeviceGetCount fails with CUresult " + std::to_string(c)};
  if (n <= 0) return {false, path + " reports 0 CUDA devices"};
  return {true, path + ": " + std::to_string(n) + " CUDA device(s)"};
}

}  // namespace

CudaGpuPresence cuda_gpu_presence(const std::string& path) {
  std::string p = path;
  if (p.empty()) {
    const char* env = std::getenv("HANDOFF_CUDA_DRIVER");
    p = env && *env ? env : "libcuda.so.1";
  }
  static std::mutex m;
  static std::map<std::string, CudaGpuPresence> known;
  std::lock_guard lock(m);
  auto it = known.find(p);
  if (it == known.end()) it = known.emplace(p, probe(p)).first;
  return it->second;
}

}  // namespace handoff::test
