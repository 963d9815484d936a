#pragma once
// HANDOFF_CU_CHECK: the check macro of handoff's own CUDA driver calls (calls
// go through cuda::driver().api(), whose ABI is private too: cuda_abi.hpp).
// Private: interop/include_internal, target handoff::interop_private.
#include <handoff/cuda.hpp>
#include <handoff/detail/check.hpp>
#include <handoff/vk_check.hpp>

#include <string>
#include <string_view>

namespace handoff::cuda {

namespace detail {
// Throws handoff::Error for a failed call (result != CUDA_SUCCESS): Api::Cuda,
// the entry point (handoff::detail::call_name of the call's text), the CUDA
// error's name and code, `detail` and `where`. Names come from the
// process-wide driver when it is loaded (its cuGetErrorName /
// cuGetErrorString), else from handoff's own table.
[[noreturn]] void throw_call_failed(int result, std::string_view expression, const char* where,
                                    const std::string& detail);

template <typename Detail>
void cu_checked(int result, const char* expression, const char* where, Detail&& detail) {
  if (result != 0) throw_call_failed(result, expression, where, detail());
}
}  // namespace detail

// Checks a CUDA driver call, the call written out inside the macro, with an
// optional detail (built only when the call failed); the shape of
// HANDOFF_GL_CHECK and HANDOFF_VK_CHECK:
//   HANDOFF_CU_CHECK(api.cuMemAlloc(&ptr, bytes));
//   HANDOFF_CU_CHECK(api.cuGraphicsMapResources(1, &res, stream), "luma buffer");
// Throws handoff::Error naming the entry point (from the call's text), the CUDA
// error's name and code, the detail and file:line.
#define HANDOFF_CU_CHECK(call, ...)                                                              \
  ::handoff::cuda::detail::cu_checked(static_cast<int>(call), #call, HANDOFF_WHERE,              \
                                      [&] { return ::handoff::detail::check_detail(__VA_ARGS__); })

}  // namespace handoff::cuda
