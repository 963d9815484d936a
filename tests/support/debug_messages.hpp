#pragma once
// DebugMessages: one collector for the GL (KHR_debug) and Vulkan (validation
// layer) messages a test must fail on. Give its sinks to a GlWorker
// (GlWorkerOptions::on_debug_message), a context (enable_gl_debug_output) or a
// VkContext (VkContextOptions::on_message); check with fail_on_any() once the
// worker or context is gone, so messages made at destruction (leaks) count.
// The sinks share the collector's storage: they stay valid after it is gone.
// Thread safety: the sinks may run on any thread, concurrently; so may the rest.
#include <handoff/gl_context.hpp>
#if HANDOFF_HAVE_VULKAN
#include <handoff/vk_context.hpp>
#endif

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace handoff::test {

class DebugMessages {
 public:
  DebugMessages();

  // GL messages of type ERROR (GL_DEBUG_TYPE_ERROR), as "GL: <describe()>".
  std::function<void(const GlDebugMessage&)> gl_sink() const;
#if HANDOFF_HAVE_VULKAN
  // Every validation-layer message (warnings and errors), as "Vulkan <id>: <message>".
  std::function<void(const VkValidationMessage&)> vk_sink() const;
#endif
  // Another source's message (a peer process's report, say).
  void add(std::string message) const;

  std::vector<std::string> messages() const;
  std::size_t count() const;
  void clear() const;
  // One gtest failure per message collected, saying `when`; then forgets them.
  void fail_on_any(const char* when) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace handoff::test
