// CudaShare where the build has no gst/cuda: system and GL memory only.
#include "cuda_memory.hpp"

namespace handoff::gst {

bool cuda_memory_available() noexcept { return false; }
GstMapFlags cuda_map_flag() noexcept { return GstMapFlags(0); }
std::unique_ptr<CudaShare> CudaShare::open(int, std::string*) { return nullptr; }

}  // namespace handoff::gst
