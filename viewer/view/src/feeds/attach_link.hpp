#pragma once
// What an attached viewer and its attach feed share: the handoff::Subscriber
// receiving a publisher's frames, the notices its state changes give, and the
// link's figures (the publisher's frame rate, drops on either side).
//
// Thread safety: every method from any thread. The subscriber's callbacks run
// on its own thread; they wake the display and say notices, nothing more.
// Ownership: owns the subscriber (and so its thread, joined first when the
// link goes).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <handoff/subscriber.hpp>
#include <handoff/viewer.hpp>

namespace handoff::view {

struct AttachLinkOptions {
  std::optional<unsigned> allow_group;
  std::function<void()> wake;                      // the display may have something new (any thread)
  std::function<void(const std::string&)> notice;  // a one-line notice (any thread)
};

class AttachLink {
 public:
  // Starts the subscriber (it connects, or waits, on its own thread). Throws
  // what Subscriber throws: UsageError for a bad name, handoff::Error for an
  // unusable socket folder.
  AttachLink(std::string_view name_or_path, AttachLinkOptions options);
  AttachLink(const AttachLink&) = delete;
  AttachLink& operator=(const AttachLink&) = delete;

  // The newest frame not yet taken (never blocks), counted into the figures.
  LiveFrame take();
  AttachStatus status() const;
  SubscriberStatus subscriber_status() const { return subscriber_->status(); }
  bool wait_for(LinkState state, std::chrono::milliseconds timeout) const {
    return subscriber_->wait_for(state, timeout);
  }
  const std::filesystem::path& socket_path() const noexcept { return subscriber_->socket_path(); }

 private:
  void on_state(const SubscriberStatus& s);
  void note_rate(const LiveFrame& f);

  AttachLinkOptions options_;
  mutable std::mutex mutex_;
  bool connected_once_ = false;
  double publisher_fps_ = 0;
  std::uint64_t last_published_ = 0;  // the previous frame's counter and time (0: none)
  std::int64_t last_publish_ns_ = 0;
  // Last: destroyed first, so its thread (and callbacks) end before the rest goes.
  std::unique_ptr<Subscriber> subscriber_;
};

// "waiting" (never connected yet), "live", "gone" (reconnecting when it comes
// back), "reconnecting" (waiting again after a connection) or "failed".
std::string attach_state_text(LinkState state, std::uint64_t connections);

}  // namespace handoff::view
