#pragma once
// The one place handoff::live reaches the project's CUDA driver-API
// declarations (a private interop header today). Everything in this library
// spells them cu::..., so a move of that header changes this file only.
#include "cuda/cuda_api.hpp"

#include <handoff/cuda.hpp>

namespace handoff::live::detail {
namespace cu = ::handoff::cu;
}  // namespace handoff::live::detail
