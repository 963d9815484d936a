#include <glad/gl.h>

#include <handoff/gl_check.hpp>
#include <handoff/gl_worker.hpp>
#include <handoff/wait.hpp>

#include <algorithm>
#include <chrono>

namespace handoff {

GlFence GlFence::insert() {
  GlFence f;
  f.sync_.reset(HANDOFF_GL_CHECK(glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0)));
  HANDOFF_GL_CHECK(glFlush());
  return f;
}

void GlFence::gpu_wait() const {
  if (!sync_) throw UsageError("GlFence::gpu_wait on an empty fence");
  HANDOFF_GL_CHECK(glWaitSync(static_cast<GLsync>(sync_.get()), 0, GL_TIMEOUT_IGNORED));
}

bool GlFence::client_wait(std::uint64_t timeout_ns) const {
  if (!sync_) throw UsageError("GlFence::client_wait on an empty fence");
  GLenum r = HANDOFF_GL_CHECK(glClientWaitSync(static_cast<GLsync>(sync_.get()), GL_SYNC_FLUSH_COMMANDS_BIT, timeout_ns));
  if (r == GL_WAIT_FAILED)
    throw Error(Api::Gl, "glClientWaitSync", 0, "GL_WAIT_FAILED", "no GL error was raised", HANDOFF_WHERE);
  return r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED;
}

void GlFence::wait(const char* what) const {
  if (!sync_) throw UsageError(std::string("GlFence::wait on an empty fence (") + what + ")");
  using Clock = std::chrono::steady_clock;
  // Slices short enough that a changed wait limit or a stuck GPU is noticed
  // soon, long enough that a waiter sleeps in the driver rather than polls.
  constexpr std::chrono::nanoseconds kSlice = std::chrono::milliseconds(50);
  const std::chrono::nanoseconds limit = wait_limit();
  const Clock::time_point deadline = Clock::now() + limit;
  for (;;) {
    const auto left = std::max(std::chrono::nanoseconds(0), deadline - Clock::now());
    if (client_wait(static_cast<std::uint64_t>(std::min(left, kSlice).count()))) return;
    if (left == std::chrono::nanoseconds(0)) throw WaitTimeout(what, limit);
  }
}

}  // namespace handoff
