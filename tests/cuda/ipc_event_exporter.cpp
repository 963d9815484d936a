// A process that exports an interprocess event and exits (tests/cuda's
// ParityStaleIpcEventHandle opens the handle after it is gone). Prints the
// CUipcEventHandle as 128 hex digits on one line; exit status 1 and a reason
// on stderr when it cannot.
//   handoff_cuda_ipc_event_exporter <driver library>
#include <handoff/cuda.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>

#include <cstdio>
#include <exception>
#include <stdexcept>

int main(int argc, char** argv) {
  namespace abi = handoff::cuda::abi;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <CUDA driver library>\n", argv[0]);
    return 1;
  }
  try {
    const auto drv = handoff::cuda::Driver::load(argv[1]);
    const abi::DriverApi& a = drv->api();  // throws when unusable
    if (!a.cuEventCreate || !a.cuIpcGetEventHandle) throw std::runtime_error("the driver has no interprocess events");
    handoff::cuda::PrimaryContext ctx(*drv, 0);
    handoff::cuda::ScopedContext cur(ctx);
    abi::CUevent e = nullptr;
    HANDOFF_CU_CHECK(a.cuEventCreate(&e, abi::CU_EVENT_INTERPROCESS | abi::CU_EVENT_DISABLE_TIMING));
    abi::CUipcEventHandle h{};
    HANDOFF_CU_CHECK(a.cuIpcGetEventHandle(&h, e));
    for (unsigned char c : h.reserved) std::printf("%02x", c);
    std::printf("\n");
    HANDOFF_CU_CHECK(a.cuEventDestroy(e));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
