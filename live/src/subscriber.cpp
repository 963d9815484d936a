#include <handoff/subscriber.hpp>

#include "subscriber_core.hpp"

#include <fcntl.h>

namespace handoff {

std::string_view to_string(LinkState s) {
  switch (s) {
    case LinkState::Waiting: return "waiting";
    case LinkState::Connected: return "connected";
    case LinkState::PublisherGone: return "publisher gone";
    case LinkState::Failed: return "failed";
    case LinkState::Stopped: return "stopped";
  }
  return "?";
}

UniqueFd LiveFrame::duplicate_descriptor() const {
  const int fd = import_ ? import_->descriptor() : -1;
  if (fd < 0) return UniqueFd();
  UniqueFd copy(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!copy) throw Error(Api::System, "fcntl(F_DUPFD_CLOEXEC)", errno, "", "duplicating a live slot descriptor");
  return copy;
}

#if HANDOFF_HAVE_VULKAN
ExportedMemory LiveFrame::vulkan_memory() const {
  if (!import_ || slot.kind != live::SlotKind::VulkanOpaqueFd)
    throw UsageError("LiveFrame::vulkan_memory: not a frame in a Vulkan slot");
  ExportedMemory m;
  m.fd = duplicate_descriptor();
  m.type = VkHandleType::OpaqueFd;
  m.allocation_size = slot.allocation_size;
  m.offset = slot.offset;
  m.size = slot.size;
  m.dedicated = slot.dedicated;
  return m;
}
#endif

Subscriber::Subscriber(std::string_view name_or_path, SubscriberOptions options)
    : core_(std::make_unique<live::detail::SubscriberCore>(name_or_path, std::move(options))) {}
Subscriber::~Subscriber() = default;

LiveFrame Subscriber::take() { return core_->take(); }
LiveFrame Subscriber::next(std::chrono::nanoseconds timeout) { return core_->next(timeout); }
bool Subscriber::wait_for(LinkState state, std::chrono::nanoseconds timeout) const {
  return core_->wait_for(state, timeout);
}
SubscriberStatus Subscriber::status() const { return core_->status(); }
SubscriberStats Subscriber::stats() const { return core_->stats(); }
const std::filesystem::path& Subscriber::socket_path() const noexcept { return core_->path(); }

}  // namespace handoff
