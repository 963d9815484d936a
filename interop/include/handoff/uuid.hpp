#pragma once
// A device UUID: the 16 bytes CUDA (cuDeviceGetUuid_v2), Vulkan
// (VkPhysicalDeviceIDProperties::deviceUUID / driverUUID) and GL
// (GL_DEVICE_UUID_EXT / GL_DRIVER_UUID_EXT) report. One GPU reports the same
// device UUID through all three, which is how handoff refuses interop across
// GPUs.
//
//   handoff::Uuid u = handoff::cuda::driver().device(0).uuid;
//   std::puts(handoff::to_string(u).c_str());  // "48414e44-4f46-462d-4641-4b452d475055"
#include <array>
#include <cstdint>
#include <string>

namespace handoff {

// Thread safety: a value; copy and compare from any thread.
struct Uuid {
  std::array<std::uint8_t, 16> bytes{};
  bool operator==(const Uuid&) const = default;
};

// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx": the bytes in order, lower-case hex,
// dashes after bytes 4, 6, 8 and 10 (the layout nvidia-smi and vulkaninfo print).
// Thread safety: any thread.
std::string to_string(const Uuid& uuid);

}  // namespace handoff
