#include "feeds/attach_link.hpp"

namespace handoff::view {

std::string attach_state_text(LinkState state, std::uint64_t connections) {
  switch (state) {
    case LinkState::Waiting: return connections == 0 ? "waiting" : "reconnecting";
    case LinkState::Connected: return "live";
    case LinkState::PublisherGone:
    case LinkState::Stopped: return "gone";
    case LinkState::Failed: return "failed";
  }
  return "unknown";
}

AttachLink::AttachLink(std::string_view name_or_path, AttachLinkOptions options) : options_(std::move(options)) {
  SubscriberOptions so;
  so.wait = true;
  so.reconnect = true;
  so.allow_group = options_.allow_group;
  so.client = "handoff-view";
  so.on_frame = [this] {
    if (options_.wake) options_.wake();
  };
  so.on_state = [this](const SubscriberStatus& s) { on_state(s); };
  subscriber_ = std::make_unique<Subscriber>(name_or_path, std::move(so));
}

// Says what changed; the display wakes to show it (the panel's state line).
void AttachLink::on_state(const SubscriberStatus& s) {
  std::string text;
  {
    std::lock_guard lock(mutex_);
    switch (s.state) {
      case LinkState::Connected:
        text = std::string(connected_once_ ? "reconnected: " : "attached: ") + s.message;
        connected_once_ = true;
        last_published_ = 0;  // a new publisher counts from 1 again
        break;
      case LinkState::PublisherGone:
        text = "publisher '" + s.publisher + "' gone (" + s.message +
               "); keeping its last frame, reconnecting when it comes back";
        break;
      case LinkState::Failed: break;  // the feed ends the display with it (AttachFeed::check_failed)
      case LinkState::Stopped: text = "publisher '" + s.publisher + "' stopped"; break;
      case LinkState::Waiting: break;
    }
  }
  if (!text.empty() && options_.notice) options_.notice(text);
  if (options_.wake) options_.wake();
}

LiveFrame AttachLink::take() {
  LiveFrame f = subscriber_->take();
  if (f) note_rate(f);
  return f;
}

// The publisher's rate from its own counter and clock: frames it announced
// between two frames taken here, over the time between their announcements
// (so frames this viewer never saw count too).
void AttachLink::note_rate(const LiveFrame& f) {
  std::lock_guard lock(mutex_);
  const std::uint64_t published = f.counters.published;
  if (last_published_ != 0 && published > last_published_ && f.publish_time_ns > last_publish_ns_) {
    const double rate = double(published - last_published_) * 1e9 / double(f.publish_time_ns - last_publish_ns_);
    publisher_fps_ = publisher_fps_ == 0 ? rate : 0.8 * publisher_fps_ + 0.2 * rate;
  }
  last_published_ = published;
  last_publish_ns_ = f.publish_time_ns;
}

AttachStatus AttachLink::status() const {
  const SubscriberStatus s = subscriber_->status();
  const SubscriberStats n = subscriber_->stats();
  AttachStatus a;
  a.publisher = s.publisher;
  a.socket = subscriber_->socket_path().string();
  a.state = attach_state_text(s.state, n.connections);
  a.message = s.message;
  a.pid = s.pid;
  a.memory = s.route;
  a.received = n.received;
  a.publisher_dropped = n.publisher.dropped_no_slot;
  a.publisher_skipped = n.publisher.skipped_for_you;
  a.viewer_dropped = n.replaced;
  a.connections = n.connections;
  std::lock_guard lock(mutex_);
  a.publisher_fps = s.state == LinkState::Connected ? publisher_fps_ : 0.0;
  return a;
}

}  // namespace handoff::view
