// handoff::Uuid's one formatter (CUDA, Vulkan and GL UUIDs all print through it).
#include <handoff/uuid.hpp>

#include <gtest/gtest.h>

namespace handoff {
namespace {

TEST(Uuid, PrintsAsLowerCaseHexInFiveDashedGroups) {
  // Mesa 22.3's llvmpipe / lavapipe device UUID ("mesa22.3.6" then zeros).
  const Uuid mesa{0x6d, 0x65, 0x73, 0x61, 0x32, 0x32, 0x2e, 0x33, 0x2e, 0x36, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(to_string(mesa), "6d657361-3232-2e33-2e36-000000000000");
  Uuid every_nibble{};
  for (int i = 0; i < 16; ++i) every_nibble.bytes[std::size_t(i)] = static_cast<std::uint8_t>(i * 17);
  EXPECT_EQ(to_string(every_nibble), "00112233-4455-6677-8899-aabbccddeeff");
  EXPECT_EQ(to_string(Uuid{}), "00000000-0000-0000-0000-000000000000");
  EXPECT_NE(mesa, every_nibble);
  EXPECT_EQ(mesa, Uuid(mesa));
}

}  // namespace
}  // namespace handoff
