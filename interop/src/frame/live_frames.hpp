#pragma once
// Counts storage objects behind frames (hooks/library_hooks.hpp: live_frame_count()). A
// storage type holds one LiveFrameToken as a member.
#include <cstddef>

namespace handoff::detail {

class LiveFrameToken {
 public:
  LiveFrameToken() noexcept;
  ~LiveFrameToken();
  LiveFrameToken(const LiveFrameToken&) = delete;
  LiveFrameToken& operator=(const LiveFrameToken&) = delete;
};

}  // namespace handoff::detail
