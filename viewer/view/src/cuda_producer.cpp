#include "cuda_producer.hpp"

#include <handoff/error.hpp>
#include <handoff/frame_copy.hpp>
#include <handoff/log.hpp>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>

namespace handoff::view {
namespace abi = cuda::abi;

CudaProducer::CudaProducer(const media::SourceInfo& info, std::optional<media::SceneOptions> scene, int device)
    : info_(info), scene_(std::move(scene)), context_(cuda::driver(), device),
      staging_(info.format, info.width, info.height) {
  const cuda::Driver& drv = cuda::driver();
  description_ = "CUDA device " + std::to_string(device) + ": frames copied in from host memory";
  if (!scene_) return;
  if (!media::has_cuda_kernel()) {
    description_ = "CUDA device " + std::to_string(device) +
                   ": scene rendered on the CPU and copied in (built without nvcc)";
    return;
  }
  cuda::ScopedContext scope(context_);
  const cuda::DeviceInfo di = drv.device(device);
  const auto cubin = media::scene_cubin();
  abi::CUmodule mod = nullptr;
  abi::CUresult r = abi::CUresult(1);
  if (di.cc_major == 9 && di.cc_minor == 0 && !cubin.empty()) r = drv.api().cuModuleLoadData(&mod, cubin.data());
  if (r != abi::CUDA_SUCCESS) r = drv.api().cuModuleLoadData(&mod, media::scene_ptx().data());
  if (r != abi::CUDA_SUCCESS) {
    description_ = "CUDA device " + std::to_string(device) + ": scene kernel not loaded (cuModuleLoadData: " +
                   drv.error_name(r) + "), rendered on the CPU and copied in";
    log(LogLevel::Warning, description_);
    return;
  }
  abi::CUfunction fn = nullptr;
  r = drv.api().cuModuleGetFunction(&fn, mod, media::kSceneKernelName);
  if (r != abi::CUDA_SUCCESS) {
    drv.api().cuModuleUnload(mod);
    description_ = "CUDA device " + std::to_string(device) + ": no scene kernel (cuModuleGetFunction: " +
                   drv.error_name(r) + "), rendered on the CPU and copied in";
    log(LogLevel::Warning, description_);
    return;
  }
  module_ = mod;
  function_ = fn;
  description_ = "CUDA device " + std::to_string(device) + " (" + di.name + "): scene kernel writes the mapped buffers";
}

CudaProducer::~CudaProducer() {
  if (!module_) return;
  try {
    cuda::ScopedContext scope(context_);
    cuda::driver().api().cuModuleUnload(static_cast<abi::CUmodule>(module_));
  } catch (const std::exception& e) {
    log(LogLevel::Error, std::string("CudaProducer: unloading the scene module: ") + e.what());
  }
}

bool CudaProducer::write(media::FrameSource& source, const Frame& target, std::int64_t& index) {
  const cuda::Driver& drv = cuda::driver();
  cuda::ScopedContext scope(context_);
  index = source.position();
  if (function_ && scene_) {
    media::scene::SceneState state = media::scene_state(*scene_, index);
    abi::CUdeviceptr l = reinterpret_cast<abi::CUdeviceptr>(target.planes[0].data);
    abi::CUdeviceptr c = reinterpret_cast<abi::CUdeviceptr>(target.planes[1].data);
    std::size_t luma_pitch = target.planes[0].pitch, chroma_pitch = target.planes[1].pitch;
    void* params[] = {&l, &luma_pitch, &c, &chroma_pitch, &state};
    const media::Grid g = media::scene_grid(info_.width, info_.height);
    HANDOFF_CU_CHECK(drv.api().cuLaunchKernel(static_cast<abi::CUfunction>(function_), g.x, g.y, 1, media::kSceneBlock,
                                              media::kSceneBlock, 1, 0, nullptr, params, nullptr));
    source.seek(index + 1);  // the scene is endless; keeps position() in step
    return true;
  }
  if (!source.read_into(staging_.target())) return false;
  Frame device = target;  // every plane of the format, as the ring's layout places them
  device.device = context_.device();
  device.cuda_context = context_.handle();
  copy_frame(staging_.frame(), device);
  return true;
}

}  // namespace handoff::view
