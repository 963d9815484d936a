#pragma once
// HANDOFF_VK_CHECK: the check macro of handoff's own Vulkan calls (the public
// function under it is check_vk, vk_context.hpp). Private:
// interop/include_internal, target handoff::interop_private.
#include <handoff/detail/check.hpp>
#include <handoff/vk_context.hpp>

namespace handoff {

namespace detail {
template <typename Detail>
void vk_checked(VkResult r, const char* expression, const char* where, Detail&& detail) {
  if (r != VK_SUCCESS) [[unlikely]]
    check_vk(r, expression, where, detail());
}
}  // namespace detail

}  // namespace handoff

// Wraps one Vulkan call returning VkResult; anything but VK_SUCCESS throws
// handoff::Error naming the function, the VkResult, the optional detail and
// file:line (see check_vk):
//   HANDOFF_VK_CHECK(vkCreateBuffer(dev, &info, nullptr, &buf));
//   HANDOFF_VK_CHECK(vkCreateBuffer(dev, &info, nullptr, &buf), "staging buffer");
#define HANDOFF_VK_CHECK(call, ...)                                  \
  ::handoff::detail::vk_checked((call), #call, HANDOFF_WHERE, [&] { \
    return ::handoff::detail::check_detail(__VA_ARGS__);            \
  })
