#include "debug_messages.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <utility>

namespace handoff::test {

struct DebugMessages::State {
  std::mutex mutex;
  std::vector<std::string> messages;
  void add(std::string m) {
    std::lock_guard lock(mutex);
    messages.push_back(std::move(m));
  }
};

DebugMessages::DebugMessages() : state_(std::make_shared<State>()) {}

std::function<void(const GlDebugMessage&)> DebugMessages::gl_sink() const {
  return [state = state_](const GlDebugMessage& m) {
    if (m.is_error()) state->add("GL: " + m.describe());
  };
}

#if HANDOFF_HAVE_VULKAN
std::function<void(const VkValidationMessage&)> DebugMessages::vk_sink() const {
  return [state = state_](const VkValidationMessage& m) { state->add("Vulkan " + m.id + ": " + m.message); };
}
#endif

void DebugMessages::add(std::string message) const { state_->add(std::move(message)); }

std::vector<std::string> DebugMessages::messages() const {
  std::lock_guard lock(state_->mutex);
  return state_->messages;
}

std::size_t DebugMessages::count() const {
  std::lock_guard lock(state_->mutex);
  return state_->messages.size();
}

void DebugMessages::clear() const {
  std::lock_guard lock(state_->mutex);
  state_->messages.clear();
}

void DebugMessages::fail_on_any(const char* when) const {
  std::vector<std::string> seen;
  {
    std::lock_guard lock(state_->mutex);
    seen.swap(state_->messages);
  }
  for (const auto& m : seen) ADD_FAILURE() << when << ": " << m;
}

}  // namespace handoff::test
