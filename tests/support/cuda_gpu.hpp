#pragma once
// Whether a CUDA GPU is really here: the one decision every GPU tier makes
// before it skips.
//
//   void SetUp() override { HANDOFF_REQUIRE_CUDA_GPU(cuda::driver()); }
//
// A GPU tier skips only where the hardware or the driver is absent: no
// driver library, the toolkit's stub libcuda.so (cuInit CUDA_ERROR_STUB_LIBRARY),
// or a driver that sees no device (CUDA_ERROR_NO_DEVICE, or a count of 0).
// The question goes to the driver library itself (dlopen, cuInit,
// cuDeviceGetCount), not to handoff's loader, which is under test: where a
// device is there and handoff cannot use it, the test fails and says why.
// The same holds on the fake driver (HANDOFF_CUDA_DRIVER), which reports a
// device unless HANDOFF_FAKE_CUDA_DEVICES=0.
#include <handoff/cuda.hpp>

#include <gtest/gtest.h>

#include <string>

namespace handoff::test {

struct CudaGpuPresence {
  bool present = false;  // the driver library loaded, initialised (or failed for a reason other than absence) and ...
  std::string what;      // absent: why; present: what was found ("libcuda.so.1: 1 device", or the failure)
};

// Asks the driver library at `path` (empty: HANDOFF_CUDA_DRIVER, else
// libcuda.so.1). Present also where the library loads and cuInit fails for
// any reason other than the stub or no device: a broken driver is no reason
// to skip. Thread-safe; the answer is computed once per path.
CudaGpuPresence cuda_gpu_presence(const std::string& path = {});

}  // namespace handoff::test

// In a test body or SetUp: skips (naming what is absent) where there is no
// CUDA GPU; fails (naming the device found and handoff's own description)
// where there is one and `driver` (a handoff::cuda::Driver) is not usable.
#define HANDOFF_REQUIRE_CUDA_GPU(driver)                                                                 \
  do {                                                                                                   \
    const ::handoff::cuda::Driver& handoff_driver_ = (driver);                                           \
    const ::handoff::test::CudaGpuPresence handoff_gpu_ = ::handoff::test::cuda_gpu_presence(handoff_driver_.path()); \
    if (!handoff_gpu_.present) GTEST_SKIP() << "no CUDA GPU here: " << handoff_gpu_.what;             \
    ASSERT_TRUE(handoff_driver_.usable()) << "a CUDA GPU is here (" << handoff_gpu_.what                 \
                                          << ") and handoff cannot use it: " << handoff_driver_.describe(); \
  } while (false)
