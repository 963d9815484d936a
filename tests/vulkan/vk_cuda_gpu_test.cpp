// cuda tier (real GPU only): a Vulkan-written NV12 / P010 frame read by CUDA
// matches byte for byte (checksum of both planes, copied out with cuMemcpyDtoH).
// Skips, saying why, where there is no CUDA GPU or no Vulkan device; a
// Vulkan device that is not a CUDA device, where both are here, fails.
#include <handoff/vk_cuda.hpp>

#include <cstdint>
#include <vector>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>
#include "cuda_gpu.hpp"
#include "vk_fixture.hpp"

namespace handoff::test {
namespace abi = cuda::abi;
namespace {

std::uint64_t fnv1a(const std::byte* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ std::uint64_t(p[i])) * 1099511628211ull;
  return h;
}

class VkCudaGpuTest : public VkFixture {
 protected:
  void SetUp() override {
    HANDOFF_REQUIRE_CUDA_GPU(cuda::driver());
    VkFixture::SetUp();
  }
};

TEST_F(VkCudaGpuTest, VulkanWrittenFrameReadByCudaMatches) {
  const auto& d = cuda::driver();
  int ordinal = -1;
  for (const auto& dev : d.devices())
    if (dev.uuid == vk->info().device_uuid) ordinal = dev.ordinal;
  ASSERT_GE(ordinal, 0) << "a CUDA GPU is here and the Vulkan device " << vk->info().name << " ("
                        << to_string(vk->info().device_uuid) << ") is none of the CUDA devices";
  cuda::PrimaryContext ctx(d, ordinal);
  for (PixelFormat fmt : {PixelFormat::NV12, PixelFormat::P010}) {
    for (auto [w, h] : {std::pair{1920u, 1080u}, std::pair{333u, 111u}}) {
      SCOPED_TRACE(std::string(to_string(fmt)) + " " + std::to_string(w) + "x" + std::to_string(h));
      VkFrameProducer p(*vk, fmt, w, h, VkFrameProducer::Target::Buffer);
      p.produce(17);  // complete on return (CPU fence)
      auto bytes = p.buffer()->buffer().download();
      Frame f = import_vk_frame(ctx, p);
      std::vector<std::byte> seen(p.buffer()->layout().buffer_bytes());
      {
        cuda::ScopedContext current(ctx);
        HANDOFF_CU_CHECK(d.api().cuMemcpyDtoH(seen.data(), abi::CUdeviceptr(f.luma().data), seen.size()));
      }
      EXPECT_EQ(fnv1a(seen.data(), seen.size()), fnv1a(bytes.data(), bytes.size()));
      EXPECT_EQ(seen, bytes);
    }
  }
}

}  // namespace
}  // namespace handoff::test
