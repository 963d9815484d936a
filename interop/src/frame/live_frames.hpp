#pragma once
// Counts storage objects behind frames (handoff::live_objects(),
// common/diagnostics.cpp). A storage type holds one LiveFrameToken as a member.
#include <cstddef>

namespace handoff::detail {

class LiveFrameToken {
 public:
  LiveFrameToken() noexcept;
  ~LiveFrameToken();
  LiveFrameToken(const LiveFrameToken&) = delete;
  LiveFrameToken& operator=(const LiveFrameToken&) = delete;
};

// Tokens alive (frame/host_frame.cpp). Thread safety: any thread.
std::size_t live_frame_count() noexcept;

}  // namespace handoff::detail
