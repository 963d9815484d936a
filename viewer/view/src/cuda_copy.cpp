#include "cuda_copy.hpp"

#include <chrono>
#include <thread>

#include <handoff/log.hpp>
#include <handoff/wait.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>

namespace handoff::view {

void StreamDestroyer::operator()(void* stream) const noexcept {
  try {
    cuda::ScopedContext current(*context);
    const cuda::Driver& drv = *context->driver();
    const cuda::abi::CUresult r = drv.api().cuStreamDestroy(static_cast<cuda::abi::CUstream>(stream));
    if (r != cuda::abi::CUDA_SUCCESS) log(LogLevel::Error, "viewer: cuStreamDestroy: " + drv.error_name(r));
  } catch (const std::exception& e) {
    log(LogLevel::Error, std::string("viewer: cuStreamDestroy: ") + e.what());
  }
}

CudaCopier::CudaCopier(int device) : context_(cuda::driver(), device) {
  const cuda::Driver& drv = cuda::driver();
  cuda::ScopedContext current(context_);
  cuda::abi::CUstream s = nullptr;
  HANDOFF_CU_CHECK(drv.api().cuStreamCreate(&s, cuda::abi::CU_STREAM_NON_BLOCKING));
  stream_ = UniqueCudaStream(s, StreamDestroyer{&context_});
}

void CudaCopier::after(CudaStream producer) {
  if (producer.is_default()) return;
  const cuda::Driver& drv = cuda::driver();
  cuda::ScopedContext current(drv, static_cast<cuda::abi::CUctx_st*>(producer.context() ? producer.context()
                                                                                          : context_.handle()));
  if (!event_) {
    cuda::abi::CUevent e = nullptr;
    HANDOFF_CU_CHECK(drv.api().cuEventCreate(&e, cuda::abi::CU_EVENT_DISABLE_TIMING), "the viewer's copy event");
    event_ = cuda::detail::UniqueEvent(e, {cuda::detail::retain(context_, "the viewer's copy event")});
  }
  HANDOFF_CU_CHECK(drv.api().cuEventRecord(event_.get(), static_cast<cuda::abi::CUstream>(producer.handle())),
                   "show(): the producer's stream (it must be of the viewer's CUDA device's primary context)");
  HANDOFF_CU_CHECK(drv.api().cuStreamWaitEvent(static_cast<cuda::abi::CUstream>(stream_.get()), event_.get(), 0),
                   "show(): the viewer's copy waiting for the producer's stream");
}

// Polls the stream: a copy of a frame takes microseconds to a millisecond, so
// the first checks yield, later ones sleep briefly.
void CudaCopier::finish(const std::string& what) {
  const cuda::Driver& drv = cuda::driver();
  cuda::ScopedContext current(context_);
  const auto limit = wait_limit();
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (int round = 0;; ++round) {
    const cuda::abi::CUresult r = drv.api().cuStreamQuery(static_cast<cuda::abi::CUstream>(stream_.get()));
    if (r == cuda::abi::CUDA_SUCCESS) return;
    if (r != cuda::abi::CUDA_ERROR_NOT_READY) drv.check(r, "cuStreamQuery", what, HANDOFF_WHERE);
    if (std::chrono::steady_clock::now() >= deadline) throw WaitTimeout(what, limit);
    if (round < 64) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace handoff::view
